//! Harbor's ATIF trajectories as session records (docs/traces.md).
//!
//! ATIF, the Agent Trajectory Interchange Format (`ATIF-v1.0` to `ATIF-v1.8`, as Harbor
//! 0.26.0's `harbor.models.trajectories` defines it), is one JSON object a file
//! (`trajectory.json`; a trajectory continued after its context was summarised goes on in
//! another file): the `agent`, and `steps` from the `user`, the `agent` or the `system`. The
//! file is one run, labelled `session <session_id>`:
//!
//! - a `user` step is a `user_message` of its `message`;
//! - an `agent` step is one model exchange: a `model_request` (body `null`: ATIF keeps no
//!   request) and a `model_response` (its `message`, then its `tool_calls` as function calls
//!   with their `arguments` as JSON text; its `metrics`' tokens as the usage), then a
//!   `tool_start` and `tool_result` for each result of its `observation` that names one of
//!   its calls (`source_call_id`): `failed` when the result's `extra` says the tool failed
//!   (ATIF has no error flag; Harbor's converters write `is_error`, `tool_result_is_error`,
//!   `error` or a `status`), else `completed`;
//! - the run ends with a `turn_end` of the last agent message, unless it continues in another
//!   file (`continued_trajectory_ref`). ATIF records no failure of a run: no `run_error`;
//! - `at_ms` counts from the first step's `timestamp` (ISO 8601).
//!
//! `trajectory.rs` reads the top level and the agent, `step.rs` each step, `content.rs` a
//! message's text, `observation.rs` the tools' results and their status, `metrics.rs` the
//! token counts. What has no record (system steps, reasoning, costs, subagents, `extra`
//! metadata, fields `schema.rs` does not list, ...) is named in the notes (`notes.rs`). Every
//! value is read by the located reader (`trace/json.rs`), so a problem is an error at its line
//! and column naming the field's path (`steps[2].tool_calls[0].arguments`).

mod content;
mod metrics;
mod notes;
mod observation;
mod schema;
mod step;
mod trajectory;

use std::path::Path;

use metrics::Tokens;
use notes::Notes;

use super::json::Doc;
use super::{Runs, TraceError};
use crate::session::{Event, Record};

/// The run of the ATIF trajectory `bytes` read from `path`, and what of it has no record.
pub(super) fn runs(path: &Path, bytes: &[u8]) -> Result<Runs, TraceError> {
    let doc = Doc::file(path, bytes)?;
    let mut import = Import::default();
    let run = import.trajectory(&doc)?;
    Ok((run.into_iter().collect(), import.notes.finish()))
}

/// One trajectory being read into records.
#[derive(Default)]
struct Import {
    notes: Notes,
    records: Vec<Record>,
    clock: Clock,
    /// The run's model: the agent's, else the first agent step's.
    model: Option<String>,
    /// Model exchanges so far (agent steps).
    exchanges: u32,
    /// The sum of the steps' `metrics`, and whether any step had tokens.
    tokens: Tokens,
    usage_recorded: bool,
    /// The last agent step's message.
    last_agent_text: Option<String>,
}

impl Import {
    fn push(&mut self, event: Event) {
        self.records.push(Record {
            at_ms: self.clock.now,
            event,
        });
    }
}

/// Where the run is in time: `at_ms` of the records now, from the first timestamp.
#[derive(Default)]
struct Clock {
    origin: Option<i64>,
    now: u64,
    end: u64,
}

impl Clock {
    fn set(&mut self, unix_ms: i64) {
        let origin = *self.origin.get_or_insert(unix_ms);
        self.now = u64::try_from(unix_ms - origin).unwrap_or(0);
        self.end = self.end.max(self.now);
    }
}

#[cfg(test)]
mod tests;

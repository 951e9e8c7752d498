//! OTLP traces with GenAI spans as runs (docs/traces.md, "OTLP in").
//!
//! `decode.rs` reads the file (protobuf or OTLP JSON, traces and logs) into spans and log
//! records; each trace holding a GenAI span is one run (`run.rs`), its model spans' messages
//! read from wherever the trace put them (`content.rs`: span attributes, the inference
//! details event, the earlier per-message log events joined to their span by trace and span
//! id). What no record carries is counted in [`Notes`].

mod captured;
mod content;
mod decode;
mod exchange;
mod json_path;
mod run;
mod tool;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::trace::{Runs, TraceError};

/// Every run of an OTLP file: one per trace that holds a GenAI span, in the order the traces
/// began.
pub(crate) fn runs(path: &Path, bytes: &[u8]) -> Result<Runs, TraceError> {
    let telemetry = decode::telemetry(path, bytes)?;
    let mut notes = Notes::default();

    let mut traces: Vec<(&str, Vec<&decode::Span>)> = Vec::new();
    let mut trace_index: HashMap<&str, usize> = HashMap::new();
    for span in &telemetry.spans {
        if span.trace_id.is_empty() {
            notes.add("spans without a trace id", 1);
            continue;
        }
        let i = *trace_index.entry(&span.trace_id).or_insert_with(|| {
            traces.push((&span.trace_id, Vec::new()));
            traces.len() - 1
        });
        traces[i].1.push(span);
    }
    let mut logs: run::Logs<'_> = HashMap::new();
    for log in &telemetry.logs {
        logs.entry((&log.trace_id, &log.span_id))
            .or_default()
            .push(log);
    }

    let mut runs = Vec::new();
    let mut joined_logs = 0;
    for (trace_id, spans) in &traces {
        match run::import(trace_id, spans, &logs, &mut notes) {
            Some((run, joined)) => {
                let start = run::first_start(spans);
                runs.push((start, run));
                joined_logs += joined;
            }
            None => notes.add("traces without a GenAI agent, model or tool span", 1),
        }
    }
    let unjoined = telemetry.logs.len() - joined_logs;
    if unjoined > 0 {
        notes.add("log records of no model request span", unjoined);
    }
    runs.sort_by_key(|(start, _)| *start);
    Ok((
        runs.into_iter().map(|(_, run)| run).collect(),
        notes.lines(),
    ))
}

/// What a file holds that no record carries, each named once with how often it occurred.
#[derive(Debug, Default)]
pub(super) struct Notes(BTreeMap<String, usize>);

/// Distinct notes kept; past them (a file of a thousand attribute names) the rest are counted
/// together.
const MAX_NOTES: usize = 100;

impl Notes {
    pub fn add(&mut self, what: impl Into<String>, count: usize) {
        let what = what.into();
        let what = if self.0.len() >= MAX_NOTES && !self.0.contains_key(&what) {
            format!("other things no record carries (past the first {MAX_NOTES} kinds)")
        } else {
            what
        };
        *self.0.entry(what).or_default() += count;
    }

    /// `what: count`, in name order.
    fn lines(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(what, count)| format!("{what}: {count}"))
            .collect()
    }
}

#[cfg(test)]
mod tests;

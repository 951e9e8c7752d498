//! Where the bulky parts of a suite's cases wait for their runs: the seeded files, the model
//! script, later user turns and a replayed recording. They stay in memory while they fit the
//! spool's budget ([`RESIDENT_BYTES`] by default); beyond it they go to one unnamed temp file as
//! each case is loaded, and are read back when a run of the case starts ([`Case::whole`]). A
//! suite of 100,000 cases then holds about what a suite of 1,000 holds (`docs/performance.md`,
//! "Memory in suite size").
//!
//! The file has no name and only evalhost holds it open, so what a run reads back is what was
//! loaded and validated: an edit to a case file after loading changes nothing.
//!
//! The spool also hands the suite's cases one shared copy of each equal grader name and config
//! (`SharedTexts`): a suite repeats most of them from case to case.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::{Case, Execution, ScriptReply, ScriptStep, SeedFile};
use crate::evidence::Evidence;
use crate::session::RecordedToolResult;

/// Bytes of bulky case parts kept in memory before the rest is spooled, counted as the texts'
/// lengths. 8 MiB: a suite of small cases stays resident up to thousands of cases; the
/// 64 KiB seeded logs of `evalhost-bench gen`'s suites are spooled after about 400 cases.
pub const RESIDENT_BYTES: usize = 8 << 20;

/// Where a case's bulky parts are: in the case (`CaseBody::default()`, how every case is made
/// and parsed), or in the [`Spool`] of the suite that loaded it.
#[derive(Debug, Clone, Default)]
pub struct CaseBody(pub(crate) Body);

#[derive(Debug, Clone, Default)]
pub(crate) enum Body {
    /// In the case itself.
    #[default]
    Resident,
    /// In a spool, `len` bytes at `offset`; the case holds empty ones and what plan-time
    /// checks ask of its script.
    Spooled {
        file: Arc<File>,
        offset: u64,
        len: usize,
        script: ScriptShape,
    },
}

/// What is known of a spooled script without reading it back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScriptShape {
    pub steps: usize,
    /// Every step carries recorded usage ([`Case::has_recorded_usage`]).
    pub recorded_usage: bool,
}

/// A case's bulky parts, as spooled (JSON: the script's arguments are JSON values).
#[derive(Serialize, Deserialize)]
struct Bulk {
    workspace_files: Vec<SeedFile>,
    model: Vec<ScriptStep>,
    follow_ups: Vec<String>,
    replay_tools: Option<Vec<RecordedToolResult>>,
    recorded: Option<Evidence>,
}

impl Bulk {
    /// Move the bulky parts out of `case`, leaving empty ones (the execution keeps its kind).
    fn take(case: &mut Case) -> Self {
        let (replay_tools, recorded) = match &mut case.execution {
            Execution::ReplayTools(tools) => (Some(std::mem::take(tools)), None),
            Execution::Recorded(evidence) => {
                (None, Some(Arc::unwrap_or_clone(std::mem::take(evidence))))
            }
            Execution::Agent | Execution::External(_) => (None, None),
        };
        Self {
            workspace_files: std::mem::take(&mut case.workspace_files),
            model: std::mem::take(&mut case.model),
            follow_ups: std::mem::take(&mut case.follow_ups),
            replay_tools,
            recorded,
        }
    }

    /// Put the bulky parts back into `case` (which [`Bulk::take`] emptied).
    fn restore(self, case: &mut Case) {
        case.workspace_files = self.workspace_files;
        case.model = self.model;
        case.follow_ups = self.follow_ups;
        match &mut case.execution {
            Execution::ReplayTools(tools) => *tools = self.replay_tools.unwrap_or_default(),
            Execution::Recorded(evidence) => {
                *evidence = Arc::new(self.recorded.unwrap_or_default());
            }
            Execution::Agent | Execution::External(_) => {}
        }
    }
}

/// Keeps loaded cases' bulky parts within a memory budget, spooling the rest to one unnamed
/// temp file (made when first needed), and lets the cases it keeps share their equal grader
/// names and configs (`max_requests`, `3`, repeated in every case of a suite, are held once).
/// Shared by the threads that load cases.
#[derive(Debug)]
pub struct Spool {
    state: Mutex<SpoolState>,
    texts: Mutex<SharedTexts>,
}

/// Texts the cases of one suite share: the first of each equal text is kept and handed to
/// the cases that hold an equal one, whose own copy is then freed. At most
/// [`SharedTexts::MAX`] texts are kept; past that, a text is left as it is.
#[derive(Debug, Default)]
pub(crate) struct SharedTexts(HashSet<Arc<str>>);

impl SharedTexts {
    /// Texts kept for sharing (16 bytes each in the set, plus the text, which its cases hold
    /// anyway while the suite is loaded).
    const MAX: usize = 1 << 20;

    /// `text`, or an equal text kept earlier.
    pub(crate) fn share(&mut self, text: &Arc<str>) -> Arc<str> {
        if let Some(kept) = self.0.get(&**text) {
            return kept.clone();
        }
        if self.0.len() < Self::MAX {
            self.0.insert(text.clone());
        }
        text.clone()
    }
}

#[derive(Debug)]
struct SpoolState {
    resident_left: usize,
    file: Option<Arc<File>>,
    end: u64,
}

impl Default for Spool {
    fn default() -> Self {
        Self::with_budget(RESIDENT_BYTES)
    }
}

impl Spool {
    /// A spool that keeps up to `resident_bytes` of bulky parts in memory (0: spool every case
    /// that has any).
    pub fn with_budget(resident_bytes: usize) -> Self {
        Self {
            state: Mutex::new(SpoolState {
                resident_left: resident_bytes,
                file: None,
                end: 0,
            }),
            texts: Mutex::default(),
        }
    }

    /// Keep `case` whole while the budget lasts, else move its bulky parts to the spool. A
    /// spool that cannot be made or written leaves the case whole: memory, not correctness, is
    /// what is lost.
    pub(crate) fn keep(&self, case: &mut Case) {
        self.share_texts(case);
        let bytes = bulk_bytes(case);
        if bytes == 0 {
            return;
        }
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if bytes <= state.resident_left {
                state.resident_left -= bytes;
                return;
            }
        }
        let script = ScriptShape {
            steps: case.model.len(),
            recorded_usage: case.has_recorded_usage(),
        };
        let bulk = Bulk::take(case);
        match self.write(&bulk) {
            Ok((file, offset, len)) => {
                case.body = CaseBody(Body::Spooled {
                    file,
                    offset,
                    len,
                    script,
                })
            }
            Err(_) => bulk.restore(case),
        }
    }

    /// Give `case`'s grader entries the names and configs equal to ones an earlier case of
    /// the suite holds.
    fn share_texts(&self, case: &mut Case) {
        let mut texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        for entry in &mut case.graders {
            entry.name = texts.share(&entry.name);
            entry.config.share_with(&mut texts);
        }
    }

    /// Append `bulk` to the spool file: where it went.
    fn write(&self, bulk: &Bulk) -> std::io::Result<(Arc<File>, u64, usize)> {
        let bytes = serde_json::to_vec(bulk).map_err(std::io::Error::other)?;
        let (file, offset) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let file = match &state.file {
                Some(file) => file.clone(),
                None => state.file.insert(Arc::new(tempfile::tempfile()?)).clone(),
            };
            let offset = state.end;
            state.end += bytes.len() as u64;
            (file, offset)
        };
        // Each case has its own range: threads write side by side.
        file.write_all_at(&bytes, offset)?;
        Ok((file, offset, bytes.len()))
    }
}

/// Why a run could not read its case's bulky parts back.
#[derive(Debug, thiserror::Error)]
#[error("failed to read the case's seeded files and script back from evalhost's spool: {0}")]
pub struct SpoolError(#[source] std::io::Error);

impl Case {
    /// The whole case: itself when its bulky parts (seeded files, model script, later user
    /// turns, a replayed recording) are in memory, else a copy with them read back from the
    /// spool they were moved to when the suite was loaded ([`Spool`]). A case from
    /// [`super::load_case`] or [`super::load_each`] is always whole.
    pub fn whole(&self) -> Result<Cow<'_, Case>, SpoolError> {
        let Body::Spooled {
            file, offset, len, ..
        } = &self.body.0
        else {
            return Ok(Cow::Borrowed(self));
        };
        let mut bytes = vec![0; *len];
        file.read_exact_at(&mut bytes, *offset)
            .map_err(SpoolError)?;
        let bulk: Bulk = serde_json::from_slice(&bytes).map_err(|e| SpoolError(e.into()))?;
        let mut whole = self.clone();
        whole.body = CaseBody::default();
        bulk.restore(&mut whole);
        Ok(Cow::Owned(whole))
    }

    /// How many steps the model script has (also when it waits in the spool).
    pub fn script_steps(&self) -> usize {
        match &self.body.0 {
            Body::Spooled { script, .. } => script.steps,
            Body::Resident => self.model.len(),
        }
    }
}

/// About how many bytes `case`'s bulky parts hold: their texts (a recording: its outputs and
/// event payloads).
fn bulk_bytes(case: &Case) -> usize {
    let seeds: usize = case.workspace_files.iter().map(|f| f.content.len()).sum();
    let script: usize = case.model.iter().map(|step| reply_bytes(&step.reply)).sum();
    let turns: usize = case.follow_ups.iter().map(String::len).sum();
    let recording = match &case.execution {
        Execution::ReplayTools(tools) => tools.iter().map(|t| t.output.len()).sum(),
        Execution::Recorded(evidence) => evidence_bytes(evidence),
        Execution::Agent | Execution::External(_) => 0,
    };
    seeds + script + turns + recording
}

fn reply_bytes(reply: &ScriptReply) -> usize {
    match reply {
        ScriptReply::Text(text) => text.len(),
        ScriptReply::Call { tool, arguments } => tool.len() + value_bytes(arguments),
        ScriptReply::Items(items) => items.iter().map(reply_bytes).sum(),
    }
}

fn value_bytes(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(value_bytes).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + value_bytes(v)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}

fn evidence_bytes(evidence: &Evidence) -> usize {
    let messages: usize = evidence.messages.iter().map(|m| m.content.len()).sum();
    let calls: usize = evidence
        .calls
        .iter()
        .map(|c| c.arguments.len() + c.output.len())
        .sum();
    let events: usize = evidence.events.iter().map(|e| e.data.len()).sum();
    messages + calls + events
}

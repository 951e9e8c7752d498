//! Where a suite's cases wait for their runs. As each case is loaded, it stays in memory while
//! it fits the spool's budget ([`RESIDENT_BYTES`] by default, counted as the case's bulky parts
//! plus ~2 KB); beyond it, its bulky parts (seeded files, model script, later user turns, a
//! replayed recording) go to one unnamed temp file, and once the plan has bound its graders
//! the rest of it follows ([`Spool::park`]). A run reads the case back when it starts
//! ([`ParkedCase::unpark`], [`Case::whole`]), so a plan holds a few hundred bytes a case
//! however large its cases are (`docs/performance.md`, "Memory in suite size").
//!
//! The file has no name and only evalhost holds it open, so what a run reads back is what was
//! loaded and validated: an edit to a case file after loading changes nothing.
//!
//! The spool also hands the suite's cases one shared copy of each equal grader name and config
//! (`SharedTexts`): a suite repeats most of them from case to case. A case read back shares
//! them again, so every verdict of the suite's runs holds the shared copy.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::{Case, Execution, ScriptReply, ScriptStep, SeedFile};
use crate::evidence::Evidence;
use crate::session::RecordedToolResult;
use crate::spool_file::SpoolFile;

/// Bytes of cases kept in memory before the rest wait in the spool, counted as the texts of
/// their bulky parts plus ~2 KB a case. 8 MiB: a suite of small cases stays resident up to
/// about 4,000 cases; `evalhost-bench gen`'s suites, with a 64 KiB seeded log in 3 cases of
/// 10, reach it after about 400.
pub const RESIDENT_BYTES: usize = 8 << 20;

/// What a case costs in memory besides its bulky parts, counted against the budget: the case,
/// its grader entries and, once planned, its bound graders (~2 KB for the five entries of an
/// `evalhost-bench gen` case, `docs/performance.md`, "Memory in suite size").
const CASE_BYTES: usize = 2 << 10;

/// Where a case's bulky parts are: in the case (`CaseBody::default()`, how every case is made
/// and parsed), or in the [`Spool`] of the suite that loaded it.
#[derive(Debug, Clone, Default)]
pub struct CaseBody(pub(crate) Body);

#[derive(Debug, Clone, Default)]
pub(crate) enum Body {
    /// In the case itself.
    #[default]
    Resident,
    /// In a spool, `len` bytes at `offset` (no file: the case has none, but did not fit the
    /// budget either); the case holds empty ones and what plan-time checks ask of its script.
    /// A suite's plan parks such a case whole ([`Spool::park`]).
    Spooled {
        file: Option<Arc<SpoolFile>>,
        offset: u64,
        len: usize,
        script: ScriptShape,
    },
}

impl CaseBody {
    /// Whether the case did not fit its spool's memory budget when it was loaded: its bulky
    /// parts (if any) are in the spool, and a suite's plan parks the rest ([`Spool::park`]).
    pub fn is_spooled(&self) -> bool {
        matches!(self.0, Body::Spooled { .. })
    }
}

/// What is known of a spooled script without reading it back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScriptShape {
    pub steps: usize,
    /// The script's recorded usage, when every step carries one ([`Case::recorded_usage`]).
    pub recorded_usage: Option<super::RecordedUsage>,
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
            // A trace's runs stay where they are (shared, read once at loading).
            Execution::Agent | Execution::External(_) | Execution::Traced(_) => (None, None),
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
            Execution::Agent | Execution::External(_) | Execution::Traced(_) => {}
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
    /// Kept by the cases parked here too, which share them again when read back.
    texts: Arc<Mutex<SharedTexts>>,
}

/// Texts the cases of one suite share: the first of each equal text is kept and handed to
/// the cases that hold an equal one, whose own copy is then freed. The texts a suite repeats
/// (`max_requests`, `3`) come with its first cases, so the set is bounded: at most
/// [`SharedTexts::MAX`] texts and [`SharedTexts::MAX_BYTES`] of them; past that, a text is
/// left as it is. Unbounded, it would keep every distinct config of the suite in memory
/// while the cases themselves wait in the spool (12 MB at 100,000 generated cases).
#[derive(Debug, Default)]
pub(crate) struct SharedTexts {
    kept: HashSet<Arc<str>>,
    bytes: usize,
}

impl SharedTexts {
    /// Texts kept for sharing, at most.
    const MAX: usize = 1 << 14;
    /// Bytes of texts kept for sharing, at most.
    const MAX_BYTES: usize = 1 << 20;

    /// `text`, or an equal text kept earlier.
    pub(crate) fn share(&mut self, text: &Arc<str>) -> Arc<str> {
        if let Some(kept) = self.kept.get(&**text) {
            return kept.clone();
        }
        if self.kept.len() < Self::MAX && self.bytes + text.len() <= Self::MAX_BYTES {
            self.bytes += text.len();
            self.kept.insert(text.clone());
        }
        text.clone()
    }
}

#[derive(Debug)]
struct SpoolState {
    resident_left: usize,
    /// The spool file and the suite's shared texts, made when first needed.
    shelf: Option<Arc<Shelf>>,
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
                shelf: None,
            }),
            texts: Arc::default(),
        }
    }

    /// Keep `case` whole while the budget lasts, else move its bulky parts to the spool. A
    /// spool that cannot be made or written leaves the case whole: memory, not correctness, is
    /// what is lost.
    pub(crate) fn keep(&self, case: &mut Case) {
        self.share_texts(case);
        let bytes = bulk_bytes(case);
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let cost = bytes + CASE_BYTES;
            if cost <= state.resident_left {
                state.resident_left -= cost;
                return;
            }
        }
        let script = ScriptShape {
            steps: case.model.len(),
            recorded_usage: case.recorded_usage(),
        };
        if bytes == 0 {
            // Nothing to move, but the case is past the budget: the plan parks it whole.
            case.body = CaseBody(Body::Spooled {
                file: None,
                offset: 0,
                len: 0,
                script,
            });
            return;
        }
        let bulk = Bulk::take(case);
        let written = serde_json::to_vec(&bulk)
            .map_err(std::io::Error::other)
            .and_then(|bytes| self.write(&bytes));
        match written {
            Ok((shelf, offset, len)) => {
                case.body = CaseBody(Body::Spooled {
                    file: Some(shelf.file.clone()),
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
        share_texts(&self.texts, case);
    }

    /// Append `bytes` to the spool file: its shelf, and where they went.
    fn write(&self, bytes: &[u8]) -> std::io::Result<(Arc<Shelf>, u64, usize)> {
        let shelf = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match &state.shelf {
                Some(shelf) => shelf.clone(),
                None => {
                    let shelf = Shelf {
                        file: Arc::new(SpoolFile::new()?),
                        texts: self.texts.clone(),
                    };
                    state.shelf.insert(Arc::new(shelf)).clone()
                }
            }
        };
        let offset = shelf.file.append(bytes)?;
        Ok((shelf, offset, bytes.len()))
    }
}

/// A case waiting in its suite's spool for its runs ([`Spool::park`]): the whole case but
/// its bulky parts, which stay where loading spooled them; [`ParkedCase::unpark`] reads it
/// back. A suite's plan holds one of these per case instead of the case.
///
/// 24 bytes: a suite's plan holds one per case that waits.
#[derive(Debug, Clone)]
pub struct ParkedCase {
    shelf: Arc<Shelf>,
    offset: u64,
    len: u32,
}

/// What every case parked in one spool shares: the file, and the suite's shared texts (a case
/// read back holds the names and configs it held before, not copies: every verdict of its
/// runs keeps them to the suite's end). Made with the spool's file.
#[derive(Debug)]
struct Shelf {
    file: Arc<SpoolFile>,
    texts: Arc<Mutex<SharedTexts>>,
}

/// A parked case as the spool holds it: the case, and where its bulky parts are.
#[derive(Serialize, Deserialize)]
struct Parked<C> {
    case: C,
    bulk: Option<BulkAt>,
}

/// Where a parked case's bulky parts are in the spool, and the shape of its script.
#[derive(Serialize, Deserialize)]
struct BulkAt {
    offset: u64,
    len: usize,
    steps: usize,
    recorded_usage: Option<super::RecordedUsage>,
}

impl Spool {
    /// Write `case` to the spool to wait for its runs (the caller then drops it). `None` for a
    /// case this spool did not load, or a spool that cannot be written: the case then stays
    /// in memory.
    pub fn park(&self, case: &Case) -> Option<ParkedCase> {
        let bulk = match &case.body.0 {
            Body::Resident => None,
            Body::Spooled {
                file,
                offset,
                len,
                script,
            } => {
                let ours = file.as_ref().is_none_or(|file| {
                    let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    (state.shelf.as_ref()).is_some_and(|shelf| Arc::ptr_eq(&shelf.file, file))
                });
                if !ours {
                    return None;
                }
                Some(BulkAt {
                    offset: *offset,
                    len: *len,
                    steps: script.steps,
                    recorded_usage: script.recorded_usage,
                })
            }
        };
        let bytes = serde_json::to_vec(&Parked { case, bulk }).ok()?;
        let len = u32::try_from(bytes.len()).ok()?;
        let (shelf, offset, _) = self.write(&bytes).ok()?;
        Some(ParkedCase { shelf, offset, len })
    }
}

impl ParkedCase {
    /// The case as it was parked (its bulky parts still spooled: [`Case::whole`]).
    pub fn unpark(&self) -> Result<Case, SpoolError> {
        let Shelf { file, texts } = &*self.shelf;
        let bytes = read_at(file, self.offset, self.len as usize)?;
        let parked: Parked<Case> =
            serde_json::from_slice(&bytes).map_err(|e| SpoolError(e.into()))?;
        let mut case = parked.case;
        share_texts(texts, &mut case);
        // (A case without bulky parts comes back whole.)
        if let Some(bulk) = parked.bulk.filter(|bulk| bulk.len > 0) {
            case.body = CaseBody(Body::Spooled {
                file: Some(file.clone()),
                offset: bulk.offset,
                len: bulk.len,
                script: ScriptShape {
                    steps: bulk.steps,
                    recorded_usage: bulk.recorded_usage,
                },
            });
        }
        Ok(case)
    }
}

fn read_at(file: &SpoolFile, offset: u64, len: usize) -> Result<Vec<u8>, SpoolError> {
    file.read_at(offset, len).map_err(SpoolError)
}

/// Give `case`'s grader entries the names and configs of `texts` equal to theirs.
fn share_texts(texts: &Mutex<SharedTexts>, case: &mut Case) {
    let mut texts = texts.lock().unwrap_or_else(|e| e.into_inner());
    for entry in &mut case.graders {
        entry.name = texts.share(&entry.name);
        entry.config.share_with(&mut texts);
    }
}

/// Why a run could not read its case back from the spool.
#[derive(Debug, thiserror::Error)]
#[error("failed to read the case back from evalhost's spool (where it waited for its runs): {0}")]
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
        let Some(file) = file else {
            // Nothing was moved out.
            let mut whole = self.clone();
            whole.body = CaseBody::default();
            return Ok(Cow::Owned(whole));
        };
        let bytes = read_at(file, *offset, *len)?;
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
        Execution::Agent | Execution::External(_) | Execution::Traced(_) => 0,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_texts_share_equal_texts_and_stop_keeping_at_their_bound() {
        let mut texts = SharedTexts::default();
        let first: Arc<str> = Arc::from("3");
        let equal: Arc<str> = Arc::from("3");
        assert!(Arc::ptr_eq(&texts.share(&first), &first));
        assert!(
            Arc::ptr_eq(&texts.share(&equal), &first),
            "an equal text is shared"
        );
        for i in 0..SharedTexts::MAX {
            texts.share(&Arc::from(format!("config {i}")));
        }
        assert_eq!(texts.kept.len(), SharedTexts::MAX);
        let late: Arc<str> = Arc::from("seen after the bound");
        let again: Arc<str> = Arc::from("seen after the bound");
        assert!(Arc::ptr_eq(&texts.share(&late), &late));
        assert!(
            Arc::ptr_eq(&texts.share(&again), &again),
            "past the bound a text is left as it is"
        );
        assert!(
            Arc::ptr_eq(&texts.share(&Arc::from("3")), &first),
            "texts kept before the bound are still shared"
        );
        let mut texts = SharedTexts::default();
        let big: Arc<str> = Arc::from("x".repeat(SharedTexts::MAX_BYTES + 1));
        texts.share(&big);
        assert!(
            texts.kept.is_empty(),
            "a text over the byte bound is not kept"
        );
    }
}

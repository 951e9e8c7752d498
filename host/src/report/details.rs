//! What the HTML report shows of a run beyond its verdicts: the run's evidence (transcript,
//! tool calls) and how the agent changed the workspace, rendered as each run finishes and
//! kept for the page ([`RunDetails`], given to the runner as `RunOptions::details` only when
//! asked); the JSON report does not carry them.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::evidence::Evidence;
use crate::spool_file::{Budgeted, SpoolFile};

/// The finished workspace against the seeded files, bounded in size.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkspaceChanges {
    /// Created, modified and deleted files, by path.
    pub files: Vec<FileChange>,
    /// Changes left out to keep the report small (over the file or byte limits).
    pub omitted: usize,
    /// The workspace had more entries than are walked: only part of it was compared (and
    /// no file is called deleted).
    pub partial: bool,
    /// Why the workspace could not be compared (it could not be read).
    pub unavailable: Option<String>,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileChange {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    /// Whether the run created, modified or deleted it.
    pub kind: ChangeKind,
    /// A unified diff (a created file is all additions, a deleted one all removals); empty
    /// when `note` says why there is none.
    pub diff: String,
    /// `binary, 2048 bytes`, `too large to show (3 MiB)`, `diff cut at 16 KiB`, ...
    pub note: Option<String>,
}

/// How a file changed during the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Not among the seeded files, there at the end.
    Created,
    /// Seeded, with other content at the end.
    Modified,
    /// Seeded, gone at the end.
    Deleted,
}

impl ChangeKind {
    /// `created`, `modified` or `deleted`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// Bytes of rendered run details kept in memory before the rest wait in a spool file: a
/// suite of a few hundred runs with long transcripts is reported from memory.
pub const RESIDENT_DETAIL_BYTES: usize = 8 << 20;

/// Every finished run's transcript and workspace changes, as the HTML report shows them
/// (`evalhost run --html`): each rendered when its run finishes (`RunOptions::details`) and
/// kept in the report's order of cases and runs. Up to a budget they stay in memory; the rest
/// wait in an unnamed temp file (`crate::spool_file`) and are read back one run at a time
/// while the page is written, so a suite's memory does not grow with its transcripts: a run
/// costs a 24-byte slot.
#[derive(Debug)]
pub struct RunDetails {
    inner: Mutex<Stored>,
}

#[derive(Debug)]
struct Stored {
    /// Runs rendered whose case is not reported yet, by (case's index in the plan, run).
    waiting: HashMap<(usize, u32), Slot>,
    /// Per run of the report's cases, in order: where its details are, if it has any.
    order: Vec<Option<Slot>>,
    /// The memory budget, and the file the details past it go to.
    budget: Budgeted,
}

/// Where one run's rendered details are.
#[derive(Debug)]
enum Slot {
    Resident(Box<RenderedDetail>),
    /// The transcript's `transcript` bytes, then the workspace's `workspace`, at `offset`.
    Spooled {
        offset: u64,
        transcript: u32,
        workspace: u32,
    },
}

// A reported run's place in the order: what the page's memory grows by per run.
const _: () = assert!(std::mem::size_of::<Option<Slot>>() <= 24);

/// One run's details as HTML fragments: its transcript, and its workspace changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RenderedDetail {
    pub(crate) transcript: String,
    pub(crate) workspace: String,
}

impl Default for RunDetails {
    fn default() -> Self {
        Self::with_budget(RESIDENT_DETAIL_BYTES)
    }
}

impl RunDetails {
    /// An empty collector, keeping up to [`RESIDENT_DETAIL_BYTES`] in memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty collector keeping up to `resident_bytes` of rendered details in memory (0:
    /// every run's go to the spool).
    pub fn with_budget(resident_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Stored {
                waiting: HashMap::new(),
                order: Vec::new(),
                budget: Budgeted::new(resident_bytes),
            }),
        }
    }

    fn stored(&self) -> MutexGuard<'_, Stored> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Render run `run` of the plan's case `case`: its `evidence` and `workspace` changes,
    /// and keep them until the case is reported ([`Self::case_reported`]). Rendering is done
    /// by the caller's thread. A spool that cannot be made or written keeps the details in
    /// memory: memory, not the report, is what is lost.
    pub(crate) fn add(
        &self,
        case: usize,
        run: u32,
        evidence: &Evidence,
        workspace: &WorkspaceChanges,
    ) {
        let rendered = super::html::render_detail(evidence, workspace);
        let bytes = rendered.transcript.len() + rendered.workspace.len();
        let file = self.stored().budget.place(bytes);
        // Written outside the lock: runs finishing on other threads write side by side.
        let slot = file
            .and_then(|file| spool(&file, &rendered).ok())
            .unwrap_or_else(|| Slot::Resident(Box::new(rendered)));
        self.stored().waiting.insert((case, run), slot);
    }

    /// The plan's case `case` went to the report with these runs (in the report's order):
    /// their details follow the runs before them.
    pub(crate) fn case_reported(&self, case: usize, runs: impl IntoIterator<Item = u32>) {
        let mut stored = self.stored();
        for run in runs {
            let slot = stored.waiting.remove(&(case, run));
            stored.order.push(slot);
        }
    }

    /// Each reported run's details in the report's order (`None`: the run has none, it
    /// could not be made), read back from the spool where they wait there.
    pub(crate) fn read_each(
        &self,
    ) -> impl Iterator<Item = Result<Option<RenderedDetail>, std::io::Error>> + '_ {
        let (count, file) = {
            let stored = self.stored();
            (stored.order.len(), stored.budget.file().cloned())
        };
        (0..count).map(move |i| {
            let stored = self.stored();
            match &stored.order[i] {
                None => Ok(None),
                Some(Slot::Resident(rendered)) => Ok(Some((**rendered).clone())),
                &Some(Slot::Spooled {
                    offset,
                    transcript,
                    workspace,
                }) => {
                    drop(stored);
                    read_back(file.as_deref(), offset, transcript, workspace).map(Some)
                }
            }
        })
    }
}

fn spool(file: &SpoolFile, rendered: &RenderedDetail) -> std::io::Result<Slot> {
    let transcript = u32::try_from(rendered.transcript.len()).map_err(std::io::Error::other)?;
    let workspace = u32::try_from(rendered.workspace.len()).map_err(std::io::Error::other)?;
    let mut bytes = Vec::with_capacity(rendered.transcript.len() + rendered.workspace.len());
    bytes.extend_from_slice(rendered.transcript.as_bytes());
    bytes.extend_from_slice(rendered.workspace.as_bytes());
    Ok(Slot::Spooled {
        offset: file.append(&bytes)?,
        transcript,
        workspace,
    })
}

fn read_back(
    file: Option<&SpoolFile>,
    offset: u64,
    transcript: u32,
    workspace: u32,
) -> std::io::Result<RenderedDetail> {
    let read = || -> std::io::Result<RenderedDetail> {
        let file = file.ok_or_else(|| std::io::Error::other("no spool file"))?;
        let mut bytes = file.read_at(offset, transcript as usize + workspace as usize)?;
        let workspace = bytes.split_off(transcript as usize);
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(std::io::Error::other);
        Ok(RenderedDetail {
            transcript: text(bytes)?,
            workspace: text(workspace)?,
        })
    };
    read().map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("failed to read a run's transcript back from evalhost's spool (where it waited for the page): {e}"),
        )
    })
}

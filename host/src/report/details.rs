//! What the HTML report shows of a run beyond its verdicts: the run's evidence (transcript,
//! tool calls) and how the agent changed the workspace. Collected by the runner only when
//! asked ([`crate::runner::RunDetails`]); the JSON report does not carry them.

use crate::evidence::Evidence;

/// One finished run's transcript and workspace changes.
#[derive(Debug, Clone)]
pub struct RunDetail {
    pub case: String,
    /// 1-based.
    pub run: u32,
    pub evidence: Evidence,
    pub workspace: WorkspaceChanges,
}

/// The finished workspace against the seeded files, bounded in size.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    pub kind: ChangeKind,
    /// A unified diff (a created file is all additions, a deleted one all removals); empty
    /// when `note` says why there is none.
    pub diff: String,
    /// `binary, 2048 bytes`, `too large to show (3 MiB)`, `diff cut at 16 KiB`, ...
    pub note: Option<String>,
}

/// How a file changed during the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Modified,
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

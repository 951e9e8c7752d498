//! Where `--out DIR` keeps each run's files (`runner/out.rs` writes them; `grade
//! --evidence` and `history import` read them back): one layout, named once.

use std::path::{Path, PathBuf};

/// `DIR/<case>/run-N.jsonl`: the run's session log.
pub(crate) fn session_log_path(dir: &Path, case: &str, run: u32) -> PathBuf {
    dir.join(case).join(format!("run-{run}.jsonl"))
}

/// `DIR/<case>/run-N.evidence.json`.
pub(crate) fn evidence_path(dir: &Path, case: &str, run: u32) -> PathBuf {
    dir.join(case).join(format!("run-{run}.evidence.json"))
}

/// `DIR/<case>/run-N.workspace/`: the run's finished workspace (when within the limits of
/// `runner/snapshot.rs`).
pub(crate) fn workspace_path(dir: &Path, case: &str, run: u32) -> PathBuf {
    dir.join(case).join(format!("run-{run}.workspace"))
}

/// `DIR/report.json`.
pub(crate) fn report_path(dir: &Path) -> PathBuf {
    dir.join("report.json")
}

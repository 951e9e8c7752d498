//! `--out DIR`: what a run leaves behind for people to read and tools to re-grade:
//! `DIR/<case>/run-N.jsonl` (session log), `DIR/<case>/run-N.evidence.json`,
//! `DIR/<case>/run-N.workspace/` (the finished workspace, bounded: `snapshot.rs`),
//! `DIR/report.json`.
//!
//! Every file is written atomically (a temp file in the same directory, then a rename), so a
//! run killed mid-suite leaves each file either absent or complete, never half written.

use std::io::Write;
use std::path::Path;

use super::RunError;
use super::run::RunArtifacts;
use crate::report::SuiteReport;

pub(crate) fn keep_run(dir: &Path, case: &str, artifacts: &RunArtifacts) -> Result<(), RunError> {
    let case_dir = dir.join(case);
    std::fs::create_dir_all(&case_dir).map_err(|source| out_error(&case_dir, source))?;
    let run = artifacts.report.run;
    let log = case_dir.join(format!("run-{run}.jsonl"));
    copy_atomically(&artifacts.session_log, &log).map_err(|source| out_error(&log, source))?;
    let evidence = evidence_path(dir, case, run);
    let json = serde_json::to_string_pretty(&artifacts.evidence).unwrap_or_default();
    write_atomically(&evidence, json.as_bytes()).map_err(|source| out_error(&evidence, source))?;
    let snapshot = workspace_path(dir, case, run);
    super::snapshot::keep_workspace(&artifacts.workspace(), &snapshot)
        .map_err(|source| out_error(&snapshot, source))?;
    Ok(())
}

/// `DIR/<case>/run-N.evidence.json`.
pub(crate) fn evidence_path(dir: &Path, case: &str, run: u32) -> std::path::PathBuf {
    dir.join(case).join(format!("run-{run}.evidence.json"))
}

/// `DIR/<case>/run-N.workspace/`: the run's finished workspace (when within the limits of
/// `snapshot.rs`).
pub(crate) fn workspace_path(dir: &Path, case: &str, run: u32) -> std::path::PathBuf {
    dir.join(case).join(format!("run-{run}.workspace"))
}

pub(crate) fn write_report(dir: &Path, report: &SuiteReport) -> Result<(), RunError> {
    std::fs::create_dir_all(dir).map_err(|source| out_error(dir, source))?;
    let path = dir.join("report.json");
    write_atomically(&path, report.to_json().as_bytes()).map_err(|source| out_error(&path, source))
}

/// Write `path` so that it is either absent, its old content, or all of `bytes`, never half
/// written: the bytes go to a temp file in the same directory, renamed over `path` once
/// complete. (Atomic against the process being killed; a power loss may still lose the file.)
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temp = temp_beside(path)?;
    temp.write_all(bytes)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Copy `from` to `to` as [`write_atomically`] writes.
fn copy_atomically(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut temp = temp_beside(to)?;
    std::io::copy(&mut std::fs::File::open(from)?, &mut temp)?;
    temp.persist(to).map_err(|e| e.error)?;
    Ok(())
}

/// A temp file in `path`'s directory (a rename across file systems would not be atomic),
/// named `.<file>.XXXXXX.tmp` so that a leftover one is recognisably not a result.
fn temp_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // Readable like any file the user writes (the umask still applies), not tempfile's 0600:
    // CI artifact steps and other users read these.
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
}

fn out_error(path: &Path, source: std::io::Error) -> RunError {
    RunError::Out {
        path: path.to_owned(),
        error: source,
    }
}

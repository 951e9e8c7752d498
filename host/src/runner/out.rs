//! `--out DIR`: what a run leaves behind for people to read and tools to re-grade:
//! `DIR/<case>/run-N.jsonl` (session log), `DIR/<case>/run-N.evidence.json`,
//! `DIR/<case>/run-N.workspace/` (the finished workspace, bounded: `snapshot.rs`),
//! `DIR/report.json`.
//!
//! Every file is private (0600, the directories evalhost creates 0700) and written
//! atomically, so a run killed mid-suite leaves each file either absent or complete, never
//! half written: [`crate::private_file`].

use std::path::Path;

use super::RunError;
use super::run::RunArtifacts;
use crate::private_file;
use crate::report::SuiteReport;

pub(crate) fn keep_run(dir: &Path, case: &str, artifacts: &RunArtifacts) -> Result<(), RunError> {
    let case_dir = case_dir(dir, case)?;
    private_file::create_dir_all(&case_dir).map_err(|source| out_error(&case_dir, source))?;
    let run = artifacts.report.run;
    let log = crate::report::out_layout::session_log_path(dir, case, run);
    crate::session::read_whole(&artifacts.session_log)
        .and_then(|bytes| private_file::write(&log, &bytes))
        .map_err(|source| out_error(&log, source))?;
    let evidence = evidence_path(dir, case, run);
    let json = serde_json::to_string_pretty(&artifacts.evidence).unwrap_or_default();
    private_file::write(&evidence, json.as_bytes())
        .map_err(|source| out_error(&evidence, source))?;
    let snapshot = workspace_path(dir, case, run);
    super::snapshot::keep_workspace(&artifacts.workspace(), &snapshot)
        .map_err(|source| out_error(&snapshot, source))?;
    Ok(())
}

/// `DIR/<case>`, when `case` is a case name (`case/case_name.rs`): a second wall behind
/// loading's check of case names, so that no run writes outside `dir`.
fn case_dir(dir: &Path, case: &str) -> Result<std::path::PathBuf, RunError> {
    match crate::case::case_name::problem(case) {
        None => Ok(dir.join(case)),
        Some(problem) => Err(out_error(
            dir,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("not a plain directory name under --out: {problem}"),
            ),
        )),
    }
}

pub(crate) use crate::report::out_layout::{evidence_path, workspace_path};

pub(crate) fn write_report(dir: &Path, report: &SuiteReport) -> Result<(), RunError> {
    private_file::create_dir_all(dir).map_err(|source| out_error(dir, source))?;
    let path = crate::report::out_layout::report_path(dir);
    private_file::write_with(&path, |out| report.write_json(out))
        .map_err(|source| out_error(&path, source))
}

fn out_error(path: &Path, source: std::io::Error) -> RunError {
    RunError::Out {
        path: path.to_owned(),
        error: source,
    }
}

#[cfg(test)]
mod tests {
    use super::case_dir;
    use std::path::Path;

    #[test]
    fn a_case_directory_is_a_plain_child_of_out() {
        let out = Path::new("/out");
        assert_eq!(case_dir(out, "fix").unwrap(), Path::new("/out/fix"));
        assert_eq!(case_dir(out, "...").unwrap(), Path::new("/out/..."));
        for case in ["", ".", "..", "a/b", "a/", "/abs", "./x", "x\0y\n"] {
            let error = case_dir(out, case).expect_err(case).to_string();
            assert!(error.contains("/out"), "{error}");
        }
    }
}

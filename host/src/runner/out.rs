//! `--out DIR`: what a run leaves behind for people to read and tools to re-grade:
//! `DIR/<case>/run-N.jsonl` (session log), `DIR/<case>/run-N.evidence.json`, `DIR/report.json`.

use std::path::Path;

use super::RunError;
use super::run::RunArtifacts;
use crate::report::SuiteReport;

pub(crate) fn keep_run(dir: &Path, case: &str, artifacts: &RunArtifacts) -> Result<(), RunError> {
    let case_dir = dir.join(case);
    std::fs::create_dir_all(&case_dir).map_err(|source| out_error(&case_dir, source))?;
    let run = artifacts.report.run;
    let log = case_dir.join(format!("run-{run}.jsonl"));
    std::fs::copy(&artifacts.session_log, &log).map_err(|source| out_error(&log, source))?;
    let evidence = case_dir.join(format!("run-{run}.evidence.json"));
    let json = serde_json::to_string_pretty(&artifacts.evidence).unwrap_or_default();
    std::fs::write(&evidence, json).map_err(|source| out_error(&evidence, source))?;
    Ok(())
}

pub(crate) fn write_report(dir: &Path, report: &SuiteReport) -> Result<(), RunError> {
    std::fs::create_dir_all(dir).map_err(|source| out_error(dir, source))?;
    let path = dir.join("report.json");
    std::fs::write(&path, report.to_json()).map_err(|source| out_error(&path, source))
}

fn out_error(path: &Path, source: std::io::Error) -> RunError {
    RunError::Out {
        path: path.to_owned(),
        source,
    }
}

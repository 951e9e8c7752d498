//! `evalhost history import DIR|FILE`: a run made elsewhere (a CI job's `--out` directory,
//! a merged shard report) into this store, so that a team's runs land in one history. An
//! `--out` directory brings each run's session log and evidence too. Importing the same run
//! twice stores it once: its id is the report's `run_id`, or for a report without one, a
//! digest of the report's bytes.

use std::path::Path;

use sha2::Digest;

use super::StoreError;
use super::store::{RecordedRun, RunEnd, RunLogs, RunStatus, Store, Totals};
use crate::report::{SuiteReport, out_layout};

/// What an import did.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The run as the store records it.
    pub run: RecordedRun,
    /// `false`: the store already had this run; nothing was written.
    pub new: bool,
    /// Runs whose session log came with them (an `--out` directory's).
    pub logs: u32,
}

/// Import the report at `path` (a report file, or an `--out` directory holding
/// `report.json` and the runs' files).
pub fn import_path(store: &mut Store, path: &Path) -> Result<Imported, StoreError> {
    let import_error = |message: String| StoreError::Import {
        path: path.display().to_string(),
        message,
    };
    let report = crate::report::read_report(path).map_err(|e| import_error(e.to_string()))?;
    let dir = path.is_dir().then_some(path);
    let report_file = dir.map_or_else(|| path.to_owned(), out_layout::report_path);
    let mut run = RecordedRun::starting("import", &report);
    if report.provenance.run_id.is_none() {
        let bytes = std::fs::read(&report_file).map_err(|e| import_error(e.to_string()))?;
        run.id = hex::encode(&sha2::Sha256::digest(&bytes)[..8]);
    }
    if report.provenance.started_unix_ms.is_none() {
        // The report's file time stands for when it ran.
        run.started_ms = std::fs::metadata(&report_file)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or_else(super::now_unix_ms, |d| d.as_millis() as u64);
    }
    run.source = Some(
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_owned())
            .display()
            .to_string(),
    );
    record_report(store, &report, run, dir).map_err(|e| match e {
        StoreError::Data { message, .. } => import_error(message),
        e => e,
    })
}

/// Store `report` whole as the run `run` describes (`import`, or `grade`'s re-graded
/// report), each run's session log and evidence read from `files` (an `--out` directory's
/// layout) when given. Nothing is written when the store has a run of `run.id` already.
pub fn record_report(
    store: &mut Store,
    report: &SuiteReport,
    mut run: RecordedRun,
    files: Option<&Path>,
) -> Result<Imported, StoreError> {
    let mut logs = 0;
    let new = store.write(|store| {
        if !store.insert_run(&run, "{}")? {
            return Ok(false);
        }
        let mut totals = Totals::default();
        for (ord, case) in report.cases.iter().enumerate() {
            let case = case.map_err(|e| store.data(e.to_string()))?;
            let ord = u32::try_from(ord).unwrap_or(u32::MAX);
            for one in &case.runs {
                let read = |file: std::path::PathBuf| std::fs::read(file).ok();
                let session_log =
                    files.and_then(|d| read(out_layout::session_log_path(d, &case.name, one.run)));
                let evidence =
                    files.and_then(|d| read(out_layout::evidence_path(d, &case.name, one.run)));
                logs += u32::from(session_log.is_some());
                let run_logs = RunLogs::compress(session_log.as_deref(), evidence.as_deref(), None);
                store.insert_case_run(&run.id, ord, one, run_logs)?;
            }
            totals.add(&case);
            store.insert_case(&run.id, ord, &case)?;
        }
        let end = RunEnd {
            finished_ms: Some(report.provenance.finished_unix_ms.unwrap_or(run.started_ms)),
            ..RunEnd::of(report)
        };
        store.finish_recorded(&run.id, &end, &totals)?;
        Ok(true)
    })?;
    run.status = if report.interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Finished
    };
    run.cases = report.cases.len() as u32;
    run.runs = report.summary.runs;
    run.passed = report.summary.passed;
    Ok(Imported { run, new, logs })
}

//! Re-grading (`evalhost grade --evidence DIR`): the graders the case files declare now, over
//! the evidence and workspace snapshots that `run --out DIR` kept, without running agents or
//! models. Each run is graded exactly as a live run is (`run::grade_run`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;

use super::out;
use super::prepare::PreparedCase;
use super::run::{grade_run, run_passes};
use crate::case::Case;
use crate::evidence::Evidence;
use crate::report::{CaseSummary, RunReport, SuiteReport, SuiteSummary};

/// Why saved runs could not be re-graded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegradeError {
    /// A case of the saved report is in none of the case files given.
    #[error(
        "case `{case}` of the saved report is not among the cases loaded from {paths} (give the case files or directories that define it)"
    )]
    CaseNotFound {
        /// The case's name.
        case: String,
        /// The case files and directories given, each in backquotes.
        paths: String,
    },
    /// A case of the saved report is not among the prepared cases passed to [`regrade`].
    #[error(
        "case `{case}` of the saved report is not among the prepared cases (see `cases_of_report`)"
    )]
    NotPrepared {
        /// The case's name.
        case: String,
    },
    /// A run's saved evidence file could not be read.
    #[error("failed to read the saved evidence of `{case}` run {run} at `{path}`: {error}")]
    ReadEvidence {
        /// The case's name.
        case: String,
        /// 1-based run number.
        run: u32,
        /// The evidence file (`DIR/<case>/run-N.evidence.json`).
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// A run's saved evidence file is not evidence JSON.
    #[error(
        "{path}:{line}:{column}: not an evidence file (as `evalhost run --out` writes them): {message}"
    )]
    ParseEvidence {
        /// The evidence file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The empty workspace that runs without a snapshot are graded against could not be made.
    #[error("failed to create an empty workspace for runs without a snapshot: {error}")]
    EmptyWorkspace {
        /// What failed.
        error: std::io::Error,
    },
    /// A case of the saved report could not be read back from the spool it waited in.
    #[error(transparent)]
    ReadBack(#[from] crate::report::CaseReadBackError),
}

/// The re-graded report, and which runs had no workspace snapshot.
#[derive(Debug)]
pub struct Regraded {
    /// The saved report with every graded run's verdicts and pass replaced, summaries
    /// recomputed, and this evalhost's version.
    pub report: SuiteReport,
    /// Runs graded against an empty workspace because `DIR/<case>/run-N.workspace/` is
    /// missing (an older `--out`, or a workspace over the snapshot limit).
    pub without_workspace: Vec<(String, u32)>,
}

/// The case paths a saved report records, each once, in report order.
pub fn recorded_case_paths(report: &SuiteReport) -> Result<Vec<PathBuf>, RegradeError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    for case in report.cases.iter() {
        let path = PathBuf::from(&case?.path);
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    Ok(paths)
}

/// The loaded cases the saved report has runs of, in report order. Every case of the report
/// must be among them; loaded cases the report lacks are left out (nothing to re-grade).
pub fn cases_of_report(
    report: &SuiteReport,
    loaded: Vec<Case>,
    paths: &[PathBuf],
) -> Result<Vec<Case>, RegradeError> {
    let mut by_name: HashMap<String, Case> =
        loaded.into_iter().map(|c| (c.name.clone(), c)).collect();
    report
        .cases
        .iter()
        .map(|saved| {
            let saved = saved?;
            by_name
                .remove(&saved.name)
                .ok_or_else(|| RegradeError::CaseNotFound {
                    case: saved.name.clone(),
                    paths: paths
                        .iter()
                        .map(|p| format!("`{}`", p.display()))
                        .collect::<Vec<_>>()
                        .join(", "),
                })
        })
        .collect()
}

/// Grade every run of `saved` again from `dir`, with the graders bound in `cases` (matched
/// by case name; see [`cases_of_report`]). A run that ended with an error was never graded
/// and is kept as it was saved. Grading runs `jobs` runs at a time; `strict` fails a run on
/// any not-evaluable verdict (`grade --strict`), not only on one never recorded.
pub async fn regrade(
    dir: &Path,
    saved: &SuiteReport,
    cases: Vec<PreparedCase>,
    jobs: usize,
    judge: Arc<crate::judge::Judge>,
    strict: bool,
) -> Result<Regraded, RegradeError> {
    let cases: HashMap<String, Arc<PreparedCase>> = cases
        .into_iter()
        .map(|c| (c.case.name.clone(), Arc::new(c)))
        .collect();
    let empty = tempfile::Builder::new()
        .prefix("evalhost-regrade-")
        .tempdir()
        .map_err(|source| RegradeError::EmptyWorkspace { error: source })?;
    let mut plan = Vec::new();
    for saved_case in saved.cases.iter() {
        let saved_case = saved_case?;
        let prepared =
            cases
                .get(&saved_case.name)
                .cloned()
                .ok_or_else(|| RegradeError::NotPrepared {
                    case: saved_case.name.clone(),
                })?;
        for run in &saved_case.runs {
            plan.push((prepared.clone(), run.clone()));
        }
    }
    let graded: Vec<Result<(RunReport, bool), RegradeError>> = futures_util::stream::iter(plan)
        .map(|(prepared, run)| regrade_run(dir, prepared, run, empty.path(), judge.clone(), strict))
        .buffered(jobs.max(1))
        .collect()
        .await;
    let mut graded = graded.into_iter();
    let mut without_workspace = Vec::new();
    let mut report = saved.clone();
    let mut cases = std::mem::take(&mut report.cases).into_vec()?;
    for case in &mut cases {
        for run in &mut case.runs {
            if let Some(result) = graded.next() {
                let (regraded, had_workspace) = result?;
                if !had_workspace {
                    without_workspace.push((case.name.clone(), regraded.run));
                }
                *run = regraded;
            }
        }
        case.summary = CaseSummary::with_k(&case.runs, saved.k);
    }
    report.summary = SuiteSummary::of(&cases);
    report.cases = cases.into();
    report.evalhost_version = env!("CARGO_PKG_VERSION").to_owned();
    Ok(Regraded {
        report,
        without_workspace,
    })
}

/// One saved run graded again; `true` when its workspace snapshot was there.
async fn regrade_run(
    dir: &Path,
    prepared: Arc<PreparedCase>,
    saved: RunReport,
    empty: &Path,
    judge: Arc<crate::judge::Judge>,
    strict: bool,
) -> Result<(RunReport, bool), RegradeError> {
    if saved.error.is_some() {
        return Ok((saved, true));
    }
    let case = prepared.case.name.clone();
    let evidence_path = out::evidence_path(dir, &case, saved.run);
    let evidence = read_evidence(&evidence_path, &case, saved.run)?;
    let snapshot = out::workspace_path(dir, &case, saved.run);
    let had_workspace = snapshot.is_dir();
    let workspace = if had_workspace { &snapshot } else { empty };
    let verdicts = grade_run(prepared, &evidence, Some(workspace), judge, strict).await;
    let pass = run_passes(&verdicts);
    Ok((
        RunReport {
            pass,
            verdicts,
            ..saved
        },
        had_workspace,
    ))
}

fn read_evidence(path: &Path, case: &str, run: u32) -> Result<Evidence, RegradeError> {
    let text = std::fs::read_to_string(path).map_err(|source| RegradeError::ReadEvidence {
        case: case.to_owned(),
        run,
        path: path.to_owned(),
        error: source,
    })?;
    serde_json::from_str(&text).map_err(|e| RegradeError::ParseEvidence {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: crate::message::strip_json_position(&e.to_string()),
    })
}

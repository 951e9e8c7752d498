//! `evalhost grade --evidence DIR [PATHS...]`: re-grade saved runs with the case files'
//! current graders and print how the verdicts changed. `evalhost grade --trace FILE... CASE`:
//! grade runs made elsewhere (OTLP, Inspect AI, ATIF traces) with the case's graders.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{Failure, exit};
use crate::case::{LoadOptions, load_cases_with};
use crate::grader::GraderHost;
use crate::report::{diff_verdicts, read_report, render_verdict_diff};
use crate::runner::{cases_of_report, prepare_cases_with, recorded_case_paths, regrade};

/// `evalhost grade`.
#[derive(Debug, clap::Args)]
pub struct GradeArgs {
    /// The directory `evalhost run --out DIR` wrote (report.json, <case>/run-N.evidence.json,
    /// <case>/run-N.workspace/).
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    pub evidence: Option<PathBuf>,
    /// A trace of runs made elsewhere, graded with the one case PATH names (repeat for
    /// several): OTLP JSON or protobuf with GenAI spans, an Inspect AI log (`.eval`,
    /// `.json`), an ATIF trajectory (docs/traces.md). A trace carries no workspace: graders
    /// of the workspace are not evaluable.
    #[arg(long, value_name = "FILE", requires = "paths")]
    pub trace: Vec<PathBuf>,
    /// With --evidence: case files or directories defining the saved cases (default: the
    /// case paths recorded in DIR/report.json). With --trace: the one case whose graders
    /// grade the traces' runs.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Write the re-graded JSON report to this file.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Runs graded concurrently (default: number of cores; at most 128).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=128))]
    pub jobs: Option<u32>,
    #[command(flatten)]
    pub judge: super::judge::JudgeArgs,
    /// Fail a run on every not-evaluable verdict, also one the evidence cannot answer by
    /// its nature (an event a journal never holds), which is otherwise a warning; one whose
    /// grader needs something never recorded (a judgment) fails it anyway (docs/reports.md).
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub history: super::history::RecordingArgs,
}

pub fn grade(args: GradeArgs) -> Result<u8, Failure> {
    super::report_files::refuse_own_dirs([("--out", args.out.as_deref())])?;
    let Some(evidence) = args.evidence.clone() else {
        return super::grade_trace::grade_traces(args);
    };
    let saved = read_report(&evidence).map_err(Failure::usage)?;
    // `--evidence DIR/report.json` means the directory `--out DIR` wrote.
    let evidence_dir = if evidence.is_file() {
        evidence.parent().unwrap_or(Path::new(".")).to_owned()
    } else {
        evidence.clone()
    };
    let (paths, recorded) = if args.paths.is_empty() {
        (
            recorded_case_paths(&saved).map_err(Failure::internal)?,
            true,
        )
    } else {
        (args.paths.clone(), false)
    };
    let loaded = load_cases_with(&paths, &LoadOptions::default())
        .map_err(super::problems::error)
        .map_err(|e| {
            if recorded {
                e.context(
                    "failed to load the case paths recorded in the saved report (give the case files or directories as PATHS)",
                )
            } else {
                e
            }
        })
        .map_err(Failure::usage)?;
    let cases = cases_of_report(&saved, loaded, &paths).map_err(Failure::usage)?;
    let host = GraderHost::with_builtins()
        .context("failed to load the built-in graders")
        .map_err(Failure::internal)?;
    let prepared = prepare_cases_with(cases, &host, &mut super::bundle::project_bundles()?)
        .map_err(|e| Failure::usage(super::problems::error(e)))?;
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get()),
        |j| j as usize,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
        .map_err(Failure::internal)?;
    let judge = args.judge.judge(runtime.handle())?;
    let regraded = runtime
        .block_on(regrade(
            &evidence_dir,
            &saved,
            prepared,
            jobs,
            judge,
            args.strict,
        ))
        .map_err(Failure::usage)?;
    let mut report = regraded.report;
    let history = args.history.location()?;
    let recorded = record_graded(&history, &mut report, Some(&evidence_dir));
    let runs: usize = report.summary.runs as usize;
    println!(
        "Re-graded {runs} runs of {} cases from {} (no agent or model ran).",
        report.cases.len(),
        evidence.display()
    );
    let (deltas, flips) = diff_verdicts(&saved, &report).map_err(Failure::internal)?;
    print!("{}", render_verdict_diff(&deltas, &flips));
    for (case, run) in &regraded.without_workspace {
        println!(
            "Note: {case} run {run} has no workspace snapshot (run-{run}.workspace/): its file graders saw an empty workspace."
        );
    }
    finish(&report, args.out.as_deref(), recorded)
}

/// What every `grade` ends with: the text report, `-o`'s JSON report, where the history
/// recorded it, and the exit status (1 when a case failed).
pub(super) fn finish(
    report: &crate::report::SuiteReport,
    out: Option<&Path>,
    recorded: Option<String>,
) -> Result<u8, Failure> {
    super::report_files::print_text(report, false)?;
    if let Some(path) = out {
        crate::private_file::write_with(path, |out| report.write_json(out))
            .with_context(|| format!("failed to write the graded report `{}`", path.display()))
            .map_err(Failure::internal)?;
    }
    if let Some(recorded) = recorded {
        println!("{recorded}");
    }
    let failed = super::report_files::failed_cases(report)?;
    if failed == 0 {
        Ok(exit::OK)
    } else {
        eprintln!(
            "Error: {}",
            super::report_files::eval_failed(report, failed)?
        );
        Ok(exit::EVAL_FAILED)
    }
}

/// Record the (re-)graded `report` as a run of its own (`grade`: a new id, now, the
/// project's git state now; its runs' session logs and evidence from `evidence_dir` when
/// there is one). The line saying where, or `None` when the history is off or failed (a
/// warning says why).
pub(super) fn record_graded(
    history: &crate::history::Location,
    report: &mut crate::report::SuiteReport,
    evidence_dir: Option<&std::path::Path>,
) -> Option<String> {
    if *history == crate::history::Location::Off {
        return None;
    }
    let now = crate::history::now_unix_ms();
    report.provenance = crate::report::Provenance {
        run_id: Some(crate::history::new_run_id()),
        started_unix_ms: Some(now),
        finished_unix_ms: Some(now),
        git: std::env::current_dir()
            .ok()
            .and_then(|dir| crate::history::git_state(&dir)),
        provider: report.provenance.provider.clone(),
    };
    let mut run = crate::history::RecordedRun::starting("grade", report);
    run.source = evidence_dir.map(|dir| dir.display().to_string());
    let recorded = history
        .open()
        .and_then(|mut store| crate::history::record_report(&mut store, report, run, evidence_dir));
    match recorded {
        Ok(imported) => Some(format!(
            "Recorded as run {} in {history} (evalhost history; evalhost view).",
            imported.run.short_id()
        )),
        Err(e) => {
            eprintln!("Warning: the history did not record this grading: {e}");
            None
        }
    }
}

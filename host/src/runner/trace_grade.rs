//! Grading runs made elsewhere (`evalhost grade --trace FILE... CASE`; docs/traces.md): every
//! run the trace files hold (`crate::trace`) is graded with the case's graders, as run N of
//! the case, exactly as a run of evalhost's own is (`run::grade_run`), and reported the same
//! way. A trace carries no workspace: graders get no `/workspace` and the evidence's
//! `workspace` is empty, so the built-in file graders are not evaluable, saying why.

use std::sync::Arc;

use futures_util::StreamExt;

use super::prepare::PreparedCase;
use super::run::{grade_run, run_passes};
use crate::evidence::{Evidence, RunFacts};
use crate::report::{CaseReport, CaseSummary, RunReport, SuiteReport, SuiteSummary};
use crate::trace::{Imported, ImportedRun};

/// The mode a report of graded traces says it was made in.
pub const TRACE_MODE: &str = "trace";

/// Grade every run of `traces` (in file order, then the order each file holds them) with
/// `prepared`'s graders, `jobs` at a time. `strict` fails a run on any not-evaluable verdict.
pub async fn grade_traces(
    traces: &[Imported],
    prepared: PreparedCase,
    jobs: usize,
    judge: Arc<crate::judge::Judge>,
    strict: bool,
) -> SuiteReport {
    let prepared = Arc::new(prepared);
    let runs: Vec<(u32, &Imported, &ImportedRun)> = traces
        .iter()
        .flat_map(|trace| trace.runs.iter().map(move |run| (trace, run)))
        .zip(1u32..)
        .map(|((trace, run), n)| (n, trace, run))
        .collect();
    let reports: Vec<RunReport> = futures_util::stream::iter(runs)
        .map(|(n, trace, run)| grade_one(n, trace, run, prepared.clone(), judge.clone(), strict))
        .buffered(jobs.max(1))
        .collect()
        .await;
    let model = traces
        .iter()
        .flat_map(|trace| &trace.runs)
        .map(|run| run.model.as_str())
        .find(|model| !model.is_empty())
        .unwrap_or_default()
        .to_owned();
    let case = &prepared.case;
    let summary = CaseSummary::with_k(&reports, None);
    let cases = vec![CaseReport {
        name: case.name.clone(),
        path: case.path.display().to_string(),
        confine: Default::default(),
        digest: Some(case.digest.clone()),
        tags: case.tags.clone(),
        runs: reports,
        summary,
    }];
    SuiteReport {
        schema_version: crate::report::REPORT_SCHEMA_VERSION,
        evalhost_version: env!("CARGO_PKG_VERSION").to_owned(),
        mode: TRACE_MODE.to_owned(),
        model,
        runs_per_case: cases[0].runs.len() as u32,
        k: None,
        interrupted: false,
        cancelled: Vec::new(),
        agents: Vec::new(),
        confinement: None,
        provenance: Default::default(),
        prices: None,
        budget: None,
        summary: SuiteSummary::of(&cases),
        cases: cases.into(),
    }
}

/// Run `n`: `run` of `trace`, graded.
async fn grade_one(
    n: u32,
    trace: &Imported,
    run: &ImportedRun,
    prepared: Arc<PreparedCase>,
    judge: Arc<crate::judge::Judge>,
    strict: bool,
) -> RunReport {
    let evidence = evidence_of(n, run, &prepared.case.name);
    let verdicts = grade_run(prepared, &evidence, None, judge, strict).await;
    RunReport {
        run: n,
        pass: run_passes(&verdicts),
        error: None,
        usage: evidence.usage,
        cost_usd: None,
        recorded_cost_usd: None,
        tool_calls: evidence.calls.len() as u32,
        duration_ms: run.duration_ms,
        verdicts,
        warnings: Vec::new(),
        image: None,
        source: Some(format!("{}: {}", trace.path.display(), run.label)),
    }
}

/// The evidence graders see of an imported run: as the case's run `n`, without a workspace.
pub fn evidence_of(n: u32, run: &ImportedRun, case: &str) -> Evidence {
    let mut evidence = Evidence::from_session(
        &run.records,
        RunFacts {
            seeded_files: Vec::new(),
            duration_ms: run.duration_ms,
            synthetic_usage: !run.usage_recorded,
        },
    );
    evidence.case_name = case.to_owned();
    evidence.run = n;
    evidence.workspace = String::new();
    evidence
}

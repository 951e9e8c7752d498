//! Verdicts → statistics → reports: Mino's text table and the JSON report.

mod cases;
mod compare;
mod confinement;
mod cost;
mod details;
mod entry;
pub(crate) mod escape;
pub(crate) mod html;
mod junit;
mod merge;
pub(crate) mod out_layout;
pub(crate) mod read;
mod stats;
mod table;
mod text;
mod verdict_diff;

pub use crate::confine::Allowed;
pub use cases::{CaseReadBackError, CaseReports, RESIDENT_BYTES};
pub use compare::{
    CaseComparison, CaseRate, CaseSide, Change, CompareError, CompareOptions, Comparison, Flaky,
    Metric, MetricFlag, PairedMethod, PairedTest, Side, SideTotals, Tests, Verdict,
};
pub use compare::{DETECTABLE_CHANGE, compare, render_comparison};
pub use cost::{BudgetReport, PriceSource};
pub(crate) use cost::{CostSum, usd};
pub use details::ChangeKind;
pub use details::FileChange;
pub use details::WorkspaceChanges;
pub use details::{RESIDENT_DETAIL_BYTES, RunDetails};
pub use html::{render_html, write_html};
pub use junit::{render_junit, write_junit};
pub use merge::MergeError;
pub use merge::merge_reports;
pub use read::ReadReportError;
pub use read::read_report;
pub(crate) use stats::wilson_interval;
pub use stats::{pass_at_k, pass_hat_k};
pub(crate) use table::render as render_table;
pub use text::{render_text, render_text_in_color, write_text};
pub use verdict_diff::VerdictChange;
pub use verdict_diff::{RunFlip, VerdictDelta};
pub use verdict_diff::{diff_verdicts, render_verdict_diff};

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use crate::evidence::Usage;
use crate::judge::JudgeUsage;

/// Version of the JSON report's schema; bumped on any incompatible change.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The report of one suite run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteReport {
    /// Version of the report's schema ([`REPORT_SCHEMA_VERSION`] when written by this evalhost).
    pub schema_version: u32,
    /// Version of the evalhost that made the report.
    pub evalhost_version: String,
    /// `replay`, `live`, or `trace` (runs read from traces: `evalhost grade --trace`).
    pub mode: String,
    /// Model name (`scripted` in replay).
    pub model: String,
    /// The `--runs` value in effect (cases may override it: the text header says what the
    /// cases ran, `RunsEach`).
    pub runs_per_case: u32,
    /// The `--k` value, when given; otherwise k = n for every case.
    pub k: Option<u32>,
    /// Ctrl-C stopped the suite: only the runs that finished are reported.
    pub interrupted: bool,
    /// Runs that Ctrl-C / SIGTERM cancelled (not in `cases[].runs` nor in any statistic).
    pub cancelled: Vec<CancelledRun>,
    /// The real agents (presets) the suite ran, each with its version; empty (and absent
    /// from the JSON) when no case ran one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentVersion>,
    /// What every run's processes were allowed (`crate::confine`), before a case's own
    /// `confine:`; absent in reports of evalhost versions before confinement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<crate::confine::Allowed>,
    /// Where and when the run was made: its history id, start and end, the project's git
    /// state, the live provider; absent in reports of evalhost versions before the history.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// The prices the report's costs were computed with; absent when no run has a cost
    /// (docs/cost.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<PriceSource>,
    /// `--max-cost`: the budget and what was spent; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// In suite order. A suite's run keeps the first in memory and the rest, past
    /// [`RESIDENT_BYTES`], in a spool file ([`CaseReports`]).
    pub cases: CaseReports,
    /// Over every run of every case.
    pub summary: SuiteSummary,
}

/// Where and when a suite run was made (every field absent from reports of evalhost versions
/// before the history, docs/history.md).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The run's id in the history: 16 hex digits, made when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// When the run started, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    /// When the run ended, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_unix_ms: Option<u64>,
    /// The project's git state when the run started (the current directory's repository).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitState>,
    /// The live provider's API (`openai-responses`, ...); absent in replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// The project's git state: its commit, branch and whether the tree had changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitState {
    /// The full hex id of the commit `HEAD` named.
    pub commit: String,
    /// `None` on a detached HEAD without a CI branch variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Tracked files differed from the commit.
    pub dirty: bool,
}

/// A real agent a suite ran, as the report names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentVersion {
    /// The preset's name (`codex`).
    pub name: String,
    /// The version the agent reported (`0.171.0`).
    pub version: String,
}

/// A run the suite's cancellation stopped: `started` says whether it was running (and was
/// cancelled) or had not started yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelledRun {
    /// The case's name.
    pub case: String,
    /// 1-based.
    pub run: u32,
    /// The run was running (and was cancelled) rather than not started yet.
    pub started: bool,
}

/// A 95% confidence interval (Wilson score) on a pass rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound, 0 to 1.
    pub low: f64,
    /// Upper bound, 0 to 1.
    pub high: f64,
}

impl Interval {
    /// The Wilson 95% interval for `passed` of `runs`.
    pub fn wilson(runs: u32, passed: u32) -> Self {
        let (low, high) = wilson_interval(runs, passed);
        Self { low, high }
    }

    /// `0.23-0.88`: the compact form used in the table.
    pub(crate) fn compact(&self) -> String {
        format!("{:.2}-{:.2}", self.low, self.high)
    }
}

/// How many of each case's runs Ctrl-C cancelled, by case name: counted once for a report's
/// readers (a suite interrupted early has a cancelled run for nearly every case; looking each
/// case up in the list made writing the report quadratic: most of the 34–68 s that Ctrl-C on
/// 100,000 cases took to exit, `docs/performance.md`).
pub(crate) fn cancelled_by_case(report: &SuiteReport) -> HashMap<&str, u32> {
    let mut cancelled = HashMap::new();
    for run in &report.cancelled {
        *cancelled.entry(run.case.as_str()).or_insert(0) += 1;
    }
    cancelled
}

/// How many runs each case was given, for the header, gathered a case at a time: `3` when
/// every case had the same number (a case's own `runs:` counts, not just `--runs`), `1 to 3`
/// when they differ. Runs Ctrl-C cancelled count (they were planned); without cases, `--runs`.
#[derive(Debug)]
pub(crate) struct RunsEach<'a> {
    low: u32,
    high: u32,
    /// Runs Ctrl-C cancelled, by case ([`cancelled_by_case`]).
    cancelled: HashMap<&'a str, u32>,
}

impl Default for RunsEach<'_> {
    fn default() -> Self {
        Self {
            low: u32::MAX,
            high: 0,
            cancelled: HashMap::new(),
        }
    }
}

impl<'a> RunsEach<'a> {
    /// For the cases of `report`, each then counted with [`RunsEach::add`].
    pub(crate) fn new(report: &'a SuiteReport) -> Self {
        Self {
            cancelled: cancelled_by_case(report),
            ..Self::default()
        }
    }

    /// Count `case`: its runs and those Ctrl-C cancelled.
    pub(crate) fn add(&mut self, case: &CaseReport) {
        let cancelled = self.cancelled.get(case.name.as_str()).copied().unwrap_or(0);
        let planned = case.runs.len() as u32 + cancelled;
        (self.low, self.high) = (self.low.min(planned), self.high.max(planned));
    }

    /// `3`, `1 to 3`, or without cases, `--runs`.
    pub(crate) fn text(&self, report: &SuiteReport) -> String {
        if self.low > self.high {
            report.runs_per_case.to_string()
        } else if self.low != self.high {
            format!("{} to {}", self.low, self.high)
        } else {
            self.low.to_string()
        }
    }
}

/// Suite-level numbers: every run of every case counted once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SuiteSummary {
    /// Runs made.
    pub runs: u32,
    /// Runs that passed.
    pub passed: u32,
    /// `passed / runs` (0 without runs).
    pub pass_rate: f64,
    /// Wilson 95% interval on `pass_rate`.
    pub pass_rate_ci95: Interval,
    /// What the runs whose cost is known cost, USD; absent when no run's is (docs/cost.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Runs whose cost is unknown (a model without a price) in a report where some run's is
    /// known; 0 (absent) when none is.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub runs_without_price: u32,
    /// Replayed recordings: what the live runs they replay cost at today's prices, USD;
    /// absent when no run replayed a recording with a known cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl SuiteSummary {
    /// Count the runs of every case.
    pub fn of(cases: &[CaseReport]) -> Self {
        let runs = cases.iter().map(|c| c.summary.runs).sum();
        let passed = cases.iter().map(|c| c.summary.passed).sum();
        Self::new(runs, passed).with_cost(CostSum::of_cases(cases))
    }

    /// `passed` of `runs` runs passed (without cost: [`SuiteSummary::of`] sums it).
    pub fn new(runs: u32, passed: u32) -> Self {
        Self {
            runs,
            passed,
            pass_rate: rate(runs, passed),
            pass_rate_ci95: Interval::wilson(runs, passed),
            cost_usd: None,
            runs_without_price: 0,
            recorded_cost_usd: None,
        }
    }

    /// With the cost summed over the cases.
    pub(crate) fn with_cost(mut self, sum: CostSum) -> Self {
        (
            self.cost_usd,
            self.runs_without_price,
            self.recorded_cost_usd,
        ) = sum.finish().parts();
        self
    }
}

fn rate(runs: u32, passed: u32) -> f64 {
    if runs == 0 {
        0.0
    } else {
        f64::from(passed) / f64::from(runs)
    }
}

/// All runs of one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseReport {
    /// The case's name.
    pub name: String,
    /// The case file or directory the case was loaded from.
    pub path: String,
    /// What the case's `confine:` added to the suite's confinement for its runs.
    #[serde(default, skip_serializing_if = "crate::confine::Widening::is_empty")]
    pub confine: crate::confine::Widening,
    /// sha256 of the case's content (everything but its path): runs of equal digests ran the
    /// same case (`compare`, flaky cases, `run --resume`); absent in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The case's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The runs that finished, in run order.
    pub runs: Vec<RunReport>,
    /// The case's numbers over its runs (a row of the text table).
    pub summary: CaseSummary,
}

/// The numbers of one table row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CaseSummary {
    /// Runs made (n).
    pub runs: u32,
    /// Runs that passed (c).
    pub passed: u32,
    /// The k of pass@k and pass^k: `--k` capped at n, or n.
    pub k: u32,
    /// pass@k: probability that at least one of k runs passes (unbiased estimator).
    pub pass_at_k: f64,
    /// pass^k: probability that all of k runs pass (unbiased estimator).
    pub pass_hat_k: f64,
    /// `passed / runs`.
    pub pass_rate: f64,
    /// Wilson 95% interval on `pass_rate`.
    pub pass_rate_ci95: Interval,
    /// Mean model requests per run.
    pub mean_requests: f64,
    /// Mean tool calls per run.
    pub mean_tool_calls: f64,
    /// Summed input tokens.
    pub input_tokens: u64,
    /// Summed output tokens.
    pub output_tokens: u64,
    /// pass^k is 1: every run passed.
    pub pass: bool,
    /// What the runs whose cost is known cost, USD; absent when no run's is (docs/cost.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Runs whose cost is unknown while another run's is known; 0 (absent) otherwise.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub runs_without_price: u32,
    /// Replayed recordings: what the live runs they replay cost at today's prices, USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
    /// Questions graders asked the judge over every run, and the tokens the answers took
    /// (recorded answers count as recorded); absent when no grader asked.
    #[serde(default, skip_serializing_if = "JudgeUsage::is_empty")]
    pub judge: JudgeUsage,
}

/// One run of one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// 1-based.
    pub run: u32,
    /// No run error and no verdict that fails the run ([`GraderVerdict::fails_run`]).
    pub pass: bool,
    /// Why the run ended early (it then fails whatever the graders say).
    pub error: Option<String>,
    /// Model requests and tokens of the run.
    pub usage: Usage,
    /// The run's usage at the price table's price of its model, USD; absent when unknown
    /// (replay's scripted model, a model without a price; docs/cost.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// A replayed recording (`record --live`): what the live run it replays cost, at today's
    /// prices, USD; absent for other runs and recordings without a priced model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
    /// Tool calls the model requested.
    pub tool_calls: u32,
    /// Wall time of the run in milliseconds, grading included.
    pub duration_ms: u64,
    /// One per grader entry of the case, in order; empty when the run errored.
    pub verdicts: Vec<GraderVerdict>,
    /// What went wrong without ending the run, e.g. a request the model endpoint did not
    /// serve (`model endpoint: GET /v1/responses answered 404: ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The image the run's container started from, when its case has an environment
    /// (docs/environments.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<RunImage>,
    /// Where the run was made when evalhost did not make it: the trace file and the run's
    /// label in it (`evalhost grade --trace`, docs/traces.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The image a run's container started from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunImage {
    /// As the case named it: `debian:bookworm`, `build tasks/hello/environment/Dockerfile`.
    pub source: String,
    /// The id (`sha256:…`) of the image the case named (pulled or built): what a case's
    /// `digest:` pins, whatever the tag names later.
    pub digest: String,
    /// The id of the image the environment's `setup:` made of it, which the run's container
    /// started from; absent without a set-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_digest: Option<String>,
    /// The registry digest of the named image (`NAME@sha256:…`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_digest: Option<String>,
}

/// One grader's outcome for one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GraderVerdict {
    /// The grader entry's 0-based index in the case's grader list (`graders[INDEX]`; for a
    /// Nexus or AgentCompany case, its assertions in file order); `None` for a verdict no
    /// entry gave (the grading thread failed) and in reports written before it was recorded.
    #[serde(default)]
    pub entry: Option<u32>,
    /// The grader's name as the case wrote it.
    pub grader: std::sync::Arc<str>,
    /// The entry's config (shared with the case's entry: a suite holds it once).
    pub config: crate::case::GraderConfig,
    /// sha256 of the component that graded.
    pub component_digest: std::sync::Arc<str>,
    /// The grader bundle (`name`, `version`) the component came from; `null` for built-in
    /// graders and components named by path.
    pub bundle: Option<std::sync::Arc<crate::grader::BundleRef>>,
    /// `pass`, `fail`, `error` or `not_evaluable`.
    pub outcome: Outcome,
    /// The grader's score, 0.0 to 1.0 (1.0 for a plain pass, 0.0 for a plain fail).
    pub score: f64,
    /// The failure message or the error; empty on pass, except for a grader that asked the
    /// judge, whose message (the judge's reason) is kept either way.
    pub message: String,
    /// wasmtime fuel the grading call consumed.
    pub fuel_used: u64,
    /// Wall time of the grading call in microseconds.
    pub duration_us: u64,
    /// What the grader printed to stdout (capped); empty (absent from the JSON) when nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    /// What the grader printed to stderr (capped); empty (absent from the JSON) when nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// Questions the grader asked the judge and the tokens their answers took; absent
    /// when it asked none.
    #[serde(default, skip_serializing_if = "JudgeUsage::is_empty")]
    pub judge: JudgeUsage,
    /// Why a `not_evaluable` verdict is not evaluable, and whether that failed its run;
    /// absent for the other outcomes (and in reports written before it was recorded, whose
    /// not-evaluable verdicts were all warnings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_evaluable: Option<NotEvaluable>,
}

/// Why a verdict is not evaluable, and whether that fails its run (docs/reports.md, "Not
/// evaluable"): something never recorded always does; the evidence's nature only under
/// `--strict`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotEvaluable {
    /// Why.
    #[serde(flatten)]
    pub cause: NotEvaluableCause,
    /// Whether this verdict failed its run.
    pub fails_run: bool,
}

/// Why a verdict is not evaluable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum NotEvaluableCause {
    /// Something the grader needs was never recorded (a judgment replay lacks): recording it
    /// makes the verdict a pass or a fail.
    NotRecorded {
        /// The command that records it.
        record_with: String,
    },
    /// The evidence cannot hold what the grader asks about (an event a journal never
    /// holds, a latency without a complete turn): no recording would change it.
    ByNature,
}

impl NotEvaluable {
    /// The cause, failing the run when it was never recorded, or when `strict`.
    pub fn new(cause: NotEvaluableCause, strict: bool) -> Self {
        let fails_run = strict || matches!(cause, NotEvaluableCause::NotRecorded { .. });
        Self { cause, fails_run }
    }

    /// The command that records what is missing, when something is.
    pub fn record_with(&self) -> Option<&str> {
        match &self.cause {
            NotEvaluableCause::NotRecorded { record_with } => Some(record_with),
            NotEvaluableCause::ByNature => None,
        }
    }
}

/// The distinct commands that record what runs' not-evaluable verdicts lack, in the order
/// first seen, and how many verdicts need one.
#[derive(Debug, Default)]
pub(crate) struct RecordCommands {
    pub distinct: Vec<String>,
    seen: std::collections::HashSet<String>,
    /// Verdicts never recorded.
    pub verdicts: usize,
}

impl RecordCommands {
    /// The commands of `run`'s verdicts never recorded.
    pub(crate) fn add(&mut self, run: &RunReport) {
        for command in run.record_commands() {
            self.verdicts += 1;
            if self.seen.insert(command.to_owned()) {
                self.distinct.push(command.to_owned());
            }
        }
    }
}

/// A grader's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The grader passed the run.
    Pass,
    /// The grader failed the run.
    Fail,
    /// The grader could not reach a verdict (a trap, a limit, the grader's own error).
    Error,
    /// The evidence cannot answer the grader (e.g. a journal lacks the event type asked
    /// about, a judgment was never recorded); always reported with its reason, and failing
    /// the run as [`GraderVerdict::not_evaluable`] says.
    NotEvaluable,
}

impl GraderVerdict {
    /// Whether this verdict fails its run: a failure, an error, or a not-evaluable one
    /// that does (never recorded, or `--strict`).
    pub fn fails_run(&self) -> bool {
        match self.outcome {
            Outcome::Pass => false,
            Outcome::Fail | Outcome::Error => true,
            Outcome::NotEvaluable => self.not_evaluable.as_ref().is_some_and(|n| n.fails_run),
        }
    }

    /// `not evaluable: ENTRY: REASON`, or for one never recorded, `not recorded: ENTRY:
    /// REASON` (the reason names the command that records it).
    fn not_evaluable_line(&self) -> String {
        let what = match self.not_evaluable.as_ref().map(|n| &n.cause) {
            Some(NotEvaluableCause::NotRecorded { .. }) => "not recorded",
            _ => "not evaluable",
        };
        format!("{what}: {}", self.described())
    }
}

impl RunReport {
    /// Lines explaining why this run failed, without the `<case> run N: ` prefix: the run's
    /// error, or one line per failed or errored grader entry, naming it (see
    /// `GraderVerdict::described`); an error's line starts with `error: `.
    pub fn failure_lines(&self) -> Vec<String> {
        if let Some(error) = &self.error {
            return vec![error.clone()];
        }
        self.verdicts
            .iter()
            .filter(|v| v.fails_run())
            .map(|v| match v.outcome {
                Outcome::Error => format!("error: {}", v.described()),
                Outcome::NotEvaluable => v.not_evaluable_line(),
                Outcome::Pass | Outcome::Fail => v.described(),
            })
            .collect()
    }
}

impl RunReport {
    /// Lines naming graders that could not be evaluated from this run's evidence without
    /// failing it (warnings: by the evidence's nature, without `--strict`).
    pub(crate) fn not_evaluable_lines(&self) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|v| v.outcome == Outcome::NotEvaluable && !v.fails_run())
            .map(GraderVerdict::not_evaluable_line)
            .collect()
    }

    /// The commands that record what this run's not-evaluable verdicts lack, in verdict
    /// order (one per verdict never recorded).
    pub fn record_commands(&self) -> impl Iterator<Item = &str> {
        self.verdicts
            .iter()
            .filter_map(|v| v.not_evaluable.as_ref()?.record_with())
    }

    /// Lines of the graders that passed with a message (what they measured, a judge's
    /// reason): `pass: graders[0] NAME CONFIG: MESSAGE`.
    pub(crate) fn pass_lines(&self) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|v| v.outcome == Outcome::Pass && !v.message.is_empty())
            .map(|v| format!("pass: {}", v.described()))
            .collect()
    }
}

#[cfg(test)]
impl CaseReport {
    /// A case of `runs` at `cases/NAME.yaml`, summarised with k = n (the report modules' tests).
    pub(crate) fn of_runs(name: &str, runs: Vec<RunReport>) -> Self {
        Self {
            name: name.into(),
            path: format!("cases/{name}.yaml"),
            confine: Default::default(),
            digest: None,
            tags: Vec::new(),
            summary: CaseSummary::of(&runs),
            runs,
        }
    }
}

impl CaseSummary {
    /// Summarise the runs of one case (k = n).
    pub fn of(runs: &[RunReport]) -> Self {
        Self::with_k(runs, None)
    }

    /// Summarise the runs of one case with pass@k and pass^k at `k` (capped at n), or at
    /// k = n when `k` is `None`. The case passes only when pass^k is 1.
    pub fn with_k(runs: &[RunReport], k: Option<u32>) -> Self {
        let n = runs.len() as u32;
        let c = runs.iter().filter(|r| r.pass).count() as u32;
        let (cost_usd, runs_without_price, recorded_cost_usd) = CostSum::of_runs(runs).parts();
        let mean = |f: &dyn Fn(&RunReport) -> f64| {
            if n == 0 {
                0.0
            } else {
                runs.iter().map(f).sum::<f64>() / f64::from(n)
            }
        };
        Self {
            runs: n,
            passed: c,
            k: k.map_or(n, |k| k.min(n)),
            pass_at_k: pass_at_k(n, c, k.map_or(n, |k| k.min(n))),
            pass_hat_k: pass_hat_k(n, c, k.map_or(n, |k| k.min(n))),
            pass_rate: rate(n, c),
            pass_rate_ci95: Interval::wilson(n, c),
            mean_requests: mean(&|r| f64::from(r.usage.requests)),
            mean_tool_calls: mean(&|r| f64::from(r.tool_calls)),
            input_tokens: runs.iter().map(|r| r.usage.input_tokens).sum(),
            output_tokens: runs.iter().map(|r| r.usage.output_tokens).sum(),
            // pass^k is 1 exactly when every run passed (for any 1 <= k <= n).
            pass: n > 0 && c == n,
            cost_usd,
            runs_without_price,
            recorded_cost_usd,
            judge: runs.iter().flat_map(|r| &r.verdicts).fold(
                JudgeUsage::default(),
                |mut sum, v| {
                    sum.add(&v.judge);
                    sum
                },
            ),
        }
    }
}

impl SuiteReport {
    /// Cases that did not pass every run.
    pub fn failed_cases(&self) -> Result<usize, CaseReadBackError> {
        let mut failed = 0;
        for case in self.cases.iter() {
            failed += usize::from(!case?.summary.pass);
        }
        Ok(failed)
    }

    /// The distinct commands that record what the suite's not-evaluable verdicts lack (a
    /// judgment replay did not have), in report order; empty when nothing is missing.
    pub fn record_commands(&self) -> Result<Vec<String>, CaseReadBackError> {
        let mut commands = RecordCommands::default();
        for case in self.cases.iter() {
            for run in &case?.runs {
                commands.add(run);
            }
        }
        Ok(commands.distinct)
    }

    /// The report as pretty JSON (which fails only when a case cannot be read back from the
    /// spool it waited in).
    pub fn to_json(&self) -> std::io::Result<String> {
        serde_json::to_string_pretty(self).map_err(std::io::Error::from)
    }

    /// [`SuiteReport::to_json`] written to `out` as it is made, not held whole.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        serde_json::to_writer_pretty(out, self).map_err(std::io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn case(name: &str, runs: u32) -> CaseReport {
        let runs: Vec<RunReport> = (1..=runs)
            .map(|run| RunReport {
                run,
                pass: true,
                error: None,
                usage: Usage::default(),
                cost_usd: None,
                recorded_cost_usd: None,
                tool_calls: 0,
                duration_ms: 0,
                verdicts: Vec::new(),
                warnings: Vec::new(),
                image: None,
                source: None,
            })
            .collect();
        CaseReport::of_runs(name, runs)
    }

    pub(super) fn suite(cases: Vec<CaseReport>, cancelled: Vec<CancelledRun>) -> SuiteReport {
        SuiteReport {
            provenance: Default::default(),
            prices: None,
            budget: None,
            schema_version: REPORT_SCHEMA_VERSION,
            evalhost_version: "0".into(),
            mode: "replay".into(),
            model: "scripted".into(),
            runs_per_case: 1,
            k: None,
            interrupted: !cancelled.is_empty(),
            cancelled,
            agents: Vec::new(),
            confinement: None,
            summary: SuiteSummary::of(&cases),
            cases: cases.into(),
        }
    }

    fn runs_each(report: &SuiteReport) -> String {
        let mut each = RunsEach::new(report);
        for case in report.cases.iter() {
            each.add(&case.unwrap());
        }
        each.text(report)
    }

    #[test]
    fn runs_each_counts_what_the_cases_planned_not_the_flag() {
        assert_eq!(
            runs_each(&suite(vec![case("a", 3), case("b", 3)], vec![])),
            "3"
        );
        assert_eq!(
            runs_each(&suite(vec![case("a", 1), case("b", 3)], vec![])),
            "1 to 3"
        );
        assert_eq!(runs_each(&suite(vec![], vec![])), "1");
        // Ctrl-C cancelled two of b's three runs: they were planned all the same.
        let cancelled = |run| CancelledRun {
            case: "b".into(),
            run,
            started: false,
        };
        let interrupted = suite(
            vec![case("a", 3), case("b", 1)],
            vec![cancelled(2), cancelled(3)],
        );
        assert_eq!(runs_each(&interrupted), "3");
    }

    /// A suite interrupted early: every case but the first had its run cancelled. The text
    /// names the first 20 cancelled runs and counts the rest; JUnit skips each such case with
    /// its own count.
    #[test]
    fn a_suite_interrupted_early_names_some_cancelled_runs_and_counts_the_rest() {
        let names: Vec<String> = (0..30).map(|i| format!("case-{i:02}")).collect();
        let mut cases = vec![case(&names[0], 1)];
        cases.extend(names[1..].iter().map(|name| case(name, 0)));
        let cancelled = names[1..]
            .iter()
            .map(|name| CancelledRun {
                case: name.clone(),
                run: 1,
                started: false,
            })
            .collect();
        let report = suite(cases, cancelled);
        assert_eq!(runs_each(&report), "1");

        let mut out = Vec::new();
        text::write_text(&report, false, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with("Interrupted:"))
            .expect("the interrupted line");
        assert!(
            line.starts_with("Interrupted: 29 runs cancelled: case-01 run 1 (not started), "),
            "{line}"
        );
        assert!(
            line.contains("case-20 run 1 (not started), and 9 more (the report.json of `--out` lists every one)."),
            "{line}"
        );
        assert!(!line.contains("case-21"), "{line}");

        let xml = junit::render_junit(&report);
        assert_eq!(
            xml.matches("no run finished: 1 runs cancelled (interrupted)")
                .count(),
            29
        );
    }
}

//! `evalhost compare A B` (and `evalhost baseline`): two sets of runs of a suite compared case
//! by case, with statistics that say which changes the runs are evidence of.
//!
//! - **Per case** (matched by name; cases of one side only are listed, never failed): passes
//!   of runs on each side, the pass rate with its Wilson 95% interval, the difference B − A,
//!   and the two-sided p-value of Fisher's exact test ([`fisher`]).
//! - **Across cases**: Benjamini–Hochberg q-values ([`fdr`]) at the false-discovery rate
//!   [`CompareOptions::alpha`] (0.05 by default).
//! - **Verdict** ([`Verdict`]): `regressed` / `improved` when q ≤ α (and the change is larger
//!   than [`CompareOptions::min_effect`]); otherwise `no_evidence` when both sides have the runs
//!   that would detect a 20-point change with power 0.8 at α = 0.05, or `too_few_runs` with
//!   that number ([`power`]).
//! - **Over the suite**: the Wilcoxon signed-rank test on the per-case pass-rate differences
//!   ([`wilcoxon`]), the cases better / worse / tied, the pooled pass rates.
//! - **Tokens, duration, cost** side by side with their change; [`CompareOptions`]'s growth
//!   limits (what `baseline`'s `--max-token-growth` and `--max-latency-growth` set) flag a
//!   case whose mean tokens or duration per run grew beyond them as a regression too.
//!
//! The inputs are plain data ([`Side`]): made from a JSON report here, from the history store
//! elsewhere. docs/history.md ("Comparing two runs") states the formulas and their sources.

mod fdr;
mod fisher;
mod power;
mod render;
mod wilcoxon;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{CaseReadBackError, Interval, SuiteReport};

pub use power::DETECTABLE_CHANGE;
pub use render::render_comparison;
pub use wilcoxon::Method as PairedMethod;

/// Slack on the growth limits, so that a change exactly at a limit passes (15/20 → 14/20 is
/// 0.050000000000000044 in f64).
const LIMIT_TOLERANCE: f64 = 1e-9;

/// One side of a comparison: a run of a suite, as its cases' totals.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Side {
    /// How the side is named in the output (a report's path, a run id).
    pub label: String,
    /// In the side's order (B's order is the order of the comparison's rows).
    pub cases: Vec<CaseSide>,
}

/// One case's runs on one side.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseSide {
    /// The case's name.
    pub name: String,
    /// The case's content digest, when known: a case whose digest differs between the sides
    /// is compared all the same and marked `changed_case`.
    pub digest: Option<String>,
    /// Runs that finished.
    pub runs: u32,
    /// Runs that passed (capped at `runs`).
    pub passed: u32,
    /// Input tokens, summed over the runs.
    pub input_tokens: u64,
    /// Output tokens, summed over the runs.
    pub output_tokens: u64,
    /// Wall time in milliseconds, summed over the runs.
    pub duration_ms: u64,
    /// Cost in USD, summed over the runs; `None` when unknown.
    pub cost_usd: Option<f64>,
}

impl Side {
    /// The side of a JSON report: each case's digest (absent in reports older than the
    /// history), its runs, passes, tokens and cost as its summary counts them (the cost only
    /// when every run's is known), its duration summed over its runs. Fails only when a case
    /// cannot be read back from the spool it waited in.
    pub fn of_report(
        label: impl Into<String>,
        report: &SuiteReport,
    ) -> Result<Side, CaseReadBackError> {
        let mut cases = Vec::with_capacity(report.cases.len());
        for case in report.cases.iter() {
            let case = case?;
            cases.push(CaseSide {
                name: case.name.clone(),
                digest: case.digest.clone(),
                runs: case.summary.runs,
                passed: case.summary.passed,
                input_tokens: case.summary.input_tokens,
                output_tokens: case.summary.output_tokens,
                duration_ms: case.runs.iter().map(|r| r.duration_ms).sum(),
                // Known only when every run's is (a run of a model without a price has none).
                cost_usd: case
                    .summary
                    .cost_usd
                    .filter(|_| case.summary.runs_without_price == 0),
            });
        }
        Ok(Side {
            label: label.into(),
            cases,
        })
    }
}

/// How often a case's outcome flipped between runs of the same digest, across the history
/// (computed by the history store; `compare` carries it into the case's row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flaky {
    /// Runs of the case with this digest in the history.
    pub runs: u32,
    /// Times the outcome changed from one of those runs to the next.
    pub flips: u32,
}

/// What `compare` decides with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CompareOptions {
    /// The false-discovery rate of the Benjamini–Hochberg procedure: a case's change has
    /// evidence when its q-value is at most this. In (0, 1); 0.05 by default.
    pub alpha: f64,
    /// A change with evidence must also be larger than this (absolute, 0.05 = five points) to
    /// be a regression or an improvement; a smaller one is `negligible`. 0 by default;
    /// `baseline --max-drop` sets it.
    pub min_effect: f64,
    /// Flag a case whose mean input + output tokens per run grew by more than this (relative,
    /// 0.2 = 20%) as a regression, and one that shrank by as much as an improvement. Off
    /// (`None`) by default; `baseline --max-token-growth`.
    pub max_token_growth: Option<f64>,
    /// Likewise for the mean run duration (`baseline --max-latency-growth`), ...
    pub max_latency_growth: Option<f64>,
    /// ... counted only when it moved by at least this many milliseconds as well (replay runs'
    /// millisecond noise).
    pub min_latency_growth_ms: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            alpha: 0.05,
            min_effect: 0.0,
            max_token_growth: None,
            max_latency_growth: None,
            min_latency_growth_ms: 0.0,
        }
    }
}

/// Why two sides could not be compared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// `--alpha` out of range; the value given.
    #[error("the false-discovery rate (alpha) must be above 0 and below 1, found {0}")]
    Alpha(f64),
    /// `--max-drop` (the minimum effect) out of range; the value given.
    #[error("the minimum effect must be from 0 to 1, found {0}")]
    MinEffect(f64),
    /// A growth limit (`--max-token-growth`, `--max-latency-growth`) below 0 or not a
    /// number; the value given.
    #[error("a growth limit must be a number >= 0, found {0}")]
    Limit(f64),
    /// A side has two cases of one name.
    #[error("{side}: case `{name}` appears more than once")]
    DuplicateCase {
        /// The side's label.
        side: String,
        /// The case's name.
        name: String,
    },
}

/// The comparison of B with A.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Totals of side A over the cases compared (in both, with runs on both).
    pub a: SideTotals,
    /// Totals of side B, likewise.
    pub b: SideTotals,
    /// The options the comparison decided with.
    pub options: CompareOptions,
    /// The tests used, by name.
    pub tests: Tests,
    /// The compared cases: those whose outcome changed (regressed, then improved) first, then
    /// the rest, each group in B's order.
    pub cases: Vec<CaseComparison>,
    /// Cases only in A, in A's order (not compared).
    pub only_a: Vec<String>,
    /// Cases only in B, in B's order (not compared).
    pub only_b: Vec<String>,
    /// Cases in both but without a finished run on one side (an interrupted suite), in B's
    /// order (not compared).
    pub unfinished: Vec<String>,
    /// The paired test over the compared cases.
    pub suite: PairedTest,
    /// Mean input + output tokens per run over the compared cases (`None` without runs).
    pub tokens_per_run: Option<Change>,
    /// Mean run duration in ms over the compared cases.
    pub ms_per_run: Option<Change>,
    /// Summed cost of the compared cases, when known for every one of them on both sides.
    pub cost_usd: Option<Change>,
    /// Differences of setup worth knowing (mode, model), for the caller to add.
    pub notes: Vec<String>,
}

/// The names of the tests a comparison used (for `--json` readers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tests {
    /// The test of each case's change: `fisher_exact_two_sided`.
    pub per_case: &'static str,
    /// The correction across cases: `benjamini_hochberg`.
    pub multiple_comparisons: &'static str,
    /// The paired test over the suite: `wilcoxon_signed_rank`.
    pub suite: &'static str,
    /// How `too_few_runs` counts the runs needed (power 0.8, α = 0.05, a 20-point change).
    pub runs_needed: &'static str,
}

const TESTS: Tests = Tests {
    per_case: "fisher_exact_two_sided",
    multiple_comparisons: "benjamini_hochberg",
    suite: "wilcoxon_signed_rank",
    runs_needed: "fleiss_continuity_corrected_power_80_alpha_05_change_20_points",
};

/// One side's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideTotals {
    /// How the side is named in the output (a report's path, a run id).
    pub label: String,
    /// Cases on this side (compared or not).
    pub cases: usize,
    /// Runs over the compared cases.
    pub runs: u64,
    /// Runs that passed, over the compared cases.
    pub passed: u64,
    /// `passed / runs` (0 without runs).
    pub pass_rate: f64,
    /// Wilson 95% interval on `pass_rate`.
    pub pass_rate_ci95: Interval,
}

/// The Wilcoxon signed-rank test on the compared cases' pass-rate differences (B − A).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedTest {
    /// V: the sum of the ranks of the cases better on B.
    pub statistic: f64,
    /// Cases compared (the pairs).
    pub pairs: usize,
    /// Cases whose pass rate is higher on B.
    pub better: usize,
    /// Cases whose pass rate is lower on B.
    pub worse: usize,
    /// Cases whose pass rate is the same on both sides (dropped from the test, Wilcoxon's
    /// rule).
    pub tied: usize,
    /// Two-sided p-value of the test (1 without pairs that differ).
    pub p_value: f64,
    /// How the p-value was computed: exactly or by the normal approximation.
    pub method: PairedMethod,
}

/// A case compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseComparison {
    /// The case's name.
    pub name: String,
    /// The case's runs on side A.
    pub a: CaseRate,
    /// The case's runs on side B.
    pub b: CaseRate,
    /// B's pass rate minus A's.
    pub difference: f64,
    /// Fisher's exact test, two-sided.
    pub p_value: f64,
    /// Benjamini–Hochberg q-value over the compared cases.
    pub q_value: f64,
    /// What the runs say about the change.
    pub verdict: Verdict,
    /// The case's content differs between the sides (both digests known and unequal).
    pub changed_case: bool,
    /// The history's flaky mark for the case, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky: Option<Flaky>,
    /// Mean input + output tokens per run.
    pub tokens_per_run: Change,
    /// Mean run duration in ms.
    pub ms_per_run: Change,
    /// Summed cost, when known on both sides.
    pub cost_usd: Option<Change>,
    /// Tokens or duration beyond [`CompareOptions`]'s limits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<MetricFlag>,
}

/// One side of a case: passes of runs, pass rate, Wilson 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CaseRate {
    /// Runs that finished.
    pub runs: u32,
    /// Runs that passed (capped at `runs`).
    pub passed: u32,
    /// `passed / runs` (0 without runs).
    pub pass_rate: f64,
    /// Wilson 95% interval on `pass_rate`.
    pub pass_rate_ci95: Interval,
}

impl CaseRate {
    fn new(runs: u32, passed: u32) -> Self {
        let passed = passed.min(runs);
        Self {
            runs,
            passed,
            pass_rate: ratio(f64::from(passed), f64::from(runs)),
            pass_rate_ci95: Interval::wilson(runs, passed),
        }
    }
}

/// A number on each side and its change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    /// The value on side A.
    pub a: f64,
    /// The value on side B.
    pub b: f64,
    /// `b − a`.
    pub absolute: f64,
    /// `(b − a) / a`; `None` when `a` is 0.
    pub relative: Option<f64>,
}

impl Change {
    /// The change from `a` to `b`.
    pub fn new(a: f64, b: f64) -> Self {
        Self {
            a,
            b,
            absolute: b - a,
            relative: (a > 0.0).then(|| (b - a) / a),
        }
    }
}

/// What the runs say about a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Lower on B, with evidence (q ≤ α) and beyond the minimum effect.
    Regressed,
    /// Higher on B, likewise.
    Improved,
    /// A change with evidence, but no larger than [`CompareOptions::min_effect`].
    Negligible,
    /// No evidence of a change, and both sides ran enough to detect a 20-point one with power
    /// 0.8.
    NoEvidence,
    /// No evidence of a change, but too few runs to tell: `runs_needed` runs a side would
    /// detect a 20-point change with power 0.8 at α = 0.05.
    TooFewRuns {
        /// Runs a side needs.
        runs_needed: u32,
    },
}

/// A metric of [`MetricFlag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean input + output tokens per run.
    TokensPerRun,
    /// Mean run duration in milliseconds.
    MsPerRun,
}

/// A case's tokens or duration per run moved beyond a limit of [`CompareOptions`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MetricFlag {
    /// Which metric moved.
    pub metric: Metric,
    /// Its value on side A.
    pub a: f64,
    /// Its value on side B.
    pub b: f64,
    /// The relative limit it moved beyond.
    pub limit: f64,
    /// It grew (a regression); otherwise it shrank (an improvement).
    pub regression: bool,
}

impl CaseComparison {
    /// Regressed with evidence, or grew beyond a token or duration limit.
    pub fn regressed(&self) -> bool {
        self.verdict == Verdict::Regressed || self.flags.iter().any(|f| f.regression)
    }

    /// Improved with evidence, or shrank beyond a limit, and did not regress.
    pub fn improved(&self) -> bool {
        !self.regressed()
            && (self.verdict == Verdict::Improved || self.flags.iter().any(|f| !f.regression))
    }
}

impl Comparison {
    /// The cases that regressed (what makes `compare` and `baseline` exit 1).
    pub fn regressions(&self) -> impl Iterator<Item = &CaseComparison> {
        self.cases.iter().filter(|c| c.regressed())
    }

    /// The cases that improved.
    pub fn improvements(&self) -> impl Iterator<Item = &CaseComparison> {
        self.cases.iter().filter(|c| c.improved())
    }
}

impl CompareOptions {
    fn check(&self) -> Result<(), CompareError> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(CompareError::Alpha(self.alpha));
        }
        if !(0.0..=1.0).contains(&self.min_effect) {
            return Err(CompareError::MinEffect(self.min_effect));
        }
        for limit in [
            self.max_token_growth,
            self.max_latency_growth,
            Some(self.min_latency_growth_ms),
        ]
        .into_iter()
        .flatten()
        {
            if limit.is_nan() || limit < 0.0 {
                return Err(CompareError::Limit(limit));
            }
        }
        Ok(())
    }
}

/// Compare B with A, case by case (by name). `flaky` marks cases by name (empty when there
/// is no history). Runs in O(n log n) for n cases plus, per case, Fisher's test's O(runs).
pub fn compare(
    a: &Side,
    b: &Side,
    flaky: &HashMap<String, Flaky>,
    options: &CompareOptions,
) -> Result<Comparison, CompareError> {
    options.check()?;
    let duplicate = |side: &Side, name: &str| CompareError::DuplicateCase {
        side: side.label.clone(),
        name: name.to_owned(),
    };
    let mut a_by_name: HashMap<&str, &CaseSide> = HashMap::with_capacity(a.cases.len());
    for case in &a.cases {
        if a_by_name.insert(case.name.as_str(), case).is_some() {
            return Err(duplicate(a, &case.name));
        }
    }
    let mut b_names: HashSet<&str> = HashSet::with_capacity(b.cases.len());
    let mut pairs: Vec<(&CaseSide, &CaseSide)> = Vec::new();
    let (mut only_b, mut unfinished) = (Vec::new(), Vec::new());
    for case in &b.cases {
        if !b_names.insert(case.name.as_str()) {
            return Err(duplicate(b, &case.name));
        }
        match a_by_name.get(case.name.as_str()) {
            None => only_b.push(case.name.clone()),
            Some(old) if old.runs == 0 || case.runs == 0 => unfinished.push(case.name.clone()),
            Some(old) => pairs.push((old, case)),
        }
    }
    let only_a = a
        .cases
        .iter()
        .filter(|c| !b_names.contains(c.name.as_str()))
        .map(|c| c.name.clone())
        .collect();

    let p_values: Vec<f64> = pairs
        .iter()
        .map(|(old, new)| fisher::fisher_exact(old.passed, old.runs, new.passed, new.runs))
        .collect();
    let q_values = fdr::q_values(&p_values);
    let mut cases: Vec<CaseComparison> = pairs
        .iter()
        .zip(p_values.iter().zip(&q_values))
        .map(|(&(old, new), (&p, &q))| case_row(old, new, p, q, flaky, options))
        .collect();
    // Stable: each group keeps B's order.
    cases.sort_by_key(|c| {
        if c.regressed() {
            0
        } else if c.improved() {
            1
        } else {
            2
        }
    });

    let differences: Vec<wilcoxon::Difference> = pairs
        .iter()
        .map(|(old, new)| {
            wilcoxon::Difference::of_rates(
                old.passed.min(old.runs),
                old.runs,
                new.passed.min(new.runs),
                new.runs,
            )
        })
        .collect();
    let test = wilcoxon::signed_rank(&differences);
    let better = differences.iter().filter(|d| d.numerator > 0).count();
    let worse = differences.iter().filter(|d| d.numerator < 0).count();
    let suite = PairedTest {
        statistic: test.statistic,
        pairs: pairs.len(),
        better,
        worse,
        tied: pairs.len() - better - worse,
        p_value: test.p_value,
        method: test.method,
    };

    let old_sides: Vec<&CaseSide> = pairs.iter().map(|p| p.0).collect();
    let new_sides: Vec<&CaseSide> = pairs.iter().map(|p| p.1).collect();
    let (old_sum, new_sum) = (Sums::of(&old_sides), Sums::of(&new_sides));
    let per_run = |f: fn(&Sums) -> f64| {
        (old_sum.runs > 0 && new_sum.runs > 0).then(|| {
            Change::new(
                f(&old_sum) / old_sum.runs as f64,
                f(&new_sum) / new_sum.runs as f64,
            )
        })
    };
    Ok(Comparison {
        a: old_sum.totals(&a.label, a.cases.len()),
        b: new_sum.totals(&b.label, b.cases.len()),
        options: *options,
        tests: TESTS,
        cases,
        only_a,
        only_b,
        unfinished,
        suite,
        tokens_per_run: per_run(|s| s.tokens as f64),
        ms_per_run: per_run(|s| s.duration_ms as f64),
        cost_usd: old_sum
            .cost_usd
            .zip(new_sum.cost_usd)
            .map(|(a, b)| Change::new(a, b)),
        notes: Vec::new(),
    })
}

/// One side's sums over the compared cases.
struct Sums {
    runs: u64,
    passed: u64,
    tokens: u64,
    duration_ms: u64,
    /// `None` when some case's cost is unknown.
    cost_usd: Option<f64>,
}

impl Sums {
    fn of(cases: &[&CaseSide]) -> Self {
        let mut sums = Sums {
            runs: 0,
            passed: 0,
            tokens: 0,
            duration_ms: 0,
            cost_usd: Some(0.0),
        };
        for case in cases {
            sums.runs += u64::from(case.runs);
            sums.passed += u64::from(case.passed.min(case.runs));
            sums.tokens = sums
                .tokens
                .saturating_add(case.input_tokens.saturating_add(case.output_tokens));
            sums.duration_ms = sums.duration_ms.saturating_add(case.duration_ms);
            sums.cost_usd = sums.cost_usd.zip(case.cost_usd).map(|(sum, c)| sum + c);
        }
        if cases.is_empty() {
            sums.cost_usd = None;
        }
        sums
    }

    fn totals(&self, label: &str, cases: usize) -> SideTotals {
        // Wilson's interval takes u32 counts: past that, the same proportion at u32::MAX runs
        // (the interval is then a point anyway).
        let (runs, passed) = match u32::try_from(self.runs) {
            Ok(runs) => (runs, self.passed as u32),
            Err(_) => (
                u32::MAX,
                (self.passed as f64 / self.runs as f64 * f64::from(u32::MAX)) as u32,
            ),
        };
        SideTotals {
            label: label.to_owned(),
            cases,
            runs: self.runs,
            passed: self.passed,
            pass_rate: ratio(self.passed as f64, self.runs as f64),
            pass_rate_ci95: Interval::wilson(runs, passed),
        }
    }
}

fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// The row of a case in both sides, with runs on both.
fn case_row(
    old: &CaseSide,
    new: &CaseSide,
    p_value: f64,
    q_value: f64,
    flaky: &HashMap<String, Flaky>,
    options: &CompareOptions,
) -> CaseComparison {
    let (a, b) = (
        CaseRate::new(old.runs, old.passed),
        CaseRate::new(new.runs, new.passed),
    );
    let difference = b.pass_rate - a.pass_rate;
    let verdict = if q_value <= options.alpha {
        if difference == 0.0 || difference.abs() <= options.min_effect + LIMIT_TOLERANCE {
            Verdict::Negligible
        } else if difference < 0.0 {
            Verdict::Regressed
        } else {
            Verdict::Improved
        }
    } else {
        let pooled =
            (f64::from(a.passed) + f64::from(b.passed)) / (f64::from(a.runs) + f64::from(b.runs));
        let runs_needed = power::runs_needed(pooled);
        if a.runs.min(b.runs) >= runs_needed {
            Verdict::NoEvidence
        } else {
            Verdict::TooFewRuns { runs_needed }
        }
    };
    let per_run = |total: u64, side: &CaseRate| total as f64 / f64::from(side.runs);
    let tokens_per_run = Change::new(
        per_run(old.input_tokens.saturating_add(old.output_tokens), &a),
        per_run(new.input_tokens.saturating_add(new.output_tokens), &b),
    );
    let ms_per_run = Change::new(per_run(old.duration_ms, &a), per_run(new.duration_ms, &b));
    let mut flags = Vec::new();
    let mut flag = |metric, change: &Change, limit: Option<f64>, floor: f64| {
        if let (Some(limit), Some(growth)) = (limit, change.relative)
            && growth.abs() > limit + LIMIT_TOLERANCE
            && change.absolute.abs() >= floor
        {
            flags.push(MetricFlag {
                metric,
                a: change.a,
                b: change.b,
                limit,
                regression: growth > 0.0,
            });
        }
    };
    flag(
        Metric::TokensPerRun,
        &tokens_per_run,
        options.max_token_growth,
        0.0,
    );
    flag(
        Metric::MsPerRun,
        &ms_per_run,
        options.max_latency_growth,
        options.min_latency_growth_ms,
    );
    CaseComparison {
        name: new.name.clone(),
        a,
        b,
        difference,
        p_value,
        q_value,
        verdict,
        changed_case: matches!((&old.digest, &new.digest), (Some(x), Some(y)) if x != y),
        flaky: flaky.get(&new.name).copied(),
        tokens_per_run,
        ms_per_run,
        cost_usd: old
            .cost_usd
            .zip(new.cost_usd)
            .map(|(a, b)| Change::new(a, b)),
        flags,
    }
}

#[cfg(test)]
mod tests;

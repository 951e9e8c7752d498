//! `evalhost baseline`: compare a new report with a baseline report, case by case, and say
//! what regressed, as Nexus's `eval baseline` does.
//!
//! For every case in both reports:
//! - **status**: a case that passed every run and no longer does is a regression (Nexus's
//!   "new failure"); the reverse is an improvement.
//! - **pass rate**: a drop of more than `max_drop` (absolute, 0.05 = five points) is a
//!   regression; a rise of as much an improvement. Shown only when the status did not flip.
//! - **tokens**: mean input + output tokens per run growing by more than `max_token_growth`
//!   (relative, 0.2 = 20%) is a regression; shrinking by as much an improvement.
//! - **latency**: mean run duration growing by more than `max_latency_growth` (relative) and
//!   by at least `min_latency_growth_ms` is a regression (the floor keeps millisecond noise of
//!   replay runs from failing CI); shrinking likewise an improvement.
//!
//! A metric whose baseline is 0 has no relative growth and is not compared (as Nexus skips a
//! zero baseline). Cases in only one report are listed, never failed. Thresholds are
//! "beyond": a change exactly at the threshold passes; `inf` turns a check off.

use std::collections::HashMap;

use super::{CaseReadBackError, CaseReport, SuiteReport, table};

/// Slack on threshold comparisons, so that a change exactly at a threshold passes.
const THRESHOLD_TOLERANCE: f64 = 1e-9;

/// The limits of `evalhost baseline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Largest allowed absolute drop of a case's pass rate.
    pub max_drop: f64,
    /// Largest allowed relative growth of a case's mean tokens per run.
    pub max_token_growth: f64,
    /// Largest allowed relative growth of a case's mean run duration.
    pub max_latency_growth: f64,
    /// Latency growth below this many milliseconds is never a regression.
    pub min_latency_growth_ms: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            max_drop: 0.05,
            max_token_growth: 0.2,
            max_latency_growth: 0.5,
            min_latency_growth_ms: 100.0,
        }
    }
}

/// What moved in one case.
#[derive(Debug, Clone, PartialEq)]
pub enum Movement {
    /// The case's status flipped (pass = every run passed).
    Status { old: Rate, new: Rate },
    /// The pass rate moved beyond `max_drop`.
    PassRate { old: Rate, new: Rate },
    /// Mean input + output tokens per run moved beyond `max_token_growth`.
    Tokens { old: f64, new: f64 },
    /// Mean run duration (ms) moved beyond `max_latency_growth`.
    Latency { old: f64, new: f64 },
}

/// A case's passed runs of its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub passed: u32,
    pub runs: u32,
}

impl Rate {
    fn of(case: &CaseReport) -> Self {
        Self {
            passed: case.summary.passed,
            runs: case.summary.runs,
        }
    }

    fn value(self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            f64::from(self.passed) / f64::from(self.runs)
        }
    }

    fn all_passed(self) -> bool {
        self.runs > 0 && self.passed == self.runs
    }
}

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub case: String,
    pub movement: Movement,
    /// A regression fails the comparison; otherwise it is an improvement.
    pub regression: bool,
}

/// The comparison of a new report with a baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineDiff {
    pub findings: Vec<Finding>,
    /// Cases only in the baseline, in its order.
    pub only_old: Vec<String>,
    /// Cases only in the new report, in its order.
    pub only_new: Vec<String>,
    /// Cases in both.
    pub compared: usize,
    /// Runs passed / made over the compared cases: baseline, then new.
    pub old_runs: Rate,
    pub new_runs: Rate,
    /// Differences of setup worth knowing (mode, model).
    pub notes: Vec<String>,
}

impl BaselineDiff {
    /// The findings that fail the comparison.
    pub fn regressions(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.regression)
    }

    /// The findings that are improvements.
    pub fn improvements(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.regression)
    }
}

/// Compare `new` with the baseline `old`, case by case (by case name). Fails only when a
/// case cannot be read back from the spool it waited in.
pub fn compare(
    old: &SuiteReport,
    new: &SuiteReport,
    limits: &Thresholds,
) -> Result<BaselineDiff, CaseReadBackError> {
    let (old_cases, new_cases) = (old.cases.read_all()?, new.cases.read_all()?);
    let new_by_name: HashMap<&str, &CaseReport> =
        new_cases.iter().map(|c| (c.name.as_str(), &**c)).collect();
    let old_names: HashMap<&str, ()> = old_cases.iter().map(|c| (c.name.as_str(), ())).collect();
    let mut diff = BaselineDiff {
        findings: Vec::new(),
        only_old: Vec::new(),
        only_new: new_cases
            .iter()
            .filter(|c| !old_names.contains_key(c.name.as_str()))
            .map(|c| c.name.clone())
            .collect(),
        compared: 0,
        old_runs: Rate { passed: 0, runs: 0 },
        new_runs: Rate { passed: 0, runs: 0 },
        notes: setup_notes(old, new),
    };
    for old_case in &old_cases {
        let Some(new_case) = new_by_name.get(old_case.name.as_str()) else {
            diff.only_old.push(old_case.name.clone());
            continue;
        };
        let (o, n) = (Rate::of(old_case), Rate::of(new_case));
        if n.runs == 0 && o.runs > 0 {
            // Every run cancelled (an interrupted suite): nothing to compare, and it must
            // not pass as "compared, no regression".
            diff.only_old.push(format!(
                "{} (no finished run in the new report)",
                old_case.name
            ));
            continue;
        }
        diff.compared += 1;
        diff.old_runs.passed += o.passed;
        diff.old_runs.runs += o.runs;
        diff.new_runs.passed += n.passed;
        diff.new_runs.runs += n.runs;
        let mut found = |movement, regression| {
            diff.findings.push(Finding {
                case: old_case.name.clone(),
                movement,
                regression,
            })
        };
        if o.all_passed() != n.all_passed() && o.runs > 0 && n.runs > 0 {
            found(Movement::Status { old: o, new: n }, o.all_passed());
        } else if o.runs > 0 && n.runs > 0 {
            let change = n.value() - o.value();
            // A change exactly at the threshold passes; the tolerance absorbs the rounding
            // of `c/n` (15/20 → 14/20 is 0.050000000000000044 in f64).
            if change.abs() > limits.max_drop + THRESHOLD_TOLERANCE {
                found(Movement::PassRate { old: o, new: n }, change < 0.0);
            }
        }
        if let (Some(a), Some(b)) = (tokens_per_run(old_case), tokens_per_run(new_case))
            && let Some(growth) = growth(a, b)
            && growth.abs() > limits.max_token_growth + THRESHOLD_TOLERANCE
        {
            found(Movement::Tokens { old: a, new: b }, growth > 0.0);
        }
        if let (Some(a), Some(b)) = (latency_per_run(old_case), latency_per_run(new_case))
            && let Some(growth) = growth(a, b)
            && growth.abs() > limits.max_latency_growth + THRESHOLD_TOLERANCE
            && (b - a).abs() >= limits.min_latency_growth_ms
        {
            found(Movement::Latency { old: a, new: b }, growth > 0.0);
        }
    }
    Ok(diff)
}

/// Relative change from `old` to `new`; none from a zero baseline.
fn growth(old: f64, new: f64) -> Option<f64> {
    (old > 0.0).then(|| (new - old) / old)
}

fn tokens_per_run(case: &CaseReport) -> Option<f64> {
    let runs = case.summary.runs;
    let tokens = case.summary.input_tokens + case.summary.output_tokens;
    (runs > 0).then(|| tokens as f64 / f64::from(runs))
}

fn latency_per_run(case: &CaseReport) -> Option<f64> {
    let runs = case.runs.len();
    let total: u64 = case.runs.iter().map(|r| r.duration_ms).sum();
    (runs > 0).then(|| total as f64 / runs as f64)
}

fn setup_notes(old: &SuiteReport, new: &SuiteReport) -> Vec<String> {
    let mut notes = Vec::new();
    if old.mode != new.mode {
        notes.push(format!(
            "the baseline ran in {} mode, the new report in {} mode",
            old.mode, new.mode
        ));
    }
    if old.model != new.model {
        notes.push(format!(
            "the baseline ran model {}, the new report model {}",
            old.model, new.model
        ));
    }
    notes
}

/// The comparison as text: regressions, improvements, cases in one report only, a summary.
pub fn render_baseline(diff: &BaselineDiff, thresholds: &Thresholds) -> String {
    let mut out = String::new();
    for note in &diff.notes {
        out.push_str(&format!("Note: {note}.\n"));
    }
    for (title, regression) in [("Regressions", true), ("Improvements", false)] {
        let findings: Vec<&Finding> = diff
            .findings
            .iter()
            .filter(|f| f.regression == regression)
            .collect();
        if findings.is_empty() {
            out.push_str(&format!("{title}: none.\n"));
            continue;
        }
        out.push_str(&format!("{title} ({}):\n", findings.len()));
        let mut rows = vec![
            ["CASE", "CHECK", "BASELINE", "NEW", "CHANGE", "LIMIT"]
                .map(String::from)
                .to_vec(),
        ];
        rows.extend(findings.iter().map(|f| row(f, thresholds)));
        for line in table::render(&rows).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if !diff.only_old.is_empty() {
        out.push_str(&format!(
            "Only in the baseline (not compared): {}.\n",
            diff.only_old.join(", ")
        ));
    }
    if !diff.only_new.is_empty() {
        out.push_str(&format!(
            "Only in the new report (not compared): {}.\n",
            diff.only_new.join(", ")
        ));
    }
    out.push_str(&format!(
        "Compared {} cases: {} of {} runs passed in the baseline, {} of {} now.\n",
        diff.compared,
        diff.old_runs.passed,
        diff.old_runs.runs,
        diff.new_runs.passed,
        diff.new_runs.runs
    ));
    out
}

fn row(finding: &Finding, limits: &Thresholds) -> Vec<String> {
    let rate = |r: Rate| format!("{:.2} ({}/{})", r.value(), r.passed, r.runs);
    let percent = |old: f64, new: f64| format!("{:+.0}%", (new - old) / old * 100.0);
    let sign = if finding.regression { "+" } else { "-" };
    let cells: [String; 5] = match &finding.movement {
        Movement::Status { old, new } => {
            let status = |r: Rate| {
                let word = if r.all_passed() { "pass" } else { "FAIL" };
                format!("{word} ({}/{})", r.passed, r.runs)
            };
            let flip = if finding.regression {
                "pass → fail"
            } else {
                "fail → pass"
            };
            [
                "status".into(),
                status(*old),
                status(*new),
                flip.into(),
                String::new(),
            ]
        }
        Movement::PassRate { old, new } => [
            "pass rate".into(),
            rate(*old),
            rate(*new),
            format!("{:+.2}", new.value() - old.value()),
            format!(
                "{}{:.2}",
                if finding.regression { "-" } else { "+" },
                limits.max_drop
            ),
        ],
        Movement::Tokens { old, new } => [
            "tokens/run".into(),
            format!("{old:.0}"),
            format!("{new:.0}"),
            percent(*old, *new),
            format!("{sign}{:.0}%", limits.max_token_growth * 100.0),
        ],
        Movement::Latency { old, new } => [
            "ms/run".into(),
            format!("{old:.0}"),
            format!("{new:.0}"),
            percent(*old, *new),
            format!(
                "{sign}{:.0}% and {sign}{:.0} ms",
                limits.max_latency_growth * 100.0,
                limits.min_latency_growth_ms
            ),
        ],
    };
    std::iter::once(finding.case.clone()).chain(cells).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Usage;
    use crate::report::{RunReport, SuiteSummary};

    fn run(pass: bool, tokens: u64, duration_ms: u64) -> RunReport {
        RunReport {
            run: 1,
            pass,
            error: None,
            usage: Usage {
                requests: 1,
                input_tokens: tokens,
                output_tokens: 0,
                synthetic: true,
            },
            tool_calls: 0,
            duration_ms,
            verdicts: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn case(name: &str, runs: Vec<RunReport>) -> CaseReport {
        CaseReport::of_runs(name, runs)
    }

    fn suite(cases: Vec<CaseReport>) -> SuiteReport {
        SuiteReport {
            schema_version: crate::report::REPORT_SCHEMA_VERSION,
            evalhost_version: "0".into(),
            mode: "replay".into(),
            model: "scripted".into(),
            runs_per_case: 1,
            k: None,
            interrupted: false,
            cancelled: Vec::new(),
            agents: Vec::new(),
            confinement: None,
            summary: SuiteSummary::of(&cases),
            cases: cases.into(),
        }
    }

    #[test]
    fn flags_each_kind_of_regression_and_lists_one_sided_cases() {
        let old = suite(vec![
            case("flips", vec![run(true, 100, 10)]),
            case("drops", (0..10).map(|i| run(i < 9, 100, 10)).collect()),
            case("tokens", vec![run(true, 100, 10)]),
            case("slow", vec![run(true, 100, 100)]),
            case("gone", vec![run(true, 100, 10)]),
        ]);
        let new = suite(vec![
            case("flips", vec![run(false, 100, 10)]),
            case("drops", (0..10).map(|i| run(i < 7, 100, 10)).collect()),
            case("tokens", vec![run(true, 121, 10)]),
            case("slow", vec![run(true, 100, 251)]),
            case("added", vec![run(true, 100, 10)]),
        ]);
        let diff = compare(&old, &new, &Thresholds::default()).unwrap();
        let kinds: Vec<(&str, bool)> = diff
            .findings
            .iter()
            .map(|f| (f.case.as_str(), f.regression))
            .collect();
        assert_eq!(
            kinds,
            [
                ("flips", true),
                ("drops", true),
                ("tokens", true),
                ("slow", true)
            ]
        );
        assert_eq!(diff.only_old, ["gone"]);
        assert_eq!(diff.only_new, ["added"]);
        let text = render_baseline(&diff, &Thresholds::default());
        assert!(text.contains("pass → fail"), "{text}");
        assert!(
            text.contains("Only in the baseline (not compared): gone."),
            "{text}"
        );
    }

    #[test]
    fn changes_within_the_limits_pass_and_small_latency_growth_is_noise() {
        let old = suite(vec![
            case("fast", vec![run(true, 100, 4)]),
            case("half", (0..20).map(|i| run(i < 10, 100, 10)).collect()),
            case("rounded", (0..20).map(|i| run(i < 15, 100, 10)).collect()),
            case("tokens", vec![run(true, 100, 10)]),
        ]);
        let new = suite(vec![
            // +125% but only 5 ms: under the 100 ms floor.
            case("fast", vec![run(true, 100, 9)]),
            // 10/20 -> 9/20: a drop of 0.05, not beyond --max-drop 0.05.
            case("half", (0..20).map(|i| run(i < 9, 100, 10)).collect()),
            // 15/20 -> 14/20: also exactly 0.05, although f64 makes it 0.050000000000000044.
            case("rounded", (0..20).map(|i| run(i < 14, 100, 10)).collect()),
            // Exactly +20%: not beyond --max-token-growth 0.2.
            case("tokens", vec![run(true, 120, 10)]),
        ]);
        let diff = compare(&old, &new, &Thresholds::default()).unwrap();
        assert_eq!(diff.findings, []);
    }

    #[test]
    fn a_case_without_finished_runs_is_listed_not_compared() {
        let old = suite(vec![case("cut", vec![run(true, 100, 10)])]);
        let new = suite(vec![case("cut", vec![])]);
        let diff = compare(&old, &new, &Thresholds::default()).unwrap();
        assert_eq!(diff.compared, 0);
        assert_eq!(
            diff.only_old,
            vec!["cut (no finished run in the new report)".to_owned()]
        );
    }

    #[test]
    fn improvements_are_not_regressions() {
        let old = suite(vec![case("fixed", vec![run(false, 200, 10)])]);
        let new = suite(vec![case("fixed", vec![run(true, 100, 10)])]);
        let diff = compare(&old, &new, &Thresholds::default()).unwrap();
        assert_eq!(diff.regressions().count(), 0);
        assert_eq!(diff.improvements().count(), 2);
    }
}

//! The comparison as text, in the style of the run report: a few header lines, one table row
//! per compared case (changed cases first), then the one-sided cases, the suite's numbers and
//! a closing line naming the regressions.

use super::super::table;
use super::{
    CaseComparison, CaseRate, Change, Comparison, Metric, MetricFlag, PairedMethod, Verdict,
};

const PASS_STYLE: &str = "\x1b[32m";
const FAIL_STYLE: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

/// Names a line lists before counting the rest.
const NAMED: usize = 20;

/// The comparison as text; `color` paints the verdict words and the closing line (ANSI), the
/// text being otherwise the same.
pub fn render_comparison(comparison: &Comparison, color: bool) -> String {
    let c = comparison;
    let mut out = String::new();
    for side in [("A", &c.a), ("B", &c.b)] {
        out.push_str(&format!(
            "{}: {}, {} case{}.\n",
            side.0,
            side.1.label,
            side.1.cases,
            plural(side.1.cases)
        ));
    }
    for note in &c.notes {
        out.push_str(&format!("Note: {note}.\n"));
    }
    out.push_str(&tests_line(c));
    if !c.cases.is_empty() {
        out.push_str(&table::render(&rows(c, color)));
    }
    for (title, names) in [
        ("Only in A (not compared)", &c.only_a),
        ("Only in B (not compared)", &c.only_b),
        ("No finished run on one side (not compared)", &c.unfinished),
    ] {
        if !names.is_empty() {
            out.push_str(&format!("{title}: {}.\n", named(names.iter())));
        }
    }
    out.push_str(&suite_lines(c));
    out.push_str(&closing_line(c, color));
    out
}

fn tests_line(c: &Comparison) -> String {
    let n = c.cases.len();
    let mut line = format!(
        "Tests: per case: Fisher's exact test, two-sided; Benjamini–Hochberg FDR {}% over {n} case{}; suite: Wilcoxon signed-rank over {} paired case{}.\n",
        percent(c.options.alpha),
        plural(n),
        c.suite.pairs,
        plural(c.suite.pairs),
    );
    let o = &c.options;
    let mut limits = Vec::new();
    if o.min_effect > 0.0 {
        limits.push(format!(
            "a pass-rate change with evidence counts beyond {:.2}",
            o.min_effect
        ));
    }
    if let Some(limit) = o.max_token_growth {
        limits.push(format!("tokens/run beyond ±{}%", percent(limit)));
    }
    if let Some(limit) = o.max_latency_growth {
        limits.push(format!(
            "ms/run beyond ±{}% and {} ms",
            percent(limit),
            o.min_latency_growth_ms
        ));
    }
    if !limits.is_empty() {
        line.push_str(&format!("Limits: {}.\n", limits.join("; ")));
    }
    line
}

fn rows(c: &Comparison, color: bool) -> Vec<Vec<String>> {
    let with_cost = c.cases.iter().any(|case| case.cost_usd.is_some());
    let mut header: Vec<String> = ["CASE", "A", "B", "CHANGE", "p", "q", "TOK/RUN", "MS/RUN"]
        .map(String::from)
        .to_vec();
    if with_cost {
        header.push("COST".into());
    }
    header.push("VERDICT".into());
    let mut rows = vec![header];
    for case in &c.cases {
        let mut row = vec![
            case.name.clone(),
            rate(&case.a),
            rate(&case.b),
            signed(case.difference, 2),
            probability(case.p_value),
            probability(case.q_value),
            relative(&case.tokens_per_run),
            relative(&case.ms_per_run),
        ];
        if with_cost {
            row.push(case.cost_usd.as_ref().map_or("-".into(), relative));
        }
        // The last column is not padded, so colour codes cannot misalign the table.
        row.push(verdict_cell(case, c, color));
        rows.push(row);
    }
    rows
}

/// `3/3 (0.44-1.00)`.
fn rate(side: &CaseRate) -> String {
    format!(
        "{}/{} ({})",
        side.passed,
        side.runs,
        side.pass_rate_ci95.compact()
    )
}

/// `0.031`, `1.5e-11`.
fn probability(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// `+15%`, `0%`; `new` from nothing, `-` when both are 0.
fn relative(change: &Change) -> String {
    match change.relative {
        Some(r) if r.abs() < 0.005 => "0%".into(),
        Some(r) => format!("{}%", signed(r * 100.0, 0)),
        None if change.b > 0.0 => "new".into(),
        None => "-".into(),
    }
}

fn verdict_cell(case: &CaseComparison, c: &Comparison, color: bool) -> String {
    let word = match case.verdict {
        Verdict::Regressed => paint("regressed", FAIL_STYLE, color),
        Verdict::Improved => paint("improved", PASS_STYLE, color),
        Verdict::Negligible => format!("negligible (change within {:.2})", c.options.min_effect),
        Verdict::NoEvidence => "no evidence of a change".into(),
        Verdict::TooFewRuns { runs_needed } => {
            format!("too few runs to tell (needs {runs_needed} runs a side)")
        }
    };
    let mut parts = vec![word];
    if case.changed_case {
        parts.push("case changed".into());
    }
    if let Some(flaky) = case.flaky {
        parts.push(format!(
            "flaky: {} flip{} in {} runs",
            flaky.flips,
            plural(flaky.flips as usize),
            flaky.runs
        ));
    }
    for flag in &case.flags {
        let text = flag_text(flag, c);
        parts.push(if flag.regression {
            paint(&text, FAIL_STYLE, color)
        } else {
            paint(&text, PASS_STYLE, color)
        });
    }
    parts.join("; ")
}

/// `tokens/run 714 → 1428 (+100%, limit ±20%)`.
fn flag_text(flag: &MetricFlag, c: &Comparison) -> String {
    let change = Change::new(flag.a, flag.b);
    let (name, limit) = match flag.metric {
        Metric::TokensPerRun => ("tokens/run", format!("±{}%", percent(flag.limit))),
        Metric::MsPerRun => (
            "ms/run",
            format!(
                "±{}% and {} ms",
                percent(flag.limit),
                c.options.min_latency_growth_ms
            ),
        ),
    };
    format!(
        "{name} {:.0} → {:.0} ({}, limit {limit})",
        flag.a,
        flag.b,
        relative(&change)
    )
}

fn suite_lines(c: &Comparison) -> String {
    let mut out = String::new();
    let (a, b) = (&c.a, &c.b);
    let n = c.suite.pairs;
    if n == 0 {
        out.push_str("Suite: no case was compared.\n");
        return out;
    }
    out.push_str(&format!(
        "Suite, over the {n} case{} compared: A {} of {} runs passed, {:.2} ({}); B {} of {}, {:.2} ({}); change {}.\n",
        plural(n),
        a.passed,
        a.runs,
        a.pass_rate,
        a.pass_rate_ci95.compact(),
        b.passed,
        b.runs,
        b.pass_rate,
        b.pass_rate_ci95.compact(),
        signed(b.pass_rate - a.pass_rate, 2),
    ));
    let s = &c.suite;
    let method = match s.method {
        PairedMethod::Exact => "exact",
        PairedMethod::Normal => "normal approximation",
    };
    out.push_str(&format!(
        "Paired test: Wilcoxon signed-rank V = {}, p = {} ({method}); {} case{} better on B, {} worse, {} the same.\n",
        s.statistic,
        probability(s.p_value),
        s.better,
        plural(s.better),
        s.worse,
        s.tied,
    ));
    let mut per_run = Vec::new();
    if let Some(tokens) = &c.tokens_per_run {
        per_run.push(format!("tokens A {}", side_by_side(tokens, "")));
    }
    if let Some(ms) = &c.ms_per_run {
        per_run.push(format!("duration A {}", side_by_side(ms, " ms")));
    }
    if !per_run.is_empty() {
        out.push_str(&format!("Per run: {}.\n", per_run.join("; ")));
    }
    if let Some(cost) = &c.cost_usd {
        let change = match cost.relative {
            Some(r) => format!("{}, {}%", signed(cost.absolute, 4), signed(r * 100.0, 0)),
            None => signed(cost.absolute, 4),
        };
        out.push_str(&format!(
            "Cost: A ${:.4}, B ${:.4} ({change} USD).\n",
            cost.a, cost.b
        ));
    }
    out
}

/// `714, B 820 (+106, +15%)` (after `A `).
fn side_by_side(change: &Change, unit: &str) -> String {
    let mut text = format!(
        "{:.0}{unit}, B {:.0}{unit} ({}{unit}",
        change.a,
        change.b,
        signed(change.absolute, 0)
    );
    if let Some(r) = change.relative {
        text.push_str(&format!(", {}%", signed(r * 100.0, 0)));
    }
    text.push(')');
    text
}

fn closing_line(c: &Comparison, color: bool) -> String {
    let mut counts = [0usize; 5];
    let mut most_needed = 0;
    for case in &c.cases {
        let index = match case.verdict {
            Verdict::Regressed => 0,
            Verdict::Improved => 1,
            Verdict::Negligible => 2,
            Verdict::NoEvidence => 3,
            Verdict::TooFewRuns { runs_needed } => {
                most_needed = most_needed.max(runs_needed);
                4
            }
        };
        counts[index] += 1;
    }
    let mut parts = vec![
        format!("{} regressed", counts[0]),
        format!("{} improved", counts[1]),
    ];
    if counts[2] > 0 {
        parts.push(format!("{} negligible", counts[2]));
    }
    parts.push(format!("{} no evidence of a change", counts[3]));
    let mut tally = format!("Pass rates: {}", parts.join(", "));
    tally.push_str(&match counts[4] {
        0 => ", 0 too few runs to tell.\n".to_owned(),
        n => format!(
            ", {n} too few runs to tell (up to {most_needed} runs a side would detect a {}-point change).\n",
            (super::DETECTABLE_CHANGE * 100.0).round()
        ),
    });
    let regressions: Vec<String> = c.regressions().map(what_regressed).collect();
    let closing = if regressions.is_empty() {
        paint("No regressions.", PASS_STYLE, color)
    } else {
        paint(
            &format!(
                "Regressions ({}): {}.",
                regressions.len(),
                named(regressions.iter())
            ),
            FAIL_STYLE,
            color,
        )
    };
    format!("{tally}{closing}\n")
}

/// `bash-denied (pass rate)`, `slow (ms/run)`.
fn what_regressed(case: &CaseComparison) -> String {
    let mut what = Vec::new();
    if case.verdict == Verdict::Regressed {
        what.push("pass rate");
    }
    for flag in case.flags.iter().filter(|f| f.regression) {
        what.push(match flag.metric {
            Metric::TokensPerRun => "tokens/run",
            Metric::MsPerRun => "ms/run",
        });
    }
    format!("{} ({})", case.name, what.join(", "))
}

/// The first [`NAMED`] names, then how many more.
fn named<'a>(names: impl ExactSizeIterator<Item = &'a String>) -> String {
    let total = names.len();
    let shown: Vec<&str> = names.take(NAMED).map(String::as_str).collect();
    let more = total - shown.len();
    if more == 0 {
        shown.join(", ")
    } else {
        format!("{}, and {more} more", shown.join(", "))
    }
}

/// `+0.25`, `-3`: with its sign, and never `-0` (what rounds to 0 is `+0`).
fn signed(value: f64, decimals: usize) -> String {
    let scale = 10f64.powi(decimals as i32);
    let rounded = (value * scale).round() / scale;
    let rounded = if rounded == 0.0 { 0.0 } else { rounded };
    format!("{rounded:+.decimals$}")
}

/// 0.05 → `5`, 0.025 → `2.5`.
fn percent(fraction: f64) -> String {
    let value = (fraction * 100.0 * 1e6).round() / 1e6;
    format!("{value}")
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

//! The text report, in Mino's shape: a header line, the table, failure lines, a verdict line.

use std::borrow::Cow;

use super::{SuiteReport, table};

/// ANSI styles of the words a reader scans for.
const PASS_STYLE: &str = "\x1b[32m";
const FAIL_STYLE: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

/// Render the text report. The closing `Error: Eval failed: ...` line is the CLI's.
pub fn render_text(report: &SuiteReport) -> String {
    render(report, false)
}

/// [`render_text`] for a terminal: the STATUS words and the closing verdict line in colour
/// (ANSI: green for pass, bold red for failure); otherwise byte for byte the same text.
pub fn render_text_in_color(report: &SuiteReport) -> String {
    render(report, true)
}

/// `text` in `style` when colouring.
fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

fn render(report: &SuiteReport, color: bool) -> String {
    let mut out = String::new();
    let n = report.cases.len();
    let runs = report.runs_each();
    if report.mode == "replay" {
        let usages = || report.cases.iter().flat_map(|c| &c.runs).map(|r| r.usage);
        let tokens = if usages().all(|u| u.synthetic) {
            "synthetic token counts"
        } else if usages().any(|u| u.synthetic) {
            "synthetic and recorded token counts"
        } else {
            "recorded token counts"
        };
        out.push_str(&format!(
            "Eval replay mode: {n} cases, {runs} runs each, scripted model ({tokens}).\n"
        ));
    } else {
        out.push_str(&format!(
            "Eval {} mode: {n} cases, {runs} runs each, model {}.\n",
            report.mode, report.model
        ));
    }
    if !report.agents.is_empty() {
        let agents: Vec<String> = report
            .agents
            .iter()
            .map(|a| format!("{} {}", a.name, a.version))
            .collect();
        out.push_str(&format!("Agents: {}.\n", agents.join(", ")));
    }
    for line in super::confinement::lines(report) {
        out.push_str(&line);
        out.push('\n');
    }
    // With one run per case an interval says little; it appears once some case repeats.
    let repeated = report.cases.iter().any(|c| c.summary.runs > 1);
    let k = report.k.map_or_else(|| "k".to_owned(), |k| k.to_string());
    let mut header = vec![
        "CASE".to_owned(),
        "RUNS".to_owned(),
        "PASS".to_owned(),
        format!("pass@{k}"),
        format!("pass^{k}"),
    ];
    if repeated {
        header.push("RATE_CI95".to_owned());
    }
    header.extend(["REQ", "TOOLS", "IN_TOK", "OUT_TOK", "STATUS"].map(String::from));
    // One row per case, made when the table needs it rather than all held at once.
    let row = |case: &super::CaseReport| {
        let s = &case.summary;
        let mut row = vec![
            case.name.clone(),
            s.runs.to_string(),
            s.passed.to_string(),
            format!("{:.2}", s.pass_at_k),
            format!("{:.2}", s.pass_hat_k),
        ];
        if repeated {
            row.push(s.pass_rate_ci95.compact());
        }
        row.extend([
            format!("{:.1}", s.mean_requests),
            format!("{:.1}", s.mean_tool_calls),
            s.input_tokens.to_string(),
            s.output_tokens.to_string(),
            // The last column is not padded, so colour codes cannot misalign the table.
            if s.pass {
                paint("pass", PASS_STYLE, color)
            } else {
                paint("FAIL", FAIL_STYLE, color)
            },
        ]);
        row
    };
    out.push_str(&table::render_each(report.cases.len() + 1, |i| match i {
        0 => Cow::Borrowed(&header[..]),
        i => Cow::Owned(row(&report.cases[i - 1])),
    }));
    if repeated {
        let s = &report.summary;
        out.push_str(&format!(
            "Suite: {} of {} runs passed, pass rate {:.2} (95% CI {}).\n",
            s.passed,
            s.runs,
            s.pass_rate,
            s.pass_rate_ci95.compact()
        ));
    }
    for case in report.cases.iter().filter(|c| !c.summary.judge.is_empty()) {
        let j = &case.summary.judge;
        out.push_str(&format!(
            "Judge: {}: {} question{}, {} input + {} output tokens.\n",
            case.name,
            j.calls,
            if j.calls == 1 { "" } else { "s" },
            j.input_tokens,
            j.output_tokens
        ));
    }
    for case in &report.cases {
        for run in case.runs.iter().filter(|r| !r.pass) {
            for line in run.failure_lines() {
                out.push_str(&format!("  {} run {}: {line}\n", case.name, run.run));
            }
        }
    }
    for case in &report.cases {
        for run in &case.runs {
            for warning in &run.warnings {
                out.push_str(&format!(
                    "  {} run {}: warning: {warning}\n",
                    case.name, run.run
                ));
            }
        }
    }
    for case in &report.cases {
        for run in &case.runs {
            for line in run.not_evaluable_lines() {
                out.push_str(&format!("  {} run {}: {line}\n", case.name, run.run));
            }
        }
    }
    for case in &report.cases {
        for run in &case.runs {
            for line in run.pass_lines() {
                out.push_str(&format!("  {} run {}: {line}\n", case.name, run.run));
            }
        }
    }
    if report.interrupted {
        out.push_str(&interrupted_line(report));
    }
    let failed = report.failed_cases();
    let not_evaluable: usize = report
        .cases
        .iter()
        .flat_map(|c| &c.runs)
        .map(|r| r.not_evaluable_lines().len())
        .sum();
    let note = match not_evaluable {
        0 => String::new(),
        1 => " (1 assertion not evaluable)".to_owned(),
        n => format!(" ({n} assertions not evaluable)"),
    };
    if failed == 0 {
        let verdict = paint("All cases passed", PASS_STYLE, color);
        out.push_str(&format!("{verdict}{note}.\n"));
    } else {
        let verdict = paint(&format!("{failed} of {n} cases failed"), FAIL_STYLE, color);
        out.push_str(&format!("{verdict}{note}.\n"));
    }
    out
}

/// `Interrupted: 2 runs cancelled: slow run 2 (running), slow run 3 (not started).`
fn interrupted_line(report: &SuiteReport) -> String {
    let runs: Vec<String> = report
        .cancelled
        .iter()
        .map(|c| {
            let state = if c.started { "running" } else { "not started" };
            format!("{} run {} ({state})", c.case, c.run)
        })
        .collect();
    match runs.len() {
        0 => "Interrupted: no run was cancelled.\n".to_owned(),
        1 => format!("Interrupted: 1 run cancelled: {}.\n", runs[0]),
        n => format!("Interrupted: {n} runs cancelled: {}.\n", runs.join(", ")),
    }
}

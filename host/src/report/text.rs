//! The text report, in Mino's shape: a header line, the table, failure lines, a verdict line.

use super::{SuiteReport, table};

/// Render the text report. The closing `Error: Eval failed: ...` line is the CLI's.
pub fn render_text(report: &SuiteReport) -> String {
    let mut out = String::new();
    let n = report.cases.len();
    let runs = report.runs_per_case;
    if report.mode == "replay" {
        out.push_str(&format!(
            "Eval replay mode: {n} cases, {runs} runs each, scripted model (synthetic token counts).\n"
        ));
    } else {
        out.push_str(&format!(
            "Eval {} mode: {n} cases, {runs} runs each, model {}.\n",
            report.mode, report.model
        ));
    }
    let mut rows = vec![
        [
            "CASE", "RUNS", "PASS", "pass@k", "pass^k", "REQ", "TOOLS", "IN_TOK", "OUT_TOK",
            "STATUS",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for case in &report.cases {
        let s = &case.summary;
        rows.push(vec![
            case.name.clone(),
            s.runs.to_string(),
            s.passed.to_string(),
            format!("{:.2}", s.pass_at_k),
            format!("{:.2}", s.pass_hat_k),
            format!("{:.1}", s.mean_requests),
            format!("{:.1}", s.mean_tool_calls),
            s.input_tokens.to_string(),
            s.output_tokens.to_string(),
            if s.pass { "pass" } else { "FAIL" }.to_owned(),
        ]);
    }
    out.push_str(&table::render(&rows));
    for case in &report.cases {
        for run in case.runs.iter().filter(|r| !r.pass) {
            for line in run.failure_lines() {
                out.push_str(&format!("  {} run {}: {line}\n", case.name, run.run));
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
    let failed = report.failed_cases();
    if failed == 0 {
        out.push_str("All cases passed.\n");
    } else {
        out.push_str(&format!("{failed} of {n} cases failed.\n"));
    }
    out
}

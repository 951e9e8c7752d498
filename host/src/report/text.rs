//! The text report, in Mino's shape: a header line, the table, failure lines, a verdict line.

use std::borrow::Cow;

use super::{RunsEach, SuiteReport, table};

/// ANSI styles of the words a reader scans for.
const PASS_STYLE: &str = "\x1b[32m";
const FAIL_STYLE: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

/// Render the text report. The closing `Error: Eval failed: ...` line is the CLI's. Fails only
/// when a case cannot be read back from the spool it waited in.
pub fn render_text(report: &SuiteReport) -> std::io::Result<String> {
    render(report, false)
}

/// [`render_text`] for a terminal: the STATUS words and the closing verdict line in colour
/// (ANSI: green for pass, bold red for failure); otherwise byte for byte the same text.
pub fn render_text_in_color(report: &SuiteReport) -> std::io::Result<String> {
    render(report, true)
}

fn render(report: &SuiteReport, color: bool) -> std::io::Result<String> {
    let mut out = Vec::new();
    write_text(report, color, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `text` in `style` when colouring.
fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

/// What the text takes from every case besides its table row, gathered in one pass over
/// the cases (which may be read back from the spool).
#[derive(Default)]
struct Gathered<'a> {
    runs_each: RunsEach<'a>,
    /// Every run's token counts are synthetic / some are.
    all_synthetic: bool,
    any_synthetic: bool,
    /// Some case ran more than once.
    repeated: bool,
    failed: usize,
    /// Not-evaluable verdicts that are warnings (they did not fail their run).
    not_evaluable: usize,
    /// Verdicts whose grader needs something never recorded, and the commands that record it.
    record_commands: super::RecordCommands,
    confinement: Vec<String>,
    judge: String,
    failures: String,
    warnings: String,
    not_evaluable_lines: String,
    pass_lines: String,
}

impl<'a> Gathered<'a> {
    fn of(report: &'a SuiteReport) -> std::io::Result<Self> {
        let mut g = Gathered {
            runs_each: RunsEach::new(report),
            all_synthetic: true,
            ..Gathered::default()
        };
        for case in report.cases.iter() {
            let case = case?;
            g.runs_each.add(&case);
            g.repeated |= case.summary.runs > 1;
            g.failed += usize::from(!case.summary.pass);
            g.confinement.extend(super::confinement::case_line(&case));
            g.confinement
                .extend(super::confinement::environment_line(&case));
            let j = &case.summary.judge;
            if !j.is_empty() {
                g.judge.push_str(&format!(
                    "Judge: {}: {} question{}, {} input + {} output tokens.\n",
                    case.name,
                    j.calls,
                    if j.calls == 1 { "" } else { "s" },
                    j.input_tokens,
                    j.output_tokens
                ));
            }
            for run in &case.runs {
                g.all_synthetic &= run.usage.synthetic;
                g.any_synthetic |= run.usage.synthetic;
                // A run read from a trace says which (`grade --trace`).
                let source = run
                    .source
                    .as_deref()
                    .map(|source| format!(" ({source})"))
                    .unwrap_or_default();
                let lines = |to: &mut String, lines: Vec<String>| {
                    for line in lines {
                        to.push_str(&format!(
                            "  {} run {}{source}: {line}\n",
                            case.name, run.run
                        ));
                    }
                };
                if !run.pass {
                    lines(&mut g.failures, run.failure_lines());
                }
                let warnings = run.warnings.iter().map(|w| format!("warning: {w}"));
                lines(&mut g.warnings, warnings.collect());
                let not_evaluable = run.not_evaluable_lines();
                g.not_evaluable += not_evaluable.len();
                lines(&mut g.not_evaluable_lines, not_evaluable);
                lines(&mut g.pass_lines, run.pass_lines());
                g.record_commands.add(run);
            }
        }
        Ok(g)
    }

    /// `Never recorded: 1 assertion cannot be graded until it is recorded; record it with:`
    /// and each command on its own line (at most [`RECORD_COMMANDS_SHOWN`]).
    fn not_recorded_lines(&self) -> String {
        let commands = &self.record_commands.distinct;
        let mut out = match self.record_commands.verdicts {
            0 => return String::new(),
            1 => "Never recorded: 1 assertion cannot be graded until it is recorded; record it with:\n"
                .to_owned(),
            n => format!(
                "Never recorded: {n} assertions cannot be graded until they are recorded; record them with:\n"
            ),
        };
        for command in commands.iter().take(RECORD_COMMANDS_SHOWN) {
            out.push_str(&format!("  {command}\n"));
        }
        let more = commands.len().saturating_sub(RECORD_COMMANDS_SHOWN);
        if more > 0 {
            out.push_str(&format!(
                "  and {more} more (each `not recorded:` line above names its command)\n"
            ));
        }
        out
    }
}

/// Record commands the text report lists, at most.
const RECORD_COMMANDS_SHOWN: usize = 10;

/// The text report written to `out` as it is made: the table a row at a time, each case
/// read back from the spool when it waits there (twice: once for the columns' widths).
pub fn write_text(
    report: &SuiteReport,
    color: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let g = Gathered::of(report)?;
    let n = report.cases.len();
    let runs = g.runs_each.text(report);
    if report.mode == "replay" {
        let tokens = if g.all_synthetic {
            "synthetic token counts"
        } else if g.any_synthetic {
            "synthetic and recorded token counts"
        } else {
            "recorded token counts"
        };
        writeln!(
            out,
            "Eval replay mode: {n} cases, {runs} runs each, scripted model ({tokens})."
        )?;
    } else {
        writeln!(
            out,
            "Eval {} mode: {n} cases, {runs} runs each, model {}.",
            report.mode, report.model
        )?;
    }
    if !report.agents.is_empty() {
        let agents: Vec<String> = report
            .agents
            .iter()
            .map(|a| format!("{} {}", a.name, a.version))
            .collect();
        writeln!(out, "Agents: {}.", agents.join(", "))?;
    }
    for line in super::confinement::lines(report)
        .iter()
        .chain(&g.confinement)
    {
        writeln!(out, "{line}")?;
    }
    // With one run per case an interval says little; it appears once some case repeats.
    let repeated = g.repeated;
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
    header.extend(["REQ", "TOOLS", "IN_TOK", "OUT_TOK"].map(String::from));
    // A cost column only when some run has a cost (docs/cost.md); `-`: unknown.
    let costed = report.summary.cost_usd.is_some();
    if costed {
        header.push("COST".to_owned());
    }
    header.push("STATUS".to_owned());
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
        ]);
        if costed {
            row.push(s.cost_usd.map_or_else(|| "-".to_owned(), super::usd));
        }
        row.extend([
            // The last column is not padded, so colour codes cannot misalign the table.
            if s.pass {
                paint("pass", PASS_STYLE, color)
            } else {
                paint("FAIL", FAIL_STYLE, color)
            },
        ]);
        row
    };
    // One row per case, made when the table needs it rather than all held at once.
    let rows = || {
        let cases = report.cases.iter().map(|case| Ok(Cow::Owned(row(&*case?))));
        std::iter::once(Ok(Cow::Borrowed(&header[..]))).chain(cases)
    };
    table::write_each(rows, out)?;
    if repeated {
        let s = &report.summary;
        writeln!(
            out,
            "Suite: {} of {} runs passed, pass rate {:.2} (95% CI {}).",
            s.passed,
            s.runs,
            s.pass_rate,
            s.pass_rate_ci95.compact()
        )?;
    }
    out.write_all(super::cost::text_lines(report).as_bytes())?;
    for lines in [
        &g.judge,
        &g.failures,
        &g.warnings,
        &g.not_evaluable_lines,
        &g.pass_lines,
    ] {
        out.write_all(lines.as_bytes())?;
    }
    out.write_all(g.not_recorded_lines().as_bytes())?;
    if report.interrupted {
        out.write_all(interrupted_line(report).as_bytes())?;
    }
    let note = match g.not_evaluable {
        0 => String::new(),
        1 => " (1 assertion not evaluable)".to_owned(),
        n => format!(" ({n} assertions not evaluable)"),
    };
    let verdict = if g.failed == 0 {
        paint("All cases passed", PASS_STYLE, color)
    } else {
        paint(
            &format!("{} of {n} cases failed", g.failed),
            FAIL_STYLE,
            color,
        )
    };
    writeln!(out, "{verdict}{note}.")
}

/// `Interrupted: 2 runs cancelled: slow run 2 (running), slow run 3 (not started).` Past
/// [`CANCELLED_NAMED`] runs the line names those and counts the rest (`--out`'s
/// `report.json` lists every one): a large suite interrupted early has a cancelled run for
/// nearly every case.
fn interrupted_line(report: &SuiteReport) -> String {
    let named: Vec<String> = report
        .cancelled
        .iter()
        .take(CANCELLED_NAMED)
        .map(|c| {
            let state = if c.started { "running" } else { "not started" };
            format!("{} run {} ({state})", c.case, c.run)
        })
        .collect();
    let more = report.cancelled.len() - named.len();
    let named = named.join(", ");
    match report.cancelled.len() {
        0 => "Interrupted: no run was cancelled.\n".to_owned(),
        1 => format!("Interrupted: 1 run cancelled: {named}.\n"),
        n if more == 0 => format!("Interrupted: {n} runs cancelled: {named}.\n"),
        n => format!(
            "Interrupted: {n} runs cancelled: {named}, and {more} more (the report.json of `--out` lists every one).\n"
        ),
    }
}

/// Cancelled runs the text report names, at most.
const CANCELLED_NAMED: usize = 20;

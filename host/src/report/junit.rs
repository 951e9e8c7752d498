//! The JUnit XML report (`evalhost run --junit FILE`), in the dialect CI systems read
//! (Jenkins, GitLab, GitHub test-report actions): valid against the Jenkins xunit plugin's
//! `junit-10.xsd`, which the tests check with `xmllint`.
//!
//! One `<testsuite>` per directory of cases (a Nexus case directory counts as a case in its
//! parent), one `<testcase>` per case: `classname` is the directory, `name` the case. A case
//! fails when any of its runs failed, like the text table's STATUS. The runs themselves, and
//! pass@k / pass^k, are `<properties>` of the suite (the schema has no per-testcase
//! properties), named `<case> run N` and `<case> pass@k`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

use super::escape::{attribute, text};
use super::{CaseReport, Outcome, RunReport, SuiteReport};

/// The report as a JUnit XML document.
pub fn render_junit(report: &SuiteReport) -> String {
    let mut xml = Vec::new();
    // Writing to memory does not fail, and only `str`s are written.
    let _ = write_junit(report, &mut xml);
    String::from_utf8(xml).unwrap_or_default()
}

/// [`render_junit`] written to `out` a `<testsuite>` at a time, not held whole (a suite of
/// 10,000 generated cases made 4.5 MB of XML). Cases waiting in the report's spool are read
/// back one at a time, each twice (its suite's properties, then its `<testcase>`).
pub fn write_junit(report: &SuiteReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let mut suites: Vec<(String, Vec<usize>)> = Vec::new();
    let (mut failures, mut errors, mut ms) = (0, 0, 0);
    for (i, case) in report.cases.iter().enumerate() {
        let case = case?;
        let directory = directory_of(&case);
        match suites.iter_mut().find(|(d, _)| *d == directory) {
            Some((_, group)) => group.push(i),
            None => suites.push((directory, vec![i])),
        }
        match Status::of(&case) {
            Status::Failure => failures += 1,
            Status::Error => errors += 1,
            Status::Pass | Status::Skipped => {}
        }
        ms += duration_ms(&case);
    }
    let _ = writeln!(
        xml,
        r#"<testsuites name="evalhost" tests="{}" failures="{failures}" errors="{errors}" time="{}">"#,
        report.cases.len(),
        seconds(ms)
    );
    let cancelled = super::cancelled_by_case(report);
    for (directory, cases) in &suites {
        write_suite(&mut xml, report, &cancelled, directory, cases)?;
        out.write_all(xml.as_bytes())?;
        xml.clear();
    }
    xml.push_str("</testsuites>\n");
    out.write_all(xml.as_bytes())
}

/// The cases at `indices`, read back from the spool when they wait there.
fn cases_at<'a>(
    report: &'a SuiteReport,
    indices: &'a [usize],
) -> impl Iterator<Item = std::io::Result<Cow<'a, CaseReport>>> {
    indices
        .iter()
        .filter_map(|&i| report.cases.get(i))
        .map(|case| Ok(case?))
}

fn write_suite(
    xml: &mut String,
    report: &SuiteReport,
    cancelled: &HashMap<&str, u32>,
    directory: &str,
    indices: &[usize],
) -> std::io::Result<()> {
    let mut counts = [0usize; 4];
    let mut ms = 0;
    for case in cases_at(report, indices) {
        let case = case?;
        counts[Status::of(&case) as usize] += 1;
        ms += duration_ms(&case);
    }
    let count = |status: Status| counts[status as usize];
    let _ = writeln!(
        xml,
        r#"  <testsuite name="{}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{}">"#,
        attribute(directory),
        indices.len(),
        count(Status::Failure),
        count(Status::Error),
        count(Status::Skipped),
        seconds(ms),
    );
    xml.push_str("    <properties>\n");
    let mut property = |name: &str, value: &str| {
        let _ = writeln!(
            xml,
            r#"      <property name="{}" value="{}"/>"#,
            attribute(name),
            attribute(value)
        );
    };
    property("evalhost.version", &report.evalhost_version);
    property("evalhost.mode", &report.mode);
    property("evalhost.model", &report.model);
    if report.interrupted {
        property(
            "evalhost.interrupted",
            &format!("{} runs cancelled", report.cancelled.len()),
        );
    }
    // Cost (docs/cost.md): the suite's, in USD, with the prices' date; the budget.
    let prices = report
        .prices
        .as_ref()
        .map_or_else(String::new, |p| format!(" ({})", p.text()));
    if let Some(cost) = report.summary.cost_usd {
        let without = match report.summary.runs_without_price {
            0 => String::new(),
            n => format!("; {n} runs without a price"),
        };
        property("evalhost.cost_usd", &format!("{cost:.6}{prices}{without}"));
    }
    if let Some(recorded) = report.summary.recorded_cost_usd {
        property(
            "evalhost.recorded_cost_usd",
            &format!("{recorded:.6}{prices}"),
        );
    }
    if let Some(budget) = &report.budget {
        property(
            "evalhost.max_cost_usd",
            &format!(
                "{:.6} ({:.6} spent{})",
                budget.max_cost_usd,
                budget.spent_usd,
                if budget.exhausted { ", reached" } else { "" }
            ),
        );
    }
    for case in cases_at(report, indices) {
        let case = case?;
        let s = &case.summary;
        property(
            &format!("{} pass@k", case.name),
            &format!("{:.2} (k={}, n={})", s.pass_at_k, s.k, s.runs),
        );
        property(
            &format!("{} pass^k", case.name),
            &format!("{:.2} (k={}, n={})", s.pass_hat_k, s.k, s.runs),
        );
        property(
            &format!("{} pass rate", case.name),
            &format!(
                "{:.2} (95% interval {})",
                s.pass_rate,
                s.pass_rate_ci95.compact()
            ),
        );
        for run in &case.runs {
            property(&format!("{} run {}", case.name, run.run), &run_summary(run));
        }
    }
    xml.push_str("    </properties>\n");
    for case in cases_at(report, indices) {
        write_case(xml, directory, &*case?, cancelled);
    }
    xml.push_str("  </testsuite>\n");
    Ok(())
}

/// `case` as a `<testcase>`; `cancelled`: the runs Ctrl-C cancelled, by case.
fn write_case(
    xml: &mut String,
    directory: &str,
    case: &CaseReport,
    cancelled: &HashMap<&str, u32>,
) {
    let _ = write!(
        xml,
        r#"    <testcase name="{}" classname="{}" time="{}""#,
        attribute(&case.name),
        attribute(directory),
        seconds(duration_ms(case))
    );
    let status = Status::of(case);
    // Graders that could not judge, then passes with a message, in `<system-out>`.
    let out_lines: Vec<String> = case
        .runs
        .iter()
        .flat_map(|r| {
            r.not_evaluable_lines()
                .into_iter()
                .chain(r.pass_lines())
                .map(move |l| format!("run {}: {l}", r.run))
        })
        .collect();
    if status == Status::Pass && out_lines.is_empty() {
        xml.push_str("/>\n");
        return;
    }
    xml.push_str(">\n");
    let failed: Vec<&RunReport> = case.runs.iter().filter(|r| !r.pass).collect();
    let body: String = failed
        .iter()
        .flat_map(|r| {
            r.failure_lines()
                .into_iter()
                .map(move |l| format!("run {}: {l}\n", r.run))
        })
        .collect();
    let message = format!("{} of {} runs failed", failed.len(), case.runs.len());
    match status {
        Status::Pass => {}
        Status::Failure | Status::Error => {
            let (element, kind) = if status == Status::Error {
                ("error", "evalhost.run-error")
            } else {
                ("failure", "evalhost.grader-failed")
            };
            let _ = writeln!(
                xml,
                r#"      <{element} message="{}" type="{kind}">{}</{element}>"#,
                attribute(&message),
                text(&body)
            );
        }
        Status::Skipped => {
            let cancelled = cancelled.get(case.name.as_str()).copied().unwrap_or(0);
            let _ = writeln!(
                xml,
                r#"      <skipped message="{}"/>"#,
                attribute(&format!(
                    "no run finished: {cancelled} runs cancelled (interrupted)"
                ))
            );
        }
    }
    if !out_lines.is_empty() {
        let _ = writeln!(
            xml,
            "      <system-out>{}</system-out>",
            text(&(out_lines.join("\n") + "\n"))
        );
    }
    xml.push_str("    </testcase>\n");
}

/// How a case shows in JUnit: an errored run (the run itself broke, or a grader errored)
/// makes an `<error>`, a grader's failure a `<failure>`, a case without finished runs is
/// `<skipped>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pass = 0,
    Failure = 1,
    Error = 2,
    Skipped = 3,
}

impl Status {
    fn of(case: &CaseReport) -> Self {
        let errored = |r: &RunReport| {
            r.error.is_some() || r.verdicts.iter().any(|v| v.outcome == Outcome::Error)
        };
        if case.runs.is_empty() {
            Status::Skipped
        } else if case.runs.iter().any(errored) {
            Status::Error
        } else if case.summary.pass {
            Status::Pass
        } else {
            Status::Failure
        }
    }
}

/// `pass, 59 ms, 2 requests, 1439 in / 77 out tokens, 1 tool calls`.
fn run_summary(run: &RunReport) -> String {
    let outcome = if run.pass {
        "pass"
    } else if run.error.is_some() {
        "error"
    } else {
        "fail"
    };
    format!(
        "{outcome}, {} ms, {} requests, {} in / {} out tokens, {} tool calls",
        run.duration_ms,
        run.usage.requests,
        run.usage.input_tokens,
        run.usage.output_tokens,
        run.tool_calls
    )
}

/// The summed run time of `case`'s runs.
fn duration_ms(case: &CaseReport) -> u64 {
    case.runs.iter().map(|r| r.duration_ms).sum()
}

/// `ms` in seconds, as JUnit's `time` attribute wants it.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The directory that holds `case`, as its `<testsuite>` is named.
fn directory_of(case: &CaseReport) -> String {
    Path::new(&case.path)
        .parent()
        .map(|p| p.display().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| ".".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{CancelledRun, CaseSummary, SuiteSummary};

    fn report(cases: Vec<CaseReport>, cancelled: Vec<CancelledRun>) -> SuiteReport {
        SuiteReport {
            provenance: Default::default(),
            prices: None,
            budget: None,
            schema_version: crate::report::REPORT_SCHEMA_VERSION,
            evalhost_version: "0.1.0".into(),
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

    #[test]
    fn a_case_without_finished_runs_is_skipped_and_named_by_its_directory() {
        let case = CaseReport {
            digest: None,
            tags: Vec::new(),
            name: "slow".into(),
            path: "suites/a/slow.yaml".into(),
            confine: Default::default(),
            runs: Vec::new(),
            summary: CaseSummary::of(&[]),
        };
        let cancelled = vec![CancelledRun {
            case: "slow".into(),
            run: 1,
            started: true,
        }];
        let xml = render_junit(&report(vec![case], cancelled));
        assert!(
            xml.contains(r#"<testcase name="slow" classname="suites/a" time="0.000">"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<skipped message="no run finished: 1 runs cancelled (interrupted)"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="evalhost.interrupted" value="1 runs cancelled"/>"#),
            "{xml}"
        );
    }
}

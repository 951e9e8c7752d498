//! The HTML report (`evalhost run --html FILE`): one self-contained page, no network.
//!
//! A suite summary with a pass-rate chart per case (pass rate, Wilson 95% interval, pass@k,
//! pass^k, as inline SVG), the table of cases, and per run its transcript (messages, tool
//! calls with arguments and results, denials highlighted) beside the graders' verdicts, then
//! the workspace diff. CSS and script are inlined from `html/`; every piece of run data is
//! escaped (`escape.rs`), and a Content-Security-Policy forbids loading anything.

mod chart;
mod transcript;

use std::fmt::Write;

use super::details::RenderedDetail;
use super::escape::{attribute, text};
use super::{
    CaseReport, GraderVerdict, Outcome, RunDetails, RunReport, SuiteReport, WorkspaceChanges,
};
use crate::evidence::Evidence;

const CSS: &str = include_str!("html/report.css");
const SCRIPT: &str = include_str!("html/report.js");

/// The page for `report`, with each run's transcript and workspace changes from `details`
/// (a run without them shows its verdicts only), as one string. [`write_html`] writes it
/// without holding it.
pub fn render_html(report: &SuiteReport, details: &RunDetails) -> std::io::Result<String> {
    let mut html = Vec::with_capacity(64 * 1024);
    write_html(report, details, &mut html)?;
    String::from_utf8(html).map_err(std::io::Error::other)
}

/// Write the page for `report` to `out`, a case at a time: the report's cases and the runs'
/// details are read back from their spools as they are written, so a suite of any size
/// writes its page in the memory of one case. Fails when `out` does, or when a case or a
/// run's details cannot be read back.
pub fn write_html(
    report: &SuiteReport,
    details: &RunDetails,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let (mut count, mut failed) = (0, 0);
    let mut each = super::RunsEach::new(report);
    for case in report.cases.iter() {
        let case = case?;
        count += 1;
        failed += usize::from(!case.summary.pass);
        each.add(&case);
    }
    let runs_each = each.text(report);
    let mut html = String::with_capacity(64 * 1024);
    let _ = write!(
        html,
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>evalhost report: {} of {} cases passed</title>
<style>
{CSS}</style>
</head>
<body>
<main>
"#,
        count - failed,
        count
    );
    summary(&mut html, report, count, failed, &runs_each);
    html.push_str(r#"<h2 id="chart">Pass rate per case</h2><div class="chart">"#);
    html.push_str(&chart::head(count));
    out.write_all(html.as_bytes())?;
    for (i, case) in report.cases.iter().enumerate() {
        out.write_all(chart::row(i, &*case?).as_bytes())?;
    }
    out.write_all(chart::TAIL.as_bytes())?;
    out.write_all(b"</div>\n")?;
    out.write_all(CASE_TABLE_HEAD.as_bytes())?;
    for (i, case) in report.cases.iter().enumerate() {
        out.write_all(case_row(i, &*case?).as_bytes())?;
    }
    out.write_all(b"</tbody></table>\n")?;
    out.write_all(
        br#"<h2 id="runs">Runs</h2><div class="toolbar"><label><input type="checkbox" id="only-failed"> only failing runs</label><button type="button" id="expand-all">expand all</button><button type="button" id="collapse-all">collapse all</button></div>
"#,
    )?;
    // The details come in the report's order of cases and runs (`RunDetails::case_reported`).
    let mut runs_details = details.read_each();
    for (i, case) in report.cases.iter().enumerate() {
        let case = case?;
        let mut html = String::new();
        case_head(&mut html, i, &case);
        for run in &case.runs {
            let detail = runs_details.next().transpose()?.flatten();
            run_block(&mut html, run, detail.as_ref());
        }
        html.push_str("</section>\n");
        out.write_all(html.as_bytes())?;
    }
    write!(
        out,
        "</main>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

/// The HTML fragments of one run's details: its transcript, and its workspace changes.
pub(crate) fn render_detail(evidence: &Evidence, changes: &WorkspaceChanges) -> RenderedDetail {
    let mut workspace = String::new();
    workspace_diff(&mut workspace, changes);
    RenderedDetail {
        transcript: transcript::transcript(evidence),
        workspace,
    }
}

fn summary(html: &mut String, report: &SuiteReport, cases: usize, failed: usize, runs_each: &str) {
    let s = &report.summary;
    let cases_passed = cases - failed;
    let k = report
        .k
        .map_or_else(|| "k = n".to_owned(), |k| format!("k = {k}"));
    let _ = write!(
        html,
        r#"<h1>evalhost report</h1><p class="meta">{} mode · model {} · evalhost {} · {} runs per case · {}</p>"#,
        text(&report.mode),
        text(&report.model),
        text(&report.evalhost_version),
        runs_each,
        k
    );
    // Cost, recorded cost and budget: the text report's lines (docs/cost.md).
    for line in super::cost::text_lines(report).lines() {
        let _ = write!(html, r#"<p class="meta cost">{}</p>"#, text(line));
    }
    if report.interrupted {
        let _ = write!(
            html,
            r#"<div class="banner warn">Interrupted: {} runs were cancelled; this report covers the runs that finished.</div>"#,
            report.cancelled.len()
        );
    }
    let status = if failed == 0 {
        r#"<span class="badge pass">all cases passed</span>"#.to_owned()
    } else {
        let cases = if failed == 1 { "case" } else { "cases" };
        format!(r#"<span class="badge fail">{failed} {cases} failed</span>"#)
    };
    let _ = writeln!(
        html,
        r#"<div class="cards"><div class="card"><div class="value">{cases_passed} / {}</div><div class="label">cases passed every run</div></div><div class="card"><div class="value">{} / {}</div><div class="label">runs passed</div></div><div class="card"><div class="value">{:.2}</div><div class="label">pass rate (95% interval {})</div></div><div class="card"><div class="value">{status}</div><div class="label">suite</div></div></div>"#,
        cases,
        s.passed,
        s.runs,
        s.pass_rate,
        s.pass_rate_ci95.compact()
    );
}

const CASE_TABLE_HEAD: &str = r#"<h2 id="cases">Cases</h2><table class="cases"><thead><tr><th>case</th><th class="num">runs</th><th class="num">passed</th><th class="num">pass@k</th><th class="num">pass^k</th><th class="num">k</th><th class="num">pass rate (95%)</th><th class="num">requests</th><th class="num">tool calls</th><th class="num">in tok</th><th class="num">out tok</th><th>status</th></tr></thead><tbody>
"#;

/// The case table's row of case `i`.
fn case_row(i: usize, case: &CaseReport) -> String {
    let s = &case.summary;
    format!(
        r##"<tr><td><a href="#case-{i}">{}</a></td><td class="num">{}</td><td class="num">{}</td><td class="num">{:.2}</td><td class="num">{:.2}</td><td class="num">{}</td><td class="num">{:.2} ({})</td><td class="num">{:.1}</td><td class="num">{:.1}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td></tr>
"##,
        text(&case.name),
        s.runs,
        s.passed,
        s.pass_at_k,
        s.pass_hat_k,
        s.k,
        s.pass_rate,
        s.pass_rate_ci95.compact(),
        s.mean_requests,
        s.mean_tool_calls,
        s.input_tokens,
        s.output_tokens,
        case_badge(case)
    )
}

fn case_badge(case: &CaseReport) -> &'static str {
    if case.runs.is_empty() {
        r#"<span class="badge skipped">no runs</span>"#
    } else if case.summary.pass {
        r#"<span class="badge pass">pass</span>"#
    } else {
        r#"<span class="badge fail">fail</span>"#
    }
}

/// The opening of case `i`'s section, up to its runs.
fn case_head(html: &mut String, i: usize, case: &CaseReport) {
    let _ = write!(
        html,
        r#"<section class="case{}" id="case-{i}"><h2>{} {}</h2><p class="meta">{}</p>"#,
        if case.summary.pass { "" } else { " failed" },
        text(&case.name),
        case_badge(case),
        text(&case.path)
    );
    if case.runs.is_empty() {
        html.push_str(r#"<p class="note">No run of this case finished.</p>"#);
    }
}

/// A run's block: its outcome, transcript beside its verdicts, workspace changes (the page's
/// and `evalhost view`'s).
pub(crate) fn run_block(html: &mut String, run: &RunReport, detail: Option<&RenderedDetail>) {
    let outcome = if run.pass {
        r#"<span class="badge pass">pass</span>"#
    } else if run.error.is_some() {
        r#"<span class="badge error">error</span>"#
    } else {
        r#"<span class="badge fail">fail</span>"#
    };
    let _ = write!(
        html,
        r#"<details class="run{}"{}><summary>run {} {outcome} <span class="note">{} ms · {} requests · {} tool calls · {} in / {} out tokens{}</span></summary><div class="body">"#,
        if run.pass { "" } else { " failed" },
        if run.pass { "" } else { " open" },
        run.run,
        run.duration_ms,
        run.usage.requests,
        run.tool_calls,
        run.usage.input_tokens,
        run.usage.output_tokens,
        if run.usage.synthetic {
            " (synthetic)"
        } else {
            ""
        }
    );
    if let Some(image) = &run.image {
        image_line(html, image);
    }
    html.push_str(r#"<div class="columns"><div><h3>Transcript</h3>"#);
    match detail {
        Some(detail) => html.push_str(&detail.transcript),
        None => html.push_str(r#"<p class="note">No transcript: the run could not be made.</p>"#),
    }
    html.push_str("</div><div><h3>Verdicts</h3>");
    verdicts(html, run);
    html.push_str("</div></div>");
    if let Some(detail) = detail {
        html.push_str(&detail.workspace);
    }
    html.push_str("</div></details>\n");
}

/// `image debian:bookworm · sha256:0123456789ab`: the image a run's container started from
/// (docs/environments.md), its id shortened as `docker images` shows it (the whole id, and the
/// registry digest when there is one, on hover).
fn image_line(html: &mut String, image: &super::RunImage) {
    let hex = image
        .digest
        .strip_prefix("sha256:")
        .unwrap_or(&image.digest);
    let title = match &image.repo_digest {
        Some(repo) => format!("{} · {repo}", image.digest),
        None => image.digest.clone(),
    };
    let _ = write!(
        html,
        r#"<p class="meta run-image">image <code>{}</code> · <code title="{}">sha256:{}</code></p>"#,
        text(&image.source),
        attribute(&title),
        text(&hex.chars().take(12).collect::<String>()),
    );
}

fn verdicts(html: &mut String, run: &RunReport) {
    if let Some(error) = &run.error {
        let _ = write!(
            html,
            r#"<div class="banner fail">The run ended early: {}</div>"#,
            transcript::shown(error)
        );
    }
    for warning in &run.warnings {
        let _ = write!(
            html,
            r#"<div class="banner warn">Warning: {}</div>"#,
            transcript::shown(warning)
        );
    }
    if run.verdicts.is_empty() {
        html.push_str(r#"<p class="note">No grader ran.</p>"#);
        return;
    }
    html.push_str(
        r#"<table class="verdicts"><thead><tr><th>grader</th><th>outcome</th><th class="num">score</th></tr></thead><tbody>"#,
    );
    for v in &run.verdicts {
        verdict_row(html, v);
    }
    html.push_str("</tbody></table>");
}

fn verdict_row(html: &mut String, v: &GraderVerdict) {
    // The badge's class and word: a not-evaluable verdict that failed its run is shown as
    // a failure (never recorded; under --strict, any).
    let (outcome, word) = match v.outcome {
        Outcome::Pass => ("pass", "pass"),
        Outcome::Fail => ("fail", "fail"),
        Outcome::Error => ("error", "error"),
        Outcome::NotEvaluable => match &v.not_evaluable {
            Some(n) if n.record_with().is_some() => ("fail", "not recorded"),
            Some(n) if n.fails_run => ("fail", "not evaluable"),
            _ => ("not_evaluable", "not evaluable"),
        },
    };
    let config = serde_json::to_string(&v.config).unwrap_or_default();
    let digest: String = v.component_digest.chars().take(12).collect();
    let bundle = v
        .bundle
        .as_ref()
        .map(|b| format!(" · bundle {} {}", text(&b.name), text(&b.version)))
        .unwrap_or_default();
    // The entry as the text report and JUnit name it (`graders[2] NAME`), the config in full.
    let entry = match v.entry {
        Some(index) => format!("graders[{index}] {}", v.grader),
        None => v.grader.to_string(),
    };
    let judge = if v.judge.is_empty() {
        String::new()
    } else {
        format!(
            " · judge {} question{}, {} + {} tokens",
            v.judge.calls,
            if v.judge.calls == 1 { "" } else { "s" },
            v.judge.input_tokens,
            v.judge.output_tokens
        )
    };
    let _ = write!(
        html,
        r#"<tr><td><code>{}</code> <span class="note">{}</span><div class="note" title="{}">component {digest}{bundle} · {} fuel · {} µs{judge}</div>"#,
        text(&entry),
        transcript::shown(&config),
        attribute(&v.component_digest),
        v.fuel_used,
        v.duration_us
    );
    if !v.message.is_empty() {
        let _ = write!(html, r#"<pre>{}</pre>"#, transcript::shown(&v.message));
    }
    for (name, output) in [("stdout", &v.stdout), ("stderr", &v.stderr)] {
        if !output.is_empty() {
            let _ = write!(
                html,
                r#"<details><summary class="note">{name}</summary><pre>{}</pre></details>"#,
                transcript::shown(output)
            );
        }
    }
    let _ = write!(
        html,
        r#"</td><td><span class="badge {outcome}">{word}</span></td><td class="num">{:.2}</td></tr>"#,
        v.score
    );
}

fn workspace_diff(html: &mut String, changes: &WorkspaceChanges) {
    html.push_str("<h3>Workspace changes</h3>");
    if let Some(reason) = &changes.unavailable {
        let _ = write!(html, r#"<p class="note">{}</p>"#, text(reason));
        return;
    }
    if changes.files.is_empty() {
        html.push_str(r#"<p class="note">No file was created, modified or deleted.</p>"#);
    }
    for file in &changes.files {
        let _ = write!(
            html,
            r#"<div class="file"><span class="badge neutral">{}</span> <code>{}</code>"#,
            file.kind.as_str(),
            text(&file.path)
        );
        if let Some(note) = &file.note {
            let _ = write!(html, r#" <span class="note">{}</span>"#, text(note));
        }
        if !file.diff.is_empty() {
            html.push_str(r#"<pre class="diff">"#);
            for line in file.diff.lines() {
                let class = match line.as_bytes().first() {
                    _ if line.starts_with("+++") || line.starts_with("---") => "",
                    Some(b'+') => "add",
                    Some(b'-') => "del",
                    Some(b'@') => "hunk",
                    _ => "",
                };
                if class.is_empty() {
                    let _ = writeln!(html, "{}", text(line));
                } else {
                    let _ = write!(html, r#"<span class="{class}">{}</span>"#, text(line));
                }
            }
            html.push_str("</pre>");
        }
        html.push_str("</div>");
    }
    if changes.omitted > 0 {
        let _ = write!(
            html,
            r#"<p class="note">{} more changed files not shown.</p>"#,
            changes.omitted
        );
    }
    if changes.partial {
        html.push_str(
            r#"<p class="note">The workspace has more entries than are compared; only part of it is shown.</p>"#,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Message;
    use crate::report::tests::{case, suite};

    fn said(text: &str) -> Evidence {
        Evidence {
            messages: vec![Message {
                role: "assistant".into(),
                content: text.into(),
            }],
            ..Evidence::default()
        }
    }

    /// The page a run of two cases makes: `alpha` (plan case 0) whose run 2 finished before
    /// run 1, and `beta` (plan case 1) whose only run could not be made (no details).
    fn page(details: RunDetails) -> String {
        let mut alpha = case("alpha", 2);
        alpha.runs.reverse();
        let report = suite(vec![alpha, case("beta", 1)], vec![]);
        let none = WorkspaceChanges::default();
        details.add(0, 2, &said("alpha said two"), &none);
        details.add(0, 1, &said("alpha said one"), &none);
        details.case_reported(0, [2, 1]);
        details.case_reported(1, [1]);
        render_html(&report, &details).unwrap()
    }

    #[test]
    fn each_run_shows_its_own_transcript_from_memory_or_the_spool_alike() {
        let held = page(RunDetails::new());
        let spooled = page(RunDetails::with_budget(0));
        assert_eq!(held, spooled);
        let alpha =
            &held[held.find(r#"id="case-0""#).unwrap()..held.find(r#"id="case-1""#).unwrap()];
        let (two, one) = (
            alpha.find("alpha said two").expect("run 2's transcript"),
            alpha.find("alpha said one").expect("run 1's transcript"),
        );
        assert!(alpha.find("run 2 ").unwrap() < two && two < alpha.find("run 1 ").unwrap());
        assert!(alpha.find("run 1 ").unwrap() < one);
        let beta = &held[held.find(r#"id="case-1""#).unwrap()..];
        assert!(beta.contains("No transcript: the run could not be made."));
        assert!(!beta.contains("alpha said"));
    }
}

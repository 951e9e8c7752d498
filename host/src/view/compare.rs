//! `/compare?a=RUN&b=RUN`: `evalhost compare`'s comparison of two recorded runs (Fisher's
//! exact test per case, Benjamini–Hochberg q-values, the Wilcoxon signed-rank test over the
//! suite; `crate::report::compare`), as a table a page at a time: regressed, then improved,
//! then every other case whose pass rate or content changed, then the rest; flaky cases
//! marked from the history. `/compare/case?a=&b=&name=`: a case's runs on both sides, their
//! transcripts side by side. `RUN` is an id, a prefix of 4 or more digits, `latest` or
//! `BRANCH@latest`.

use std::collections::HashMap;
use std::fmt::Write;

use super::page::{self, Page, PageError, Query, attr, esc, link};
use crate::history::{RecordedRun, Store};
use crate::report::{CaseComparison, Change, CompareOptions, Flaky, Verdict, compare};

/// Cases a page.
const PER_PAGE: usize = 50;
/// Names listed of the cases in one run only.
const NAMES_LISTED: usize = 50;

pub(crate) fn page(store: &mut Store, query: &Query) -> Result<Page, PageError> {
    let (Some(a_spec), Some(b_spec)) = (query.get("a"), query.get("b")) else {
        return picker(store, query);
    };
    let alpha = match query.get("alpha") {
        None => 0.05,
        Some(text) => text
            .parse::<f64>()
            .ok()
            .filter(|a| *a > 0.0 && *a < 1.0)
            .ok_or_else(|| {
                PageError::BadRequest(format!("alpha `{text}`: give a rate above 0 and below 1"))
            })?,
    };
    let only_changed = query.get("only") == Some("changed");
    let a = store.resolve(a_spec)?;
    let b = store.resolve(b_spec)?;
    let side_a = store.side(&a.id, &a.id)?;
    let side_b = store.side(&b.id, &b.id)?;
    let options = CompareOptions {
        alpha,
        ..CompareOptions::default()
    };
    let mut comparison = compare(&side_a, &side_b, &HashMap::new(), &options)
        .map_err(|e| PageError::BadRequest(e.to_string()))?;
    for (name, old, new) in [
        ("mode", Some(&a.mode), Some(&b.mode)),
        ("model", Some(&a.model), Some(&b.model)),
        ("provider", a.provider.as_ref(), b.provider.as_ref()),
    ] {
        if let (Some(old), Some(new)) = (old, new)
            && old != new
        {
            comparison
                .notes
                .push(format!("the {name} differs: A {old}, B {new}"));
        }
    }
    // Changed first: compare's order (regressed, improved), then the other cases whose pass
    // rate or content changed, each group in B's order.
    comparison.cases.sort_by_key(|c| {
        if c.regressed() {
            0
        } else if c.improved() {
            1
        } else if changed(c) {
            2
        } else {
            3
        }
    });
    let changed_count = comparison
        .cases
        .iter()
        .filter(|c| c.regressed() || c.improved() || changed(c))
        .count();
    let rows: Vec<&CaseComparison> = comparison
        .cases
        .iter()
        .filter(|c| !only_changed || c.regressed() || c.improved() || changed(c))
        .collect();
    let current = query.page() as usize;
    let pages = rows.len().div_ceil(PER_PAGE).max(1);
    let shown: Vec<&CaseComparison> = rows
        .iter()
        .skip((current - 1).saturating_mul(PER_PAGE))
        .take(PER_PAGE)
        .copied()
        .collect();

    // The history's flaky marks (flips between runs of one content, every content of the
    // case summed, as `evalhost compare` marks them), for the cases shown only.
    let names: Vec<&str> = shown.iter().map(|c| c.name.as_str()).collect();
    let mut flaky: HashMap<String, Flaky> = HashMap::new();
    for f in store.flaky(Some(&names))? {
        let mark = flaky.entry(f.name).or_insert(Flaky { runs: 0, flips: 0 });
        mark.runs += f.runs;
        mark.flips += f.flips;
    }

    let mut html = String::from("<h1>Compare two runs</h1>");
    html.push_str(&form(a_spec, b_spec, only_changed));
    let _ = write!(
        html,
        r#"<dl class="facts"><dt>A</dt><dd>{}</dd><dt>B</dt><dd>{}</dd></dl>"#,
        side_line(&a, comparison.a.cases),
        side_line(&b, comparison.b.cases)
    );
    for note in &comparison.notes {
        let _ = write!(
            html,
            r#"<div class="banner warn">Note: {}.</div>"#,
            esc(note)
        );
    }
    summary(&mut html, &comparison, changed_count);

    let _ = write!(
        html,
        r#"<h2 id="cases">Cases</h2><p class="count" id="compare-count">{} case{} compared{}; changed first.</p>"#,
        comparison.cases.len(),
        if comparison.cases.len() == 1 { "" } else { "s" },
        if only_changed {
            format!(", {} shown (only the changed)", rows.len())
        } else {
            String::new()
        }
    );
    if !shown.is_empty() {
        let with_cost = shown.iter().any(|c| c.cost_usd.is_some());
        let _ = write!(
            html,
            r#"<table class="compare wide"><thead><tr><th>case</th><th class="num">A passed (95%)</th><th class="num">B passed (95%)</th><th class="num">change</th><th class="num">p</th><th class="num">q</th><th class="num">tokens/run</th><th class="num">ms/run</th>{}<th>verdict</th><th></th></tr></thead><tbody>"#,
            if with_cost {
                r#"<th class="num">cost</th>"#
            } else {
                ""
            }
        );
        for case in &shown {
            row(&mut html, case, &a, &b, with_cost, flaky.get(&case.name));
        }
        html.push_str("</tbody></table>");
    }
    html.push_str(&page::pager(current as u32, pages as u32, |n| {
        let n = n.to_string();
        link(
            "/compare",
            &[
                ("a", Some(a_spec)),
                ("b", Some(b_spec)),
                ("only", only_changed.then_some("changed")),
                ("page", Some(&n)),
            ],
        )
    }));
    for (title, id, names) in [
        ("Only in A (not compared)", "only-a", &comparison.only_a),
        ("Only in B (not compared)", "only-b", &comparison.only_b),
        (
            "No finished run on one side (not compared)",
            "unfinished",
            &comparison.unfinished,
        ),
    ] {
        if names.is_empty() {
            continue;
        }
        let listed: Vec<String> = names.iter().take(NAMES_LISTED).map(|n| esc(n)).collect();
        let _ = write!(
            html,
            r#"<h3 id="{id}">{title}: {}</h3><p>{}{}</p>"#,
            names.len(),
            listed.join(", "),
            if names.len() > NAMES_LISTED {
                format!(", and {} more", names.len() - NAMES_LISTED)
            } else {
                String::new()
            }
        );
    }
    Ok(Page::new(
        format!("Compare {} → {}", a.short_id(), b.short_id()),
        html,
    ))
}

/// A case whose pass rate or content differs between the sides.
fn changed(case: &CaseComparison) -> bool {
    case.difference != 0.0 || case.changed_case
}

fn side_line(run: &RecordedRun, cases: usize) -> String {
    format!(
        r#"<a href="{}"><code>{}</code></a> · {} · {} · {} · {} case{} · {} of {} runs passed"#,
        attr(&page::run_href(&run.id)),
        esc(run.short_id()),
        page::utc(run.started_ms),
        page::git(run),
        esc(&run.model),
        cases,
        if cases == 1 { "" } else { "s" },
        run.passed,
        run.runs
    )
}

fn form(a: &str, b: &str, only_changed: bool) -> String {
    format!(
        r#"<form class="filters" method="get" action="/compare"><label>A (earlier)<input type="text" name="a" value="{}"></label><label>B (later)<input type="text" name="b" value="{}"></label><label>show<select name="only"><option value="">every case</option><option value="changed"{}>only changed cases</option></select></label><button type="submit">Compare</button></form>"#,
        attr(a),
        attr(b),
        if only_changed { " selected" } else { "" }
    )
}

/// Without both runs: the form, with the two newest runs filled in.
fn picker(store: &mut Store, query: &Query) -> Result<Page, PageError> {
    let newest = store.runs(&crate::history::RunFilter {
        limit: 2,
        ..Default::default()
    })?;
    let b = query
        .get("b")
        .map(str::to_owned)
        .or_else(|| newest.first().map(|r| r.id.clone()))
        .unwrap_or_default();
    let a = query
        .get("a")
        .map(str::to_owned)
        .or_else(|| newest.get(1).map(|r| r.id.clone()))
        .unwrap_or_default();
    let mut html = String::from("<h1>Compare two runs</h1>");
    html.push_str(&form(&a, &b, false));
    html.push_str(r#"<p class="note">Give two runs: an id or 4 or more of its first digits, <code>latest</code>, or <code>BRANCH@latest</code>. A is the earlier run, B the later.</p>"#);
    Ok(Page::new("Compare", html))
}

fn summary(html: &mut String, c: &crate::report::Comparison, changed: usize) {
    let regressed = c.regressions().count();
    let improved = c.improvements().count();
    let _ = write!(
        html,
        r#"<div class="cards"><div class="card"><div class="value" id="regressed">{regressed}</div><div class="label">regressed with evidence</div></div><div class="card"><div class="value">{improved}</div><div class="label">improved with evidence</div></div><div class="card"><div class="value">{changed}</div><div class="label">changed (pass rate or content)</div></div><div class="card"><div class="value">{:.2} → {:.2}</div><div class="label">pass rate (95%: {} → {})</div></div></div>"#,
        c.a.pass_rate,
        c.b.pass_rate,
        c.a.pass_rate_ci95.compact(),
        c.b.pass_rate_ci95.compact(),
    );
    let s = &c.suite;
    let _ = write!(
        html,
        r#"<p class="meta">Per case: Fisher's exact test, two-sided; Benjamini–Hochberg at a false-discovery rate of {:.0}%. Over the suite: Wilcoxon signed-rank over {} paired cases ({} better on B, {} worse, {} tied): p = {}.{}{}{}</p>"#,
        c.options.alpha * 100.0,
        s.pairs,
        s.better,
        s.worse,
        s.tied,
        probability(s.p_value),
        c.tokens_per_run
            .map(|t| format!(" Tokens per run {}.", change_text(&t, 0)))
            .unwrap_or_default(),
        c.ms_per_run
            .map(|t| format!(" Ms per run {}.", change_text(&t, 0)))
            .unwrap_or_default(),
        c.cost_usd
            .map(|t| format!(" Cost ${:.4} → ${:.4}.", t.a, t.b))
            .unwrap_or_default(),
    );
}

fn row(
    html: &mut String,
    case: &CaseComparison,
    a: &RecordedRun,
    b: &RecordedRun,
    with_cost: bool,
    flaky: Option<&Flaky>,
) {
    let (class, verdict) = match case.verdict {
        _ if case.regressed() && case.verdict != Verdict::Regressed => {
            ("regressed", "regressed (beyond a limit)".to_owned())
        }
        Verdict::Regressed => ("regressed", "regressed".to_owned()),
        Verdict::Improved => ("improved", "improved".to_owned()),
        Verdict::Negligible => ("", "negligible".to_owned()),
        Verdict::NoEvidence => ("", "no evidence of a change".to_owned()),
        Verdict::TooFewRuns { runs_needed } => (
            "",
            format!("too few runs to tell (needs {runs_needed} runs a side)"),
        ),
    };
    let badge = match class {
        "regressed" => r#"<span class="badge fail">"#,
        "improved" => r#"<span class="badge pass">"#,
        _ => r#"<span class="badge neutral">"#,
    };
    let mut marks = Vec::new();
    if case.changed_case {
        marks.push(r#"<span class="digest-change">case changed</span>"#.to_owned());
    }
    if case.difference != 0.0 && !case.regressed() && !case.improved() {
        marks.push(r#"<span class="flip">outcome changed</span>"#.to_owned());
    }
    if let Some(flaky) = flaky {
        marks.push(format!(
            r#"<span class="badge not_evaluable flaky">flaky: {} flip{} in {} runs</span>"#,
            flaky.flips,
            if flaky.flips == 1 { "" } else { "s" },
            flaky.runs
        ));
    }
    let rate = |r: &crate::report::CaseRate| {
        format!("{} / {} ({})", r.passed, r.runs, r.pass_rate_ci95.compact())
    };
    let _ = write!(
        html,
        r#"<tr class="compared {class}" data-case="{}"><td><a href="{}">{}</a></td><td class="num">{}</td><td class="num">{}</td><td class="num">{:+.2}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td>{}<td>{badge}{}</span> {}</td><td><a class="transcripts" href="{}">transcripts side by side</a></td></tr>"#,
        attr(&case.name),
        attr(&page::history_href(&case.name)),
        esc(&case.name),
        rate(&case.a),
        rate(&case.b),
        case.difference,
        probability(case.p_value),
        probability(case.q_value),
        change_text(&case.tokens_per_run, 0),
        change_text(&case.ms_per_run, 0),
        if with_cost {
            format!(
                r#"<td class="num">{}</td>"#,
                case.cost_usd
                    .map_or_else(|| "-".to_owned(), |c| format!("${:.4} → ${:.4}", c.a, c.b))
            )
        } else {
            String::new()
        },
        esc(&verdict),
        marks.join(" "),
        attr(&link(
            "/compare/case",
            &[
                ("a", Some(&a.id)),
                ("b", Some(&b.id)),
                ("name", Some(&case.name))
            ]
        )),
    );
}

/// `120 → 150 (+25%)`.
fn change_text(change: &Change, digits: usize) -> String {
    let relative = match change.relative {
        Some(r) if r.abs() < 0.005 => " (0%)".to_owned(),
        Some(r) => format!(" ({:+.0}%)", r * 100.0),
        None => String::new(),
    };
    format!("{:.digits$} → {:.digits$}{relative}", change.a, change.b)
}

/// `0.031`, `1.5e-11`.
fn probability(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// `/compare/case?a=&b=&name=`: the case's runs on each side, side by side.
pub(crate) fn case_page(store: &mut Store, query: &Query) -> Result<Page, PageError> {
    let (Some(a_spec), Some(b_spec), Some(name)) =
        (query.get("a"), query.get("b"), query.get("name"))
    else {
        return Err(PageError::BadRequest(
            "give a, b (two runs) and name (a case)".into(),
        ));
    };
    let a = store.resolve(a_spec)?;
    let b = store.resolve(b_spec)?;
    let mut html = format!(
        r#"<p class="meta"><a href="{}">the comparison</a> · <a href="{}">history of this case</a></p><h1>Case <span id="case-name">{}</span>: A and B side by side</h1><div class="side-by-side">"#,
        attr(&link("/compare", &[("a", Some(&a.id)), ("b", Some(&b.id))])),
        attr(&page::history_href(name)),
        esc(name)
    );
    for (label, run) in [("A", &a), ("B", &b)] {
        let _ = write!(
            html,
            r#"<section class="side" id="side-{}"><h2>{label}: <a href="{}"><code>{}</code></a> <span class="note">{} · {}</span></h2>"#,
            label.to_ascii_lowercase(),
            attr(&page::run_href(&run.id)),
            esc(run.short_id()),
            page::utc(run.started_ms),
            page::git(run)
        );
        match store.case(&run.id, name)? {
            None => {
                let _ = write!(
                    html,
                    r#"<p class="note">Run {} has no case named {}.</p>"#,
                    esc(run.short_id()),
                    esc(name)
                );
            }
            Some((recorded, report, runs)) => {
                super::case::case_heading(&mut html, &recorded, &report);
                html.push_str(&super::case::runs_html(store, &run.id, &recorded, &runs)?);
            }
        }
        html.push_str("</section>");
    }
    html.push_str("</div>");
    Ok(Page::new(format!("{name}: A and B"), html))
}

//! `/runs/{id}`: a run's provenance, then its cases, failures first, filtered by status,
//! grader and tag, searched by name or path, a page at a time (a run of 100,000 cases is
//! 1,000 pages, never one).

use std::fmt::Write;

use super::page::{self, Page, PageError, Query, attr, esc, link};
use crate::history::{CaseFilter, RecordedRun, Store};

/// Cases a page.
pub(crate) const PER_PAGE: u32 = 100;

pub(crate) fn page(store: &mut Store, id: &str, query: &Query) -> Result<Page, PageError> {
    let run = store.resolve(id)?;
    let current = query.page();
    let status = query.get("status");
    let pass = match status {
        None | Some("all") => None,
        Some("pass") => Some(true),
        Some("fail") => Some(false),
        Some(other) => {
            return Err(PageError::BadRequest(format!(
                "status `{other}`: give pass, fail or all"
            )));
        }
    };
    let filter = CaseFilter {
        pass,
        grader: query.get("grader").map(str::to_owned),
        tag: query.get("tag").map(str::to_owned),
        search: query.get("q").map(str::to_owned),
        offset: (current - 1).saturating_mul(PER_PAGE),
        limit: PER_PAGE,
    };
    let cases = store.cases(&run.id, &filter)?;
    // The failing cases of the whole run (the header's count), unless the page's own
    // query already counted them.
    let unfiltered = filter.grader.is_none() && filter.tag.is_none() && filter.search.is_none();
    let failing = if unfiltered && pass == Some(false) {
        cases.total
    } else {
        store
            .cases(
                &run.id,
                &CaseFilter {
                    pass: Some(false),
                    limit: 1,
                    ..CaseFilter::default()
                },
            )?
            .total
    };

    let mut html = String::new();
    header(&mut html, &run, failing);

    let self_href = page::run_href(&run.id);
    let _ = write!(
        html,
        r#"<h2 id="cases">Cases</h2><form class="filters" method="get" action="{}">"#,
        attr(&self_href)
    );
    html.push_str(r#"<label>status<select name="status" id="status">"#);
    for (value, label) in [("all", "all"), ("fail", "failed"), ("pass", "passed")] {
        let selected = status.unwrap_or("all") == value;
        let _ = write!(
            html,
            r#"<option value="{value}"{}>{label}</option>"#,
            if selected { " selected" } else { "" }
        );
    }
    html.push_str("</select></label>");
    for (name, label) in [("grader", "grader"), ("tag", "tag"), ("q", "search")] {
        let _ = write!(
            html,
            r#"<label>{label}<input type="{}" name="{name}" id="filter-{name}" value="{}"></label>"#,
            if name == "q" { "search" } else { "text" },
            attr(query.get(name).unwrap_or(""))
        );
    }
    let _ = write!(
        html,
        r#"<button type="submit">Filter</button> <a href="{}">clear</a></form>"#,
        attr(&self_href)
    );

    let pages = page::pages(cases.total, PER_PAGE);
    let first = filter.offset + 1;
    let shown_to = filter.offset + cases.cases.len() as u32;
    let _ = write!(
        html,
        r#"<p class="count" id="case-count">{} case{} match{}{}.</p>"#,
        cases.total,
        if cases.total == 1 { "" } else { "s" },
        if cases.total == 1 { "es" } else { "" },
        if cases.cases.is_empty() {
            String::new()
        } else {
            format!("; {first} to {shown_to} shown, failures first")
        }
    );
    if !cases.cases.is_empty() {
        html.push_str(
            r#"<table class="cases wide"><thead><tr><th>case</th><th>status</th><th class="num">runs passed</th><th class="num">pass rate</th><th>tags</th><th>failing graders</th><th class="num">tokens in / out</th><th class="num">duration</th><th class="num">cost</th><th></th></tr></thead><tbody>"#,
        );
        for case in &cases.cases {
            let badge = page::case_badge(case);
            let _ = write!(
                html,
                r#"<tr class="case" data-case="{}"><td><a class="case-link" href="{}">{}</a><div class="note">{}</div></td><td>{badge}</td><td class="num">{} / {}</td><td class="num">{}</td><td>{}</td><td>{}</td><td class="num">{} / {}</td><td class="num">{}</td><td class="num">{}</td><td><a class="history-link" href="{}">history</a></td></tr>"#,
                attr(&case.name),
                attr(&page::case_href(&run.id, &case.name)),
                esc(&case.name),
                esc(&case.path),
                case.passed,
                case.runs,
                page::rate(case.passed, case.runs),
                esc(&case.tags.join(", ")),
                esc(&case.failing.join(", ")),
                case.input_tokens,
                case.output_tokens,
                page::duration(case.duration_ms),
                page::cost(case.cost_usd),
                attr(&page::history_href(&case.name)),
            );
        }
        html.push_str("</tbody></table>");
    }
    html.push_str(&page::pager(current, pages, |n| {
        let n = n.to_string();
        link(
            &self_href,
            &[
                ("status", status),
                ("grader", filter.grader.as_deref()),
                ("tag", filter.tag.as_deref()),
                ("q", filter.search.as_deref()),
                ("page", Some(&n)),
            ],
        )
    }));
    Ok(Page::new(format!("Run {}", run.short_id()), html))
}

/// The run's heading and provenance.
pub(crate) fn header(html: &mut String, run: &RecordedRun, failing: u32) {
    let _ = write!(
        html,
        r#"<h1>Run <code>{}</code> {}</h1>"#,
        esc(&run.id),
        page::status_badge(run)
    );
    let ended = run.ended_ms.map_or_else(|| "-".to_owned(), page::utc);
    let facts: Vec<(&str, String)> = vec![
        ("started", page::utc(run.started_ms)),
        ("ended", ended),
        (
            "made by",
            format!(
                "evalhost {} ({})",
                esc(&run.evalhost_version),
                esc(&run.command)
            ),
        ),
        ("git", page::git(run)),
        ("mode", esc(&run.mode)),
        (
            "provider · model",
            format!(
                "{} · {}",
                esc(run.provider.as_deref().unwrap_or("-")),
                esc(&run.model)
            ),
        ),
        ("agents", page::agents(run)),
        (
            "runs per case · k",
            format!(
                "{} · {}",
                run.runs_per_case,
                run.k.map_or_else(|| "n".to_owned(), |k| k.to_string())
            ),
        ),
        (
            "cases",
            format!(
                r#"{} (<a href="{}">{failing} failed</a>)"#,
                run.cases,
                attr(&link(&page::run_href(&run.id), &[("status", Some("fail"))]))
            ),
        ),
        (
            "runs passed",
            format!(
                "{} / {} (pass rate {})",
                run.passed,
                run.runs,
                page::rate(run.passed, run.runs)
            ),
        ),
        (
            "tokens in / out",
            format!("{} / {}", run.input_tokens, run.output_tokens),
        ),
        ("run time (summed)", page::duration(run.duration_ms)),
        ("cost", page::cost(run.cost_usd)),
    ];
    html.push_str(r#"<dl class="facts">"#);
    for (name, value) in facts {
        let _ = write!(html, "<dt>{name}</dt><dd>{value}</dd>");
    }
    if let Some(source) = &run.source {
        let _ = write!(html, "<dt>imported from</dt><dd>{}</dd>", esc(source));
    }
    html.push_str("</dl>");
}

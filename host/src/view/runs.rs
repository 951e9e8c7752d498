//! `/`: the recorded runs, newest first, filtered by branch, model, agent and case, a page
//! at a time.

use std::fmt::Write;

use super::page::{self, Page, PageError, Query, attr, esc, link};
use crate::history::{RunFilter, Store};

/// Runs a page.
const PER_PAGE: u32 = 50;

pub(crate) fn page(store: &mut Store, query: &Query) -> Result<Page, PageError> {
    let current = query.page();
    let filter = RunFilter {
        branch: query.get("branch").map(str::to_owned),
        model: query.get("model").map(str::to_owned),
        agent: query.get("agent").map(str::to_owned),
        case: query.get("case").map(str::to_owned),
        // One more than shown: the last row's previous run, and whether there is a next page.
        limit: PER_PAGE + 1,
        offset: (current - 1).saturating_mul(PER_PAGE),
    };
    let runs = store.runs(&filter)?;
    let params = |page: Option<&str>| -> Vec<(&str, Option<String>)> {
        vec![
            ("branch", filter.branch.clone()),
            ("model", filter.model.clone()),
            ("agent", filter.agent.clone()),
            ("case", filter.case.clone()),
            ("page", page.map(str::to_owned)),
        ]
    };
    let href = |n: u32| {
        let n = n.to_string();
        let params = params(Some(&n));
        let borrowed: Vec<(&str, Option<&str>)> =
            params.iter().map(|(k, v)| (*k, v.as_deref())).collect();
        link("/", &borrowed)
    };

    let mut html = String::from("<h1>Runs</h1>");
    let _ = write!(
        html,
        r#"<p class="meta">Every run recorded in the history store {}, newest first.</p>"#,
        esc(store.location())
    );
    html.push_str(r#"<form class="filters" method="get" action="/">"#);
    for (name, label) in [
        ("branch", "branch"),
        ("model", "model"),
        ("agent", "agent"),
        ("case", "ran case"),
    ] {
        let _ = write!(
            html,
            r#"<label>{label}<input type="text" name="{name}" value="{}"></label>"#,
            attr(query.get(name).unwrap_or(""))
        );
    }
    html.push_str(r#"<button type="submit">Filter</button> <a href="/">clear</a></form>"#);

    if runs.is_empty() {
        html.push_str(if current > 1 {
            r#"<p class="note" id="no-runs">No runs on this page.</p>"#
        } else {
            r#"<p class="note" id="no-runs">No recorded run matches.</p>"#
        });
        return Ok(Page::new("Runs", html));
    }
    html.push_str(
        r#"<table class="runs wide"><thead><tr><th>run</th><th>started</th><th>status</th><th>branch@commit</th><th>mode</th><th>model</th><th>agents</th><th class="num">cases</th><th class="num">pass rate</th><th class="num">runs passed</th><th class="num">tokens in / out</th><th class="num">cost</th><th></th></tr></thead><tbody>"#,
    );
    for (i, run) in runs.iter().take(PER_PAGE as usize).enumerate() {
        let previous = runs.get(i + 1);
        let compare = previous.map_or_else(String::new, |p| {
            format!(
                r#"<a class="compare-previous" href="{}" title="compare with {}, the run below">compare with previous</a>"#,
                attr(&link("/compare", &[("a", Some(&p.id)), ("b", Some(&run.id))])),
                attr(p.short_id())
            )
        });
        let _ = write!(
            html,
            r#"<tr class="run" data-run="{id}"><td><a href="{href}"><code>{short}</code></a></td><td>{started}</td><td>{status}</td><td>{git}</td><td>{mode}</td><td>{model}</td><td>{agents}</td><td class="num">{cases}</td><td class="num">{rate}</td><td class="num">{passed} / {runs}</td><td class="num">{tin} / {tout}</td><td class="num">{cost}</td><td>{compare}</td></tr>"#,
            id = attr(&run.id),
            href = attr(&page::run_href(&run.id)),
            short = esc(run.short_id()),
            started = page::utc(run.started_ms),
            status = page::status_badge(run),
            git = page::git(run),
            mode = esc(&run.mode),
            model = esc(&run.model),
            agents = page::agents(run),
            cases = run.cases,
            rate = page::rate(run.passed, run.runs),
            passed = run.passed,
            runs = run.runs,
            tin = run.input_tokens,
            tout = run.output_tokens,
            cost = page::cost(run.cost_usd),
        );
    }
    html.push_str("</tbody></table>");
    // The number of runs is not counted (a scan); the pager knows the pages so far.
    let more = runs.len() > PER_PAGE as usize;
    let last = if more { current + 1 } else { current };
    html.push_str(&page::pager(current, last, href));
    Ok(Page::new("Runs", html))
}

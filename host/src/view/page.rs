//! What the pages share: the page shell, errors as pages, the query string, links, paging,
//! the compiled-in assets, and the formatting of a run's facts.

use std::fmt::Write;

use axum::http::StatusCode;

use crate::history::{RecordedRun, StoreError};
use crate::report::escape;

/// The stylesheet: the HTML report's, then the view's own.
const CSS: &str = concat!(
    include_str!("../report/html/report.css"),
    include_str!("assets/view.css")
);
const ICON: &str = include_str!("assets/favicon.svg");

/// The asset served at `path`, when there is one: its content type and text. The only
/// files served are these compiled-in ones.
pub(crate) fn asset(path: &str) -> Option<(&'static str, &'static str)> {
    match path {
        "/assets/view.css" => Some(("text/css; charset=utf-8", CSS)),
        "/assets/favicon.svg" | "/favicon.ico" => Some(("image/svg+xml", ICON)),
        _ => None,
    }
}

/// `text` escaped for element content.
pub(crate) fn esc(text: &str) -> String {
    escape::text(text)
}

/// `value` escaped for a quoted attribute.
pub(crate) fn attr(value: &str) -> String {
    escape::attribute(value)
}

/// A page's title and body (the shell is [`Page::into_html`]'s).
pub(crate) struct Page {
    pub title: String,
    pub body: String,
}

impl Page {
    pub(crate) fn new(title: impl Into<String>, body: String) -> Self {
        Self {
            title: title.into(),
            body,
        }
    }

    pub(crate) fn into_html(self) -> String {
        format!(
            r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{} · evalhost view</title>
<link rel="stylesheet" href="/assets/view.css">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
</head>
<body>
<header class="top"><a class="brand" href="/">evalhost view</a><nav><a href="/">Runs</a><a href="/compare">Compare</a></nav></header>
<main>
{}
</main>
</body>
</html>
"#,
            esc(&self.title),
            self.body
        )
    }
}

/// Why a page could not be made; each becomes a page of its own.
#[derive(Debug)]
pub(crate) enum PageError {
    /// A run, case or page that is not there (404).
    NotFound(String),
    /// A query parameter that makes no sense (400).
    BadRequest(String),
    Store(StoreError),
    Internal(String),
}

impl From<StoreError> for PageError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(message) => PageError::NotFound(message),
            other => PageError::Store(other),
        }
    }
}

impl PageError {
    pub(crate) fn page(self) -> (StatusCode, Page) {
        let (status, title, message) = match self {
            PageError::NotFound(m) => (StatusCode::NOT_FOUND, "Not found", m),
            PageError::BadRequest(m) => (StatusCode::BAD_REQUEST, "Bad request", m),
            PageError::Store(e) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "The store failed",
                e.to_string(),
            ),
            PageError::Internal(m) => (StatusCode::INTERNAL_SERVER_ERROR, "Failed", m),
        };
        let body = format!(
            r#"<h1>{}</h1><div class="banner fail" id="error">{}</div><p><a href="/">All runs</a></p>"#,
            esc(title),
            esc(&message)
        );
        (status, Page::new(title, body))
    }
}

/// A request path as an error page quotes it (cut, decoded for reading).
pub(crate) fn shown_path(path: &str) -> String {
    let decoded = percent_decode(path);
    let cut: String = decoded.chars().take(200).collect();
    cut
}

/// `%XX` sequences decoded (invalid UTF-8 replaced); `+` stays `+` (paths).
pub(crate) fn percent_decode(text: &str) -> String {
    decode(text, false)
}

fn decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` for a URL's path segment or query value: everything but unreserved characters
/// percent-encoded (so `/`, `?`, `&`, `#` in a case's name stay part of it).
pub(crate) fn enc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A request's query string, decoded.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(query: &str) -> Self {
        Query(
            query
                .split('&')
                .filter(|p| !p.is_empty())
                .take(64)
                .map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    (decode(k, true), decode(v, true))
                })
                .collect(),
        )
    }

    /// The first non-empty value of `key`, trimmed.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, v)| k == key && !v.trim().is_empty())
            .map(|(_, v)| v.trim())
    }

    /// `page` (1-based; 1 when absent or not a number).
    pub(crate) fn page(&self) -> u32 {
        self.get("page")
            .and_then(|p| p.parse::<u32>().ok())
            .filter(|p| *p >= 1)
            .unwrap_or(1)
            .min(1_000_000)
    }
}

/// `base?k=v&...` with the given non-empty values, encoded.
pub(crate) fn link(base: &str, params: &[(&str, Option<&str>)]) -> String {
    let mut url = base.to_owned();
    let mut first = true;
    for (k, v) in params {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            url.push(if first { '?' } else { '&' });
            first = false;
            url.push_str(k);
            url.push('=');
            url.push_str(&enc(v));
        }
    }
    url
}

/// Page links: previous, a few around the current one, first and last, next. `href` makes
/// the link of page N.
pub(crate) fn pager(current: u32, pages: u32, href: impl Fn(u32) -> String) -> String {
    if pages <= 1 {
        return String::new();
    }
    let mut html = String::from(r#"<nav class="pager" aria-label="pages">"#);
    let item = |html: &mut String, n: u32, label: &str, rel: &str| {
        if n == current {
            let _ = write!(html, r#"<span class="current">{label}</span>"#);
        } else {
            let _ = write!(
                html,
                r#"<a href="{}"{rel}>{label}</a>"#,
                attr(&href(n)),
                rel = if rel.is_empty() {
                    String::new()
                } else {
                    format!(r#" rel="{rel}""#)
                }
            );
        }
    };
    if current > 1 {
        item(&mut html, current - 1, "‹ previous", "prev");
    }
    let mut last_shown = 0;
    for n in 1..=pages {
        let near = n == 1 || n == pages || n.abs_diff(current) <= 2;
        if near {
            if last_shown + 1 < n {
                html.push_str(r#"<span class="gap">…</span>"#);
            }
            item(&mut html, n, &n.to_string(), "");
            last_shown = n;
        }
    }
    if current < pages {
        item(&mut html, current + 1, "next ›", "next");
    }
    html.push_str("</nav>");
    html
}

/// A recorded case's status badge: no runs, pass (every run passed) or fail.
pub(crate) fn case_badge(case: &crate::history::RecordedCase) -> &'static str {
    if case.runs == 0 {
        r#"<span class="badge skipped">no runs</span>"#
    } else if case.pass {
        r#"<span class="badge pass">pass</span>"#
    } else {
        r#"<span class="badge fail">fail</span>"#
    }
}

/// `2026-12-03 14:05:09 UTC`.
pub(crate) fn utc(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(i64::try_from(ms).unwrap_or(0)).map_or_else(
        || "-".to_owned(),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// `main@1a2b3c4d+dirty`, escaped; `-` without git.
pub(crate) fn git(run: &RecordedRun) -> String {
    match &run.git {
        None => "-".to_owned(),
        Some(g) => {
            let commit: String = g.commit.chars().take(10).collect();
            format!(
                "{}@{}{}",
                esc(g.branch.as_deref().unwrap_or("(detached)")),
                esc(&commit),
                if g.dirty {
                    r#"<span class="dirty">+dirty</span>"#
                } else {
                    ""
                }
            )
        }
    }
}

/// `codex 0.171.0, pi 0.73.1`, or evalhost's own agent.
pub(crate) fn agents(run: &RecordedRun) -> String {
    if run.agents.is_empty() {
        return "evalhost".to_owned();
    }
    run.agents
        .iter()
        .map(|a| format!("{} {}", esc(&a.name), esc(&a.version)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A status badge of a run.
pub(crate) fn status_badge(run: &RecordedRun) -> String {
    let status = run.status.as_str();
    let class = match status {
        "finished" if run.passed == run.runs => "pass",
        "finished" => "fail",
        "interrupted" => "not_evaluable",
        _ => "neutral",
    };
    format!(r#"<span class="badge {class}">{status}</span>"#)
}

/// `$0.0123`, or `-` when unknown.
pub(crate) fn cost(cost: Option<f64>) -> String {
    cost.map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"))
}

/// A pass rate as `0.85`.
pub(crate) fn rate(passed: u32, runs: u32) -> String {
    if runs == 0 {
        "-".to_owned()
    } else {
        format!("{:.2}", f64::from(passed) / f64::from(runs))
    }
}

/// A duration in ms as `850 ms`, `12.3 s`, `4.1 min`.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 120_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{:.1} min", ms as f64 / 60_000.0)
    }
}

/// The link to a run's page.
pub(crate) fn run_href(id: &str) -> String {
    format!("/runs/{}", enc(id))
}

/// The link to a case of a run.
pub(crate) fn case_href(run: &str, name: &str) -> String {
    format!("/runs/{}/cases/{}", enc(run), enc(name))
}

/// The link to a case's history.
pub(crate) fn history_href(name: &str) -> String {
    format!("/cases/{}", enc(name))
}

/// How many pages of `per_page` `total` items make (at least 1).
pub(crate) fn pages(total: u32, per_page: u32) -> u32 {
    total.div_ceil(per_page).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_links_round_trip() {
        let name = "a/b c&d=é<x>%";
        let url = link("/compare/case", &[("name", Some(name)), ("a", None)]);
        assert_eq!(url, "/compare/case?name=a%2Fb%20c%26d%3D%C3%A9%3Cx%3E%25");
        let query = Query::parse(url.split_once('?').unwrap().1);
        assert_eq!(query.get("name"), Some(name));
        assert_eq!(Query::parse("q=a+b&page=x").get("q"), Some("a b"));
        assert_eq!(Query::parse("page=x").page(), 1);
        assert_eq!(Query::parse("page=0").page(), 1);
        assert_eq!(Query::parse("page=3").page(), 3);
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("a%2"), "a%2");
    }

    #[test]
    fn pager_shows_neighbours_and_ends() {
        let html = pager(5, 20, |n| format!("/?page={n}"));
        assert!(html.contains(r#"<span class="current">5</span>"#));
        for n in [1, 3, 4, 6, 7, 20] {
            assert!(
                html.contains(&format!(r#"href="/?page={n}""#)),
                "{n}: {html}"
            );
        }
        assert!(!html.contains(r#"href="/?page=10""#));
        assert_eq!(pager(1, 1, |n| n.to_string()), "");
    }
}

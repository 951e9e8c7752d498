//! `/cases/{name}`: a case across the recorded runs, oldest to newest: a trend of its pass
//! rate (inline SVG), each flip marked (a run whose pass/fail differs from the run before),
//! each change of the case's content (its digest) marked, then the runs as a table, newest
//! first.

use std::fmt::Write;

use super::page::{self, Page, PageError, attr, esc};
use crate::history::{CaseHistoryEntry, Store};

/// Runs shown (the newest).
const RUNS: u32 = 200;

const LEFT: f64 = 40.0;
const TOP: f64 = 16.0;
const HEIGHT: f64 = 160.0;
const STEP: f64 = 14.0;

/// One run of the case, with what changed since the run before.
struct Point<'a> {
    entry: &'a CaseHistoryEntry,
    flip: bool,
    digest_changed: bool,
}

pub(crate) fn page(store: &mut Store, name: &str) -> Result<Page, PageError> {
    let mut entries = store.case_history(name, RUNS)?;
    if entries.is_empty() {
        return Err(PageError::NotFound(format!(
            "No recorded run has a case named {name:?}."
        )));
    }
    entries.reverse();
    let points: Vec<Point> = entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let before = i.checked_sub(1).map(|b| &entries[b]);
            Point {
                entry,
                flip: before.is_some_and(|b| {
                    b.case.runs > 0 && entry.case.runs > 0 && b.case.pass != entry.case.pass
                }),
                digest_changed: before.is_some_and(|b| b.case.digest != entry.case.digest),
            }
        })
        .collect();
    let flips = points.iter().filter(|p| p.flip).count();
    let changes = points.iter().filter(|p| p.digest_changed).count();

    let mut html = String::new();
    let _ = write!(
        html,
        r#"<h1>Case <span id="case-name">{}</span></h1><p class="meta">The newest {} run{} that ran it, oldest first in the trend · <span class="flip" id="flip-count">{flips} flip{}</span> · <span class="digest-change">{changes} content change{}</span></p>"#,
        esc(name),
        points.len(),
        if points.len() == 1 { "" } else { "s" },
        if flips == 1 { "" } else { "s" },
        if changes == 1 { "" } else { "s" },
    );
    html.push_str(&trend(&points));
    html.push_str(
        r#"<table class="history wide"><thead><tr><th>run</th><th>started</th><th>branch@commit</th><th>model</th><th>digest</th><th>status</th><th class="num">runs passed</th><th class="num">pass rate</th><th>changed</th><th></th></tr></thead><tbody>"#,
    );
    for point in points.iter().rev() {
        let (run, case) = (&point.entry.run, &point.entry.case);
        let mut marks = Vec::new();
        if point.flip {
            marks.push(r#"<span class="flip">flip</span>"#);
        }
        if point.digest_changed {
            marks.push(r#"<span class="digest-change">case changed</span>"#);
        }
        let badge = page::case_badge(case);
        let _ = write!(
            html,
            r#"<tr class="history-run{}"><td><a href="{}"><code>{}</code></a></td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{badge}</td><td class="num">{} / {}</td><td class="num">{}</td><td>{}</td><td><a href="{}">this run of the case</a></td></tr>"#,
            if point.flip { " flipped" } else { "" },
            attr(&page::run_href(&run.id)),
            esc(run.short_id()),
            page::utc(run.started_ms),
            page::git(run),
            esc(&run.model),
            esc(case
                .digest
                .as_deref()
                .map_or("-", |d| &d[..d.len().min(12)])),
            case.passed,
            case.runs,
            page::rate(case.passed, case.runs),
            marks.join(" "),
            attr(&page::case_href(&run.id, name)),
        );
    }
    html.push_str("</tbody></table>");
    Ok(Page::new(format!("Case {name}"), html))
}

/// The trend: one point per run (its pass rate), joined by a line; a flip is a red ring, a
/// content change a dashed vertical line.
fn trend(points: &[Point]) -> String {
    let width = LEFT + STEP * (points.len().max(2) as f64) + 24.0;
    let height = TOP + HEIGHT + 28.0;
    let y = |rate: f64| TOP + (1.0 - rate.clamp(0.0, 1.0)) * HEIGHT;
    let x = |i: usize| LEFT + 8.0 + STEP * i as f64;
    let mut svg = format!(
        r##"<div class="trend"><svg id="trend" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="pass rate per run, oldest first">"##
    );
    for tick in [0.0, 0.5, 1.0] {
        let ty = y(tick);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{ty}" x2="{}" y2="{ty}" stroke="#d0d7de" stroke-dasharray="2,3"/><text x="{}" y="{}" text-anchor="end" fill="#57606a">{tick}</text>"##,
            width - 8.0,
            LEFT - 6.0,
            ty + 4.0
        );
    }
    for (i, point) in points.iter().enumerate() {
        if point.digest_changed {
            let cx = x(i) - STEP / 2.0;
            let _ = write!(
                svg,
                r##"<line class="digest-change" x1="{cx}" y1="{TOP}" x2="{cx}" y2="{}" stroke="#0969da" stroke-dasharray="4,3"><title>the case's content changed</title></line>"##,
                TOP + HEIGHT
            );
        }
    }
    let line: Vec<String> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.entry.case.runs > 0)
        .map(|(i, p)| format!("{:.1},{:.1}", x(i), y(p.entry.case.pass_rate())))
        .collect();
    if line.len() > 1 {
        let _ = write!(
            svg,
            r##"<polyline points="{}" fill="none" stroke="#57606a" stroke-width="1.5"/>"##,
            line.join(" ")
        );
    }
    for (i, point) in points.iter().enumerate() {
        let case = &point.entry.case;
        let (cx, cy) = (x(i), y(case.pass_rate()));
        let colour = if case.runs == 0 {
            "#bf8700"
        } else if case.pass {
            "#2da44e"
        } else {
            "#cf222e"
        };
        let title = format!(
            "run {} ({}): {} of {} runs passed{}{}",
            point.entry.run.short_id(),
            page::utc(point.entry.run.started_ms),
            case.passed,
            case.runs,
            if point.flip { "; flipped" } else { "" },
            if point.digest_changed {
                "; the case changed"
            } else {
                ""
            }
        );
        let _ = write!(
            svg,
            r##"<a href="{}"><g class="point{}"><title>{}</title><circle cx="{cx:.1}" cy="{cy:.1}" r="4" fill="{colour}"/>"##,
            attr(&page::case_href(&point.entry.run.id, &case.name)),
            if point.flip { " flip" } else { "" },
            esc(&title)
        );
        if point.flip {
            let _ = write!(
                svg,
                r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="7.5" fill="none" stroke="#cf222e" stroke-width="2"/>"##
            );
        }
        svg.push_str("</g></a>");
    }
    let _ = write!(
        svg,
        r##"<text x="{LEFT}" y="{}" fill="#57606a">oldest</text><text x="{}" y="{}" text-anchor="end" fill="#57606a">newest</text></svg></div>"##,
        TOP + HEIGHT + 20.0,
        width - 8.0,
        TOP + HEIGHT + 20.0
    );
    svg
}

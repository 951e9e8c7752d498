//! The pass-rate chart: one row per case, an SVG drawn inline (no script, no network).
//! The bar is the pass rate, the whisker its Wilson 95% interval, the diamond pass@k and the
//! circle pass^k.

use std::fmt::Write;

use crate::report::CaseReport;
use crate::report::escape::text;

const LABEL_WIDTH: f64 = 220.0;
const PLOT_WIDTH: f64 = 520.0;
const ROW: f64 = 26.0;
const TOP: f64 = 34.0;
const LABEL_CHARS: usize = 30;

/// Where a rate is drawn.
fn x(rate: f64) -> f64 {
    LABEL_WIDTH + rate.clamp(0.0, 1.0) * PLOT_WIDTH
}

/// The chart's `<svg>` element up to its rows (one per case of `cases`): the legend, the
/// grid and the axis. Each case's row follows ([`row`]), then [`TAIL`].
pub(super) fn head(cases: usize) -> String {
    let rows = cases as f64;
    let width = LABEL_WIDTH + PLOT_WIDTH + 80.0;
    let height = TOP + rows * ROW + 24.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="pass rate per case">"##
    );
    // Legend.
    let _ = write!(
        svg,
        r##"<g transform="translate({LABEL_WIDTH},4)"><rect x="0" y="4" width="18" height="10" fill="#2da44e"/><text x="24" y="14">pass rate</text><line x1="100" y1="9" x2="130" y2="9" stroke="#1f2328"/><line x1="100" y1="4" x2="100" y2="14" stroke="#1f2328"/><line x1="130" y1="4" x2="130" y2="14" stroke="#1f2328"/><text x="136" y="14">95% interval</text><path d="M236 3 l6 6 l-6 6 l-6 -6 z" fill="#0969da"/><text x="248" y="14">pass@k</text><circle cx="318" cy="9" r="5" fill="#fff" stroke="#1f2328" stroke-width="2"/><text x="328" y="14">pass^k</text></g>"##
    );
    // Grid and axis.
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let tx = x(tick);
        let _ = write!(
            svg,
            r##"<line x1="{tx}" y1="{TOP}" x2="{tx}" y2="{}" stroke="#d0d7de" stroke-dasharray="2,3"/><text x="{tx}" y="{}" text-anchor="middle" fill="#57606a">{tick}</text>"##,
            TOP + rows * ROW,
            TOP + rows * ROW + 16.0
        );
    }
    svg
}

/// What closes the chart.
pub(super) const TAIL: &str = "</svg>";

/// The chart's row of case `i`.
pub(super) fn row(i: usize, case: &CaseReport) -> String {
    let mut svg = String::new();
    let s = &case.summary;
    let y = TOP + i as f64 * ROW;
    let mid = y + ROW / 2.0;
    let label = if case.name.chars().count() > LABEL_CHARS {
        let cut: String = case.name.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        case.name.clone()
    };
    let colour = if s.runs == 0 {
        "#bf8700"
    } else if s.pass {
        "#2da44e"
    } else {
        "#cf222e"
    };
    let tooltip = format!(
        "{}: {} of {} runs passed, pass rate {:.2} (95% interval {}), pass@{k} {:.2}, pass^{k} {:.2}",
        case.name,
        s.passed,
        s.runs,
        s.pass_rate,
        s.pass_rate_ci95.compact(),
        s.pass_at_k,
        s.pass_hat_k,
        k = s.k
    );
    let _ = write!(
        svg,
        r##"<g class="row"><title>{}</title><text x="{}" y="{}" text-anchor="end">{}</text><rect x="{LABEL_WIDTH}" y="{}" width="{PLOT_WIDTH}" height="12" fill="#f6f8fa"/><rect x="{LABEL_WIDTH}" y="{}" width="{}" height="12" fill="{colour}" opacity="0.85"/>"##,
        text(&tooltip),
        LABEL_WIDTH - 8.0,
        mid + 4.0,
        text(&label),
        mid - 6.0,
        mid - 6.0,
        s.pass_rate.clamp(0.0, 1.0) * PLOT_WIDTH,
    );
    let (low, high) = (x(s.pass_rate_ci95.low), x(s.pass_rate_ci95.high));
    let _ = write!(
        svg,
        r##"<line x1="{low}" y1="{mid}" x2="{high}" y2="{mid}" stroke="#1f2328"/><line x1="{low}" y1="{}" x2="{low}" y2="{}" stroke="#1f2328"/><line x1="{high}" y1="{}" x2="{high}" y2="{}" stroke="#1f2328"/>"##,
        mid - 5.0,
        mid + 5.0,
        mid - 5.0,
        mid + 5.0
    );
    let _ = write!(
        svg,
        r##"<circle cx="{}" cy="{mid}" r="5" fill="#fff" stroke="#1f2328" stroke-width="2"/><path d="M{} {} l4 4 l-4 4 l-4 -4 z" fill="#0969da"/><text x="{}" y="{}" fill="#57606a">{}/{}</text></g>"##,
        x(s.pass_hat_k),
        x(s.pass_at_k),
        mid - 4.0,
        LABEL_WIDTH + PLOT_WIDTH + 12.0,
        mid + 4.0,
        s.passed,
        s.runs
    );
    svg
}

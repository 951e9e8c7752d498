//! `/runs/{id}/cases/{name}`: one case of a run: each of its runs with its verdicts (entry,
//! outcome, message), warnings, error and usage beside its transcript (messages, tool calls),
//! then its workspace diff, as the HTML report shows a run; the session's evidence and
//! workspace changes are read from the store when the page is asked for.

use std::fmt::Write;

use super::page::{self, Page, PageError, attr, esc};
use crate::evidence::Evidence;
use crate::history::{CaseRun, RecordedCase, Store};
use crate::report::{CaseReport, WorkspaceChanges};

pub(crate) fn page(store: &mut Store, id: &str, name: &str) -> Result<Page, PageError> {
    let run = store.resolve(id)?;
    let (recorded, report, runs) = found(store, &run.id, name)?;
    let mut html = String::new();
    let _ = write!(
        html,
        r#"<p class="meta"><a href="{}">run <code>{}</code></a> · started {} · {}</p>"#,
        attr(&page::run_href(&run.id)),
        esc(run.short_id()),
        page::utc(run.started_ms),
        page::git(&run)
    );
    case_heading(&mut html, &recorded, &report);
    let _ = write!(
        html,
        r#"<p><a class="history-link" href="{}">history of this case across runs</a></p>"#,
        attr(&page::history_href(name))
    );
    html.push_str(&runs_html(store, &run.id, &recorded, &runs)?);
    Ok(Page::new(format!("{name} · run {}", run.short_id()), html))
}

/// The case `name` of run `run_id`, or a 404 saying so.
pub(crate) fn found(
    store: &mut Store,
    run_id: &str,
    name: &str,
) -> Result<(RecordedCase, CaseReport, Vec<CaseRun>), PageError> {
    store
        .case(run_id, name)?
        .ok_or_else(|| PageError::NotFound(format!("Run {run_id} has no case named {name:?}.")))
}

/// The case's name, status, path, digest, tags and numbers.
pub(crate) fn case_heading(html: &mut String, recorded: &RecordedCase, report: &CaseReport) {
    let badge = page::case_badge(recorded);
    let s = &report.summary;
    let _ = write!(
        html,
        r#"<h1 id="case-name">{} {badge}</h1><p class="meta">{} · digest <code>{}</code>{}</p><p class="meta">{} of {} runs passed · pass rate {:.2} (95% interval {}) · pass@{k} {:.2} · pass^{k} {:.2} · {} / {} tokens · {} · cost {}</p>"#,
        esc(&recorded.name),
        esc(&recorded.path),
        esc(recorded
            .digest
            .as_deref()
            .map_or("-", |d| &d[..d.len().min(16)])),
        if recorded.tags.is_empty() {
            String::new()
        } else {
            format!(" · tags {}", esc(&recorded.tags.join(", ")))
        },
        s.passed,
        s.runs,
        s.pass_rate,
        s.pass_rate_ci95.compact(),
        s.pass_at_k,
        s.pass_hat_k,
        recorded.input_tokens,
        recorded.output_tokens,
        page::duration(recorded.duration_ms),
        page::cost(recorded.cost_usd),
        k = s.k,
    );
}

/// Each run of the case, as the HTML report shows it, its details read from the store.
pub(crate) fn runs_html(
    store: &mut Store,
    run_id: &str,
    recorded: &RecordedCase,
    runs: &[CaseRun],
) -> Result<String, PageError> {
    let mut html = String::new();
    if runs.is_empty() {
        html.push_str(r#"<p class="note">No run of this case finished.</p>"#);
    }
    for run in runs {
        let artifacts = store.artifacts(run_id, recorded.ord, run.report.run)?;
        let mut note = None;
        let evidence: Option<Evidence> = match &artifacts.evidence {
            None => None,
            Some(bytes) => match serde_json::from_slice(bytes) {
                Ok(evidence) => Some(evidence),
                Err(e) => {
                    note = Some(format!("The stored evidence could not be read: {e}"));
                    None
                }
            },
        };
        let workspace: WorkspaceChanges = artifacts
            .workspace
            .as_deref()
            .and_then(|bytes| serde_json::from_slice(bytes).ok())
            .unwrap_or_else(|| WorkspaceChanges {
                unavailable: Some("The store holds no workspace changes for this run.".into()),
                ..WorkspaceChanges::default()
            });
        let detail = evidence
            .as_ref()
            .map(|e| crate::report::html::render_detail(e, &workspace));
        if let Some(note) = note {
            let _ = write!(html, r#"<div class="banner warn">{}</div>"#, esc(&note));
        }
        // Every run open: the page is the case's, asked for to be read.
        let mut block = String::new();
        // The image the run's container started from, as the store keeps it.
        let with_image;
        let report = match (&run.report.image, &run.image) {
            (None, Some(image)) => {
                with_image = crate::report::RunReport {
                    image: Some(image.clone()),
                    ..run.report.clone()
                };
                &with_image
            }
            _ => &run.report,
        };
        crate::report::html::run_block(&mut block, report, detail.as_ref());
        let block = block.replacen(
            r#"<details class="run">"#,
            r#"<details class="run" open>"#,
            1,
        );
        html.push_str(&block);
    }
    Ok(html)
}

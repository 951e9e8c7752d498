//! A finished run handed to the OpenTelemetry export (`--otlp`, `--otel-file`; docs/traces.md):
//! its spans built from its session log, report and verdicts, on its grading thread.

use crate::case::{Execution, ExternalAgent};
use crate::report::{Outcome, RunReport};
use crate::trace::otlp::Exporter;
use crate::trace::otlp::export::{FinishedRun, OWN_AGENT, VerdictResult, resource_spans};

use super::RunOptions;
use super::prepare::PreparedCase;

/// Export run `report` of `prepared`, which started at `started` and wrote `session_log`
/// (none: it ended before it had one).
pub(super) fn export_run(
    exporter: &Exporter,
    options: &RunOptions,
    prepared: &PreparedCase,
    report: &RunReport,
    session_log: Option<&std::fs::File>,
    started: std::time::SystemTime,
) {
    let records = session_log
        .and_then(|log| crate::session::read_whole(log).ok())
        .map(|bytes| crate::session::parse_records(&bytes))
        .unwrap_or_default();
    let started_unix_nanos = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let run = FinishedRun {
        suite_run: options.provenance.run_id.as_deref().unwrap_or_default(),
        case: &prepared.case.name,
        run: report.run,
        agent: agent_name(&prepared.case.execution),
        provider: options
            .provenance
            .provider
            .as_deref()
            .unwrap_or("evalhost.scripted"),
        started_unix_nanos,
        duration_ms: report.duration_ms,
        records: &records,
        pass: report.pass,
        error: report.error.as_deref(),
        verdicts: report
            .verdicts
            .iter()
            .map(|verdict| VerdictResult {
                name: verdict.entry_label(),
                label: match verdict.outcome {
                    Outcome::Pass => "pass",
                    Outcome::Fail => "fail",
                    Outcome::Error => "error",
                    Outcome::NotEvaluable => "not_evaluable",
                },
                score: matches!(verdict.outcome, Outcome::Pass | Outcome::Fail)
                    .then_some(verdict.score),
                message: &verdict.message,
            })
            .collect(),
    };
    exporter.run_finished(resource_spans(&run));
}

/// `gen_ai.agent.name`: evalhost's own loop, a preset's name, or what else ran.
fn agent_name(execution: &Execution) -> &'static str {
    match execution {
        Execution::Agent | Execution::ReplayTools(_) => OWN_AGENT,
        Execution::Recorded(_) => "recorded",
        Execution::Traced(_) => "trace",
        Execution::External(ExternalAgent::Preset { preset, .. }) => preset.as_str(),
        Execution::External(ExternalAgent::Oracle) => "oracle",
        Execution::External(_) => "command",
    }
}

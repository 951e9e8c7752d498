//! `--otlp URL` and `--otel-file PATH`: a suite's runs exported as OpenTelemetry traces
//! (docs/traces.md, "OTLP out").

use std::path::PathBuf;
use std::sync::Arc;

use super::Failure;
use crate::trace::otlp::{ExportConfig, ExportSummary, Exporter};

/// The export flags `run` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct OtelArgs {
    /// Export every run as an OpenTelemetry trace (GenAI semantic conventions) to this
    /// OTLP/HTTP collector (`http://127.0.0.1:4318`; `/v1/traces` is appended unless the URL
    /// ends with it). Default: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`; `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT` and
    /// `…_PROTOCOL` (`http/protobuf`, `http/json`) are honoured. A collector that fails is a
    /// warning, never a failed suite.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// Also write every run's trace to this file as OTLP JSON lines (one
    /// `ExportTraceServiceRequest` per run, as the collector's file exporter writes).
    #[arg(long, value_name = "FILE")]
    pub otel_file: Option<PathBuf>,
}

impl OtelArgs {
    /// The exporter the flags and the environment ask for, sending on `runtime`; `None`:
    /// nothing is exported.
    pub fn exporter(
        &self,
        runtime: &tokio::runtime::Handle,
    ) -> Result<Option<Arc<Exporter>>, Failure> {
        let config =
            ExportConfig::resolve(self.otlp.as_deref(), self.otel_file.as_deref(), |name| {
                std::env::var(name).ok()
            })
            .map_err(Failure::usage)?;
        config
            .map(|config| Exporter::start(config, runtime).map_err(Failure::usage))
            .transpose()
    }
}

/// Say where the runs went, and what failed as warnings (never an error).
pub fn print_summary(summary: &ExportSummary, ui: &super::ui::Ui) {
    for line in &summary.lines {
        println!("{line}");
    }
    for warning in &summary.warnings {
        eprintln!("{} {warning}", ui.warning_prefix());
    }
}

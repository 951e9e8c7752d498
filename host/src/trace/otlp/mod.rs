//! OTLP: evalhost's runs out as GenAI spans (`export.rs` builds a run's spans, `exporter.rs`
//! sends them to a collector and writes them to a file), GenAI spans in as runs
//! (`import/`); `semconv.rs` names the conventions both use.

pub(crate) mod export;
#[cfg(feature = "run")]
mod exporter;
pub(crate) mod import;
pub(crate) mod semconv;

#[cfg(feature = "run")]
pub use exporter::{ExportConfig, ExportConfigError, ExportSummary, Exporter, Protocol};

//! Traces in and out (docs/traces.md): runs made elsewhere become session logs that the
//! case's graders judge (`evalhost grade --trace`) or a replay case (`evalhost promote
//! --from-trace`); evalhost's own runs go out as OpenTelemetry GenAI traces (`--otlp`,
//! `--otel-file`).
//!
//! Three formats come in, each in its own folder, each saying what it maps and what it cannot:
//! OTLP traces with GenAI spans (`otlp/import/`, JSON or protobuf), Inspect AI logs
//! (`inspect/`, `.eval` or `.json`) and Harbor's ATIF trajectories (`atif/`). Every importer
//! yields [`ImportedRun`]s: the run as the session records evalhost writes for its own runs,
//! so evidence, grading, reports and the replay case are built exactly as for them. The
//! importers read JSON a field at a time through `json.rs`, so an error names its line,
//! column and field. `otlp/semconv.rs` names the GenAI semantic conventions both directions
//! use.

mod atif;
mod error;
mod inspect;
mod json;
pub(crate) mod otlp;
mod sniff;

use std::path::{Path, PathBuf};

pub use error::TraceError;
#[cfg(feature = "run")]
pub use otlp::{ExportConfig, ExportConfigError, ExportSummary, Exporter, Protocol};

use crate::session::Record;

/// Largest trace file read: 256 MiB (an Inspect log of many samples is large).
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// Which format a trace file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum TraceFormat {
    /// OTLP traces (and logs) with GenAI spans: `ExportTraceServiceRequest`s as OTLP JSON
    /// (one document, or one per line as the collector's file exporter writes) or protobuf.
    Otlp,
    /// An Inspect AI log: `.eval` (zip) or `.json`.
    Inspect,
    /// A Harbor ATIF trajectory (`trajectory.json`).
    Atif,
}

impl TraceFormat {
    /// The name docs and messages use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Otlp => "OTLP",
            Self::Inspect => "Inspect AI log",
            Self::Atif => "ATIF trajectory",
        }
    }
}

impl std::fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run read from a trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ImportedRun {
    /// What names the run in its trace: `sample 3 epoch 1` (Inspect), `trace 4bf9…`
    /// (OTLP), `session 0199…` (ATIF).
    pub label: String,
    /// The model the run used, when the trace names it (else empty).
    pub model: String,
    /// The run as a session log: `session_start` (its `case` the label, `mode` `trace`),
    /// `user_message`, `model_request` (the request as the trace recorded it, else `null`) and
    /// `model_response` pairs, `tool_start` / `tool_result` per call, `turn_end`, `run_error`.
    /// `at_ms` counts from the run's first moment the trace records.
    pub records: Vec<Record>,
    /// The run's duration as the trace records it (0 when it records no time).
    pub duration_ms: u64,
    /// Whether the token counts are the trace's (false: it records none, and they are 0).
    pub usage_recorded: bool,
}

/// What an importer reads out of a file: its runs, and what it did not map (see
/// [`Imported::unmapped`]).
pub(crate) type Runs = (Vec<ImportedRun>, Vec<String>);

/// Every run of one trace file, and what of the file evalhost did not map.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Imported {
    /// The trace file, as given.
    pub path: PathBuf,
    /// The format its content was read as.
    pub format: TraceFormat,
    /// Its runs, in the file's order.
    pub runs: Vec<ImportedRun>,
    /// What the file holds that no run carries, each named once with how often it occurred
    /// (`Inspect scores (the log's own scorers): 2 samples`); a report prints them.
    pub unmapped: Vec<String>,
}

/// Read every run of the trace at `path`, its format told by its content (docs/traces.md).
pub fn import(path: &Path) -> Result<Imported, TraceError> {
    let bytes = read(path)?;
    let format = sniff::format(path, &bytes)?;
    let (runs, unmapped) = match format {
        TraceFormat::Otlp => otlp::import::runs(path, &bytes)?,
        TraceFormat::Inspect => inspect::runs(path, &bytes)?,
        TraceFormat::Atif => atif::runs(path, &bytes)?,
    };
    if runs.is_empty() {
        return Err(TraceError::NoRuns {
            path: path.to_owned(),
            format,
        });
    }
    Ok(Imported {
        path: path.to_owned(),
        format,
        runs,
        unmapped,
    })
}

/// The file's bytes, at most [`MAX_TRACE_BYTES`].
fn read(path: &Path) -> Result<Vec<u8>, TraceError> {
    use std::io::Read;
    let io = |source| TraceError::Read {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(TraceError::TooLarge {
            path: path.to_owned(),
            limit: MAX_TRACE_BYTES,
        });
    }
    Ok(bytes)
}

use std::path::PathBuf;

use super::TraceFormat;

/// Why a trace could not be read. Every variant names the file; a problem inside a JSON
/// document names its line and column and the field (`samples[2].messages[4].tool_calls`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("failed to read the trace `{path}`")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the trace `{path}` is larger than {limit} bytes")]
    TooLarge { path: PathBuf, limit: u64 },
    #[error(
        "`{path}` is not a trace evalhost reads: {why} (OTLP JSON or protobuf, an Inspect AI `.eval` or `.json` log, or an ATIF trajectory; docs/traces.md)"
    )]
    UnknownFormat { path: PathBuf, why: String },
    /// A JSON document (or one line of JSON lines) that does not parse, or lacks a field.
    #[error("{path}:{line}:{column}: {field}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        /// The field's path in the document (`steps[3].tool_calls[0].arguments`), or the
        /// document itself (`(document)`).
        field: String,
        message: String,
    },
    /// A problem in a member of an archive (an Inspect `.eval` log).
    #[error("{path}: {member}: {message}")]
    Archive {
        path: PathBuf,
        member: String,
        message: String,
    },
    /// Protobuf that does not decode as what its format says.
    #[error("{path}: not an OTLP protobuf `{message_type}`: {message}")]
    Protobuf {
        path: PathBuf,
        message_type: &'static str,
        message: String,
    },
    #[error("the {format} `{path}` holds no run (docs/traces.md says what each format's run is)")]
    NoRuns { path: PathBuf, format: TraceFormat },
}

impl TraceError {
    /// A JSON error of `serde_json` at its line and column, for `field`.
    pub(crate) fn json(path: &std::path::Path, field: &str, error: &serde_json::Error) -> Self {
        Self::Invalid {
            path: path.to_owned(),
            line: error.line(),
            column: error.column(),
            field: field.to_owned(),
            message: crate::message::strip_json_position(&error.to_string()),
        }
    }
}

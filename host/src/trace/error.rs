use std::path::PathBuf;

use super::TraceFormat;

/// Why a trace could not be read. Every variant names the file; a problem inside a JSON
/// document names its line and column and the field (`samples[2].messages[4].tool_calls`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The trace file could not be read.
    #[error("failed to read the trace `{path}`")]
    Read {
        /// The trace file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The trace file is larger than evalhost reads.
    #[error("the trace `{path}` is larger than {limit} bytes")]
    TooLarge {
        /// The trace file.
        path: PathBuf,
        /// The most bytes a trace may have.
        limit: u64,
    },
    /// The file is none of the formats evalhost reads.
    #[error(
        "`{path}` is not a trace evalhost reads: {why} (OTLP JSON or protobuf, an Inspect AI `.eval` or `.json` log, or an ATIF trajectory; docs/traces.md)"
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// What its content looked like instead.
        why: String,
    },
    /// A JSON document (or one line of JSON lines) that does not parse, or lacks a field.
    #[error("{path}:{line}:{column}: {field}: {message}")]
    Invalid {
        /// The trace file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The field's path in the document (`steps[3].tool_calls[0].arguments`), or the
        /// document itself (`(document)`).
        field: String,
        /// What is wrong there.
        message: String,
    },
    /// A problem in a member of an archive (an Inspect `.eval` log).
    #[error("{path}: {member}: {message}")]
    Archive {
        /// The archive.
        path: PathBuf,
        /// The member's name in the archive (`header.json`), or `(zip directory)`.
        member: String,
        /// What is wrong with it.
        message: String,
    },
    /// Protobuf that does not decode as what its format says.
    #[error("{path}: not an OTLP protobuf `{message_type}`: {message}")]
    Protobuf {
        /// The trace file.
        path: PathBuf,
        /// The protobuf message it should be (`ExportTraceServiceRequest`).
        message_type: &'static str,
        /// The decoder's error.
        message: String,
    },
    /// The trace is of a known format but holds no run to grade.
    #[error("the {format} `{path}` holds no run (docs/traces.md says what each format's run is)")]
    NoRuns {
        /// The trace file.
        path: PathBuf,
        /// The format it was read as.
        format: TraceFormat,
    },
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

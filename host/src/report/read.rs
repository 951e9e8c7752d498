//! Reading a saved JSON report back (for `grade`, `baseline` and `report merge`).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{REPORT_SCHEMA_VERSION, SuiteReport};

/// Why a saved report could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadReportError {
    /// The report file could not be read.
    #[error("failed to read report `{path}`: {error}")]
    Read {
        /// The report file (`DIR/report.json` for a directory).
        path: PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// The file is not JSON, or not a report's JSON.
    #[error("{path}:{line}:{column}: not an evalhost JSON report: {message}")]
    Parse {
        /// The report file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// The report is of another schema version than this evalhost reads.
    #[error(
        "{path}: schema_version: the report has schema version {found}, this evalhost reads version {expected} (re-run the suite with this evalhost)"
    )]
    SchemaVersion {
        /// The report file.
        path: PathBuf,
        /// The report's `schema_version`.
        found: u32,
        /// The version this evalhost reads ([`REPORT_SCHEMA_VERSION`]).
        expected: u32,
    },
}

/// Read a JSON report as `evalhost run` writes it. `path` is the report file, or a
/// directory holding `report.json` (what `evalhost run --out DIR` writes).
///
/// The schema version is checked before anything else, so a report of another version is
/// refused with that reason rather than with whichever field moved.
pub fn read_report(path: &Path) -> Result<SuiteReport, ReadReportError> {
    let path = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_owned()
    };
    let text = std::fs::read_to_string(&path).map_err(|source| ReadReportError::Read {
        path: path.clone(),
        error: source,
    })?;
    let parse_error = |e: serde_json::Error| ReadReportError::Parse {
        path: path.clone(),
        line: e.line(),
        column: e.column(),
        message: crate::message::strip_json_position(&e.to_string()),
    };
    #[derive(Deserialize)]
    struct Versioned {
        schema_version: u32,
    }
    let versioned: Versioned = serde_json::from_str(&text).map_err(parse_error)?;
    if versioned.schema_version != REPORT_SCHEMA_VERSION {
        return Err(ReadReportError::SchemaVersion {
            path,
            found: versioned.schema_version,
            expected: REPORT_SCHEMA_VERSION,
        });
    }
    serde_json::from_str(&text).map_err(parse_error)
}

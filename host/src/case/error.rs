use std::fmt;
use std::path::PathBuf;

/// A place in a case file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub path: PathBuf,
    /// 1-based; 0 when unknown.
    pub line: usize,
    /// 1-based; 0 when unknown.
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}", self.path.display()),
            (line, 0) => write!(f, "{}:{line}", self.path.display()),
            (line, column) => write!(f, "{}:{line}:{column}", self.path.display()),
        }
    }
}

/// Why a case could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// The file could not be read.
    #[error("{path}: failed to read case file: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid YAML or does not fit the case format.
    #[error("{location}: {field}: {message}")]
    Invalid {
        location: Location,
        /// Dotted path of the offending field, e.g. `graders[2].result_status`.
        field: String,
        message: String,
    },
    /// The directory holds more cases than allowed.
    #[error("{path}: too many cases: {count} (at most {max} a directory)")]
    TooManyCases {
        path: PathBuf,
        count: usize,
        max: usize,
    },
    /// No case files were found.
    #[error("{path}: no case files (*.yaml, *.yml) found")]
    NoCases { path: PathBuf },
}

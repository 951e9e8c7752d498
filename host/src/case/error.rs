//! Where a case file went wrong, and how.

use std::fmt;
use std::path::PathBuf;

/// A place in a case file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// The case file.
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
    /// The file or directory could not be read.
    #[error("{}: failed to read case file: {source}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a YAML document a case can be read from: too large, not UTF-8, empty,
    /// not valid YAML, or not a map.
    #[error("{location}: {message}")]
    Malformed {
        /// Where the problem is (line 0 when it concerns the whole file).
        location: Location,
        /// What is wrong, e.g. `invalid YAML: unclosed bracket '['`.
        message: String,
    },
    /// The document does not fit the case format.
    #[error("{location}: {}{message}", field_prefix(field))]
    Invalid {
        /// Where the offending key or value is.
        location: Location,
        /// Path of the offending field, e.g. `graders[2].result_status` (indexes from 0);
        /// empty for a top-level key that is not a string.
        field: String,
        /// What is wrong and, where it helps, what was expected.
        message: String,
    },
    /// The directory holds more cases than allowed.
    #[error("{}: too many cases: {count} (at most {max} a directory)", path.display())]
    TooManyCases {
        /// The directory.
        path: PathBuf,
        /// How many case files it holds.
        count: usize,
        /// The limit, [`super::MAX_CASES_PER_DIR`].
        max: usize,
    },
    /// A directory holds no case files.
    #[error("{}: no case files (*.yaml, *.yml) found", path.display())]
    NoCases {
        /// The directory.
        path: PathBuf,
    },
}

/// `field: `, or nothing for problems of the document's top level that no field names.
fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

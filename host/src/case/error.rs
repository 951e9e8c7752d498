//! Where a case file went wrong, and how.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A place in a case file (ordered by file, line, column).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Location {
    /// The case file (shared by the locations of one file).
    pub path: Arc<Path>,
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

impl Default for Location {
    /// No place: an empty path, line and column 0.
    fn default() -> Self {
        Location {
            path: Arc::from(Path::new("")),
            line: 0,
            column: 0,
        }
    }
}

impl Location {
    /// Line `line` of the file `path`, with no column (0: the whole file).
    pub(crate) fn line(path: &Path, line: usize) -> Location {
        Location {
            path: path.into(),
            line,
            column: 0,
        }
    }
}

/// Why a case could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaseError {
    /// The file or directory could not be read. The message ends with the OS error; it is
    /// not also the error's `source()`, so that a printed chain shows it once.
    #[error("{}: failed to read case file: {error}", path.display())]
    Read {
        /// The file or directory.
        path: PathBuf,
        /// Why reading failed.
        error: std::io::Error,
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
    /// A directory holds no case files, nor do its subdirectories.
    #[error("{}: no case files (*.yaml, *.yml, *.jsonl) or Nexus case directories found, in it or its subdirectories", path.display())]
    NoCases {
        /// The directory.
        path: PathBuf,
    },
    /// More than one problem in one case source, in file order: each is one of the
    /// variants above, shown on its own line.
    #[error("{}", lines(.0))]
    Several(Vec<CaseError>),
}

/// Most problems one case source reports; later ones are counted, not shown.
pub(crate) const MAX_PROBLEMS_PER_FILE: usize = 20;

impl CaseError {
    /// A [`CaseError::Malformed`] about line `line` of `path` (0: the whole file).
    pub(crate) fn malformed(path: &Path, line: usize, message: impl Into<String>) -> CaseError {
        CaseError::Malformed {
            location: Location::line(path, line),
            message: message.into(),
        }
    }

    /// `problems` as one error: the problem itself when there is one, else
    /// [`CaseError::Several`] (nested lists flattened).
    pub fn several(problems: Vec<CaseError>) -> CaseError {
        let mut flat: Vec<CaseError> = problems
            .into_iter()
            .flat_map(CaseError::into_problems)
            .collect();
        match flat.len() {
            1 => flat.remove(0),
            _ => CaseError::Several(flat),
        }
    }

    /// The problems this error reports: those of [`CaseError::Several`], else itself.
    pub fn problems(&self) -> Vec<&CaseError> {
        match self {
            CaseError::Several(problems) => problems.iter().flat_map(CaseError::problems).collect(),
            other => vec![other],
        }
    }

    /// [`CaseError::problems`], owned.
    pub fn into_problems(self) -> Vec<CaseError> {
        match self {
            CaseError::Several(problems) => problems
                .into_iter()
                .flat_map(CaseError::into_problems)
                .collect(),
            other => vec![other],
        }
    }
}

/// The problems found in one case source, for a loader that goes on after a problem (to
/// report every problem of a file, not only the first). At most
/// [`MAX_PROBLEMS_PER_FILE`] are kept; a last line counts the others.
#[derive(Debug, Default)]
pub(crate) struct Problems {
    kept: Vec<CaseError>,
    more: usize,
}

impl Problems {
    /// Note a problem.
    pub fn push(&mut self, problem: CaseError) {
        for problem in problem.into_problems() {
            if self.kept.len() < MAX_PROBLEMS_PER_FILE {
                self.kept.push(problem);
            } else {
                self.more += 1;
            }
        }
    }

    /// The value of `result`, or `None` with its error noted.
    pub fn keep<T>(&mut self, result: Result<T, CaseError>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// How many problems were noted.
    pub fn count(&self) -> usize {
        self.kept.len() + self.more
    }

    /// `Ok(value)` when no problem was noted, else every problem as one error, in file
    /// order (by file, line and column).
    pub fn finish<T>(self, value: Option<T>) -> Result<T, CaseError> {
        let Problems { mut kept, more } = self;
        kept.sort_by_cached_key(CaseError::location);
        if more > 0
            && let Some(path) = kept.first().map(|p| p.location().path.clone())
        {
            kept.push(CaseError::Malformed {
                location: Location {
                    path,
                    line: 0,
                    column: 0,
                },
                message: format!(
                    "{more} more problems not shown (at most {MAX_PROBLEMS_PER_FILE} a file)"
                ),
            });
        }
        match value {
            Some(value) if kept.is_empty() => Ok(value),
            _ => Err(CaseError::several(kept)),
        }
    }
}

impl CaseError {
    /// Where the problem is (for [`CaseError::Several`], the first problem's place).
    pub fn location(&self) -> Location {
        let at = |path: &PathBuf| Location {
            path: path.as_path().into(),
            line: 0,
            column: 0,
        };
        match self {
            CaseError::Read { path, .. }
            | CaseError::TooManyCases { path, .. }
            | CaseError::NoCases { path } => at(path),
            CaseError::Malformed { location, .. } | CaseError::Invalid { location, .. } => {
                location.clone()
            }
            CaseError::Several(problems) => problems
                .first()
                .map(CaseError::location)
                .unwrap_or_default(),
        }
    }
}

/// One problem a line.
fn lines(problems: &[CaseError]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `field: `, or nothing for problems of the document's top level that no field names.
fn field_prefix(field: &str) -> String {
    if field.is_empty() {
        String::new()
    } else {
        format!("{field}: ")
    }
}

//! Reading case files from disk: single files, and directories of them in name order.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::agentcompany::{self, FixtureOptions};
use super::nexus;
use super::parse::{Parsed, parse};
use super::{Case, CaseError, Location, MAX_CASE_FILE_BYTES};

/// Most cases loaded from one directory.
pub const MAX_CASES_PER_DIR: usize = 256;

/// Read, parse and validate one case file.
pub fn load_case(path: &Path) -> Result<Case, CaseError> {
    read_case(path).map(|parsed| parsed.case)
}

/// Load cases from files and directories, in the order given.
///
/// A directory contributes its `*.yaml` and `*.yml` files (not recursively, hidden files
/// skipped) in file-name order, at most [`MAX_CASES_PER_DIR`] of them; a file is loaded
/// whatever its extension. Case names must be unique across everything loaded. The first
/// error stops loading and names the file that broke.
pub fn load_cases(paths: &[PathBuf]) -> Result<Vec<Case>, CaseError> {
    load_cases_with(paths, &LoadOptions::default())
}

/// Options of [`load_cases_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Checks of AgentCompany fixtures (`*.jsonl`).
    pub fixtures: FixtureOptions,
}

/// [`load_cases`] with options; directories also contribute AgentCompany fixtures
/// (`*.jsonl`), and a `.jsonl` file is loaded as one.
pub fn load_cases_with(paths: &[PathBuf], options: &LoadOptions) -> Result<Vec<Case>, CaseError> {
    // Which files each path contributes, then all of them loaded at once; walked in load
    // order, so the error reported is the one a file-by-file load would have met first.
    let sources: Vec<Result<Vec<PathBuf>, CaseError>> =
        paths.iter().map(|path| case_sources(path)).collect();
    let files: Vec<PathBuf> = sources.iter().flatten().flatten().cloned().collect();
    let mut loaded = load_each_source(&files, options).into_iter();
    let mut cases: Vec<Case> = Vec::new();
    for path_sources in sources {
        let count = path_sources?.len();
        for case in loaded.by_ref().take(count) {
            cases.push(case?);
        }
    }
    Ok(cases)
}

/// Load each source (from [`case_sources`]): one result per source, in order, so that every
/// broken file is reported, not only the first (`evalhost check`). Files are parsed on all
/// cores (they are independent); then names are checked in order: a case whose name an
/// earlier source already defined is an error located at its `name`.
pub fn load_each_source(
    sources: &[PathBuf],
    options: &LoadOptions,
) -> Vec<Result<Case, CaseError>> {
    let parsed = crate::parallel::map_in_order(sources, |source| load_source(source, options));
    // Case name -> the file that defined it.
    let mut names: HashMap<String, PathBuf> = HashMap::new();
    parsed
        .into_iter()
        .map(|parsed| {
            let Parsed {
                case,
                name_location,
            } = parsed?;
            if let Some(first) = names.get(&case.name) {
                return Err(CaseError::Invalid {
                    location: name_location,
                    field: "name".into(),
                    message: format!(
                        "case {:?} is already defined in {}; case names must be unique",
                        case.name,
                        first.display()
                    ),
                });
            }
            names.insert(case.name.clone(), case.path.clone());
            Ok(case)
        })
        .collect()
}

/// One case source: a Nexus case directory, an AgentCompany fixture, or a case file.
fn load_source(file: &Path, options: &LoadOptions) -> Result<Parsed, CaseError> {
    if file.is_dir() {
        let name_location = Location {
            path: file.join("case.yaml"),
            line: 0,
            column: 0,
        };
        Ok(Parsed {
            case: nexus::load_nexus_case(file)?,
            name_location,
        })
    } else if agentcompany::is_fixture(file) {
        let case = agentcompany::load_fixture(file, &options.fixtures)?;
        let name_location = Location {
            path: file.to_path_buf(),
            line: 1,
            column: 0,
        };
        Ok(Parsed {
            case,
            name_location,
        })
    } else {
        read_case(file)
    }
}

/// What one path given to [`load_cases_with`] contributes, in load order: a case file, a
/// Nexus case directory, or the case files and Nexus case directories of a directory.
///
/// Each source holds exactly one case, so a caller can load them one by one (as
/// `evalhost check` does, to report every broken file rather than the first).
pub fn case_sources(path: &Path) -> Result<Vec<PathBuf>, CaseError> {
    let metadata = std::fs::metadata(path).map_err(|source| CaseError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if metadata.is_dir() && !nexus::is_case_dir(path) {
        case_files_in(path)
    } else {
        Ok(vec![path.to_path_buf()])
    }
}

/// The case files of a directory, in name order.
fn case_files_in(dir: &Path) -> Result<Vec<PathBuf>, CaseError> {
    let read_error = |source| CaseError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let is_case = !name.starts_with('.')
            && (name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".jsonl"));
        // Follow symlinks: a linked case file is a case file. One that cannot be followed (a
        // symlink loop, a dangling link) is an error naming it, not a case silently skipped.
        let target = is_case.then(|| std::fs::metadata(entry.path()));
        if let Some(Err(source)) = target {
            return Err(CaseError::Read {
                path: entry.path(),
                source,
            });
        }
        if target.is_some_and(|m| m.is_ok_and(|m| m.is_file())) {
            files.push(entry.path());
        } else if !nexus::is_ignored(&name) && nexus::is_case_dir(&entry.path()) {
            // A Nexus case directory (it holds `case.yaml`).
            files.push(entry.path());
        }
    }
    if files.len() > MAX_CASES_PER_DIR {
        return Err(CaseError::TooManyCases {
            path: dir.to_path_buf(),
            count: files.len(),
            max: MAX_CASES_PER_DIR,
        });
    }
    if files.is_empty() {
        return Err(CaseError::NoCases {
            path: dir.to_path_buf(),
        });
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

fn read_case(path: &Path) -> Result<Parsed, CaseError> {
    let read_error = |source| CaseError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = Vec::new();
    // Read one byte past the limit to tell "at the limit" from "over it" without trusting
    // the file's reported size.
    file.take(MAX_CASE_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() > MAX_CASE_FILE_BYTES {
        return Err(CaseError::Malformed {
            location: Location {
                path: path.to_path_buf(),
                line: 0,
                column: 0,
            },
            message: format!(
                "the file is larger than {} MiB, the most a case file may be",
                MAX_CASE_FILE_BYTES / (1024 * 1024)
            ),
        });
    }
    parse(path, decode(path, &bytes)?)
}

/// The file as UTF-8 text, or an error at the first byte that is not.
fn decode<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, CaseError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let valid = bytes
            .get(..e.valid_up_to())
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default();
        let line = valid.matches('\n').count() + 1;
        let column = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        let byte = bytes.get(e.valid_up_to()).copied().unwrap_or_default();
        CaseError::Malformed {
            location: Location {
                path: path.to_path_buf(),
                line,
                column,
            },
            message: format!(
                "the file is not valid UTF-8 (byte 0x{byte:02x}); save case files as UTF-8"
            ),
        }
    })
}

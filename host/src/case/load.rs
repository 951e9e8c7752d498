//! Reading case files from disk: single files, and directories of them (and of their
//! subdirectories) in name order. A directory holding `case.yaml` (a Nexus case) or
//! `task.toml` (a Harbor task) is one case source, not searched further.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::agentcompany::{self, FixtureOptions};
use super::harbor;
use super::names::Names;
use super::nexus;
use super::parse::{Parsed, parse};
use super::read::read_text;
use super::{Case, CaseError, Location, Spool};

/// Most cases loaded from one directory.
pub const MAX_CASES_PER_DIR: usize = 256;

/// Read, parse and validate one case file (or Harbor task directory).
pub fn load_case(path: &Path) -> Result<Case, CaseError> {
    let read = if harbor::is_task_dir(path) {
        harbor::load_task(path)
    } else {
        read_case(path).map(|parsed| parsed.case)
    };
    read.map(|mut case| {
        case.digest = case.with_files_digest(case.content_digest());
        case.resolve_agent_files();
        case.resolve_environment_files();
        case
    })
}

/// Load cases from files and directories, in the order given.
///
/// A directory contributes its `*.yaml` and `*.yml` files (hidden files skipped) in
/// file-name order, and those of its subdirectories (hidden and `_`-prefixed ones skipped)
/// at their place in that order, at most [`MAX_CASES_PER_DIR`] from one directory; a file is
/// loaded whatever its extension. Case names must be unique across everything loaded. Every
/// problem is reported, not only the first: the error is [`CaseError::Several`] when there
/// is more than one.
pub fn load_cases(paths: &[PathBuf]) -> Result<Vec<Case>, CaseError> {
    load_cases_with(paths, &LoadOptions::default())
}

/// Options of `load_cases_with`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Checks of AgentCompany fixtures (`*.jsonl`).
    pub fixtures: FixtureOptions,
}

/// [`load_cases`] with options; directories also contribute AgentCompany fixtures
/// (`*.jsonl`) and Nexus case directories, and a `.jsonl` file is loaded as a fixture.
pub fn load_cases_with(paths: &[PathBuf], options: &LoadOptions) -> Result<Vec<Case>, CaseError> {
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    for loaded in load_each(paths, options) {
        match loaded {
            Ok(case) => cases.push(case),
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(CaseError::several(problems))
    }
}

/// Everything loading `paths` found, in load order: one result per case source (a case, or
/// the problems of that file), and one error per path or directory entry that could not be
/// read or a directory with too many or no cases. The one loading path of `run`, `check`,
/// `list` and `grade`: `load_cases_with` is this, collected.
pub fn load_each(paths: &[PathBuf], options: &LoadOptions) -> Vec<Result<Case, CaseError>> {
    let mut loaded = Vec::new();
    load_each_in(paths, options, None, |result| loaded.push(result));
    loaded
}

/// [`load_each`] for a suite about to run, each result handed to `take` in load order as
/// soon as it is ready: sources are parsed 1,024 at a time (on all cores),
/// and each case's bulky parts go to `spool` once the spool's memory budget is spent
/// ([`Case::whole`] reads them back). Loading a large suite then holds one chunk of cases,
/// not all of them, if `take` does not keep them.
pub fn load_each_spooled(
    paths: &[PathBuf],
    options: &LoadOptions,
    spool: &Spool,
    take: impl FnMut(Result<Case, CaseError>),
) {
    load_each_in(paths, options, Some(spool), take)
}

/// Sources parsed at a time by [`load_each_spooled`]: enough to keep every core busy, few
/// enough that a chunk of parsed cases is small next to a large suite.
const LOAD_CHUNK: usize = 1024;

fn load_each_in(
    paths: &[PathBuf],
    options: &LoadOptions,
    spool: Option<&Spool>,
    mut take: impl FnMut(Result<Case, CaseError>),
) {
    let mut names = Names::default();
    let mut found = Sources::new(paths).peekable();
    while found.peek().is_some() {
        let chunk: Vec<Source> = found.by_ref().take(LOAD_CHUNK).collect();
        let sources: Vec<&Path> = chunk
            .iter()
            .filter_map(|source| source.as_deref().ok())
            .collect();
        let mut loaded = load_each_source(&sources, options, spool, &mut names).into_iter();
        for source in chunk {
            match source {
                Ok(_) => {
                    if let Some(result) = loaded.next() {
                        take(result);
                    }
                }
                Err(problem) => take(Err(*problem)),
            }
        }
    }
}

/// Load each source (from [`Sources`]): one result per source, in order. Files are
/// parsed on all cores (they are independent); then names are checked in order: a case whose
/// name an earlier source (of this call or an earlier one with the same `names`) already
/// defined is an error located at its `name`.
fn load_each_source(
    sources: &[&Path],
    options: &LoadOptions,
    spool: Option<&Spool>,
    names: &mut Names,
) -> Vec<Result<Case, CaseError>> {
    let parsed = crate::parallel::map_in_order(sources, |source| {
        let mut parsed = load_source(source, options)?;
        parsed.case.digest = parsed.case.with_files_digest(parsed.case.content_digest());
        parsed.case.resolve_agent_files();
        parsed.case.resolve_environment_files();
        if let Some(spool) = spool {
            spool.keep(&mut parsed.case);
        }
        Ok(parsed)
    });
    parsed
        .into_iter()
        .map(|parsed| {
            let Parsed {
                case,
                name_location,
            } = parsed?;
            if let Err(first) = names.insert(&case.name, &case.path) {
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
            Ok(case)
        })
        .collect()
}

/// One case source: a Harbor task, a Nexus case directory, an AgentCompany fixture, or a
/// case file.
fn load_source(file: &Path, options: &LoadOptions) -> Result<Parsed, CaseError> {
    if file.is_dir() && harbor::is_task_dir(file) {
        Ok(Parsed {
            case: harbor::load_task(file)?,
            name_location: Location::line(file, 0),
        })
    } else if file.is_dir() {
        let name_location = Location::line(&file.join("case.yaml"), 0);
        Ok(Parsed {
            case: nexus::load_nexus_case(file)?,
            name_location,
        })
    } else if agentcompany::is_fixture(file) {
        let case = agentcompany::load_fixture(file, &options.fixtures)?;
        let name_location = Location::line(file, 1);
        Ok(Parsed {
            case,
            name_location,
        })
    } else {
        read_case(file)
    }
}

/// A case source, or the problem met finding one. The problem is boxed: a suite's list has an
/// entry per case, 24 bytes instead of 80 (`size_of`). A list of the unboxed form, made for a
/// directory of 100,000 cases and then boxed, cost its 8 MB at the peak of loading.
type Source = Result<PathBuf, Box<CaseError>>;

/// Every case source of the paths given to [`load_cases_with`], in load order: for each path,
/// a case file, a Nexus case directory, a Harbor task directory, or the case files, Nexus case
/// directories and Harbor task directories of a
/// directory and its subdirectories, depth first in name order (a subdirectory's cases at its
/// place among the directory's files); and the problems met finding them (an unreadable entry,
/// a directory holding more than [`MAX_CASES_PER_DIR`] cases, a symlink loop, no case at
/// all). Each source holds exactly one case.
///
/// Found as loading asks for them: a directory is read when the walk reaches it, so what is
/// held is the entries of the directories being walked (at most [`MAX_CASES_PER_DIR`] cases
/// each), not a list of the suite's sources (~50 bytes a case, 4.9 MB of the 100,000-case
/// suite's peak heap when it was listed up front).
struct Sources<'a> {
    paths: std::slice::Iter<'a, PathBuf>,
    /// The directory argument being walked, and how many sources and problems it gave so far
    /// (none at all: [`CaseError::NoCases`]).
    walking: Option<(&'a Path, usize)>,
    /// The directories being walked, innermost last.
    stack: Vec<Walked>,
    /// Found, to be handed out before the walk goes on.
    ready: VecDeque<Source>,
}

/// A directory being walked: its entries not yet visited (`true`: a subdirectory to search),
/// and its canonical path, to stop at a symlink leading back to it.
struct Walked {
    entries: std::vec::IntoIter<(PathBuf, bool)>,
    canonical: PathBuf,
}

impl<'a> Sources<'a> {
    fn new(paths: &'a [PathBuf]) -> Self {
        Self {
            paths: paths.iter(),
            walking: None,
            stack: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    /// Start on path argument `path`.
    fn start(&mut self, path: &'a Path) {
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(error) => {
                return self.ready.push_back(Err(Box::new(CaseError::Read {
                    path: path.to_path_buf(),
                    error,
                })));
            }
        };
        if !metadata.is_dir() || nexus::is_case_dir(path) || harbor::is_task_dir(path) {
            return self.ready.push_back(Ok(path.to_path_buf()));
        }
        self.walking = Some((path, 0));
        self.enter(path);
    }

    /// Read directory `dir`: its problems are ready, its entries are walked next.
    fn enter(&mut self, dir: &Path) {
        let read_error = |path: &Path, error| CaseError::Read {
            path: path.to_path_buf(),
            error,
        };
        let canonical = match dir.canonicalize() {
            Ok(canonical) => canonical,
            Err(error) => return self.problem(read_error(dir, error)),
        };
        if self
            .stack
            .iter()
            .any(|walked| walked.canonical == canonical)
        {
            return self.problem(CaseError::malformed(
                dir,
                0,
                format!(
                    "a symlink loop: this directory is {}, which is being searched already",
                    canonical.display()
                ),
            ));
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) => return self.problem(read_error(dir, error)),
        };
        // This directory's entries that hold cases: files and Nexus case directories (sources)
        // and other directories (searched), in name order.
        let mut sources = Vec::new();
        let mut subdirs = Vec::new();
        let mut problems = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    problems.push(read_error(dir, error));
                    continue;
                }
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let path = entry.path();
            // The judge's recorded answers (`judgments.jsonl`) live beside the cases; they are
            // not a fixture.
            let is_case = !name.starts_with('.')
                && name != crate::judge::judgments::FILE_NAME
                && (name.ends_with(".yaml") || name.ends_with(".yml") || name.ends_with(".jsonl"));
            if is_case {
                // Follow symlinks: a linked case file is a case file. One that cannot be
                // followed (a symlink loop, a dangling link) is a problem naming it, not a case
                // silently skipped.
                match std::fs::metadata(&path) {
                    Ok(metadata) if metadata.is_file() => sources.push(path),
                    Ok(_) => {}
                    Err(error) => problems.push(read_error(&path, error)),
                }
            } else if !nexus::is_ignored(&name) && path.is_dir() {
                if nexus::is_case_dir(&path) || harbor::is_task_dir(&path) {
                    sources.push(path);
                } else {
                    subdirs.push(path);
                }
            }
        }
        if sources.len() > MAX_CASES_PER_DIR {
            problems.push(CaseError::TooManyCases {
                path: dir.to_path_buf(),
                count: sources.len(),
                max: MAX_CASES_PER_DIR,
            });
            sources.clear();
        }
        for problem in problems {
            self.problem(problem);
        }
        let mut entries: Vec<(PathBuf, bool)> = sources.into_iter().map(|p| (p, false)).collect();
        entries.extend(subdirs.into_iter().map(|p| (p, true)));
        entries.sort_by(|(a, _), (b, _)| a.file_name().cmp(&b.file_name()));
        self.stack.push(Walked {
            entries: entries.into_iter(),
            canonical,
        });
    }

    fn problem(&mut self, problem: CaseError) {
        self.ready.push_back(Err(Box::new(problem)));
    }
}

impl Iterator for Sources<'_> {
    type Item = Source;

    fn next(&mut self) -> Option<Source> {
        loop {
            if let Some(source) = self.ready.pop_front() {
                if let Some((_, found)) = &mut self.walking {
                    *found += 1;
                }
                return Some(source);
            }
            if let Some(walked) = self.stack.last_mut() {
                match walked.entries.next() {
                    Some((dir, true)) => self.enter(&dir),
                    Some((source, false)) => self.ready.push_back(Ok(source)),
                    None => {
                        self.stack.pop();
                    }
                }
                continue;
            }
            if let Some((path, 0)) = self.walking.take() {
                return Some(Err(Box::new(CaseError::NoCases {
                    path: path.to_path_buf(),
                })));
            }
            let path = self.paths.next()?;
            self.start(path);
        }
    }
}

fn read_case(path: &Path) -> Result<Parsed, CaseError> {
    parse(path, &read_text(path, "case file")?)
}

//! How a case's `graders:` entry names the grader it uses.
//!
//! - `file_contains` — a built-in grader (or any grader of a component the host loaded).
//! - `path/to/grader.wasm#grader_name` — the grader `grader_name` of the component at that
//!   path, relative to the case file (an absolute path is used as it is). `#grader_name`
//!   may be left out when the component provides exactly one grader.
//! - `bundle-name/grader-name` — a grader of an installed bundle (`crate::bundle`), at the
//!   version `evalhost.lock` pins.
//!
//! A component named by path is checked as `evalhost grader check` checks it (supported
//! world, imports limited to what the sandbox grants) and loaded once per suite, however
//! many cases use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::grader::{GraderComponent, GraderHost};

/// Where the grader of a `graders:` entry comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GraderRef<'a> {
    /// A grader the host has loaded, by name.
    Named(&'a str),
    /// A component file, and optionally which of its graders.
    Path {
        /// The path as written (relative to the case file unless absolute).
        path: &'a str,
        /// The grader after `#`, if given.
        grader: Option<&'a str>,
    },
    /// `bundle-name/grader-name`.
    Bundle {
        /// The bundle's name.
        bundle: &'a str,
        /// The grader within it.
        grader: &'a str,
    },
}

impl<'a> GraderRef<'a> {
    /// Read a `graders:` key.
    pub fn parse(key: &'a str) -> Self {
        let (path, grader) = match key.rsplit_once('#') {
            Some((path, grader)) => (path, Some(grader)),
            None => (key, None),
        };
        if path.ends_with(".wasm") {
            return GraderRef::Path { path, grader };
        }
        match key.split_once('/') {
            Some((bundle, grader)) if !bundle.is_empty() && !grader.is_empty() => {
                GraderRef::Bundle { bundle, grader }
            }
            _ => GraderRef::Named(key),
        }
    }
}

/// Components named by path, loaded once each (keyed by the resolved path).
#[derive(Debug, Default)]
pub(crate) struct PathComponents {
    loaded: HashMap<PathBuf, GraderComponent>,
}

impl PathComponents {
    /// The component at `path` (relative to the case file `case_path`), checked and loaded
    /// on first use. The error is a sentence for the grader entry.
    pub(crate) fn get(
        &mut self,
        host: &GraderHost,
        case_path: &Path,
        path: &str,
    ) -> Result<GraderComponent, String> {
        let resolved = resolve(case_path, path);
        if let Some(component) = self.loaded.get(&resolved) {
            return Ok(component.clone());
        }
        let (component, _) = host
            .check_component_file(&resolved)
            .map_err(|e| e.to_string())?;
        self.loaded.insert(resolved, component.clone());
        Ok(component)
    }
}

/// `path` relative to the directory of the case file, unless absolute.
pub fn resolve(case_path: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        return path.to_owned();
    }
    case_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(path)
}

/// Which grader of `component` a path reference means: the one after `#`, or the only one.
pub(crate) fn pick_grader(
    component: &GraderComponent,
    path: &str,
    grader: Option<&str>,
) -> Result<String, String> {
    let names: Vec<&str> = component
        .graders()
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    match (grader, names.as_slice()) {
        (Some(name), _) if names.contains(&name) => Ok(name.to_owned()),
        (Some(name), _) => Err(format!(
            "`{path}` provides no grader `{name}` (it provides: {})",
            names.join(", ")
        )),
        (None, [only]) => Ok((*only).to_owned()),
        (None, _) => Err(format!(
            "`{path}` provides {} graders ({}); name one as `{path}#NAME`",
            names.len(),
            names.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_names_paths_or_bundles() {
        assert_eq!(
            GraderRef::parse("file_contains"),
            GraderRef::Named("file_contains")
        );
        assert_eq!(
            GraderRef::parse("../graders/x.wasm#no_todo"),
            GraderRef::Path {
                path: "../graders/x.wasm",
                grader: Some("no_todo")
            }
        );
        assert_eq!(
            GraderRef::parse("x.wasm"),
            GraderRef::Path {
                path: "x.wasm",
                grader: None
            }
        );
        assert_eq!(
            GraderRef::parse("acme-checks/no_todo"),
            GraderRef::Bundle {
                bundle: "acme-checks",
                grader: "no_todo"
            }
        );
        assert_eq!(GraderRef::parse("/x"), GraderRef::Named("/x"));
    }

    #[test]
    fn paths_are_relative_to_the_case_file() {
        assert_eq!(
            resolve(Path::new("cases/a/greet.yaml"), "../g.wasm"),
            PathBuf::from("cases/a/../g.wasm")
        );
        assert_eq!(
            resolve(Path::new("cases/greet.yaml"), "/abs/g.wasm"),
            PathBuf::from("/abs/g.wasm")
        );
    }
}

//! The agent's finished workspace, as a grader sees it.
//!
//! The host preopens the workspace read-only at [`WORKSPACE`] and grants no
//! other directory, so `std::fs` works inside a grader but only below that
//! path, and every write is refused. [`Workspace`] resolves the relative paths
//! a case file names (`greeting.txt`, `src/main.rs`) against that root, and
//! refuses paths that would leave it before the sandbox has to.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{Evidence, GradeError};

/// Guest path of the read-only workspace preopen.
pub const WORKSPACE: &str = "/workspace";

/// A workspace root and the files below it.
///
/// In a grader, use [`Workspace::of`]; in a native unit test of grading logic,
/// [`Workspace::new`] with a temporary directory.
///
/// ```no_run
/// use evalhost_sdk::{Evidence, Workspace};
///
/// fn greeting(evidence: &Evidence) -> std::io::Result<String> {
///     Workspace::of(evidence).read_to_string("greeting.txt")
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The workspace of the run `evidence` describes (always [`WORKSPACE`] in a
    /// grader).
    pub fn of(evidence: &Evidence) -> Self {
        if evidence.workspace.is_empty() {
            Self::new(WORKSPACE)
        } else {
            Self::new(&evidence.workspace)
        }
    }

    /// The workspace of the run `evidence` describes, or [`GradeError::NotEvaluable`] when
    /// the run has none: a run graded from a trace (`evalhost grade --trace`) carries no
    /// workspace, and the host then sends an empty `workspace` and grants no preopen. A
    /// grader of files starts with this, so it says why instead of failing on a missing file.
    pub fn require(evidence: &Evidence) -> Result<Self, GradeError> {
        if evidence.workspace.is_empty() {
            return Err(GradeError::NotEvaluable(
                "the run has no workspace: it was read from a trace, which carries none (docs/traces.md)"
                    .to_owned(),
            ));
        }
        Ok(Self::new(&evidence.workspace))
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The full path of `relative`, after checking it with
    /// [`check_relative_path`]; a path that fails the check is an
    /// [`io::ErrorKind::InvalidInput`] error.
    pub fn path(&self, relative: &str) -> io::Result<PathBuf> {
        check_relative_path(relative)
            .map_err(|problem| io::Error::new(io::ErrorKind::InvalidInput, problem))?;
        Ok(self.root.join(relative))
    }

    /// Opens the file at `relative` for reading.
    pub fn open(&self, relative: &str) -> io::Result<File> {
        File::open(self.path(relative)?)
    }

    /// Reads the whole file at `relative`.
    pub fn read(&self, relative: &str) -> io::Result<Vec<u8>> {
        std::fs::read(self.path(relative)?)
    }

    /// Reads the whole file at `relative` as UTF-8.
    pub fn read_to_string(&self, relative: &str) -> io::Result<String> {
        std::fs::read_to_string(self.path(relative)?)
    }

    /// Metadata of `relative`, following symbolic links (a link that points out
    /// of the workspace is refused by the sandbox).
    pub fn metadata(&self, relative: &str) -> io::Result<Metadata> {
        std::fs::metadata(self.path(relative)?)
    }

    /// Whether `relative` is a regular file (after following links).
    pub fn is_file(&self, relative: &str) -> bool {
        self.metadata(relative).is_ok_and(|m| m.is_file())
    }
}

/// Checks that `path` names something inside a workspace: relative,
/// `/`-separated, without `..`, and not the root itself.
///
/// Returns what is wrong, as a lowercase fragment for an `invalid-config`
/// error.
///
/// ```
/// use evalhost_sdk::check_relative_path;
/// assert!(check_relative_path("notes/today.md").is_ok());
/// assert_eq!(
///     check_relative_path("../secret.txt").unwrap_err(),
///     "path \"../secret.txt\" leaves the workspace (`..`)"
/// );
/// ```
pub fn check_relative_path(path: &str) -> Result<(), String> {
    let shown = crate::message::quote(path);
    if path.is_empty() {
        return Err("path is empty".to_owned());
    }
    if path.contains('\0') {
        return Err(format!("path {shown} contains a NUL byte"));
    }
    if path.starts_with('/') {
        return Err(format!(
            "path {shown} is absolute; write it relative to the workspace root"
        ));
    }
    if path.contains('\\') {
        return Err(format!(
            "path {shown} contains `\\`; separate directories with `/`"
        ));
    }
    let mut names = 0usize;
    for part in path.split('/') {
        match part {
            ".." => return Err(format!("path {shown} leaves the workspace (`..`)")),
            "" | "." => {}
            _ => names += 1,
        }
    }
    if names == 0 {
        return Err(format!(
            "path {shown} names the workspace root, not a file in it"
        ));
    }
    Ok(())
}

/// A path relative to the workspace root, checked with [`check_relative_path`]
/// when it is deserialized: use it as (part of) a grader's config.
///
/// ```
/// use evalhost_sdk::RelativePath;
/// let path: RelativePath = serde_json::from_str(r#""out/report.txt""#).unwrap();
/// assert_eq!(path.as_str(), "out/report.txt");
/// assert!(serde_json::from_str::<RelativePath>(r#""/etc/passwd""#).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(try_from = "String", expecting = "a path relative to the workspace")]
pub struct RelativePath(String);

impl RelativePath {
    /// The path as written in the config.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for RelativePath {
    type Error = String;

    fn try_from(path: String) -> Result<Self, String> {
        check_relative_path(&path)?;
        Ok(Self(path))
    }
}

impl std::fmt::Display for RelativePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_leave_the_workspace_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../../b",
            "..",
            "a\\b",
            ".",
            "./",
            "a\0b",
        ] {
            assert!(check_relative_path(bad).is_err(), "{bad:?} passed");
        }
        for good in ["a", "a/b.txt", "./a", "a//b", ".env", "a/..b"] {
            assert!(check_relative_path(good).is_ok(), "{good:?} refused");
        }
    }

    #[test]
    fn workspace_resolves_and_reads_below_its_root() {
        let dir = std::env::temp_dir().join(format!("evalhost-sdk-ws-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/hello.txt"), "hello").unwrap();
        let ws = Workspace::new(&dir);
        assert_eq!(ws.read_to_string("sub/hello.txt").unwrap(), "hello");
        assert!(ws.is_file("sub/hello.txt"));
        assert!(!ws.is_file("sub"));
        assert_eq!(
            ws.read("../x").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

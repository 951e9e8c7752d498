//! Before graders read the finished workspace: its FIFOs, sockets and devices are removed.
//!
//! A grader opens guest paths through wasmtime-wasi, under the read-only `/workspace`
//! preopen (`crate::grader::sandbox`). wasmtime-wasi 48 opens them itself, without
//! `O_NONBLOCK` and with no hook to add it or to check the type first, on a blocking thread
//! the epoch deadline cannot interrupt: a grader opening a FIFO the agent made would wait for a
//! writer forever, and the run timeout would never end it (it covers the agent, not grading).
//! So the special files are removed before the first grader runs, each named in a warning of
//! the run. This is sound because every process of the run is dead by then: a run's processes
//! live in a PID namespace killed as a whole when the run ends (`crate::confine`), so nothing
//! can make a new FIFO between this sweep and the graders. (With Landlock alone, the fallback
//! without namespaces, a process escaping its process group with `setsid` could; see
//! docs/security.md.) A grader looking for such a file finds it missing; none of the built-in
//! graders reads anything but regular files and directories.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::workspace_read::Tree;

/// Most entries the sweep looks at; a workspace with more is not graded (an unbounded walk
/// would be the agent's to make as long as it likes).
pub(crate) const MAX_SWEPT_ENTRIES: usize = 1_000_000;

/// Remove the special files of `workspace`: a warning for each, or why the workspace cannot
/// be graded (then it is not: a FIFO might remain).
pub(crate) fn remove(workspace: &Path) -> Result<Vec<String>, String> {
    let cannot = |e: std::io::Error| {
        format!(
            "not graded: the finished workspace could not be checked for FIFOs, sockets and devices: {e}"
        )
    };
    let tree = Tree::open(workspace).map_err(cannot)?;
    let mut special: Vec<(PathBuf, &'static str)> = Vec::new();
    let mut seen = 0usize;
    let complete = tree
        .walk(|entry| {
            seen += 1;
            if entry.kind.is_special() {
                special.push((entry.path, entry.kind.describe()));
            }
            if seen >= MAX_SWEPT_ENTRIES {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .map_err(cannot)?;
    if !complete {
        return Err(format!(
            "not graded: the finished workspace has more than {MAX_SWEPT_ENTRIES} entries"
        ));
    }
    special
        .into_iter()
        .map(|(path, what)| {
            tree.remove(&path).map_err(cannot)?;
            Ok(format!(
                "`{}` ({what}) was removed from the finished workspace before grading: graders read only regular files and directories",
                path.display()
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::stat::Mode;

    #[test]
    fn fifos_and_sockets_are_removed_and_named_even_in_a_read_only_directory() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir(ws.join("locked")).unwrap();
        std::fs::write(ws.join("locked/keep.txt"), "kept").unwrap();
        nix::unistd::mkfifo(&ws.join("locked/pipe"), Mode::S_IRWXU).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(ws.join("sock")).unwrap();
        std::fs::set_permissions(ws.join("locked"), std::fs::Permissions::from_mode(0o500))
            .unwrap();
        let mut warnings = remove(ws).unwrap();
        warnings.sort();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("`locked/pipe` (a FIFO) was removed"),
            "{warnings:?}"
        );
        assert!(warnings[1].starts_with("`sock` (a socket) was removed"));
        assert!(!ws.join("locked/pipe").exists() && !ws.join("sock").exists());
        assert_eq!(
            std::fs::read_to_string(ws.join("locked/keep.txt")).unwrap(),
            "kept"
        );
        assert_eq!(remove(ws).unwrap(), Vec::<String>::new());
    }
}

//! `--out DIR` keeps each run's finished workspace, so `evalhost grade` can re-grade file
//! graders without re-running the agent: `DIR/<case>/run-N.workspace/`.
//!
//! Bounded: a workspace over [`MAX_SNAPSHOT_BYTES`] or [`MAX_SNAPSHOT_ENTRIES`] is not kept
//! at all (a partial copy would make file graders lie). Symlinks are copied as symlinks (the
//! grader sandbox refuses those that point outside the workspace, as during the run); other
//! special files (fifos, sockets) are left out.
//!
//! Private like every `--out` file ([`crate::private_file`]): files 0600 (0700 when the agent
//! left them executable), directories 0700, whatever modes the agent gave them.

use std::io;
use std::path::{Path, PathBuf};

use crate::private_file;

/// Largest workspace (sum of file sizes) kept by `--out`.
pub(crate) const MAX_SNAPSHOT_BYTES: u64 = 16 * 1024 * 1024;
/// Most files, directories and symlinks of a workspace kept by `--out`.
pub(crate) const MAX_SNAPSHOT_ENTRIES: usize = 4096;

/// One thing to copy, relative to the workspace root.
enum Entry {
    Dir(PathBuf),
    File(PathBuf),
    Symlink(PathBuf, PathBuf),
}

/// Copy `workspace` to `dest` (replacing it); `false` when the workspace is over the limits
/// and nothing was kept.
pub(crate) fn keep_workspace(workspace: &Path, dest: &Path) -> io::Result<bool> {
    // A snapshot of an earlier run in a reused `--out` directory must never be re-graded
    // as this run's.
    remove_dir_if_exists(dest)?;
    let partial = dest.with_extension("workspace.partial");
    remove_dir_if_exists(&partial)?;
    // The workspace is the agent's: one over the limits, or with entries it made unreadable,
    // is not kept (re-grading then says so) rather than failing a graded run.
    let Ok(Some(entries)) = list(workspace) else {
        return Ok(false);
    };
    private_file::create_dir_all(&partial)?;
    for entry in &entries {
        let copied = match entry {
            Entry::Dir(rel) => private_file::create_dir_all(&partial.join(rel)),
            Entry::File(rel) => private_file::copy_new(&workspace.join(rel), &partial.join(rel)),
            Entry::Symlink(rel, target) => std::os::unix::fs::symlink(target, partial.join(rel)),
        };
        if copied.is_err() {
            remove_dir_if_exists(&partial)?;
            return Ok(false);
        }
    }
    std::fs::rename(&partial, dest)?;
    Ok(true)
}

/// Every entry under `root`, parents before children; `None` over the limits.
fn list(root: &Path) -> io::Result<Option<Vec<Entry>>> {
    let mut entries = Vec::new();
    let mut bytes = 0u64;
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let mut children: Vec<_> = std::fs::read_dir(root.join(&dir))?.collect::<Result<_, _>>()?;
        children.sort_by_key(|c| c.file_name());
        for child in children {
            let rel = dir.join(child.file_name());
            let kind = child.file_type()?;
            if kind.is_dir() {
                entries.push(Entry::Dir(rel.clone()));
                pending.push(rel);
            } else if kind.is_file() {
                bytes += child.metadata()?.len();
                entries.push(Entry::File(rel));
            } else if kind.is_symlink() {
                let target = std::fs::read_link(child.path())?;
                entries.push(Entry::Symlink(rel, target));
            }
            if entries.len() > MAX_SNAPSHOT_ENTRIES || bytes > MAX_SNAPSHOT_BYTES {
                return Ok(None);
            }
        }
    }
    Ok(Some(entries))
}

fn remove_dir_if_exists(path: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_files_dirs_and_symlinks_and_replaces_an_old_snapshot() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ws = tmp.path().join("workspace");
        std::fs::create_dir_all(ws.join("src/deep")).expect("mkdir");
        std::fs::write(ws.join("a.txt"), "hello").expect("write");
        std::fs::write(ws.join("src/deep/b.rs"), "fn main() {}").expect("write");
        std::os::unix::fs::symlink("/etc/passwd", ws.join("escape")).expect("symlink");
        let dest = tmp.path().join("run-1.workspace");
        std::fs::create_dir_all(dest.join("stale")).expect("mkdir");
        assert!(keep_workspace(&ws, &dest).expect("kept"));
        assert_eq!(
            std::fs::read_to_string(dest.join("a.txt")).expect("read"),
            "hello"
        );
        assert_eq!(
            std::fs::read_to_string(dest.join("src/deep/b.rs")).expect("read"),
            "fn main() {}"
        );
        assert_eq!(
            std::fs::read_link(dest.join("escape")).expect("link"),
            Path::new("/etc/passwd")
        );
        assert!(!dest.join("stale").exists());
        assert!(!tmp.path().join("run-1.workspace.partial").exists());
    }

    #[test]
    fn a_snapshot_is_private_whatever_modes_the_agent_left() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("tempdir");
        let ws = tmp.path().join("workspace");
        std::fs::create_dir_all(ws.join("pub")).expect("mkdir");
        std::fs::write(ws.join("pub/notes.md"), "secret").expect("write");
        std::fs::write(ws.join("run.sh"), "#!/bin/sh\n").expect("write");
        for (path, mode) in [("pub", 0o777), ("pub/notes.md", 0o666), ("run.sh", 0o755)] {
            std::fs::set_permissions(ws.join(path), std::fs::Permissions::from_mode(mode))
                .expect("chmod");
        }
        let dest = tmp.path().join("run-1.workspace");
        assert!(keep_workspace(&ws, &dest).expect("kept"));
        let mode = |p: &str| {
            std::fs::metadata(dest.join(p))
                .expect("stat")
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(
            [mode(""), mode("pub"), mode("pub/notes.md"), mode("run.sh")],
            [0o700, 0o700, 0o600, 0o700]
        );
    }

    #[test]
    fn a_workspace_over_the_limit_is_not_kept() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ws = tmp.path().join("workspace");
        std::fs::create_dir_all(&ws).expect("mkdir");
        let big = std::fs::File::create(ws.join("big.bin")).expect("create");
        big.set_len(MAX_SNAPSHOT_BYTES + 1).expect("sparse file");
        let dest = tmp.path().join("run-1.workspace");
        assert!(!keep_workspace(&ws, &dest).expect("no error"));
        assert!(!dest.exists());
    }
}

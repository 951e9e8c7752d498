//! `--out DIR` keeps each run's finished workspace, so `evalhost grade` can re-grade file
//! graders without re-running the agent: `DIR/<case>/run-N.workspace/`.
//!
//! Read through [`crate::workspace_read`] only: every path is opened beneath the workspace's
//! directory handle with no symlink followed, every file `O_NONBLOCK` and checked to be a
//! regular file after opening, so a process that swaps a directory for a symlink to `~/.ssh`
//! while the copy runs gets an error, not the key in `--out`.
//!
//! Bounded: a workspace over [`MAX_SNAPSHOT_BYTES`] or [`MAX_SNAPSHOT_ENTRIES`] is not kept
//! at all (a partial copy would make file graders lie); the listing stops at the cap. Symlinks
//! that stay inside the workspace are copied as symlinks; those that lead (or might lead)
//! outside it are left out, so that nothing reading or archiving the snapshot follows them
//! (`tar -h`, a CI upload); FIFOs, sockets and devices are left out. What was left out, or why
//! nothing was kept, is written to `DIR/<case>/run-N.workspace-notes.txt` beside it.
//!
//! Private like every `--out` file ([`crate::private_file`]): files 0600 (0700 when the agent
//! left them executable), directories 0700, whatever modes the agent gave them.

use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::private_file;
use crate::workspace_read::{Kind, ReadError, Tree, leads_outside};

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

/// `run-N.workspace-notes.txt` beside the snapshot `run-N.workspace`.
pub(crate) fn notes_path(dest: &Path) -> PathBuf {
    dest.with_extension("workspace-notes.txt")
}

/// Copy `workspace` to `dest` (replacing it); `false` when nothing was kept. Notes on what
/// was left out, or why nothing was kept, go to [`notes_path`].
pub(crate) fn keep_workspace(workspace: &Path, dest: &Path) -> io::Result<bool> {
    // A snapshot of an earlier run in a reused `--out` directory must never be re-graded
    // as this run's.
    remove_dir_if_exists(dest)?;
    let partial = dest.with_extension("workspace.partial");
    remove_dir_if_exists(&partial)?;
    let notes_file = notes_path(dest);
    remove_file_if_exists(&notes_file)?;
    let mut notes = Vec::new();
    let kept = copy(workspace, &partial, &mut notes)?;
    if kept {
        std::fs::rename(&partial, dest)?;
    } else {
        remove_dir_if_exists(&partial)?;
    }
    if !notes.is_empty() {
        let mut text = format!(
            "evalhost: notes on this run's workspace snapshot ({}):\n",
            dest.file_name().unwrap_or_default().to_string_lossy()
        );
        for note in notes {
            text.push_str(&format!("- {note}\n"));
        }
        private_file::write(&notes_file, text.as_bytes())?;
    }
    Ok(kept)
}

/// Copy into `partial`; `false` (with a note) when the workspace is not kept. The workspace is
/// the agent's: one over the limits, changed during the copy, or with entries it made
/// unreadable is not kept (re-grading then says so) rather than failing a graded run.
fn copy(workspace: &Path, partial: &Path, notes: &mut Vec<String>) -> io::Result<bool> {
    let tree = match Tree::open(workspace) {
        Ok(tree) => tree,
        Err(e) => {
            notes.push(format!("not kept: the workspace could not be opened: {e}"));
            return Ok(false);
        }
    };
    let entries = match list(&tree, notes) {
        Ok(Some(entries)) => entries,
        Ok(None) => return Ok(false),
        Err(e) => {
            notes.push(format!("not kept: the workspace could not be listed: {e}"));
            return Ok(false);
        }
    };
    private_file::create_dir_all(partial)?;
    let mut budget = MAX_SNAPSHOT_BYTES;
    for entry in &entries {
        let copied = match entry {
            Entry::Dir(rel) => private_file::create_dir_all(&partial.join(rel)).map_err(Into::into),
            Entry::File(rel) => copy_file(&tree, rel, &partial.join(rel), &mut budget),
            Entry::Symlink(rel, target) => {
                std::os::unix::fs::symlink(target, partial.join(rel)).map_err(Into::into)
            }
        };
        if let Err(e) = copied {
            let rel = match entry {
                Entry::Dir(rel) | Entry::File(rel) | Entry::Symlink(rel, _) => rel,
            };
            notes.push(format!(
                "not kept: `{}` could not be copied: {e} (changed while evalhost copied it?)",
                rel.display()
            ));
            return Ok(false);
        }
    }
    Ok(true)
}

/// Copy the regular file `rel` as opened (never by name again), at most `budget` bytes.
fn copy_file(tree: &Tree, rel: &Path, to: &Path, budget: &mut u64) -> Result<(), ReadError> {
    let (file, _) = tree.open_file(rel)?;
    let copied = private_file::copy_new_from(file, to, *budget)?;
    *budget = budget.checked_sub(copied).ok_or_else(|| {
        ReadError::Io(io::Error::other(format!(
            "the workspace grew past {MAX_SNAPSHOT_BYTES} bytes during the copy"
        )))
    })?;
    Ok(())
}

/// Every entry under `tree`, parents before children (with a note for each one left out);
/// `None` (with a note) over the limits, which stop the listing as soon as they are hit.
fn list(tree: &Tree, notes: &mut Vec<String>) -> io::Result<Option<Vec<Entry>>> {
    let mut entries = Vec::new();
    let mut seen = 0usize;
    let mut bytes = 0u64;
    let mut over = None;
    tree.walk(|entry| {
        seen += 1;
        let rel = entry.path;
        match (entry.kind, entry.target) {
            (Kind::Dir, _) => entries.push(Entry::Dir(rel)),
            (Kind::File, _) => {
                bytes += entry.size;
                entries.push(Entry::File(rel));
            }
            (Kind::Symlink, Some(target)) if leads_outside(&rel, &target) => notes.push(format!(
                "`{}` left out: a symlink to `{}`, which leads outside the workspace (nothing that reads or archives this snapshot may follow it)",
                rel.display(),
                target.display()
            )),
            (Kind::Symlink, Some(target)) => entries.push(Entry::Symlink(rel, target)),
            (kind, _) => notes.push(format!(
                "`{}` left out: {}, not a regular file",
                rel.display(),
                kind.describe()
            )),
        }
        if seen > MAX_SNAPSHOT_ENTRIES {
            over = Some(format!(
                "not kept: the workspace has more than {MAX_SNAPSHOT_ENTRIES} entries"
            ));
        } else if bytes > MAX_SNAPSHOT_BYTES {
            over = Some(format!(
                "not kept: the workspace holds more than {MAX_SNAPSHOT_BYTES} bytes"
            ));
        }
        if over.is_some() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    if let Some(over) = over {
        // What was left out of a snapshot that is not kept does not matter.
        notes.clear();
        notes.push(over);
        return Ok(None);
    }
    Ok(Some(entries))
}

fn remove_dir_if_exists(path: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn remove_file_if_exists(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
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
        std::os::unix::fs::symlink("a.txt", ws.join("src/../inside")).expect("symlink");
        assert!(keep_workspace(&ws, &dest).expect("kept"));
        assert_eq!(
            std::fs::read_link(dest.join("inside")).expect("link"),
            Path::new("a.txt")
        );
        assert!(!dest.join("escape").exists() && dest.join("escape").symlink_metadata().is_err());
        let notes = std::fs::read_to_string(notes_path(&dest)).expect("notes");
        assert!(
            notes.contains(
                "`escape` left out: a symlink to `/etc/passwd`, which leads outside the workspace"
            ),
            "{notes}"
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

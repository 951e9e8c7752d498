//! Each run's evidence and workspace changes for the HTML report (`RunOptions::details`,
//! which renders and keeps them), read while the run's temp root still exists.
//!
//! The workspace is read through [`crate::workspace_read`] only (beneath its directory
//! handle, no symlink followed, files opened `O_NONBLOCK` and checked to be regular files
//! after opening), and the comparison is bounded: at most [`MAX_ENTRIES`] entries are
//! listed (the listing stops there), at most [`MAX_READ_BYTES`] of the workspace's files are
//! read per run, files over [`MAX_FILE_BYTES`] are named but not read, a diff is cut at
//! [`MAX_DIFF_BYTES`], and at most [`MAX_CHANGED_FILES`] changes are kept. Files are read only
//! to tell whether a seeded file changed (same size as seeded) and to diff the changes kept.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::Path;

use super::run::RunArtifacts;
use crate::case::Case;
use crate::case::SeedFile;
use crate::report::{ChangeKind, FileChange, WorkspaceChanges};
use crate::workspace_read::{Kind, Tree};

/// Most workspace entries (files, directories, symlinks, ...) listed.
pub(crate) const MAX_ENTRIES: usize = 2_000;
/// Files larger than this are listed as changed without a diff.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most bytes of workspace files read per run; files past it are listed as changed without
/// a diff (a red team's 2,000 files of 1 MiB made one report's process reach 3.9 GB).
pub(crate) const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;
/// A file's diff is cut here.
pub(crate) const MAX_DIFF_BYTES: usize = 16 * 1024;
/// Most changed files kept per run.
pub(crate) const MAX_CHANGED_FILES: usize = 50;

/// Run `artifacts`' finished workspace against `case`'s seeded files (the HTML report's and
/// the history's).
pub(crate) fn changes(case: &Case, artifacts: &RunArtifacts) -> WorkspaceChanges {
    match case.whole() {
        Ok(whole) => workspace_changes(
            &artifacts.workspace(),
            &whole.workspace_files,
            &artifacts.evidence.seeded_files,
        ),
        Err(e) => WorkspaceChanges {
            unavailable: Some(e.to_string()),
            ..WorkspaceChanges::default()
        },
    }
}

/// The finished `workspace` compared with the files `seeded` into it, and with the files of
/// `known` (the evidence's seeded files: an environment's image's among them, known by
/// digest and size, not content) that `seeded` lacks.
pub(crate) fn workspace_changes(
    workspace: &Path,
    seeded: &[SeedFile],
    known: &[crate::evidence::SeededFile],
) -> WorkspaceChanges {
    let mut changes = WorkspaceChanges::default();
    let listed = Tree::open(workspace).and_then(|tree| {
        let (found, partial) = list_files(&tree)?;
        Ok((tree, found, partial))
    });
    let (tree, found, partial) = match listed {
        Ok(listed) => listed,
        Err(e) => {
            changes.unavailable = Some(format!("could not read the workspace: {e}"));
            return changes;
        }
    };
    let mut reader = Reader {
        tree: &tree,
        budget: MAX_READ_BYTES,
    };
    let seeded_paths: BTreeMap<&str, &str> = seeded
        .iter()
        .map(|f| (f.path.as_str(), f.content.as_str()))
        .collect();
    // (path, kind, seeded content, what is known of it now)
    let mut all: Vec<(&str, ChangeKind, &str, Contents)> = Vec::new();
    for (path, seeded_content) in &seeded_paths {
        match found.get(*path) {
            // Not walked is not deleted.
            None if partial => {}
            None => all.push((
                path,
                ChangeKind::Deleted,
                seeded_content,
                Contents::Text(String::new()),
            )),
            // Another size: changed, read later if kept. The same size: read now to tell.
            // (The seeded files are at most 64 of 64 KiB: these reads are bounded.)
            Some(now) => {
                let now = match now {
                    Contents::Unread(size) if *size == seeded_content.len() as u64 => {
                        reader.contents(path, *size)
                    }
                    other => other.clone(),
                };
                if !matches!(&now, Contents::Text(t) if t == seeded_content) {
                    all.push((path, ChangeKind::Modified, seeded_content, now));
                }
            }
        }
    }
    let from_image: BTreeMap<&str, &crate::evidence::SeededFile> = known
        .iter()
        .filter(|f| !seeded_paths.contains_key(f.path.as_str()))
        .map(|f| (f.path.as_str(), f))
        .collect();
    for path in from_image.keys() {
        if !partial && !found.contains_key(*path) {
            all.push((path, ChangeKind::Deleted, "", Contents::Text(String::new())));
        }
    }
    for (path, now) in &found {
        if seeded_paths.contains_key(path.as_str()) {
            continue;
        }
        match from_image.get(path.as_str()) {
            None => all.push((path, ChangeKind::Created, "", now.clone())),
            Some(image) if !same_as_image(&tree, path, now, image) => {
                all.push((path, ChangeKind::Modified, "", now.clone()))
            }
            Some(_) => {}
        }
    }
    all.sort_by(|a, b| a.0.cmp(b.0));
    changes.omitted = all.len().saturating_sub(MAX_CHANGED_FILES);
    all.truncate(MAX_CHANGED_FILES);
    changes.files = all
        .into_iter()
        .map(|(path, kind, before, now)| {
            let now = match now {
                Contents::Unread(size) => reader.contents(path, size),
                known => known,
            };
            change(path, kind, before, &now)
        })
        .collect();
    changes.partial = partial;
    changes
}

/// Whether the workspace's `path` (listed as `now`) is still the image's `file`: the same
/// size, and up to [`MAX_FILE_BYTES`] the same SHA-256 (a larger file of the same size is
/// taken as unchanged).
fn same_as_image(
    tree: &Tree,
    path: &str,
    now: &Contents,
    file: &crate::evidence::SeededFile,
) -> bool {
    use sha2::{Digest, Sha256};
    let Contents::Unread(size) = now else {
        return false;
    };
    if *size != file.size {
        return false;
    }
    if *size > MAX_FILE_BYTES {
        return true;
    }
    tree.read(Path::new(path), *size)
        .is_ok_and(|read| hex::encode(Sha256::digest(&read.bytes)) == file.sha256)
}

/// What is known of a file in the finished workspace.
#[derive(Clone)]
enum Contents {
    /// Listed with this size, not read (yet).
    Unread(u64),
    Text(String),
    Binary(u64),
    TooLarge(u64),
    /// Not read: the run's [`MAX_READ_BYTES`] were spent.
    OverBudget(u64),
    /// Not read: a FIFO, socket or device, or it changed into one (or into a symlink) after
    /// it was listed.
    NotRead(String),
}

/// Reads of one run's workspace files, within [`MAX_READ_BYTES`].
struct Reader<'a> {
    tree: &'a Tree,
    budget: u64,
}

impl Reader<'_> {
    /// The contents of `path`, listed with `size` bytes.
    fn contents(&mut self, path: &str, size: u64) -> Contents {
        if size > MAX_FILE_BYTES {
            return Contents::TooLarge(size);
        }
        if size > self.budget {
            return Contents::OverBudget(size);
        }
        // At most what was listed (and fits): a file that grew since is cut there.
        match self.tree.read(Path::new(path), size) {
            Ok(read) => {
                self.budget -= read.bytes.len() as u64;
                match String::from_utf8(read.bytes) {
                    Ok(text) => Contents::Text(text),
                    Err(_) => Contents::Binary(size),
                }
            }
            Err(e) => Contents::NotRead(format!("not read: {e}")),
        }
    }
}

fn change(path: &str, kind: ChangeKind, before: &str, after: &Contents) -> FileChange {
    let (diff, note) = match (kind, after) {
        (_, Contents::Binary(size)) => (String::new(), Some(format!("binary, {size} bytes"))),
        (_, Contents::TooLarge(size)) => (
            String::new(),
            Some(format!("too large to show ({size} bytes)")),
        ),
        (_, Contents::OverBudget(size)) => (
            String::new(),
            Some(format!(
                "{size} bytes, not shown: the report reads at most {} MiB of each run's workspace",
                MAX_READ_BYTES >> 20
            )),
        ),
        (_, Contents::NotRead(why)) => (String::new(), Some(why.clone())),
        (ChangeKind::Deleted, _) => unified(before, "", path),
        (_, Contents::Text(now)) => unified(before, now, path),
        (_, Contents::Unread(size)) => (String::new(), Some(format!("{size} bytes, not read"))),
    };
    FileChange {
        path: path.to_owned(),
        kind,
        diff,
        note,
    }
}

/// A unified diff of `before` → `after`, cut at [`MAX_DIFF_BYTES`] (on a char boundary).
fn unified(before: &str, after: &str, path: &str) -> (String, Option<String>) {
    // Bounded in time too: a pathological pair of large files falls back to a coarser diff.
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_lines(before, after);
    let mut text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    if text.len() <= MAX_DIFF_BYTES {
        return (text, None);
    }
    let cut = text.floor_char_boundary(MAX_DIFF_BYTES);
    let total = text.len();
    text.truncate(cut);
    (
        text,
        Some(format!("diff cut at {MAX_DIFF_BYTES} of {total} bytes")),
    )
}

/// Regular files (unread, with their listed size) and special files (FIFOs, sockets,
/// devices: never read) under `tree` (symlinks are not followed), by `/`-separated relative
/// path; the listing stops after [`MAX_ENTRIES`] entries (then `true`: it is partial).
fn list_files(tree: &Tree) -> std::io::Result<(BTreeMap<String, Contents>, bool)> {
    let mut files = BTreeMap::new();
    let mut entries = 0;
    let mut partial = false;
    tree.walk(|entry| {
        entries += 1;
        if entries > MAX_ENTRIES {
            partial = true;
            return ControlFlow::Break(());
        }
        let rel = entry.path.to_string_lossy().into_owned();
        match entry.kind {
            Kind::File => {
                files.insert(rel, Contents::Unread(entry.size));
            }
            kind if kind.is_special() => {
                files.insert(
                    rel,
                    Contents::NotRead(format!("{}, not read", kind.describe())),
                );
            }
            _ => {}
        }
        ControlFlow::Continue(())
    })?;
    Ok((files, partial))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(path: &str, content: &str) -> SeedFile {
        SeedFile {
            path: path.into(),
            content: content.into(),
        }
    }

    #[test]
    fn created_modified_and_deleted_files_are_found_and_unchanged_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir(ws.join("src")).unwrap();
        std::fs::write(ws.join("same.txt"), "same\n").unwrap();
        std::fs::write(ws.join("src/main.rs"), "fn main() {}\n// new\n").unwrap();
        std::fs::write(ws.join("notes.md"), "hello\n").unwrap();
        std::fs::write(ws.join("blob.bin"), [0xff, 0xfe, 0]).unwrap();
        let seeded = [
            seed("same.txt", "same\n"),
            seed("src/main.rs", "fn main() {}\n"),
            seed("gone.txt", "bye\n"),
        ];
        let changes = workspace_changes(ws, &seeded, &[]);
        let summary: Vec<(&str, &str)> = changes
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.kind.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("blob.bin", "created"),
                ("gone.txt", "deleted"),
                ("notes.md", "created"),
                ("src/main.rs", "modified"),
            ]
        );
        assert!(
            changes.files[3].diff.contains("+// new"),
            "{:?}",
            changes.files[3]
        );
        assert!(
            changes.files[1].diff.contains("-bye"),
            "{:?}",
            changes.files[1]
        );
        assert_eq!(changes.files[0].note.as_deref(), Some("binary, 3 bytes"));
    }

    #[test]
    fn a_huge_diff_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let big: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("big.txt"), &big).unwrap();
        let changes = workspace_changes(dir.path(), &[], &[]);
        let file = &changes.files[0];
        assert!(file.diff.len() <= MAX_DIFF_BYTES);
        assert!(
            file.note
                .as_deref()
                .unwrap_or("")
                .starts_with("diff cut at"),
            "{:?}",
            file.note
        );
    }

    #[test]
    fn many_changes_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_CHANGED_FILES + 7) {
            std::fs::write(dir.path().join(format!("f{i:03}")), "x").unwrap();
        }
        let changes = workspace_changes(dir.path(), &[], &[]);
        assert_eq!(changes.files.len(), MAX_CHANGED_FILES);
        assert_eq!(changes.omitted, 7);
    }

    #[test]
    fn reads_stop_at_the_run_budget_and_special_files_and_symlinks_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let line = "x".repeat(1023) + "\n";
        let file = line.repeat(900);
        for i in 0..20 {
            std::fs::write(ws.join(format!("f{i:02}.txt")), &file).unwrap();
        }
        let secret = tempfile::tempdir().unwrap();
        std::fs::write(secret.path().join("id_rsa"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(secret.path(), ws.join("ssh")).unwrap();
        std::os::unix::fs::symlink(secret.path().join("id_rsa"), ws.join("key")).unwrap();
        nix::unistd::mkfifo(&ws.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let changes = workspace_changes(ws, &[], &[]);
        let diffed = changes.files.iter().filter(|f| !f.diff.is_empty()).count();
        let over: Vec<_> = changes
            .files
            .iter()
            .filter(|f| f.note.as_deref().is_some_and(|n| n.contains("not shown")))
            .collect();
        // 900 KiB each: the 8 MiB budget reads 9 of them.
        assert_eq!((diffed, over.len()), (9, 11), "{:?}", changes.files);
        assert_eq!(
            over[0].note.as_deref(),
            Some("921600 bytes, not shown: the report reads at most 8 MiB of each run's workspace")
        );
        let pipe = changes.files.iter().find(|f| f.path == "pipe").unwrap();
        assert_eq!(pipe.note.as_deref(), Some("a FIFO, not read"));
        assert!(
            changes
                .files
                .iter()
                .all(|f| !f.diff.contains("PRIVATE KEY"))
        );
        assert!(
            changes
                .files
                .iter()
                .all(|f| f.path != "key" && f.path != "ssh")
        );
    }

    /// An environment's image's files (known by digest): unchanged ones are not the agent's
    /// work; changed, removed and new ones are.
    #[test]
    fn the_images_files_count_only_when_the_run_changed_them() {
        use sha2::{Digest, Sha256};
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let known = |path: &str, content: &str| crate::evidence::SeededFile {
            path: path.into(),
            sha256: hex::encode(Sha256::digest(content.as_bytes())),
            size: content.len() as u64,
        };
        std::fs::write(ws.join("kept.txt"), "as built\n").unwrap();
        std::fs::write(ws.join("changed.txt"), "as edXted\n").unwrap();
        std::fs::write(ws.join("new.txt"), "mine\n").unwrap();
        let image = [
            known("kept.txt", "as built\n"),
            known("changed.txt", "as built\n"),
            known("removed.txt", "as built\n"),
        ];
        let changes = workspace_changes(ws, &[], &image);
        let summary: Vec<(&str, &str)> = changes
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.kind.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("changed.txt", "modified"),
                ("new.txt", "created"),
                ("removed.txt", "deleted"),
            ]
        );
    }
}

//! Each run's evidence and workspace changes for the HTML report (`RunOptions::details`,
//! which renders and keeps them), read while the run's temp root still exists.
//!
//! The workspace comparison is bounded: at most [`MAX_ENTRIES`] entries are walked, files
//! over [`MAX_FILE_BYTES`] are named but not read, a diff is cut at [`MAX_DIFF_BYTES`], and at
//! most [`MAX_CHANGED_FILES`] changes are kept.

use std::collections::BTreeMap;
use std::path::Path;

use super::run::RunArtifacts;
use crate::case::Case;
use crate::case::SeedFile;
use crate::report::{ChangeKind, FileChange, RunDetails, WorkspaceChanges};

/// Most workspace entries (files, directories) looked at.
pub(crate) const MAX_ENTRIES: usize = 2_000;
/// Files larger than this are listed as changed without a diff.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// A file's diff is cut here.
pub(crate) const MAX_DIFF_BYTES: usize = 16 * 1024;
/// Most changed files kept per run.
pub(crate) const MAX_CHANGED_FILES: usize = 50;

/// Render finished run `artifacts` of the plan's case `i` (`case`) into `details`, the
/// HTML report's: its transcript, and its workspace against the seeded files, read while its
/// temp root still exists.
pub(crate) fn record(details: &RunDetails, i: usize, case: &Case, artifacts: &RunArtifacts) {
    let workspace = match case.whole() {
        Ok(whole) => workspace_changes(&artifacts.workspace(), &whole.workspace_files),
        Err(e) => WorkspaceChanges {
            unavailable: Some(e.to_string()),
            ..WorkspaceChanges::default()
        },
    };
    details.add(i, artifacts.report.run, &artifacts.evidence, &workspace);
}

/// The finished `workspace` compared with the files `seeded` into it.
pub(crate) fn workspace_changes(workspace: &Path, seeded: &[SeedFile]) -> WorkspaceChanges {
    let mut changes = WorkspaceChanges::default();
    let (found, partial) = match list_files(workspace) {
        Ok(listed) => listed,
        Err(e) => {
            changes.unavailable = Some(format!("could not read the workspace: {e}"));
            return changes;
        }
    };
    let seeded_paths: BTreeMap<&str, &str> = seeded
        .iter()
        .map(|f| (f.path.as_str(), f.content.as_str()))
        .collect();
    let mut all = Vec::new();
    for (path, seeded_content) in &seeded_paths {
        match found.get(*path) {
            // Not walked is not deleted.
            None if partial => {}
            None => all.push(change(
                path,
                ChangeKind::Deleted,
                seeded_content,
                &Contents::Text(String::new()),
            )),
            Some(now) => {
                if !matches!(now, Contents::Text(t) if t == seeded_content) {
                    all.push(change(path, ChangeKind::Modified, seeded_content, now));
                }
            }
        }
    }
    for (path, now) in &found {
        if !seeded_paths.contains_key(path.as_str()) {
            all.push(change(path, ChangeKind::Created, "", now));
        }
    }
    all.sort_by(|a, b| a.path.cmp(&b.path));
    changes.omitted = all.len().saturating_sub(MAX_CHANGED_FILES);
    all.truncate(MAX_CHANGED_FILES);
    changes.files = all;
    changes.partial = partial;
    changes
}

/// What is known of a file in the finished workspace.
enum Contents {
    Text(String),
    Binary(u64),
    TooLarge(u64),
}

fn change(path: &str, kind: ChangeKind, before: &str, after: &Contents) -> FileChange {
    let (diff, note) = match (kind, after) {
        (_, Contents::Binary(size)) => (String::new(), Some(format!("binary, {size} bytes"))),
        (_, Contents::TooLarge(size)) => (
            String::new(),
            Some(format!("too large to show ({size} bytes)")),
        ),
        (ChangeKind::Deleted, _) => unified(before, "", path),
        (_, Contents::Text(now)) => unified(before, now, path),
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

/// Regular files under `root` (symlinks are not followed), by `/`-separated relative path;
/// stops after [`MAX_ENTRIES`] entries (then `true`: the listing is partial).
fn list_files(root: &Path) -> std::io::Result<(BTreeMap<String, Contents>, bool)> {
    let mut files = BTreeMap::new();
    let mut entries = 0;
    let mut pending = vec![String::new()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(root.join(&dir))? {
            let entry = entry?;
            entries += 1;
            if entries > MAX_ENTRIES {
                return Ok((files, true));
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(rel);
            } else if kind.is_file() {
                let size = entry.metadata()?.len();
                let contents = if size > MAX_FILE_BYTES {
                    Contents::TooLarge(size)
                } else {
                    match String::from_utf8(std::fs::read(entry.path())?) {
                        Ok(text) => Contents::Text(text),
                        Err(_) => Contents::Binary(size),
                    }
                };
                files.insert(rel, contents);
            }
        }
    }
    Ok((files, false))
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
        let changes = workspace_changes(ws, &seeded);
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
        let changes = workspace_changes(dir.path(), &[]);
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
        let changes = workspace_changes(dir.path(), &[]);
        assert_eq!(changes.files.len(), MAX_CHANGED_FILES);
        assert_eq!(changes.omitted, 7);
    }
}

//! The finished workspace as a list of files, and how each compares to what
//! the case seeded.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use evalhost_sdk::{SeededFile, Workspace};

use super::sha256::sha256_hex;

/// Entries (files, links, directories) a walk visits before it gives up.
pub const MAX_ENTRIES: usize = 50_000;

/// Directory levels a walk descends.
pub const MAX_DEPTH: usize = 64;

/// What a workspace path is, without following symbolic links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file of this many bytes.
    File(u64),
    /// A symbolic link (never followed: it may lead out of the workspace).
    Link,
    /// Anything else that is not a directory.
    Other,
}

/// Every non-directory entry below the workspace root, by `/`-separated
/// relative path, in path order.
pub fn list_files(workspace: &Workspace) -> io::Result<BTreeMap<String, Kind>> {
    let mut files = BTreeMap::new();
    let mut entries = 0usize;
    walk(workspace.root(), "", 0, &mut entries, &mut files)?;
    Ok(files)
}

fn walk(
    dir: &Path,
    prefix: &str,
    depth: usize,
    entries: &mut usize,
    files: &mut BTreeMap<String, Kind>,
) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(io::Error::other(format!(
            "the workspace nests deeper than {MAX_DEPTH} directories at {prefix}"
        )));
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return Err(io::Error::other(format!(
                "the workspace has more than {MAX_ENTRIES} entries"
            )));
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}{name}");
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(
                &entry.path(),
                &format!("{path}/"),
                depth + 1,
                entries,
                files,
            )?;
        } else if kind.is_symlink() {
            files.insert(path, Kind::Link);
        } else if kind.is_file() {
            files.insert(path, Kind::File(entry.metadata()?.len()));
        } else {
            files.insert(path, Kind::Other);
        }
    }
    Ok(())
}

/// Whether the regular file at `path` still has exactly the seeded content:
/// same size, then same sha256.
pub fn unchanged(workspace: &Workspace, seeded: &SeededFile, kind: Kind) -> io::Result<bool> {
    match kind {
        Kind::File(size) if size == seeded.size => {
            let file = workspace.open(&seeded.path)?;
            Ok(sha256_hex(file)? == seeded.sha256.to_ascii_lowercase())
        }
        _ => Ok(false),
    }
}

/// `path` with `.` and empty components dropped: `./a//b` is `a/b`.
pub fn normalize(path: &str) -> String {
    path.split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// A seeded-file record for `content` at `path`, as the host makes it: for tests.
#[cfg(test)]
pub fn seeded(path: &str, content: &str) -> SeededFile {
    SeededFile {
        path: path.to_owned(),
        sha256: sha256_hex(content.as_bytes()).unwrap_or_default(),
        size: content.len() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_files_below_the_root_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        std::fs::write(dir.path().join("a/b/c.txt"), "abc").unwrap();
        std::fs::write(dir.path().join("top.md"), "").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let files = list_files(&Workspace::new(dir.path())).unwrap();
        let mut expected = BTreeMap::from([
            ("a/b/c.txt".to_owned(), Kind::File(3)),
            ("top.md".to_owned(), Kind::File(0)),
        ]);
        #[cfg(unix)]
        expected.insert("link".to_owned(), Kind::Link);
        assert_eq!(files, expected);
    }

    #[test]
    fn unchanged_compares_size_and_sha256() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path());
        std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
        assert_eq!(
            seeded("a.txt", "hello\n").sha256,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert!(unchanged(&ws, &seeded("a.txt", "hello\n"), Kind::File(6)).unwrap());
        assert!(!unchanged(&ws, &seeded("a.txt", "hellO\n"), Kind::File(6)).unwrap());
        assert!(!unchanged(&ws, &seeded("a.txt", "hello"), Kind::File(6)).unwrap());
        assert!(!unchanged(&ws, &seeded("a.txt", "hello\n"), Kind::Link).unwrap());
    }

    #[test]
    fn paths_are_normalized() {
        assert_eq!(normalize("./a//b/"), "a/b");
        assert_eq!(normalize("a.txt"), "a.txt");
    }
}

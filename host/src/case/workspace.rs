//! The files a case seeds into the workspace: paths confined to it, sizes bounded.

use super::{MAX_SEED_FILE_BYTES, SeedFile};

/// Seed files being collected, checked against each other as they are added.
#[derive(Debug, Default)]
pub(super) struct SeedSet {
    files: Vec<SeedFile>,
    /// Each file's path as written and the line it is on, for "same file as" messages.
    written: Vec<(String, usize)>,
}

impl SeedSet {
    /// Add a file; on error, say what is wrong with it.
    pub fn add(&mut self, raw_path: String, content: String, line: usize) -> Result<(), String> {
        let path = normalize(&raw_path)?;
        if content.len() > MAX_SEED_FILE_BYTES {
            return Err(format!(
                "the content is {} bytes; a seeded file is at most {MAX_SEED_FILE_BYTES} bytes (64 KiB)",
                content.len()
            ));
        }
        for (file, (other, line)) in self.files.iter().zip(&self.written) {
            if file.path == path {
                return Err(format!("is the same file as {other:?} (line {line})"));
            }
            if is_inside(&path, &file.path) {
                return Err(format!(
                    "is inside {other:?} (line {line}), which is a file"
                ));
            }
            if is_inside(&file.path, &path) {
                return Err(format!(
                    "cannot be a file: {other:?} (line {line}) is seeded inside it"
                ));
            }
        }
        self.files.push(SeedFile { path, content });
        self.written.push((raw_path, line));
        Ok(())
    }

    /// The files, in the order they were added.
    pub(crate) fn into_files(self) -> Vec<SeedFile> {
        self.files
    }
}

/// Whether `path` lies under the directory `dir`.
fn is_inside(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// A relative, `/`-separated path with `.` and empty components removed; refuses paths that
/// are empty, absolute, escape the workspace or name a directory.
pub(super) fn normalize(raw: &str) -> Result<String, String> {
    if raw.is_empty() {
        return Err("the path is empty".into());
    }
    if raw.contains('\0') {
        return Err("the path contains a NUL character".into());
    }
    if raw.contains('\\') {
        return Err("use `/` to separate path components, not `\\`".into());
    }
    if raw.starts_with('/') {
        return Err("the path must be relative to the workspace, not absolute".into());
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("the path escapes the workspace".into()),
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err("the path names the workspace itself, not a file".into());
    }
    if raw.ends_with('/') || raw.ends_with("/.") {
        return Err("the path names a directory, not a file".into());
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_keeps_paths_inside_the_workspace() {
        assert_eq!(normalize("a.txt").as_deref(), Ok("a.txt"));
        assert_eq!(normalize("./a//b/./c.md").as_deref(), Ok("a/b/c.md"));
        assert_eq!(normalize(".env").as_deref(), Ok(".env"));
        assert_eq!(normalize("..x").as_deref(), Ok("..x"));
        for bad in [
            "",
            "/abs",
            "../x",
            "a/../../x",
            "a/../b",
            ".",
            "./",
            "a/",
            "a\\b",
            "a\0",
        ] {
            assert!(normalize(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn seed_set_refuses_clashing_paths() {
        let mut set = SeedSet::default();
        set.add("a/b.txt".into(), "x".into(), 3).unwrap();
        assert_eq!(
            set.add("./a/b.txt".into(), "y".into(), 4).unwrap_err(),
            r#"is the same file as "a/b.txt" (line 3)"#
        );
        assert_eq!(
            set.add("a".into(), "y".into(), 5).unwrap_err(),
            r#"cannot be a file: "a/b.txt" (line 3) is seeded inside it"#
        );
        assert_eq!(
            set.add("a/b.txt/c".into(), "y".into(), 6).unwrap_err(),
            r#"is inside "a/b.txt" (line 3), which is a file"#
        );
        set.add("ab".into(), "fine".into(), 7).unwrap();
        assert_eq!(set.into_files().len(), 2);
    }
}

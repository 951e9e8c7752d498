//! Graders of the files the agent left in the workspace.
//!
//! They read the workspace itself (the read-only preopen, through `std::fs`),
//! never file data carried in the evidence, so they see exactly what the run
//! left behind. Symbolic links are followed; one that leads out of the
//! workspace is refused by the sandbox, and the grader reports the refusal.

use std::io::{self, Read};

use std::fmt;

use evalhost_sdk::message::{EXCERPT_BYTES, count, list, name, quote, quote_bytes_excerpt};
use evalhost_sdk::{Evidence, GradeError, Grader, RelativePath, Verdict, Workspace};
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use crate::config::{Text, path_schema, text_schema};

/// `file_exists: greeting.txt`
pub struct FileExists;

impl Grader for FileExists {
    type Config = RelativePath;
    const NAME: &'static str = "file_exists";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "A regular file at this relative path exists in the workspace";

    fn config_schema() -> serde_json::Value {
        path_schema()
    }

    fn grade(path: &RelativePath, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(file_exists(&Workspace::require(evidence)?, path))
    }
}

/// Passes when `path` is a regular file in `workspace`.
pub fn file_exists(workspace: &Workspace, path: &RelativePath) -> Verdict {
    let seen = match workspace.metadata(path.as_str()) {
        Ok(meta) if meta.is_file() => return Verdict::pass(),
        Ok(meta) => not_a_file(&meta),
        Err(error) => describe(&error),
    };
    Verdict::fail(format!(
        "{} {}: {seen}",
        FileExists::NAME,
        name(path.as_str())
    ))
}

/// `file_absent: debug.log` or `file_absent: [debug.log, .env.local]`
pub struct FileAbsent;

/// Config of [`FileAbsent`]: one path, or a list of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbsentPaths {
    /// The paths, relative to the workspace root.
    pub paths: Vec<RelativePath>,
    /// Written as a list (shown as `[a b]` in a failure message), not as one path.
    pub listed: bool,
}

impl<'de> Deserialize<'de> for AbsentPaths {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PathsVisitor;

        impl<'de> Visitor<'de> for PathsVisitor {
            type Value = AbsentPaths;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a path relative to the workspace, or a list of them")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<AbsentPaths, E> {
                self.visit_string(v.to_owned())
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<AbsentPaths, E> {
                Ok(AbsentPaths {
                    paths: vec![RelativePath::try_from(v).map_err(E::custom)?],
                    listed: false,
                })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AbsentPaths, A::Error> {
                let mut paths = Vec::new();
                while let Some(path) = seq.next_element::<RelativePath>()? {
                    paths.push(path);
                }
                Ok(AbsentPaths {
                    paths,
                    listed: true,
                })
            }
        }

        deserializer.deserialize_any(PathsVisitor)
    }
}

impl AbsentPaths {
    /// The config as a failure message shows it: the path, or the list.
    fn shown(&self) -> String {
        if self.listed {
            list(self.paths.iter().map(RelativePath::as_str))
        } else {
            self.paths.iter().map(|p| name(p.as_str())).collect()
        }
    }
}

impl Grader for FileAbsent {
    type Config = AbsentPaths;
    const NAME: &'static str = "file_absent";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "Nothing (no file, directory or link) exists at this relative path, or at any of these paths, in the workspace";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": ["string", "array"],
            "minLength": 1,
            "pattern": "^[^/\\\\]",
            "items": path_schema(),
            "minItems": 1,
            "description": "A path relative to the workspace root, or a list of them: nothing may exist at any of them",
        })
    }

    fn check(config: &AbsentPaths) -> Result<(), String> {
        if config.paths.is_empty() {
            return Err("list of paths is empty".to_owned());
        }
        Ok(())
    }

    fn grade(config: &AbsentPaths, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(file_absent(&Workspace::require(evidence)?, config))
    }

    fn describe(config: &AbsentPaths) -> String {
        if config.listed {
            format!(
                "nothing exists at any of {} in the workspace",
                config.shown()
            )
        } else {
            format!("nothing exists at {} in the workspace", config.shown())
        }
    }
}

/// Passes when nothing exists at any of `config`'s paths in `workspace`; a failure names
/// each path where something does, and what it is.
pub fn file_absent(workspace: &Workspace, config: &AbsentPaths) -> Verdict {
    let present: Vec<String> = config
        .paths
        .iter()
        .filter_map(|path| {
            what_is_at(workspace, path).map(|seen| format!("{} {seen}", name(path.as_str())))
        })
        .collect();
    if present.is_empty() {
        return Verdict::pass();
    }
    Verdict::fail(format!(
        "{} {}: {}",
        FileAbsent::NAME,
        config.shown(),
        present.join("; ")
    ))
}

/// What exists at `path` without following a link there (`exists (a directory)`), or
/// `None` when nothing does (nor can, because a parent is a file).
fn what_is_at(workspace: &Workspace, path: &RelativePath) -> Option<String> {
    let meta = workspace
        .path(path.as_str())
        .and_then(std::fs::symlink_metadata);
    let kind = match meta {
        Ok(meta) if meta.is_file() => {
            format!("a regular file of {}", count(meta.len(), "byte", "bytes"))
        }
        Ok(meta) if meta.is_dir() => "a directory".to_owned(),
        Ok(meta) if meta.file_type().is_symlink() => "a symbolic link".to_owned(),
        Ok(_) => "not a regular file".to_owned(),
        Err(error)
            if matches!(
                error.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return None;
        }
        Err(error) => return Some(format!("cannot be checked: {}", os_error_text(&error))),
    };
    Some(format!("exists ({kind})"))
}

/// `file_contains: {path: greeting.txt, text: hello}`
pub struct FileContains;

/// Config of [`FileContains`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a map with `path` and `text`")]
pub struct FileContainsConfig {
    /// The file, relative to the workspace root.
    pub path: RelativePath,
    /// Text the file must contain.
    pub text: Text,
}

impl Grader for FileContains {
    type Config = FileContainsConfig;
    const NAME: &'static str = "file_contains";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "The file at this relative path is a regular file whose content contains the text";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "path": path_schema(),
                "text": text_schema("Text the file must contain"),
            },
            "required": ["path", "text"],
            "additionalProperties": false,
        })
    }

    fn check(config: &FileContainsConfig) -> Result<(), String> {
        config.text.check_not_empty("text")
    }

    fn grade(config: &FileContainsConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(file_contains(
            &Workspace::require(evidence)?,
            &config.path,
            config.text.as_str(),
        ))
    }
}

/// Passes when `path` is a regular file in `workspace` whose bytes contain `text`.
///
/// The file is streamed, so a large file costs time but not memory.
pub fn file_contains(workspace: &Workspace, path: &RelativePath, text: &str) -> Verdict {
    let seen = match search_file(workspace, path, text.as_bytes()) {
        Ok(Search::Found) => return Verdict::pass(),
        Ok(Search::NotFound { head }) => format!("content {}", quote_bytes_excerpt(&head)),
        Ok(Search::NotAFile(seen)) => seen,
        Err(error) => describe(&error),
    };
    Verdict::fail(format!(
        "{} {} {}: {seen}",
        FileContains::NAME,
        name(path.as_str()),
        quote(text)
    ))
}

enum Search {
    Found,
    /// The first bytes of the file, enough for an excerpt.
    NotFound {
        head: Vec<u8>,
    },
    NotAFile(String),
}

fn search_file(workspace: &Workspace, path: &RelativePath, needle: &[u8]) -> io::Result<Search> {
    // Past the excerpt, so the excerpt knows the file goes on and ends in `...`.
    const HEAD: usize = EXCERPT_BYTES + 4;

    let mut file = workspace.open(path.as_str())?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Search::NotAFile(not_a_file(&meta)));
    }
    let chunk_len = read_chunk_len(meta.len());
    let mut head = Vec::new();
    // `window` holds the unsearched tail of the previous chunk (a possible
    // match's start) followed by the new chunk.
    let mut window: Vec<u8> = Vec::with_capacity(chunk_len + needle.len());
    let mut chunk = vec![0u8; chunk_len];
    loop {
        let read = match file.read(&mut chunk) {
            Ok(0) => return Ok(Search::NotFound { head }),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if head.len() < HEAD {
            let take = (HEAD - head.len()).min(read);
            head.extend_from_slice(&chunk[..take]);
        }
        window.extend_from_slice(&chunk[..read]);
        if contains(&window, needle) {
            return Ok(Search::Found);
        }
        let keep = needle.len().saturating_sub(1).min(window.len());
        window.drain(..window.len() - keep);
    }
}

/// Bytes read at a time from a file of `len` bytes: the whole file and one byte more (so
/// the first read usually ends it), at most 64 KiB. A buffer as large as the largest file
/// would cost every call on a small file the zeroing of it and its pages, reset again when
/// the run's instance ends.
fn read_chunk_len(len: u64) -> usize {
    const CHUNK: usize = 64 * 1024;
    usize::try_from(len).map_or(CHUNK, |len| len.saturating_add(1).min(CHUNK))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let last_start = match haystack.len().checked_sub(needle.len()) {
        Some(last) => last,
        None => return false,
    };
    haystack[..=last_start]
        .iter()
        .enumerate()
        .any(|(i, &b)| b == first && haystack[i + 1..i + needle.len()] == *rest)
}

fn not_a_file(meta: &std::fs::Metadata) -> String {
    if meta.is_dir() {
        "is a directory".to_owned()
    } else {
        "not a regular file".to_owned()
    }
}

/// A lowercase fragment for a failed open: `the file does not exist` (nor does it when a
/// parent is a file), or the OS error text without its platform-specific error number.
fn describe(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => {
            "the file does not exist".to_owned()
        }
        _ => format!("cannot open: {}", os_error_text(error)),
    }
}

/// The OS error's text, lowercase and without its platform-specific error number:
/// `permission denied`.
fn os_error_text(error: &io::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" (os error ") {
        Some(at) => &text[..at],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::invalid_config;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("greeting.txt"), "hello world\n").unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let workspace = Workspace::new(dir.path());
        (dir, workspace)
    }

    fn path(p: &str) -> RelativePath {
        RelativePath::try_from(p.to_owned()).unwrap()
    }

    #[test]
    fn file_exists_wants_a_regular_file() {
        let (_dir, ws) = workspace();
        assert_eq!(file_exists(&ws, &path("greeting.txt")), Verdict::pass());
        assert_eq!(file_exists(&ws, &path("./greeting.txt")), Verdict::pass());
        assert_eq!(
            file_exists(&ws, &path("missing.txt")),
            Verdict::fail("file_exists missing.txt: the file does not exist")
        );
        assert_eq!(
            file_exists(&ws, &path("greeting.txt/inner")),
            Verdict::fail("file_exists greeting.txt/inner: the file does not exist")
        );
        assert_eq!(
            file_exists(&ws, &path("out")),
            Verdict::fail("file_exists out: is a directory")
        );
        assert_eq!(
            file_exists(&ws, &path("my notes.md")),
            Verdict::fail(r#"file_exists "my notes.md": the file does not exist"#)
        );
    }

    #[cfg(unix)]
    #[test]
    fn file_exists_follows_links_inside_the_workspace() {
        let (dir, ws) = workspace();
        std::os::unix::fs::symlink("greeting.txt", dir.path().join("link.txt")).unwrap();
        std::os::unix::fs::symlink("nowhere.txt", dir.path().join("dangling.txt")).unwrap();
        assert_eq!(file_exists(&ws, &path("link.txt")), Verdict::pass());
        assert_eq!(
            file_exists(&ws, &path("dangling.txt")),
            Verdict::fail("file_exists dangling.txt: the file does not exist")
        );
    }

    fn absent(config: &str) -> AbsentPaths {
        serde_json::from_str(config).unwrap()
    }

    #[test]
    fn file_absent_names_what_exists() {
        let (dir, ws) = workspace();
        assert_eq!(file_absent(&ws, &absent(r#""debug.log""#)), Verdict::pass());
        assert_eq!(
            file_absent(
                &ws,
                &absent(r#"["debug.log", "out/x", "greeting.txt/inner"]"#)
            ),
            Verdict::pass()
        );
        assert_eq!(
            file_absent(&ws, &absent(r#""greeting.txt""#)),
            Verdict::fail(
                "file_absent greeting.txt: greeting.txt exists (a regular file of 12 bytes)"
            )
        );
        assert_eq!(
            file_absent(&ws, &absent(r#""./out""#)),
            Verdict::fail("file_absent ./out: ./out exists (a directory)")
        );
        std::fs::write(dir.path().join("out/one.txt"), "1").unwrap();
        assert_eq!(
            file_absent(
                &ws,
                &absent(r#"["debug.log", "out/one.txt", "my notes.md", "out"]"#)
            ),
            Verdict::fail(
                r#"file_absent [debug.log out/one.txt "my notes.md" out]: out/one.txt exists (a regular file of 1 byte); out exists (a directory)"#
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn file_absent_counts_a_link_as_something_there() {
        let (dir, ws) = workspace();
        std::os::unix::fs::symlink("nowhere.txt", dir.path().join("dangling.txt")).unwrap();
        assert_eq!(
            file_absent(&ws, &absent(r#""dangling.txt""#)),
            Verdict::fail("file_absent dangling.txt: dangling.txt exists (a symbolic link)")
        );
    }

    #[test]
    fn file_absent_needs_a_workspace_and_paths() {
        // A run read from a trace: the host sends no workspace.
        let no_workspace = Evidence {
            workspace: String::new(),
            ..Evidence::default()
        };
        assert_eq!(
            evalhost_sdk::grade::<FileAbsent>(r#""debug.log""#, &no_workspace),
            Err(GradeError::NotEvaluable(
                "the run has no workspace: it was read from a trace, which carries none (docs/traces.md)".into()
            ))
        );
        assert_eq!(invalid_config::<FileAbsent>("[]"), "list of paths is empty");
        assert_eq!(
            invalid_config::<FileAbsent>(r#"["ok.txt", "../up.txt"]"#),
            r#"path "../up.txt" leaves the workspace (`..`)"#
        );
        assert_eq!(
            invalid_config::<FileAbsent>(r#""/tmp/x""#),
            r#"path "/tmp/x" is absolute; write it relative to the workspace root"#
        );
        assert_eq!(
            invalid_config::<FileAbsent>("2026"),
            "invalid type: integer `2026`, expected a path relative to the workspace, or a list of them"
        );
        assert_eq!(
            invalid_config::<FileAbsent>(r#"{"path": "a"}"#),
            "invalid type: map, expected a path relative to the workspace, or a list of them"
        );
        assert_eq!(
            evalhost_sdk::describe::<FileAbsent>(r#""debug.log""#).unwrap(),
            "nothing exists at debug.log in the workspace"
        );
        assert_eq!(
            evalhost_sdk::describe::<FileAbsent>(r#"["a.log", "b.log"]"#).unwrap(),
            "nothing exists at any of [a.log b.log] in the workspace"
        );
    }

    #[test]
    fn file_contains_quotes_the_content() {
        let (dir, ws) = workspace();
        assert_eq!(
            file_contains(&ws, &path("greeting.txt"), "hello"),
            Verdict::pass()
        );
        assert_eq!(
            file_contains(&ws, &path("greeting.txt"), "goodbye"),
            Verdict::fail(r#"file_contains greeting.txt "goodbye": content "hello world\n""#)
        );
        assert_eq!(
            file_contains(&ws, &path("missing.txt"), "hello"),
            Verdict::fail(r#"file_contains missing.txt "hello": the file does not exist"#)
        );
        assert_eq!(
            file_contains(&ws, &path("out"), "hello"),
            Verdict::fail(r#"file_contains out "hello": is a directory"#)
        );
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        assert_eq!(
            file_contains(&ws, &path("empty.txt"), "x"),
            Verdict::fail(r#"file_contains empty.txt "x": content """#)
        );
        std::fs::write(dir.path().join("binary.bin"), b"\x00\xffhello").unwrap();
        assert_eq!(
            file_contains(&ws, &path("binary.bin"), "hello"),
            Verdict::pass()
        );
    }

    #[test]
    fn file_contains_finds_text_across_chunks() {
        let (dir, ws) = workspace();
        // The needle straddles the 64 KiB read boundary.
        let mut content = "a".repeat(64 * 1024 - 3);
        content.push_str("NEEDLE");
        content.push_str(&"b".repeat(1000));
        std::fs::write(dir.path().join("big.txt"), &content).unwrap();
        assert_eq!(
            file_contains(&ws, &path("big.txt"), "NEEDLE"),
            Verdict::pass()
        );
        assert_eq!(
            file_contains(&ws, &path("big.txt"), "HAYSTACK"),
            Verdict::fail(format!(
                r#"file_contains big.txt "HAYSTACK": content "{}...""#,
                "a".repeat(120)
            ))
        );
    }

    #[test]
    fn paths_are_checked_with_the_config() {
        assert_eq!(
            invalid_config::<FileExists>(r#""/etc/passwd""#),
            r#"path "/etc/passwd" is absolute; write it relative to the workspace root"#
        );
        assert_eq!(
            invalid_config::<FileContains>(r#"{"path": "../secret.txt", "text": "x"}"#),
            r#"path "../secret.txt" leaves the workspace (`..`)"#
        );
        assert_eq!(
            invalid_config::<FileContains>(r#"{"path": "a.txt", "text": ""}"#),
            "text is empty"
        );
        assert_eq!(
            invalid_config::<FileContains>(r#"{"path": "a.txt"}"#),
            "missing field `text`"
        );
    }

    #[test]
    fn substring_search() {
        assert!(contains(b"abc", b"bc"));
        assert!(contains(b"abc", b"abc"));
        assert!(!contains(b"ab", b"abc"));
        assert!(!contains(b"abd", b"bc"));
        assert!(contains(b"", b""));
    }
}

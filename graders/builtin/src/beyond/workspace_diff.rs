//! `workspace_diff`: which files the run created, modified and deleted,
//! against the files the case seeded.

use std::collections::BTreeSet;
use std::io;

use evalhost_sdk::message::list;
use evalhost_sdk::{Evidence, GradeError, Grader, RelativePath, SeededFile, Verdict, Workspace};
use serde::Deserialize;

use super::walk::{list_files, normalize, unchanged};
use crate::config::path_schema;

/// `workspace_diff: {created: [greeting.txt], modified: [], deleted: [], allow_other: false}`
pub struct WorkspaceDiff;

/// Config of [`WorkspaceDiff`]. Every list is optional (empty when left out).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a map with `created`, `modified`, `deleted` and `allow_other`"
)]
pub struct WorkspaceDiffConfig {
    /// Files the run must have created (not seeded, there now).
    #[serde(default)]
    pub created: Vec<RelativePath>,
    /// Seeded files the run must have changed (content or kind).
    #[serde(default)]
    pub modified: Vec<RelativePath>,
    /// Seeded files the run must have removed.
    #[serde(default)]
    pub deleted: Vec<RelativePath>,
    /// Whether changes the lists do not name are allowed; by default they are
    /// not, so the lists describe the whole change.
    #[serde(default)]
    pub allow_other: bool,
}

/// How the finished workspace differs from the seeded files, by normalized path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Files (and links) there now that the case did not seed.
    pub created: BTreeSet<String>,
    /// Seeded files whose content changed, or that are no longer regular files.
    pub modified: BTreeSet<String>,
    /// Seeded files that are gone.
    pub deleted: BTreeSet<String>,
}

impl Grader for WorkspaceDiff {
    type Config = WorkspaceDiffConfig;
    const NAME: &'static str = "workspace_diff";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "The files created, modified and deleted since seeding are the listed ones";

    fn config_schema() -> serde_json::Value {
        let paths = |what: &str| serde_json::json!({"type": "array", "items": path_schema(), "description": what});
        serde_json::json!({
            "type": "object",
            "properties": {
                "created": paths("Files the run must create"),
                "modified": paths("Seeded files the run must change"),
                "deleted": paths("Seeded files the run must remove"),
                "allow_other": {"type": "boolean", "default": false, "description": "Allow changes the lists do not name"},
            },
            "additionalProperties": false,
        })
    }

    fn check(config: &WorkspaceDiffConfig) -> Result<(), String> {
        let mut seen: Vec<(String, &str)> = Vec::new();
        for (what, paths) in config.categories() {
            for path in paths {
                let path = normalize(path.as_str());
                if let Some((_, other)) = seen.iter().find(|(p, w)| *p == path && w != &what) {
                    return Err(format!("{path} is listed as both {other} and {what}"));
                }
                seen.push((path, what));
            }
        }
        Ok(())
    }

    fn grade(config: &WorkspaceDiffConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let diff = diff(&Workspace::require(evidence)?, &evidence.seeded_files)?;
        Ok(workspace_diff(config, &diff))
    }
}

impl WorkspaceDiffConfig {
    fn categories(&self) -> [(&'static str, &[RelativePath]); 3] {
        [
            ("created", &self.created),
            ("modified", &self.modified),
            ("deleted", &self.deleted),
        ]
    }
}

/// Compares the files in `workspace` with `seeded`.
pub fn diff(workspace: &Workspace, seeded: &[SeededFile]) -> io::Result<Diff> {
    let mut files = list_files(workspace)?;
    let mut diff = Diff::default();
    for file in seeded {
        let path = normalize(&file.path);
        match files.remove(&path) {
            None => {
                diff.deleted.insert(path);
            }
            Some(kind) => {
                if !unchanged(workspace, file, kind)? {
                    diff.modified.insert(path);
                }
            }
        }
    }
    diff.created = files.into_keys().collect();
    Ok(diff)
}

/// Passes when `diff` has every listed change and, unless `allow_other`, no other.
pub fn workspace_diff(config: &WorkspaceDiffConfig, diff: &Diff) -> Verdict {
    let actual = [&diff.created, &diff.modified, &diff.deleted];
    let mut problems = Vec::new();
    for ((what, paths), actual) in config.categories().into_iter().zip(actual) {
        let expected: BTreeSet<String> = paths.iter().map(|p| normalize(p.as_str())).collect();
        let show = |set: &BTreeSet<String>| list(set.iter().map(String::as_str));
        if !expected.is_subset(actual) {
            problems.push(format!(
                "{what} {} expected {}",
                show(actual),
                show(&expected)
            ));
        } else if !config.allow_other && expected != *actual {
            let other: BTreeSet<String> = actual.difference(&expected).cloned().collect();
            problems.push(format!("{what} {} not expected", show(&other)));
        }
    }
    Verdict::pass_if(problems.is_empty(), || {
        format!("{}: {}", WorkspaceDiff::NAME, problems.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beyond::walk::seeded;
    use crate::tests::{grade, invalid_config};

    /// A workspace seeded with README.md and notes/todo.md, then changed by "the run".
    fn run() -> (tempfile::TempDir, Evidence) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("notes")).unwrap();
        std::fs::write(dir.path().join("README.md"), "# Project\n").unwrap();
        std::fs::write(dir.path().join("keep.txt"), "same\n").unwrap();
        std::fs::write(dir.path().join("greeting.txt"), "hello\n").unwrap();
        let evidence = Evidence {
            workspace: dir.path().to_string_lossy().into_owned(),
            seeded_files: vec![
                seeded("README.md", "# Old\n"),
                seeded("keep.txt", "same\n"),
                seeded("notes/todo.md", "- a\n"),
            ],
            ..Evidence::default()
        };
        (dir, evidence)
    }

    #[test]
    fn the_diff_against_the_seeded_files() {
        let (_dir, ev) = run();
        let diff = diff(&Workspace::of(&ev), &ev.seeded_files).unwrap();
        let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            diff,
            Diff {
                created: set(&["greeting.txt"]),
                modified: set(&["README.md"]),
                deleted: set(&["notes/todo.md"]),
            }
        );
    }

    #[test]
    fn passes_when_the_lists_describe_the_change() {
        let (_dir, ev) = run();
        let exact = r#"{"created": ["greeting.txt"], "modified": ["./README.md"], "deleted": ["notes/todo.md"]}"#;
        assert_eq!(grade::<WorkspaceDiff>(exact, &ev), Verdict::pass());
        assert_eq!(
            grade::<WorkspaceDiff>(r#"{"created": ["greeting.txt"], "allow_other": true}"#, &ev),
            Verdict::pass()
        );
    }

    #[test]
    fn names_missing_and_unexpected_changes() {
        let (_dir, ev) = run();
        assert_eq!(
            grade::<WorkspaceDiff>(r#"{"created": ["greeting.txt"]}"#, &ev),
            Verdict::fail(
                "workspace_diff: modified [README.md] not expected; deleted [notes/todo.md] not expected"
            )
        );
        assert_eq!(
            grade::<WorkspaceDiff>(
                r#"{"created": [], "modified": ["keep.txt"], "deleted": ["notes/todo.md"]}"#,
                &ev
            ),
            Verdict::fail(
                "workspace_diff: created [greeting.txt] not expected; modified [README.md] expected [keep.txt]"
            )
        );
        assert_eq!(
            grade::<WorkspaceDiff>(r#"{"created": ["notes.md"], "allow_other": true}"#, &ev),
            Verdict::fail("workspace_diff: created [greeting.txt] expected [notes.md]")
        );
        assert_eq!(
            grade::<WorkspaceDiff>("{}", &ev),
            Verdict::fail(
                "workspace_diff: created [greeting.txt] not expected; modified [README.md] not expected; deleted [notes/todo.md] not expected"
            )
        );
    }

    #[test]
    fn configs_are_checked() {
        assert_eq!(
            invalid_config::<WorkspaceDiff>(r#"{"created": ["a"], "deleted": ["./a"]}"#),
            "a is listed as both created and deleted"
        );
        assert_eq!(
            invalid_config::<WorkspaceDiff>(r#"{"created": ["/etc/passwd"]}"#),
            r#"path "/etc/passwd" is absolute; write it relative to the workspace root"#
        );
        assert_eq!(
            invalid_config::<WorkspaceDiff>(r#"{"changed": []}"#),
            "unknown field `changed`, expected one of `created`, `modified`, `deleted`, `allow_other`"
        );
    }
}

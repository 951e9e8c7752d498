//! `no_todo_comments`: no TODO/FIXME comment left in the agent's workspace files.
//!
//! Config (optional): `{markers: [TODO, FIXME]}`.

use std::path::Path;

use evalhost_sdk::{Evidence, GradeError, Grader, Verdict, Workspace, message};
use serde::Deserialize;

/// Where a comment starts in the languages an agent usually writes.
const COMMENT_STARTS: [&str; 7] = ["#", "//", "/*", "*", "--", "<!--", ";"];

/// The grader.
pub struct NoTodoComments;

/// `{markers: [...]}`; `null` means the defaults.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_markers")]
    #[schemars(length(min = 1), inner(length(min = 1)))]
    markers: Vec<String>,
}

fn default_markers() -> Vec<String> {
    vec!["TODO".into(), "FIXME".into()]
}

impl Grader for NoTodoComments {
    type Config = Option<Config>;
    const NAME: &'static str = "no_todo_comments";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "No TODO/FIXME comment in the workspace files";

    fn config_schema() -> serde_json::Value {
        evalhost_sdk::config_schema_of::<Self>()
    }

    fn check(config: &Option<Config>) -> Result<(), String> {
        match config {
            Some(c) if c.markers.is_empty() || c.markers.iter().any(String::is_empty) => {
                Err("markers must be a non-empty list of non-empty strings".into())
            }
            _ => Ok(()),
        }
    }

    fn grade(config: &Option<Config>, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let markers = config
            .as_ref()
            .map_or_else(default_markers, |c| c.markers.clone());
        // A run read from a trace has no workspace: not evaluable, rather than a pass.
        let workspace = Workspace::require(evidence)?;
        let mut found = Vec::new();
        walk(workspace.root(), workspace.root(), &markers, &mut found)
            .map_err(|e| GradeError::Failed(format!("reading the workspace: {e}")))?;
        if found.is_empty() {
            // A message on a pass too: the report says what was checked.
            return Ok(Verdict::pass_with(format!(
                "{}: none of {} found in the workspace files",
                Self::NAME,
                markers.join(", ")
            )));
        }
        let shown: Vec<&str> = found.iter().take(5).map(String::as_str).collect();
        let more = match found.len() {
            0..=5 => String::new(),
            n => format!(" and {} more", n - 5),
        };
        Ok(Verdict::fail(format!(
            "{}: {} found: {}{more}",
            Self::NAME,
            found.len(),
            shown.join(", ")
        )))
    }

    fn describe(config: &Option<Config>) -> String {
        let markers = config
            .as_ref()
            .map_or_else(default_markers, |c| c.markers.clone());
        format!(
            "no comment in the workspace files mentions {}",
            markers.join(" or ")
        )
    }
}

/// Every `file:line "text"` below `dir` whose line has a marker inside a comment.
fn walk(
    root: &Path,
    dir: &Path,
    markers: &[String],
    found: &mut Vec<String>,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(root, &path, markers, found)?;
            continue;
        }
        // Binary files and files that are not UTF-8 have no comments to speak of.
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (number, line) in text.lines().enumerate() {
            if comment_with_marker(line, markers) {
                found.push(format!(
                    "{relative}:{} {}",
                    number + 1,
                    message::quote(line.trim())
                ));
            }
        }
    }
    Ok(())
}

fn comment_with_marker(line: &str, markers: &[String]) -> bool {
    COMMENT_STARTS.iter().any(|start| {
        line.find(start)
            .is_some_and(|at| markers.iter().any(|m| line[at..].contains(m.as_str())))
    })
}

evalhost_sdk::register_graders!(NoTodoComments);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_count_only_inside_comments() {
        let markers = default_markers();
        assert!(comment_with_marker("    # TODO: implement", &markers));
        assert!(comment_with_marker("x = 1  // FIXME later", &markers));
        assert!(!comment_with_marker("print(\"TODO list\")", &markers));
    }
}

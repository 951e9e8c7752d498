//! The agent's tools: their definitions, argument validation and execution.
//!
//! File tools are confined to the workspace with cap-std; bash runs in the workspace with a
//! timeout and an output cap, in its own process group. `skill_view` reads the workspace's
//! Agent Skills (`.agents/skills/<name>/SKILL.md`), each confined to its own folder; it is
//! offered when the workspace has `.agents/skills` at the session's start.

mod bash;
mod definitions;
mod files;
mod output;
mod skill_view;
pub(crate) mod skills;

use std::path::PathBuf;
use std::sync::Arc;

use cap_std::fs::Dir;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use definitions::definitions;

use super::Limits;
use super::paths::ToolPath;
use crate::session::CallStatus;

/// A tool the agent offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Bash,
    ReadFile,
    WriteFile,
    EditFile,
    ListFiles,
    SkillView,
}

impl Tool {
    /// Every tool, in the order they are offered.
    pub const ALL: [Tool; 6] = [
        Tool::Bash,
        Tool::ReadFile,
        Tool::WriteFile,
        Tool::EditFile,
        Tool::ListFiles,
        Tool::SkillView,
    ];

    /// The tools a session offers: `skill_view` only when it has skills to view (the
    /// workspace had `.agents/skills` when the session started).
    pub fn offered(skills: bool) -> impl Iterator<Item = Tool> {
        Tool::ALL
            .into_iter()
            .filter(move |tool| skills || *tool != Tool::SkillView)
    }

    /// The offered tool called `name`.
    pub fn from_name(name: &str, skills: bool) -> Option<Tool> {
        Tool::offered(skills).find(|tool| tool.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Tool::Bash => "bash",
            Tool::ReadFile => "read_file",
            Tool::WriteFile => "write_file",
            Tool::EditFile => "edit_file",
            Tool::ListFiles => "list_files",
            Tool::SkillView => "skill_view",
        }
    }

    /// Tools that change things need the user's confirmation; reading does not.
    pub fn needs_confirmation(self) -> bool {
        matches!(self, Tool::Bash | Tool::WriteFile | Tool::EditFile)
    }

    /// The argument shape, quoted back to the model when its arguments do not fit.
    fn usage(self) -> &'static str {
        match self {
            Tool::Bash => r#"{"command": string}"#,
            Tool::ReadFile => r#"{"path": string}"#,
            Tool::WriteFile => r#"{"path": string, "content": string}"#,
            Tool::EditFile => r#"{"path": string, "old_text": string, "new_text": string}"#,
            Tool::ListFiles => r#"{"path"?: string}"#,
            Tool::SkillView => r#"{"name"?: string, "file"?: string}"#,
        }
    }
}

/// A validated tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolCall {
    Bash {
        command: String,
    },
    ReadFile {
        path: String,
    },
    WriteFile {
        path: String,
        content: String,
    },
    EditFile {
        path: String,
        old_text: String,
        new_text: String,
    },
    ListFiles {
        path: Option<String>,
    },
    /// No name: list the skills; a name: its `SKILL.md`; a name and a file: that file.
    SkillView {
        name: Option<String>,
        file: Option<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BashArgs {
    command: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_text: String,
    new_text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillArgs {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    file: Option<String>,
}

impl SkillArgs {
    /// A `file` needs the skill it belongs to, and a name must be a skill name (which also
    /// keeps `/` and `..` out of the folder path).
    fn into_call(self) -> Result<ToolCall, String> {
        if self.name.is_none() && self.file.is_some() {
            return Err("`file` needs `name`, the skill it belongs to".to_owned());
        }
        if let Some(name) = &self.name {
            skills::check_name(name)?;
        }
        Ok(ToolCall::SkillView {
            name: self.name,
            file: self.file,
        })
    }
}

impl ToolCall {
    /// Validate `arguments` (JSON text) for `tool`; the error is the result text for the model.
    pub fn parse(tool: Tool, arguments: &str) -> Result<ToolCall, String> {
        let invalid = |reason: String| {
            format!(
                "Invalid arguments for `{}`: {reason}. Expected {}.",
                tool.name(),
                tool.usage()
            )
        };
        let trimmed = arguments.trim();
        // Some services send "" for a call without arguments.
        let value: Value = if trimmed.is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(trimmed).map_err(|e| invalid(format!("not valid JSON ({e})")))?
        };
        if !value.is_object() {
            return Err(invalid("the arguments must be a JSON object".to_owned()));
        }
        fn fields<T: DeserializeOwned>(value: Value) -> Result<T, String> {
            serde_json::from_value(value).map_err(|e| e.to_string())
        }
        let call = match tool {
            Tool::Bash => fields::<BashArgs>(value).map(|a| ToolCall::Bash { command: a.command }),
            Tool::ReadFile => {
                fields::<PathArgs>(value).map(|a| ToolCall::ReadFile { path: a.path })
            }
            Tool::WriteFile => fields::<WriteArgs>(value).map(|a| ToolCall::WriteFile {
                path: a.path,
                content: a.content,
            }),
            Tool::EditFile => fields::<EditArgs>(value).map(|a| ToolCall::EditFile {
                path: a.path,
                old_text: a.old_text,
                new_text: a.new_text,
            }),
            Tool::ListFiles => {
                fields::<ListArgs>(value).map(|a| ToolCall::ListFiles { path: a.path })
            }
            Tool::SkillView => fields::<SkillArgs>(value).and_then(SkillArgs::into_call),
        };
        call.map_err(invalid)
    }

    pub fn tool(&self) -> Tool {
        match self {
            ToolCall::Bash { .. } => Tool::Bash,
            ToolCall::ReadFile { .. } => Tool::ReadFile,
            ToolCall::WriteFile { .. } => Tool::WriteFile,
            ToolCall::EditFile { .. } => Tool::EditFile,
            ToolCall::ListFiles { .. } => Tool::ListFiles,
            ToolCall::SkillView { .. } => Tool::SkillView,
        }
    }

    /// The workspace path a file tool touches (`None` for bash), for the protected-path
    /// policy: for `skill_view`, the skill file it reads (or `.agents/skills` for the list).
    pub fn path(&self) -> Option<ToolPath> {
        match self {
            ToolCall::Bash { .. } => None,
            ToolCall::SkillView { name, file } => Some(ToolPath::parse(&match (name, file) {
                (None, _) => skills::SKILLS_DIR.to_owned(),
                (Some(name), None) => skills::skill_file_path(name),
                (Some(name), Some(file)) => format!("{}/{name}/{file}", skills::SKILLS_DIR),
            })),
            ToolCall::ReadFile { path }
            | ToolCall::WriteFile { path, .. }
            | ToolCall::EditFile { path, .. } => Some(ToolPath::parse(path)),
            ToolCall::ListFiles { path } => Some(ToolPath::parse(path.as_deref().unwrap_or(""))),
        }
    }

    /// Run the call. Policy and confirmation have already been applied.
    pub async fn execute(self, ctx: &ToolContext) -> ToolOutput {
        if let ToolCall::Bash { command } = &self {
            return bash::run(command, ctx).await;
        }
        if let ToolCall::SkillView { name, file } = self {
            // Listing reads every skill's SKILL.md (up to 256 of 32 KiB): on the blocking
            // pool, like a listing of files.
            let dir = Arc::clone(&ctx.dir);
            let cap = ctx.limits.output_cap;
            return tokio::task::spawn_blocking(move || {
                skill_view::view(&dir, name.as_deref(), file.as_deref(), cap)
            })
            .await
            .unwrap_or_else(|e| ToolOutput::failed(format!("The tool stopped unexpectedly: {e}")));
        }
        let Some(path) = self.path() else {
            return ToolOutput::failed("Internal error: a file tool call without a path.");
        };
        let relative = match path.relative() {
            Ok(relative) => relative,
            Err(message) => return ToolOutput::failed(message),
        };
        let cap = ctx.limits.output_cap;
        let target = files::Target {
            dir: &ctx.dir,
            relative: &relative,
            raw: &path.raw,
            scope: files::Scope::Workspace,
        };
        // Reads, writes and edits are bounded (the output cap, what the model sent, at most
        // `MAX_EDIT_BYTES`) and touch one file of the run's own workspace: they run right
        // here, as handing them to the blocking pool and back cost more than the call itself
        // (two thread wake-ups). A listing walks a tree of any size, so it runs on the
        // blocking pool, off the async workers that also serve the model endpoint.
        match self {
            ToolCall::ReadFile { .. } => files::read_file(&target, cap),
            ToolCall::WriteFile { content, .. } => files::write_file(&target, &content),
            ToolCall::EditFile {
                old_text, new_text, ..
            } => files::edit_file(&target, &old_text, &new_text),
            ToolCall::ListFiles { .. } => {
                let dir = Arc::clone(&ctx.dir);
                tokio::task::spawn_blocking(move || {
                    let target = files::Target {
                        dir: &dir,
                        relative: &relative,
                        raw: &path.raw,
                        scope: files::Scope::Workspace,
                    };
                    files::list_files(&target, cap)
                })
                .await
                .unwrap_or_else(|e| {
                    ToolOutput::failed(format!("The tool stopped unexpectedly: {e}"))
                })
            }
            ToolCall::Bash { .. } | ToolCall::SkillView { .. } => {
                ToolOutput::failed("Internal error: not a file tool.")
            }
        }
    }
}

/// What a tool call runs against.
#[derive(Debug, Clone)]
pub(crate) struct ToolContext {
    /// The workspace, opened once per turn; every file tool goes through it.
    pub dir: Arc<Dir>,
    /// The workspace path, for bash's working directory.
    pub workspace: PathBuf,
    /// `HOME` for bash.
    pub home: PathBuf,
    /// bash's `TMPDIR` and Landlock ruleset (`crate::confine`); `None`: unconfined.
    pub confinement: Option<Arc<crate::confine::RunConfinement>>,
    pub limits: Limits,
}

/// The outcome of a call: its status and the result text the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolOutput {
    pub status: CallStatus,
    pub output: String,
}

impl ToolOutput {
    pub fn new(status: CallStatus, output: impl Into<String>) -> Self {
        Self {
            status,
            output: output.into(),
        }
    }

    pub fn completed(output: impl Into<String>) -> Self {
        Self::new(CallStatus::Completed, output)
    }

    pub fn failed(output: impl Into<String>) -> Self {
        Self::new(CallStatus::Failed, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_arguments() {
        assert_eq!(
            ToolCall::parse(Tool::Bash, r#"{"command":"ls"}"#),
            Ok(ToolCall::Bash {
                command: "ls".into()
            })
        );
        assert_eq!(
            ToolCall::parse(Tool::ListFiles, ""),
            Ok(ToolCall::ListFiles { path: None })
        );
        for bad in [
            "{",
            "[]",
            "{}",
            r#"{"command":5}"#,
            r#"{"command":"ls","x":1}"#,
        ] {
            let error = ToolCall::parse(Tool::Bash, bad).unwrap_err();
            assert!(error.starts_with("Invalid arguments for `bash`"), "{error}");
        }
    }
}

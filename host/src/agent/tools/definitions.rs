//! The tool definitions sent in every request's `tools`.

use serde_json::json;

use super::Tool;
use crate::api::responses::wire::FunctionTool;

/// Function tool definitions of the tools a session offers, in order (`skill_view` only
/// with `skills`).
pub(crate) fn definitions(skills: bool) -> Vec<FunctionTool> {
    Tool::offered(skills).map(definition).collect()
}

fn string(description: &str) -> serde_json::Value {
    json!({"type": "string", "description": description})
}

fn object(properties: serde_json::Value, required: &[&str]) -> serde_json::Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn definition(tool: Tool) -> FunctionTool {
    let path = string("Path relative to the workspace root.");
    let (description, parameters) = match tool {
        Tool::Bash => (
            "Run a shell command with `bash -c` in the workspace directory. Stdout and stderr are combined and capped; the command is killed when it runs too long. Needs the user's approval.",
            object(
                json!({"command": string("The command to run.")}),
                &["command"],
            ),
        ),
        Tool::ReadFile => (
            "Read a text file in the workspace.",
            object(json!({"path": path}), &["path"]),
        ),
        Tool::WriteFile => (
            "Create or overwrite a file in the workspace with the given content; missing parent directories are created. Needs the user's approval.",
            object(
                json!({"path": path, "content": string("The complete new file content.")}),
                &["path", "content"],
            ),
        ),
        Tool::EditFile => (
            "Replace old_text with new_text in a workspace file. old_text must occur exactly once in the file. Needs the user's approval.",
            object(
                json!({
                    "path": path,
                    "old_text": string("Exact text to replace; must occur exactly once."),
                    "new_text": string("Replacement text."),
                }),
                &["path", "old_text", "new_text"],
            ),
        ),
        Tool::ListFiles => (
            "List files and directories under a workspace directory, recursively. Directories end in `/`.",
            object(
                json!({"path": string("Directory relative to the workspace root; defaults to the root.")}),
                &[],
            ),
        ),
        Tool::SkillView => (
            "Skills are instructions for particular tasks, in `.agents/skills/<name>/SKILL.md`. Without arguments, list the skills (name and description); with `name`, read that skill's SKILL.md; with `name` and `file`, read another file of that skill (a path relative to its folder). Read a skill before doing a task it describes.",
            object(
                json!({
                    "name": string("The skill's name, as listed."),
                    "file": string("A file of the skill, relative to its folder, e.g. `scripts/check.sh`; needs `name`."),
                }),
                &[],
            ),
        ),
    };
    FunctionTool::new(tool.name(), description, parameters)
}

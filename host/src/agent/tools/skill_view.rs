//! `skill_view`: list the workspace's skills, read one skill's `SKILL.md`, or read another
//! file of that skill, confined to the skill's folder by a cap-std handle on it.

use cap_std::fs::Dir;

use super::ToolOutput;
use super::files::{self, Scope, Target};
use super::output::{truncate, with_note};
use super::skills::{self, SKILLS_DIR};
use crate::agent::paths::ToolPath;
use crate::session::CallStatus;

/// Without `name`, the list of skills; with `name`, its `SKILL.md`; with `file` too, that
/// file of the skill. A skill that cannot be loaded is a failed call saying why.
pub(super) fn view(
    workspace: &Dir,
    name: Option<&str>,
    file: Option<&str>,
    cap: usize,
) -> ToolOutput {
    let Some(name) = name else {
        return list(workspace, cap);
    };
    if !workspace
        .metadata(skills::skill_dir(name))
        .is_ok_and(|meta| meta.is_dir())
    {
        return ToolOutput::failed(missing(workspace, name));
    }
    let skill = match skills::load(workspace, name) {
        Ok(skill) => skill,
        Err(message) => {
            return ToolOutput::failed(format!(
                "Skill `{name}` cannot be loaded: {}: {message}",
                skills::skill_file_path(name)
            ));
        }
    };
    match file {
        None => capped(skill.text, cap),
        Some(file) => read_skill_file(workspace, name, file, cap),
    }
}

fn read_skill_file(workspace: &Dir, name: &str, file: &str, cap: usize) -> ToolOutput {
    let folder = format!("{SKILLS_DIR}/{name}/");
    let path = ToolPath::parse(file);
    if path.absolute {
        return ToolOutput::failed(format!(
            "File `{file}` is outside the skill `{name}`: absolute paths are not allowed; give a path relative to `{folder}`."
        ));
    }
    if path.escapes {
        return ToolOutput::failed(format!(
            "File `{file}` is outside the skill `{name}`: `..` climbs above `{folder}`."
        ));
    }
    let relative = match path.relative() {
        Ok(relative) => relative,
        Err(message) => return ToolOutput::failed(message),
    };
    // A handle on the skill's folder: cap-std refuses any path or symlink leading out of it.
    let dir = match workspace.open_dir(skills::skill_dir(name)) {
        Ok(dir) => dir,
        Err(e) => {
            return ToolOutput::failed(format!("Cannot open the skill folder `{folder}`: {e}."));
        }
    };
    files::read_file(
        &Target {
            dir: &dir,
            relative: &relative,
            raw: file,
            scope: Scope::Skill(name),
        },
        cap,
    )
}

/// The text for a skill name with no folder: what there is instead.
fn missing(workspace: &Dir, name: &str) -> String {
    let known = skills::scan(workspace)
        .map(|scan| scan.skills.into_iter().map(|s| s.name).collect::<Vec<_>>())
        .unwrap_or_default();
    if known.is_empty() {
        format!("No skill `{name}`: there are no skills in `{SKILLS_DIR}`.")
    } else {
        format!(
            "No skill `{name}` in `{SKILLS_DIR}`. Skills: {}.",
            known.join(", ")
        )
    }
}

fn list(workspace: &Dir, cap: usize) -> ToolOutput {
    let Some(scan) = skills::scan(workspace) else {
        return ToolOutput::completed(format!(
            "No skills: the workspace has no `{SKILLS_DIR}` directory."
        ));
    };
    let mut text = String::new();
    match scan.skills.len() {
        0 => text.push_str(&format!("No skills in `{SKILLS_DIR}`.\n")),
        n => {
            let noun = if n == 1 { "skill" } else { "skills" };
            text.push_str(&format!("{n} {noun} in `{SKILLS_DIR}`:\n"));
            for skill in &scan.skills {
                // One line each: a folded description may hold line breaks.
                let description = skill.description.split_whitespace().collect::<Vec<_>>();
                text.push_str(&format!("- {}: {}\n", skill.name, description.join(" ")));
            }
        }
    }
    if !scan.problems.is_empty() {
        text.push_str("Not loaded:\n");
        for problem in &scan.problems {
            text.push_str(&format!("- {}: {}\n", problem.path, problem.message));
        }
    }
    if !scan.skills.is_empty() {
        text.push_str(
            "Read a skill with skill_view {\"name\": NAME}, and a file of it with {\"name\": NAME, \"file\": PATH}.\n",
        );
    }
    capped(text, cap)
}

/// `text` as a completed result, or cut at the output cap with a note.
fn capped(mut text: String, cap: usize) -> ToolOutput {
    if text.len() <= cap {
        return ToolOutput::completed(text);
    }
    truncate(&mut text, cap);
    ToolOutput::new(
        CallStatus::OutputLimit,
        with_note(
            text,
            &format!("output truncated: the text exceeds the {cap}-byte limit"),
        ),
    )
}

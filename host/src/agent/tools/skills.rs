//! Agent Skills in the workspace: `.agents/skills/<name>/SKILL.md`, YAML front matter with
//! `name` and `description`, then the instructions; other files of the folder are the
//! skill's own. Reading goes through cap-std, so a skill folder or `SKILL.md` that leads
//! outside the workspace (a symlink, `..`) is refused by the directory handle itself.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::case::yaml::{self, Value};
use crate::session::{SkillProblem, SkillSummary};
use crate::workspace_read::{self, Capped, Kind, ReadError};

/// Where skills live, relative to the workspace root.
pub(crate) const SKILLS_DIR: &str = ".agents/skills";

/// The file that makes a folder a skill.
pub(crate) const SKILL_FILE: &str = "SKILL.md";

/// Largest `SKILL.md` loaded (the Agent Skills guidance is under 5,000 tokens).
pub(crate) const MAX_SKILL_BYTES: u64 = 32 * 1024;

/// Most skill folders looked at; the rest are reported as one problem.
pub(crate) const MAX_SKILLS: usize = 256;

/// Longest `name` (Agent Skills specification).
const MAX_NAME_CHARS: usize = 64;

/// Longest `description` (Agent Skills specification).
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The skills of a workspace, as a scan found them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Valid skills, in folder-name order.
    pub skills: Vec<SkillSummary>,
    /// Folders that could not be loaded, in folder-name order.
    pub problems: Vec<SkillProblem>,
}

/// A loaded skill: its summary and the text of its `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    pub summary: SkillSummary,
    pub text: String,
}

/// `.agents/skills/<name>`.
pub(crate) fn skill_dir(name: &str) -> PathBuf {
    Path::new(SKILLS_DIR).join(name)
}

/// `.agents/skills/<name>/SKILL.md`, as written in messages and records.
pub(crate) fn skill_file_path(name: &str) -> String {
    format!("{SKILLS_DIR}/{name}/{SKILL_FILE}")
}

/// Whether the workspace has a `.agents/skills` directory (symlinks inside the workspace
/// followed).
pub(crate) fn has_skills_dir(workspace: &Dir) -> bool {
    workspace
        .metadata(SKILLS_DIR)
        .is_ok_and(|meta| meta.is_dir())
}

/// Every skill folder of the workspace, loaded; `None` when there is no `.agents/skills`
/// directory. Entries that are not directories are not skills and are passed over.
pub(crate) fn scan(workspace: &Dir) -> Option<Scan> {
    if !has_skills_dir(workspace) {
        return None;
    }
    let mut scan = Scan::default();
    let mut names = match folder_names(workspace) {
        Ok(names) => names,
        Err(e) => {
            scan.problems.push(SkillProblem {
                path: SKILLS_DIR.to_owned(),
                message: format!("cannot be listed: {e}"),
            });
            return Some(scan);
        }
    };
    if names.len() > MAX_SKILLS {
        scan.problems.push(SkillProblem {
            path: SKILLS_DIR.to_owned(),
            message: format!(
                "holds {} skill folders; only the first {MAX_SKILLS} (in name order) are loaded",
                names.len()
            ),
        });
        names.truncate(MAX_SKILLS);
    }
    for name in names {
        match load(workspace, &name) {
            Ok(skill) => scan.skills.push(skill.summary),
            Err(message) => scan.problems.push(SkillProblem {
                path: skill_file_path(&name),
                message,
            }),
        }
    }
    Some(scan)
}

/// The names of the folders in `.agents/skills`, sorted: directories, and symlinks that
/// do not lead to a file (a symlinked folder inside the workspace loads; one leading outside
/// it, or nowhere, fails to load, saying why). Names that are not UTF-8 are shown lossily
/// and then fail to load.
fn folder_names(workspace: &Dir) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in workspace.read_dir(SKILLS_DIR)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        let folder = kind.is_dir()
            || (kind.is_symlink()
                && !workspace
                    .metadata(Path::new(SKILLS_DIR).join(&name))
                    .is_ok_and(|meta| meta.is_file()));
        if folder {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// Load the skill in folder `name`: its `SKILL.md`, checked. `Err` says what is wrong, in
/// words for the model and the session log (without the path, which the caller knows).
pub(crate) fn load(workspace: &Dir, name: &str) -> Result<Skill, String> {
    let path = skill_dir(name).join(SKILL_FILE);
    // Without blocking, and checked after opening: a FIFO named SKILL.md is reported.
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    workspace_read::nonblocking(&mut options);
    let file = workspace
        .open_with(&path, &options)
        .map_err(|e| open_failure(&e))?;
    match workspace_read::check_regular(&file) {
        Ok(_) => {}
        Err(ReadError::NotRegular(Kind::Dir)) => {
            return Err("is a directory; a skill's SKILL.md must be a file".to_owned());
        }
        Err(ReadError::NotRegular(kind)) => {
            return Err(format!(
                "is {}; a skill's SKILL.md must be a file",
                kind.describe()
            ));
        }
        Err(e) => return Err(format!("cannot be read: {e}")),
    }
    let Capped { bytes, over } =
        workspace_read::read_capped(file, MAX_SKILL_BYTES).map_err(|e| open_failure(&e))?;
    if over {
        return Err(format!(
            "is larger than {MAX_SKILL_BYTES} bytes (32 KiB), the most a SKILL.md may be; move details into other files of the skill"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())?;
    let summary = front_matter(&text, name)?;
    Ok(Skill { summary, text })
}

fn open_failure(error: &io::Error) -> String {
    if error.to_string().contains("a path led outside") {
        return "leads outside the workspace (through a symlink or `..`)".to_owned();
    }
    match error.kind() {
        io::ErrorKind::NotFound => "is missing: a skill folder needs a SKILL.md".to_owned(),
        _ => format!("cannot be read: {error}"),
    }
}

/// The `name` and `description` of `SKILL.md`'s front matter, checked against the Agent
/// Skills rules and the folder name. Other fields (`license`, `metadata`, ...) are allowed.
fn front_matter(text: &str, folder: &str) -> Result<SkillSummary, String> {
    const SHAPE: &str = "a SKILL.md starts with a `---` line, then `name:` and `description:`, then a closing `---` line";
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(format!("has no front matter: {SHAPE}"));
    }
    let start = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut end = None;
    let mut offset = start;
    for line in lines {
        if line.trim_end() == "---" {
            end = Some(offset);
            break;
        }
        offset += line.len();
    }
    let Some(end) = end else {
        return Err(format!(
            "the front matter is not closed: no `---` line after the first; {SHAPE}"
        ));
    };
    let source = &text[start..end];
    // Front matter line N is line N + 1 of the file.
    let root = yaml::parse_document(source).map_err(|e| {
        let line = if e.line == 0 { 0 } else { e.line + 1 };
        at(line, &e.message)
    })?;
    let Value::Map(entries) = &root.value else {
        if matches!(root.value, Value::Null) {
            return Err(format!("the front matter is empty; {SHAPE}"));
        }
        return Err(at(
            root.line + 1,
            &format!(
                "the front matter must be a map with `name` and `description`, found {}",
                root.value.kind()
            ),
        ));
    };
    let field = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| matches!(&k.value, Value::String(s) if s == key))
            .map(|(_, v)| v)
    };
    let text_of = |key: &str| -> Result<(String, usize), String> {
        let Some(node) = field(key).filter(|n| !matches!(n.value, Value::Null)) else {
            return Err(format!("the front matter has no `{key}`; {SHAPE}"));
        };
        // A number or boolean is taken as written (`name: 2026`), as in case files.
        node.scalar_text(source)
            .map(|text| (text, node.line + 1))
            .ok_or_else(|| {
                at(
                    node.line + 1,
                    &format!("`{key}` must be a string, found {}", node.value.kind()),
                )
            })
    };
    let (name, name_line) = text_of("name")?;
    check_name(&name).map_err(|reason| at(name_line, &reason))?;
    if name != folder {
        return Err(at(
            name_line,
            &format!("name {name:?} does not match the skill's folder name {folder:?}"),
        ));
    }
    let (description, description_line) = text_of("description")?;
    let description = description.trim().to_owned();
    if description.is_empty() {
        return Err(at(description_line, "`description` is empty"));
    }
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(at(
            description_line,
            &format!("`description` is {chars} characters; at most {MAX_DESCRIPTION_CHARS}"),
        ));
    }
    Ok(SkillSummary { name, description })
}

fn at(line: usize, message: &str) -> String {
    if line == 0 {
        message.to_owned()
    } else {
        format!("line {line}: {message}")
    }
}

/// `Err` saying why `name` is not a skill name: 1 to 64 lowercase ASCII letters, digits and
/// hyphens, not starting or ending with a hyphen, without `--` (Agent Skills specification).
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    const RULE: &str = "a skill name is 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen, without `--`";
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if valid {
        Ok(())
    } else {
        Err(format!("{name:?} is not a valid skill name: {RULE}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(text: &str) -> Result<SkillSummary, String> {
        front_matter(text, "deploy")
    }

    #[test]
    fn reads_name_and_description() {
        let text = "---\nname: deploy\ndescription: >\n  Deploy to staging.\nlicense: MIT\nmetadata: {a: b}\n---\n# Deploy\n";
        assert_eq!(
            summary(text),
            Ok(SkillSummary {
                name: "deploy".into(),
                description: "Deploy to staging.".into()
            })
        );
        let crlf = "\u{feff}---\r\nname: deploy\r\ndescription: x\r\n---\r\nbody";
        assert_eq!(summary(crlf).map(|s| s.description), Ok("x".into()));
    }

    #[test]
    fn says_what_is_wrong() {
        let cases = [
            ("# Deploy\n", "has no front matter"),
            ("---\nname: deploy\n", "the front matter is not closed"),
            ("---\n---\n", "the front matter is empty"),
            ("---\n- a\n---\n", "line 2: the front matter must be a map"),
            (
                "---\ndescription: x\n---\n",
                "the front matter has no `name`",
            ),
            (
                "---\nname: deploy\n---\n",
                "the front matter has no `description`",
            ),
            (
                "---\nname: deploy\ndescription:\n---\n",
                "has no `description`",
            ),
            (
                "---\nname: [a]\ndescription: x\n---\n",
                "line 2: `name` must be a string, found a list",
            ),
            (
                "---\nname: Deploy\ndescription: x\n---\n",
                "line 2: \"Deploy\" is not a valid skill name",
            ),
            (
                "---\nname: release\ndescription: x\n---\n",
                "line 2: name \"release\" does not match the skill's folder name \"deploy\"",
            ),
            (
                "---\nname: deploy\ndescription: \"  \"\n---\n",
                "line 3: `description` is empty",
            ),
            ("---\nname: deploy\ndescription: [\n---\n", "invalid YAML"),
        ];
        for (text, expected) in cases {
            let error = summary(text).unwrap_err();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
        let long = format!(
            "---\nname: deploy\ndescription: {}\n---\n",
            "x".repeat(1025)
        );
        assert_eq!(
            summary(&long).unwrap_err(),
            "line 3: `description` is 1025 characters; at most 1024"
        );
    }

    #[test]
    fn checks_names_by_the_specification() {
        for good in ["a", "pdf-processing", "v2", &"a".repeat(64)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "a/b",
            "..",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}

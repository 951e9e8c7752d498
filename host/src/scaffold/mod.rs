//! `evalhost grader new`: a grader project that builds as it stands with its language's
//! own tool, from templates compiled into the binary (`host/templates/`).
//!
//! Every project holds a `build.sh` that builds `grader.wasm` beside itself, a README
//! saying how, an example case using the grader by path, and (except Rust, whose SDK
//! carries it) a copy of the grader WIT. Every language targets the newest WIT, 0.5.0:
//! `describe`, the run's evidence handed over once (`begin-run`, then `grade-in-run` per
//! entry), a message on a pass as on a fail; `--judge` keeps the template's judge sections
//! (`sections.rs`) instead of the plain ones, so both variants are one text.

mod sections;
mod templates;

use std::path::{Path, PathBuf};

pub use templates::Lang;

/// The grader WIT new projects target: the newest, 0.5.0 (the Rust SDK's too).
pub const WIT: &str = include_str!("../../../wit/since_v0.5.0/grader.wit");

/// Longest project name.
const MAX_NAME: usize = 64;

/// What to scaffold.
#[derive(Debug, Clone)]
pub struct ScaffoldOptions {
    /// Project (directory) name, kebab-case, e.g. `no-secrets`; the grader is named the
    /// same in snake_case (`no_secrets`).
    pub name: String,
    /// Language of the project.
    pub lang: Lang,
    /// Directory the project directory is created in.
    pub parent: PathBuf,
    /// Path of the `evalhost-sdk` crate (Rust only), as the project's Cargo.toml names it.
    pub sdk: Option<PathBuf>,
    /// Scaffold a grader that asks the judge (a rubric scored by the judge model).
    pub judge: bool,
}

/// Why a project could not be scaffolded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScaffoldError {
    /// The name is not kebab-case.
    #[error(
        "invalid grader name `{0}`: use 1 to {MAX_NAME} lowercase letters, digits and `-`, starting with a letter (e.g. `no-secrets`)"
    )]
    InvalidName(String),
    /// The target directory exists.
    #[error("`{}` already exists; pick another name or remove it", .0.display())]
    Exists(PathBuf),
    /// A Rust project needs the SDK's path.
    #[error(
        "a Rust grader depends on the evalhost-sdk crate: pass its path with --sdk (the `sdk/` directory of the evalhost repository)"
    )]
    NoSdk,
    /// Writing a file failed.
    #[error("failed to write `{}`: {error}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// The grader name (snake_case) of a project name (kebab-case).
pub fn grader_name(project: &str) -> String {
    project.replace('-', "_")
}

/// Create the project; returns its directory and the files written, relative to it.
pub fn scaffold(options: &ScaffoldOptions) -> Result<(PathBuf, Vec<String>), ScaffoldError> {
    let name = &options.name;
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if !valid {
        return Err(ScaffoldError::InvalidName(name.clone()));
    }
    let dir = options.parent.join(name);
    if dir.exists() {
        return Err(ScaffoldError::Exists(dir));
    }
    let sdk = match (options.lang, &options.sdk) {
        (Lang::Rust, Some(sdk)) => sdk_path(sdk),
        (Lang::Rust, None) => return Err(ScaffoldError::NoSdk),
        _ => String::new(),
    };
    let grader = grader_name(name);
    let fill = |text: &str| {
        text.replace("{{project}}", name)
            .replace("{{name}}", &grader)
            .replace("{{crate}}", &grader)
            .replace("{{sdk}}", &sdk)
    };
    let mut written = Vec::new();
    for (path, template) in templates::files(options.lang) {
        write(
            &dir,
            path,
            &fill(&sections::select(template, &flags(options))),
        )?;
        written.push(path.to_owned());
    }
    if options.lang != Lang::Rust {
        write(&dir, "wit/grader.wit", WIT)?;
        written.push("wit/grader.wit".to_owned());
    }
    Ok((dir, written))
}

/// The flags whose template sections a project keeps: its language, and `judge`.
fn flags(options: &ScaffoldOptions) -> Vec<&'static str> {
    let mut flags = vec![options.lang.as_str()];
    if options.judge {
        flags.push("judge");
    }
    flags
}

/// The SDK path as the new project's Cargo.toml names it: absolute, so the project can be
/// moved anywhere on this machine.
fn sdk_path(sdk: &Path) -> String {
    std::path::absolute(sdk)
        .unwrap_or_else(|_| sdk.to_owned())
        .display()
        .to_string()
}

fn write(dir: &Path, relative: &str, text: &str) -> Result<(), ScaffoldError> {
    let path = dir.join(relative);
    let error = |source| ScaffoldError::Write {
        path: path.clone(),
        error: source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(error)?;
    }
    std::fs::write(&path, text).map_err(error)?;
    if relative.ends_with(".sh") {
        set_executable(&path).map_err(error)?;
    }
    Ok(())
}

#[cfg(unix)]
fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(name: &str, lang: Lang, parent: &Path) -> ScaffoldOptions {
        ScaffoldOptions {
            name: name.into(),
            lang,
            parent: parent.into(),
            judge: false,
            sdk: Some(parent.join("sdk")),
        }
    }

    #[test]
    fn every_template_marks_its_sections_well() {
        for lang in Lang::ALL {
            for (path, template) in templates::files(lang) {
                let problems = sections::problems(template);
                assert!(problems.is_empty(), "{lang:?} {path}: {problems:?}");
            }
        }
    }

    #[test]
    fn every_language_gets_build_sh_readme_and_a_case_in_both_variants() {
        let dir = tempfile::tempdir().unwrap();
        for lang in Lang::ALL {
            for judge in [false, true] {
                let name = format!(
                    "my-check-{}{}",
                    lang.as_str(),
                    if judge { "-j" } else { "" }
                );
                let grader = grader_name(&name);
                let (project, files) = scaffold(&ScaffoldOptions {
                    judge,
                    ..options(&name, lang, dir.path())
                })
                .unwrap();
                for file in ["build.sh", "README.md", ".gitignore", "cases/example.yaml"] {
                    assert!(files.iter().any(|f| f == file), "{lang:?}: {files:?}");
                    assert!(project.join(file).is_file(), "{lang:?}: {file}");
                }
                for file in &files {
                    let text = std::fs::read_to_string(project.join(file)).unwrap();
                    assert!(
                        !text.contains("{{"),
                        "{lang:?} judge={judge} {file} has a placeholder or marker left"
                    );
                }
                let case = std::fs::read_to_string(project.join("cases/example.yaml")).unwrap();
                assert!(
                    case.contains(&format!("../grader.wasm#{grader}:")),
                    "{case}"
                );
                assert_eq!(case.contains("judge: true"), judge, "{case}");
                // The README speaks of this language and variant only, and points at what
                // ships with evalhost, not at a web address.
                let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
                assert_eq!(
                    readme.contains("## Try it\n\nThe example case grants the judge"),
                    judge
                );
                assert!(
                    readme.contains("It targets the newest grader WIT, 0.5.0"),
                    "{readme}"
                );
                assert_eq!(readme.matches("\nNeeds ").count(), 1, "{lang:?}: {readme}");
                assert!(!readme.contains("](http"), "{lang:?}: {readme}");
                assert!(
                    readme.contains(
                        "`evalhost grader --help` lists the grader tools (`new`, `check`, `test`);\n\
                         `docs/writing-graders.md`, shipped with evalhost's sources"
                    ),
                    "{lang:?}: {readme}"
                );
            }
        }
    }

    #[test]
    fn every_project_but_rust_carries_the_newest_wit() {
        let dir = tempfile::tempdir().unwrap();
        assert!(WIT.contains("package evalhost:grader@0.5.0;"));
        for lang in Lang::ALL {
            let (project, files) =
                scaffold(&options(&format!("w-{}", lang.as_str()), lang, dir.path())).unwrap();
            let wit = std::fs::read_to_string(project.join("wit/grader.wit"));
            match lang {
                Lang::Rust => assert!(wit.is_err() && !files.iter().any(|f| f.starts_with("wit/"))),
                _ => assert_eq!(wit.unwrap(), WIT, "{lang:?}"),
            }
        }
    }

    #[test]
    fn the_judge_variant_asks_the_judge_and_the_plain_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        for (lang, source, asks) in [
            (Lang::Rust, "src/lib.rs", "judge::ask_verdict("),
            (Lang::Python, "app.py", "judge.ask(question)"),
            (
                Lang::Js,
                "grader.js",
                "from \"evalhost:grader/judge@0.5.0\"",
            ),
            (Lang::C, "grader.c", "evalhost_grader_judge_ask("),
        ] {
            for judge in [false, true] {
                let name = format!("ask-{}{}", lang.as_str(), if judge { "-j" } else { "" });
                let (project, _) = scaffold(&ScaffoldOptions {
                    judge,
                    ..options(&name, lang, dir.path())
                })
                .unwrap();
                let text = std::fs::read_to_string(project.join(source)).unwrap();
                assert_eq!(
                    text.contains(asks),
                    judge,
                    "{lang:?} judge={judge}:\n{text}"
                );
            }
        }
    }

    #[test]
    fn bad_names_and_existing_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "My", "9lives", "a_b", "x-", "a/b", &"a".repeat(65)] {
            let error = scaffold(&options(bad, Lang::Python, dir.path())).unwrap_err();
            assert!(matches!(error, ScaffoldError::InvalidName(_)), "{bad}");
        }
        scaffold(&options("twice", Lang::Js, dir.path())).unwrap();
        let error = scaffold(&options("twice", Lang::Js, dir.path())).unwrap_err();
        assert!(error.to_string().contains("already exists"), "{error}");
        let mut rust = options("no-sdk", Lang::Rust, dir.path());
        rust.sdk = None;
        assert!(matches!(scaffold(&rust), Err(ScaffoldError::NoSdk)));
    }
}

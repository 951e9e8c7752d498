//! `evalhost grader new`: a grader project that builds as it stands with its language's
//! own tool, from templates compiled into the binary (`host/templates/<lang>/`).
//!
//! Every project holds a `build.sh` that builds `grader.wasm` beside itself, a README
//! saying how, an example case using the grader by path, and (except Rust, whose SDK
//! carries it) a copy of the grader WIT.

mod templates;

use std::path::{Path, PathBuf};

pub use templates::Lang;

/// The grader WIT new projects target: the first released version, which every host loads.
pub const WIT: &str = include_str!("../../../wit/since_v0.1.0/grader.wit");

/// The grader WIT of Python and JavaScript projects that ask the judge (`--judge`): 0.4.0, the
/// newest without `begin-run`/`grade-in-run` (the judge import came with 0.3.0). A Rust
/// project targets the SDK's WIT, 0.5.0, whose exports the SDK implements.
pub(crate) const JUDGE_WIT: &str = include_str!("../../../wit/since_v0.4.0/grader.wit");

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
    /// Scaffold a grader that asks the judge (a rubric scored by the judge model; WIT 0.4.0).
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
    /// The language has no judge scaffold.
    #[error(
        "--judge scaffolds a grader in rust, python or js; a C grader can ask the judge through wit/since_v0.4.0 by hand"
    )]
    NoJudge,
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
    if options.judge && options.lang == Lang::C {
        return Err(ScaffoldError::NoJudge);
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
    for (path, text) in templates::files(options.lang, options.judge) {
        write(&dir, path, &fill(&text))?;
        written.push(path.to_owned());
    }
    if options.lang != Lang::Rust {
        write(
            &dir,
            "wit/grader.wit",
            if options.judge { JUDGE_WIT } else { WIT },
        )?;
        written.push("wit/grader.wit".to_owned());
    }
    Ok((dir, written))
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
    fn every_language_gets_build_sh_readme_and_a_case() {
        let dir = tempfile::tempdir().unwrap();
        for lang in Lang::ALL {
            let name = format!("my-check-{}", lang.as_str());
            let (project, files) = scaffold(&options(&name, lang, dir.path())).unwrap();
            for file in ["build.sh", "README.md", ".gitignore", "cases/example.yaml"] {
                assert!(files.iter().any(|f| f == file), "{lang:?}: {files:?}");
                assert!(project.join(file).is_file(), "{lang:?}: {file}");
            }
            for file in &files {
                let text = std::fs::read_to_string(project.join(file)).unwrap();
                assert!(
                    !text.contains("{{"),
                    "{lang:?} {file} has a placeholder left"
                );
            }
            let case = std::fs::read_to_string(project.join("cases/example.yaml")).unwrap();
            assert!(
                case.contains(&format!("../grader.wasm#my_check_{}:", lang.as_str())),
                "{case}"
            );
            // The README points at what ships with evalhost, not at a web address.
            let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
            assert!(!readme.contains("http"), "{lang:?}: {readme}");
            assert!(
                readme.contains(
                    "`evalhost grader --help` lists the grader tools (`new`, `check`, `test`);\n\
                     `docs/writing-graders.md`, shipped with evalhost's sources"
                ),
                "{lang:?}: {readme}"
            );
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

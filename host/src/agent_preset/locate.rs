//! Finding the installed agents before a suite runs: a configured path (`[agents]` in
//! `evalhost.toml` or the user's config, `EVALHOST_AGENT_<NAME>`) or the program on `PATH`;
//! then each agent's version, asked once.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Preset;
use crate::config::{ConfigError, ConfigSources};

/// How long `--version` may take (mini-swe-agent's `--help` imports a few modules).
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Configured agent programs, each with where it was configured (a file or a variable).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentPaths(pub BTreeMap<Preset, (PathBuf, String)>);

impl AgentPaths {
    /// The configured agent programs of the presets (`docs/agents.md`): `[agents]` in the
    /// user's file, then the project's `evalhost.toml` (a relative path is relative to its
    /// file), then `EVALHOST_AGENT_<NAME>` (e.g. `EVALHOST_AGENT_CLAUDE_CODE`).
    pub fn from_config(sources: &ConfigSources) -> Result<Self, ConfigError> {
        let mut paths = AgentPaths::default();
        for (file, table) in sources.agent_tables()? {
            let dir = file.parent().unwrap_or(Path::new(""));
            for (name, program) in table {
                let preset: Preset = name.parse().map_err(|e| ConfigError::Parse {
                    path: file.clone(),
                    message: format!("[agents]: {e}"),
                })?;
                paths
                    .0
                    .insert(preset, (dir.join(program), file.display().to_string()));
            }
        }
        for preset in Preset::ALL {
            let var = preset.env_var();
            if let Some(value) = sources.env_var(&var) {
                paths.0.insert(preset, (PathBuf::from(value), var));
            }
        }
        Ok(paths)
    }
}

/// An agent found and asked its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledAgent {
    /// The agent.
    pub preset: Preset,
    /// Its program's full path (configured, else found on `PATH`).
    pub program: PathBuf,
    /// The version the agent reports (`0.171.0`).
    pub version: String,
}

/// The agents a suite uses, found before any run.
#[derive(Debug, Clone, Default)]
pub struct InstalledAgents(pub BTreeMap<Preset, InstalledAgent>);

impl InstalledAgents {
    /// The agent of `preset`, when the suite uses it and it was found.
    pub fn get(&self, preset: Preset) -> Option<&InstalledAgent> {
        self.0.get(&preset)
    }
}

/// Why an agent cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PresetError {
    /// The agent's program is on no directory of `PATH`, and no path was configured for it.
    #[error(
        "agent `{preset}`: `{program}` is not on PATH; install it with `{install}`, or set its path with `[agents] {preset} = \"/path/to/{program}\"` in evalhost.toml or {env}",
        program = preset.program(),
        install = preset.install_command(),
        env = preset.env_var()
    )]
    NotOnPath {
        /// The agent.
        preset: Preset,
    },
    /// The configured path of the agent's program is not an executable file.
    #[error(
        "agent `{preset}`: `{path}` ({origin}) is not an executable file; install it with `{install}`",
        path = path.display(),
        install = preset.install_command()
    )]
    NotExecutable {
        /// The agent.
        preset: Preset,
        /// The configured path.
        path: PathBuf,
        /// Where it was configured: `EVALHOST_AGENT_<NAME>`, or the configuration file.
        origin: String,
    },
    /// Asking the agent its version failed.
    #[error(
        "agent `{preset}`: `{program} {args}` failed: {message}",
        program = program.display(),
        args = preset.version_args().join(" ")
    )]
    Version {
        /// The agent.
        preset: Preset,
        /// The program asked.
        program: PathBuf,
        /// What went wrong: it did not start, did not answer in time, exited with an error,
        /// or printed no version.
        message: String,
    },
}

/// Find every preset in `presets` and ask its version, concurrently; every problem is
/// reported, in preset order.
pub(crate) fn locate_all(
    presets: impl IntoIterator<Item = Preset>,
    paths: &AgentPaths,
    path_var: Option<&OsStr>,
) -> Result<InstalledAgents, Vec<PresetError>> {
    let presets: std::collections::BTreeSet<Preset> = presets.into_iter().collect();
    let results: Vec<Result<InstalledAgent, PresetError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = presets
            .iter()
            .map(|&preset| scope.spawn(move || locate(preset, paths, path_var)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a version query does not panic"))
            .collect()
    });
    let mut found = BTreeMap::new();
    let mut problems = Vec::new();
    for result in results {
        match result {
            Ok(agent) => {
                found.insert(agent.preset, agent);
            }
            Err(e) => problems.push(e),
        }
    }
    if problems.is_empty() {
        Ok(InstalledAgents(found))
    } else {
        Err(problems)
    }
}

fn locate(
    preset: Preset,
    paths: &AgentPaths,
    path_var: Option<&OsStr>,
) -> Result<InstalledAgent, PresetError> {
    let program = match paths.0.get(&preset) {
        Some((path, origin)) => {
            if !is_executable(path) {
                return Err(PresetError::NotExecutable {
                    preset,
                    path: path.clone(),
                    origin: origin.clone(),
                });
            }
            path.clone()
        }
        None => on_path(preset.program(), path_var).ok_or(PresetError::NotOnPath { preset })?,
    };
    let version = version(preset, &program).map_err(|message| PresetError::Version {
        preset,
        program: program.clone(),
        message,
    })?;
    Ok(InstalledAgent {
        preset,
        program,
        version,
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` in the directories of `path_var`.
fn on_path(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Ask the agent its version, with a clean environment and an empty HOME (no config of the
/// user's is read, nothing is written to the user's HOME). Some agents print it on stderr
/// (pi), so both are read.
fn version(preset: Preset, program: &Path) -> Result<String, String> {
    let home = tempfile::tempdir().map_err(|e| format!("no temp HOME: {e}"))?;
    let mut child = Command::new(program)
        .args(preset.version_args())
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > VERSION_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no answer in {} s", VERSION_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = format!(
        "{}\n{}",
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default()
    );
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    parse_version(&output).ok_or_else(|| format!("no version in its output: {:?}", output.trim()))
}

/// The first word that looks like a version (`0.171.0` in `codex-cli 0.171.0`, `2.1.332`
/// in `2.1.332 (Claude Code)`, `2.4.6` in `This is mini-swe-agent version 2.4.6.`).
pub(super) fn parse_version(output: &str) -> Option<String> {
    output.split_whitespace().find_map(|word| {
        let word = word
            .trim_start_matches('v')
            .trim_end_matches(['.', ',', ')']);
        let looks = word.starts_with(|c: char| c.is_ascii_digit())
            && word.contains('.')
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
        looks.then(|| word.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_paths_come_from_files_then_the_environment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("evalhost.toml");
        std::fs::write(
            &project,
            "[agents]\ncodex = \"bin/codex\"\npi = \"/opt/pi\"\n",
        )
        .expect("write");
        let mut sources = ConfigSources {
            user_file: None,
            project_file: Some(project.clone()),
            env: Default::default(),
        };
        sources
            .env
            .insert("EVALHOST_AGENT_PI".into(), "/usr/local/bin/pi".into());
        let paths = AgentPaths::from_config(&sources).expect("valid");
        assert_eq!(
            paths.0[&Preset::Codex],
            (dir.path().join("bin/codex"), project.display().to_string())
        );
        assert_eq!(
            paths.0[&Preset::Pi],
            ("/usr/local/bin/pi".into(), "EVALHOST_AGENT_PI".to_owned())
        );
        std::fs::write(&project, "[agents]\ncursor = \"x\"\n").expect("write");
        let error = AgentPaths::from_config(&sources)
            .expect_err("unknown")
            .to_string();
        assert!(
            error.ends_with("[agents]: unknown agent preset `cursor` (known: codex, claude-code, pi, mini-swe-agent, gemini-cli)"),
            "{error}"
        );
    }

    #[test]
    fn versions_are_read_from_each_agent_s_output() {
        assert_eq!(
            parse_version("codex-cli 0.171.0\n").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(
            parse_version("2.1.332 (Claude Code)\n").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(parse_version("0.73.1\n").as_deref(), Some("0.73.1"));
        assert_eq!(
            parse_version("This is mini-swe-agent version 2.4.6.\nCheck the v2 guide").as_deref(),
            Some("2.4.6")
        );
        assert_eq!(parse_version("usage: x"), None);
    }

    #[test]
    fn a_missing_agent_says_how_to_install_it() {
        let error = locate_all(
            [Preset::Pi],
            &AgentPaths::default(),
            Some(OsStr::new("/nonexistent")),
        )
        .unwrap_err();
        assert_eq!(
            error[0].to_string(),
            "agent `pi`: `pi` is not on PATH; install it with `npm install -g @mariozechner/pi-coding-agent@0.73.1`, or set its path with `[agents] pi = \"/path/to/pi\"` in evalhost.toml or EVALHOST_AGENT_PI"
        );
        let mut paths = AgentPaths::default();
        paths.0.insert(
            Preset::Codex,
            ("/no/codex".into(), "EVALHOST_AGENT_CODEX".into()),
        );
        let error = locate_all([Preset::Codex], &paths, None).unwrap_err();
        assert_eq!(
            error[0].to_string(),
            "agent `codex`: `/no/codex` (EVALHOST_AGENT_CODEX) is not an executable file; install it with `npm install -g @openai/codex@0.171.0`"
        );
    }
}

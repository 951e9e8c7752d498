//! Presets: the real agents people ship (Codex CLI, Claude Code, pi, mini-swe-agent, Gemini
//! CLI), run unchanged against a run's loopback model endpoint, non-interactively and offline
//! (`agent: {preset: NAME}` in a case, `evalhost run --agent NAME`).
//!
//! Each agent's knowledge is one file: the command line, the environment and the config
//! files it needs in the run's HOME to talk to the endpoint in its own dialect with no other
//! traffic, how the case's `approve` maps onto its permission setting, how its tool results
//! say a command failed, and how to install it. `locate.rs` finds the installed agents and
//! asks their versions once per suite (`docs/agents.md`).

mod claude_code;
mod codex;
mod gemini_cli;
mod locate;
mod mini_swe_agent;
mod pi;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

#[cfg(feature = "run")]
pub(crate) use locate::{AgentPaths, locate_all};
pub use locate::{InstalledAgent, InstalledAgents, PresetError};

use crate::session::Approve;

/// An agent evalhost knows how to run (serialized by its name, [`Preset::as_str`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// OpenAI's Codex CLI (`codex exec`), OpenAI Responses.
    Codex,
    /// Anthropic's Claude Code (`claude -p`), Anthropic Messages.
    ClaudeCode,
    /// Mario Zechner's pi coding agent (`pi -p`), OpenAI Responses.
    Pi,
    /// mini-swe-agent (`mini`), Chat Completions through LiteLLM.
    MiniSweAgent,
    /// Google's Gemini CLI (`gemini -p`), the Gemini API.
    GeminiCli,
}

impl Preset {
    /// Every preset, in the order docs and messages list them.
    pub const ALL: [Preset; 5] = [
        Preset::Codex,
        Preset::ClaudeCode,
        Preset::Pi,
        Preset::MiniSweAgent,
        Preset::GeminiCli,
    ];

    /// The name in case files, `--agent`, `[agents]` and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Codex => "codex",
            Preset::ClaudeCode => "claude-code",
            Preset::Pi => "pi",
            Preset::MiniSweAgent => "mini-swe-agent",
            Preset::GeminiCli => "gemini-cli",
        }
    }

    /// The program looked up on `PATH`.
    pub fn program(self) -> &'static str {
        match self {
            Preset::Codex => "codex",
            Preset::ClaudeCode => "claude",
            Preset::Pi => "pi",
            Preset::MiniSweAgent => "mini",
            Preset::GeminiCli => "gemini",
        }
    }

    /// The command that installs the pinned version evalhost is tested with.
    pub(crate) fn install_command(self) -> &'static str {
        match self {
            Preset::Codex => codex::INSTALL,
            Preset::ClaudeCode => claude_code::INSTALL,
            Preset::Pi => pi::INSTALL,
            Preset::MiniSweAgent => mini_swe_agent::INSTALL,
            Preset::GeminiCli => gemini_cli::INSTALL,
        }
    }

    /// The environment variable that names the agent's program (`EVALHOST_AGENT_CODEX`, ...).
    pub(crate) fn env_var(self) -> String {
        format!(
            "EVALHOST_AGENT_{}",
            self.as_str().to_ascii_uppercase().replace('-', "_")
        )
    }

    /// The arguments that make the program print its version.
    fn version_args(self) -> &'static [&'static str] {
        match self {
            // `mini --version` is not an option; its help starts with the version.
            Preset::MiniSweAgent => &["--help"],
            _ => &["--version"],
        }
    }

    /// How to start the agent for one run: the program, its arguments and environment, and
    /// the standard input it reads. Writes the config files the agent reads into the run's
    /// HOME.
    pub(crate) fn launch(self, run: &RunContext<'_>) -> std::io::Result<Launch> {
        match self {
            Preset::Codex => codex::launch(run),
            Preset::ClaudeCode => claude_code::launch(run),
            Preset::Pi => pi::launch(run),
            Preset::MiniSweAgent => mini_swe_agent::launch(run),
            Preset::GeminiCli => gemini_cli::launch(run),
        }
    }

    /// How a run's container gets the agent when it runs in one (docs/environments.md):
    /// mounted read-only from the host. Codex's static binary and Claude Code's (which needs
    /// only glibc) run in any Linux image; pi and Gemini CLI, Node.js programs, run with the
    /// host's `node` mounted beside their package (the image needs glibc and libstdc++);
    /// mini-swe-agent, a Python program, is the image's own `mini`.
    pub(crate) fn in_container(self, installed: &Path) -> InContainer {
        let mounted = match self {
            Preset::Codex => codex::native_binary(installed).map(|(host, inside, program)| {
                InContainer::Mounted {
                    mounts: vec![(host, inside)],
                    program,
                    args: Vec::new(),
                }
            }),
            Preset::ClaudeCode => {
                claude_code::native_binary(installed).map(|(host, inside, program)| {
                    InContainer::Mounted {
                        mounts: vec![(host, inside)],
                        program,
                        args: Vec::new(),
                    }
                })
            }
            Preset::Pi | Preset::GeminiCli => node_package(self, installed),
            Preset::MiniSweAgent => None,
        };
        mounted.unwrap_or(InContainer::OnImagePath(self.program()))
    }

    /// Whether the agent's own sandbox works inside evalhost's confinement. Codex's does not:
    /// it runs commands under bubblewrap, which needs mounts that Landlock forbids; a
    /// confined Codex runs without it, and evalhost makes the workspace read-only for
    /// `approve: none` instead.
    pub(crate) fn sandbox_nests(self) -> bool {
        !matches!(self, Preset::Codex)
    }

    /// Whether a tool result the agent sent back says the call failed, beyond what its
    /// dialect marks (Anthropic's `is_error`): a non-zero exit code in the result's text.
    pub(crate) fn result_failed(self, output: &str) -> bool {
        match self {
            Preset::Codex => codex::result_failed(output),
            Preset::ClaudeCode => false,
            Preset::Pi => pi::result_failed(output),
            Preset::MiniSweAgent => mini_swe_agent::result_failed(output),
            Preset::GeminiCli => gemini_cli::result_failed(output),
        }
    }

    /// The agent's refusal of every call of its last answer, when `request` (the next model
    /// request, as JSON) says it ran none of them and carries no result for them:
    /// mini-swe-agent answers calls it cannot parse (a missing `command`, another tool) with
    /// a user message `Tool call error: ...` in their place.
    pub(crate) fn calls_refused(self, request: &serde_json::Value) -> Option<String> {
        match self {
            Preset::MiniSweAgent => mini_swe_agent::calls_refused(request),
            Preset::Codex | Preset::ClaudeCode | Preset::Pi | Preset::GeminiCli => None,
        }
    }

    /// The file in the run's HOME where the agent leaves its own final answer, if it leaves
    /// one there (mini-swe-agent's trajectory, whose `info.submission` is what it submitted).
    pub(crate) fn final_text_file(self) -> Option<&'static str> {
        match self {
            Preset::MiniSweAgent => Some(mini_swe_agent::TRAJECTORY),
            Preset::Codex | Preset::ClaudeCode | Preset::Pi | Preset::GeminiCli => None,
        }
    }

    /// The agent's final answer in the contents of its [`Preset::final_text_file`]; `None`
    /// when it left none (the run's final text is then the last text the model answered).
    pub(crate) fn final_text(self, file: &[u8]) -> Option<String> {
        match self {
            Preset::MiniSweAgent => mini_swe_agent::submission(file),
            Preset::Codex | Preset::ClaudeCode | Preset::Pi | Preset::GeminiCli => None,
        }
    }

    /// Whether a line of the agent's tool results differs from run to run (Codex's
    /// `Chunk ID: ...`, `Wall time: ...`): a recording never expects it again.
    pub(crate) fn volatile_result_line(self, line: &str) -> bool {
        match self {
            Preset::Codex => codex::volatile_result_line(line),
            Preset::GeminiCli => gemini_cli::volatile_result_line(line),
            Preset::ClaudeCode | Preset::Pi | Preset::MiniSweAgent => false,
        }
    }
}

/// How a run's container gets a preset's agent ([`Preset::in_container`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InContainer {
    /// Each `(host, inside)` (a file or directory) mounted read-only; `program` is run with
    /// `args` before the preset's own.
    Mounted {
        mounts: Vec<(PathBuf, String)>,
        program: String,
        args: Vec<String>,
    },
    /// The image's own program of this name.
    OnImagePath(&'static str),
}

/// Where the host's `node` is mounted in a run's container.
const NODE_INSIDE: &str = "/opt/evalhost/node/bin/node";

/// A Node.js agent installed as an npm package (`installed` a link to its script): the host's
/// `node` (on `PATH`) and the package directory (the script's nearest one with a
/// `package.json`) mounted, the script run by that `node`.
fn node_package(preset: Preset, installed: &Path) -> Option<InContainer> {
    let script = std::fs::canonicalize(installed).ok()?;
    let package = script
        .ancestors()
        .skip(1)
        .find(|dir| dir.join("package.json").is_file())?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let node = std::fs::canonicalize(crate::on_path::find(&path, "node")?).ok()?;
    let inside = format!("/opt/evalhost/{}", preset.as_str());
    let relative = script.strip_prefix(package).ok()?;
    Some(InContainer::Mounted {
        mounts: vec![
            (node, NODE_INSIDE.to_owned()),
            (package.to_path_buf(), inside.clone()),
        ],
        program: NODE_INSIDE.to_owned(),
        args: vec![format!("{inside}/{}", relative.display())],
    })
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown preset name; the message lists the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown agent preset `{0}` (known: {known})", known = known_names())]
pub struct UnknownPreset(pub String);

fn known_names() -> String {
    Preset::ALL.map(Preset::as_str).join(", ")
}

impl FromStr for Preset {
    type Err = UnknownPreset;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| UnknownPreset(name.to_owned()))
    }
}

/// What a preset needs to know about the run it starts the agent for.
pub(crate) struct RunContext<'a> {
    /// The agent's program, as located before the suite started.
    pub program: &'a Path,
    /// The case's `args`, appended to the preset's own.
    pub args: &'a [String],
    pub prompt: &'a str,
    pub approve: Approve,
    /// The run's HOME, where config files go.
    pub home: &'a Path,
    /// The base URL of the run's endpoint for OpenAI clients (they append `/responses`).
    pub openai_base_url: &'a str,
    /// The model name the agent asks for (`scripted` in replay).
    pub model: &'a str,
    /// Whether evalhost confines the agent's processes with Landlock (`crate::confine`): an
    /// agent whose own sandbox cannot run inside it ([`Preset::sandbox_nests`]) leaves
    /// enforcing `approve` to evalhost.
    pub confined: bool,
}

/// How to start an agent: evalhost adds `PATH`, `HOME` and the endpoint variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Variables set on top of evalhost's own.
    pub env: Vec<(String, String)>,
    /// Written to the agent's standard input, which is then closed.
    pub stdin: String,
}

/// Write `text` to `home/relative`, creating its directories.
fn write_home_file(home: &Path, relative: &str, text: &str) -> std::io::Result<()> {
    let path = home.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, text)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Pairs of static names and values as owned environment entries.
fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The exit code in a line `PREFIX N` (the last such line), if any.
fn exit_code_after(output: &str, prefix: &str) -> Option<i64> {
    output
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix(prefix)?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_known() {
        for preset in Preset::ALL {
            assert_eq!(preset.as_str().parse::<Preset>(), Ok(preset));
        }
        assert_eq!(
            "cursor".parse::<Preset>().unwrap_err().to_string(),
            "unknown agent preset `cursor` (known: codex, claude-code, pi, mini-swe-agent, gemini-cli)"
        );
        assert_eq!(Preset::ClaudeCode.env_var(), "EVALHOST_AGENT_CLAUDE_CODE");
    }

    #[test]
    fn each_agent_s_failed_commands_are_failed_results() {
        let codex = "Chunk ID: 4fffcb\nWall time: 0.0898 seconds\nProcess exited with code 2\nOriginal token count: 15\nOutput:\nls: cannot access\n";
        assert!(Preset::Codex.result_failed(codex));
        assert!(!Preset::Codex.result_failed(&codex.replace("code 2", "code 0")));
        let pi = "ls: cannot access '/nonexistent'\n\n\nCommand exited with code 2";
        assert!(Preset::Pi.result_failed(pi));
        assert!(!Preset::Pi.result_failed("(no output)"));
        assert!(Preset::Pi.result_failed("Tool bash not found"));
        let mini = "{\n  \"returncode\": 2,\n  \"output\": \"ls: cannot access\"\n}";
        assert!(Preset::MiniSweAgent.result_failed(mini));
        assert!(!Preset::MiniSweAgent.result_failed("{\"returncode\": 0, \"output\": \"\"}"));
        assert!(!Preset::ClaudeCode.result_failed("Exit code 2"));
        let gemini = "<untrusted_context>\nOutput: ls: cannot access\nExit Code: 2\nProcess Group PGID: 15647\n</untrusted_context>";
        assert!(Preset::GeminiCli.result_failed(gemini));
        assert!(!Preset::GeminiCli.result_failed(&gemini.replace("Exit Code: 2\n", "")));
    }
}

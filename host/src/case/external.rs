//! The `agent:` field of a case: an external agent run instead of evalhost's own agent
//! loop, talking to evalhost's loopback model endpoint: a program (`command:`) or a preset
//! of a real agent (`preset:`, [`crate::agent_preset`]).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::MAX_TIMEOUT_SECS;
use crate::agent_preset::Preset;

/// An external agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExternalAgent {
    /// A program and its arguments (`agent: {command: [...]}`, `--agent-cmd`).
    Command {
        /// Program and arguments (no shell); the program is looked up on `PATH` and started
        /// in the run's workspace.
        command: Vec<String>,
        /// How the prompt reaches the program.
        prompt: PromptVia,
    },
    /// A real agent evalhost knows how to run (`agent: {preset: NAME}`, `--agent NAME`).
    Preset {
        /// Which agent.
        preset: Preset,
        /// Appended to the preset's own arguments.
        args: Vec<String>,
    },
    /// The task's own solution as the agent (`--agent oracle`, as Harbor's oracle agent):
    /// `bash /solution/solve.sh` in the run's container, the case's `solution` directory
    /// copied to `/solution` first. It proves a task solvable; it sends no model request.
    Oracle,
}

/// Where the oracle's solution is in the container.
pub const ORACLE_SOLUTION_DIR: &str = "/solution";
/// What the oracle runs (with `bash`) in the container.
pub const ORACLE_SCRIPT: &str = "/solution/solve.sh";

// The `agent:` field as written, and its part of the case format (`format.rs`). Its
// `timeout_secs` is the case's run timeout, spelled where it was before the case-level
// `timeout_secs` existed.
/// An external agent: a program (`command`) or a preset of a real agent (`preset`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Agent")]
pub(super) struct AgentField {
    /// Program and arguments (no shell), started in the run's workspace.
    #[schemars(length(min = 1))]
    command: Option<Vec<String>>,
    /// A real agent evalhost runs against the endpoint (docs/agents.md).
    #[schemars(with = "Option<PresetName>")]
    preset: Option<String>,
    /// A preset's extra arguments, appended to its own.
    args: Option<Vec<String>>,
    /// How the prompt reaches a `command` (default `stdin`).
    prompt: Option<PromptVia>,
    /// The case's run timeout, in its older place: the same as the case's `timeout_secs`
    /// (give one or the other).
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SECS))]
    timeout_secs: Option<f64>,
}

/// The name of an agent preset ([`Preset::ALL`]).
struct PresetName;

impl JsonSchema for PresetName {
    fn schema_name() -> Cow<'static, str> {
        "PresetName".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The agent presets (`crate::agent_preset::Preset`).",
            "enum": Preset::ALL.map(Preset::as_str),
            "type": "string",
        })
    }
}

/// How an external agent receives the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromptVia {
    /// On standard input, which is then closed.
    #[default]
    Stdin,
    /// As the last command-line argument (stdin is empty).
    Arg,
}

const SHAPES: &str = "{command: [PROGRAM, ARGS...], prompt: stdin|arg} or {preset: NAME, args: [ARGS...]}, each with an optional timeout_secs: N";

impl ExternalAgent {
    /// Validate the `agent:` value (as JSON): the agent, and the run timeout it gives
    /// (`timeout_secs`), if any. The error is the message for the field.
    pub(crate) fn from_json(value: serde_json::Value) -> Result<(Self, Option<f64>), String> {
        let field: AgentField =
            serde_json::from_value(value).map_err(|e| format!("{e} (expected {SHAPES})"))?;
        let agent = match (field.command, field.preset) {
            (Some(command), None) => {
                if field.args.is_some() {
                    return Err(
                        "args: belongs to a preset; put a command's arguments in `command`"
                            .to_owned(),
                    );
                }
                if command.first().is_none_or(|p| p.is_empty()) {
                    return Err("command: must name a program: [PROGRAM, ARGS...]".to_owned());
                }
                Self::Command {
                    command,
                    prompt: field.prompt.unwrap_or_default(),
                }
            }
            (None, Some(name)) => {
                if field.prompt.is_some() {
                    return Err("prompt: a preset passes the prompt the way its agent reads it; drop `prompt`".to_owned());
                }
                Self::Preset {
                    preset: name.parse().map_err(|e| format!("preset: {e}"))?,
                    args: field.args.unwrap_or_default(),
                }
            }
            (Some(_), Some(_)) => {
                return Err(format!(
                    "give `command` or `preset`, not both (expected {SHAPES})"
                ));
            }
            (None, None) => {
                return Err(format!("missing `command` or `preset` (expected {SHAPES})"));
            }
        };
        let timeout = field
            .timeout_secs
            .map(|secs| super::check_timeout_secs(secs).map_err(|m| format!("timeout_secs: {m}")))
            .transpose()?;
        Ok((agent, timeout))
    }

    /// The agent `--agent-cmd CMD` names: `sh -c CMD`, the prompt on stdin.
    pub fn shell(command: &str) -> Self {
        Self::Command {
            command: vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()],
            prompt: PromptVia::Stdin,
        }
    }

    /// The directories of the files a command agent names by absolute path (its program,
    /// its script, an adapter): a confined run may read them, wherever they are, so an agent
    /// kept in a project under the user's home still starts. Nothing for a preset.
    ///
    /// A shell command line among the arguments (`--agent-cmd 'python3 /x/agent.py'`, `sh -c
    /// ...`) is split into its words, which count too.
    pub(crate) fn program_dirs(&self) -> Vec<std::path::PathBuf> {
        let Self::Command { command, .. } = self else {
            return Vec::new();
        };
        let words: Vec<String> = command
            .iter()
            .flat_map(|arg| {
                let mut words = vec![arg.clone()];
                if arg.contains(char::is_whitespace) {
                    words.extend(shlex::split(arg).unwrap_or_default());
                }
                words
            })
            .collect();
        words
            .iter()
            .map(std::path::Path::new)
            .filter(|path| path.is_absolute())
            .filter_map(|path| match std::fs::metadata(path) {
                Ok(meta) if meta.is_dir() => Some(path.to_owned()),
                Ok(_) => path.parent().map(std::path::Path::to_owned),
                Err(_) => None,
            })
            .collect()
    }

    /// The preset this agent runs, if it is one.
    pub fn preset(&self) -> Option<Preset> {
        match self {
            Self::Preset { preset, .. } => Some(*preset),
            Self::Command { .. } | Self::Oracle => None,
        }
    }

    /// The agent in a note: `preset codex`, `command python3 agent.py`.
    pub fn describe(&self) -> String {
        match self {
            Self::Preset { preset, .. } => format!("preset {preset}"),
            Self::Command { command, .. } => format!("command {}", command.join(" ")),
            Self::Oracle => "oracle (the task's solution/solve.sh)".to_owned(),
        }
    }

    /// A command agent with the files it names beside its case file, in directory `dir`, made
    /// absolute: the program when it is a relative path (`./agent.sh`, `bin/agent`; a bare name
    /// is looked up on `PATH`), and each later argument that is a relative path naming an
    /// existing regular file there (`my_agent.py`; an argument starting with `-` never is).
    /// The program starts in the run's workspace, where such a path would name nothing; a
    /// word naming no file beside the case stays as written (a file the case seeds into the
    /// workspace, say). A preset is unchanged.
    pub(crate) fn beside(self, dir: &std::path::Path) -> Self {
        let Self::Command { command, prompt } = self else {
            return self;
        };
        let command = command
            .into_iter()
            .enumerate()
            .map(|(index, word)| {
                let path = std::path::Path::new(&word);
                let relative = !word.is_empty() && !word.starts_with('-') && path.is_relative();
                let named = index != 0 || word.contains('/');
                // `./agent.sh` names `DIR/agent.sh`: `.` components dropped.
                let beside: std::path::PathBuf = dir.join(path).components().collect();
                if relative && named && beside.is_file() {
                    beside.display().to_string()
                } else {
                    word
                }
            })
            .collect();
        Self::Command { command, prompt }
    }
}

/// What running another agent in a case did ([`crate::case::Case::run_agent_instead`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replaced {
    /// The case ran evalhost's own agent; it now runs the given one.
    OwnAgent,
    /// The case names this agent already (the same preset: its `args` kept); nothing changed.
    Same,
    /// The case named another agent (described: `preset codex`), which the given one replaced.
    CasesAgent(String),
    /// No agent runs in this case (a recorded session, or an AgentCompany fixture replaying
    /// its recorded tool results); nothing changed.
    NoAgent,
}

impl super::Case {
    /// Run `agent` in this case instead of the agent it would run (`--agent`, `--agent-cmd`):
    /// evalhost's own, or the one the case's `agent:` names, which the command line
    /// overrides. A case running the same preset keeps its own `args`.
    pub fn run_agent_instead(&mut self, agent: &ExternalAgent) -> Replaced {
        use super::Execution;
        let replaced = match &self.execution {
            Execution::Agent => Replaced::OwnAgent,
            Execution::External(own)
                if own.preset().is_some() && own.preset() == agent.preset() =>
            {
                return Replaced::Same;
            }
            Execution::External(own) if own == agent => return Replaced::Same,
            Execution::External(own) => Replaced::CasesAgent(own.describe()),
            Execution::ReplayTools(_) | Execution::Recorded(_) | Execution::Traced(_) => {
                return Replaced::NoAgent;
            }
        };
        self.execution = Execution::External(agent.clone());
        replaced
    }

    /// The case's command agent with the files it names beside the case file made absolute
    /// ([`ExternalAgent::beside`]). Loading calls it after the case's digest is taken, so the
    /// digest does not depend on where the case file is.
    pub(crate) fn resolve_agent_files(&mut self) {
        let super::Execution::External(agent) = &self.execution else {
            return;
        };
        if agent.preset().is_some() {
            return;
        }
        let dir = self
            .path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let Ok(dir) = std::path::absolute(dir) else {
            return;
        };
        self.execution = super::Execution::External(agent.clone().beside(&dir));
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::case::{Execution, ExternalAgent, PromptVia, parse_case};

    const CASE: &str =
        "name: ext\nprompt: Go.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n";

    #[test]
    fn an_agent_cmd_line_names_its_script_dir_and_relative_words_name_none() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("my agent.py");
        std::fs::write(&script, "").unwrap();
        let line = format!("python3 '{}' --fast", script.display());
        assert_eq!(ExternalAgent::shell(&line).program_dirs(), vec![dir.path()]);
        assert!(
            ExternalAgent::shell("python3 agent.py")
                .program_dirs()
                .is_empty()
        );
    }

    #[test]
    fn the_agent_field_parses_with_defaults() {
        let yaml = format!("{CASE}agent: {{command: [python3, a.py]}}\n");
        let case = parse_case(Path::new("ext.yaml"), &yaml).unwrap();
        assert_eq!(
            case.execution,
            Execution::External(ExternalAgent::Command {
                command: vec!["python3".into(), "a.py".into()],
                prompt: PromptVia::Stdin,
            })
        );
        assert_eq!(case.timeout_secs, None);
    }

    #[test]
    fn a_preset_parses_with_its_args() {
        let yaml =
            format!("{CASE}agent: {{preset: codex, args: [--disable, goals], timeout_secs: 90}}\n");
        let case = parse_case(Path::new("ext.yaml"), &yaml).unwrap();
        assert_eq!(
            case.execution,
            Execution::External(ExternalAgent::Preset {
                preset: crate::agent_preset::Preset::Codex,
                args: vec!["--disable".into(), "goals".into()],
            })
        );
        assert_eq!(case.timeout_secs, Some(90.0));
    }

    #[test]
    fn the_agents_timeout_is_the_cases_run_timeout_given_once() {
        let yaml = format!("{CASE}agent: {{command: [x], timeout_secs: 20}}\n");
        let case = parse_case(Path::new("ext.yaml"), &yaml).unwrap();
        assert_eq!(case.timeout_secs, Some(20.0));
        let yaml = format!("{CASE}timeout_secs: 0.5\nagent: {{command: [x]}}\n");
        let case = parse_case(Path::new("ext.yaml"), &yaml).unwrap();
        assert_eq!(case.timeout_secs, Some(0.5));
        let yaml = format!("{CASE}timeout_secs: 5\nagent: {{command: [x], timeout_secs: 20}}\n");
        let err = parse_case(Path::new("ext.yaml"), &yaml)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "ext.yaml:8:8: agent.timeout_secs: the run timeout is given twice; keep the case's `timeout_secs` and drop this one"
        );
    }

    #[test]
    fn a_command_names_the_files_beside_its_case_file_by_absolute_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("my_agent.py"), "").unwrap();
        std::fs::create_dir(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/agent"), "").unwrap();
        std::fs::write(dir.path().join("python3"), "").unwrap();
        let command = |words: &[&str]| ExternalAgent::Command {
            command: words.iter().map(|w| w.to_string()).collect(),
            prompt: PromptVia::Stdin,
        };
        let beside = |name: &str| dir.path().join(name).display().to_string();
        // The script beside the case; the interpreter named bare stays a PATH lookup even
        // with a file of that name there; a flag, a missing file and a directory stay.
        assert_eq!(
            command(&["python3", "my_agent.py", "--fast", "seeded.txt", "bin"]).beside(dir.path()),
            ExternalAgent::Command {
                command: vec![
                    "python3".into(),
                    beside("my_agent.py"),
                    "--fast".into(),
                    "seeded.txt".into(),
                    "bin".into(),
                ],
                prompt: PromptVia::Stdin,
            }
        );
        // A program given as a relative path.
        assert_eq!(
            command(&["bin/agent"]).beside(dir.path()),
            command(&[&beside("bin/agent")])
        );
        assert_eq!(
            command(&["./my_agent.py"]).beside(dir.path()),
            command(&[&beside("my_agent.py")])
        );
    }

    #[test]
    fn bad_agent_fields_are_located_errors() {
        for (agent, message) in [
            ("{command: []}", "command: must name a program"),
            (
                "{command: [x], timeout_secs: 0}",
                "timeout_secs: must be more than 0 and at most 3600 seconds, found 0",
            ),
            ("{command: [x], prompt: file}", "unknown variant `file`"),
            ("{command: [x], extra: 1}", "unknown field `extra`"),
            (
                "{preset: cursor}",
                "preset: unknown agent preset `cursor` (known: codex, claude-code, pi, mini-swe-agent, gemini-cli)",
            ),
            (
                "{preset: pi, command: [x]}",
                "give `command` or `preset`, not both",
            ),
            (
                "{preset: pi, prompt: arg}",
                "prompt: a preset passes the prompt",
            ),
            ("{command: [x], args: [y]}", "args: belongs to a preset"),
            ("{timeout_secs: 3}", "missing `command` or `preset`"),
        ] {
            let yaml = format!("{CASE}agent: {agent}\n");
            let err = parse_case(Path::new("ext.yaml"), &yaml)
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("ext.yaml:7:8: agent: "), "{err}");
            assert!(err.contains(message), "{err}");
        }
    }
}

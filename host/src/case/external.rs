//! The `agent:` field of a case: an external agent program run instead of evalhost's own
//! agent loop, talking to evalhost's loopback model endpoint.

use serde::Deserialize;

/// Default time an external agent may take, in seconds.
pub const DEFAULT_AGENT_TIMEOUT_SECS: u64 = 300;
/// Longest `timeout_secs` accepted.
pub const MAX_AGENT_TIMEOUT_SECS: u64 = 3600;

/// An external agent command.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalAgent {
    /// Program and arguments (no shell); the program is looked up on `PATH` and started in
    /// the run's workspace.
    pub command: Vec<String>,
    /// How the prompt reaches the program.
    #[serde(default)]
    pub prompt: PromptVia,
    /// The program is killed (its whole process group) after this many seconds.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

/// How an external agent receives the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptVia {
    /// On standard input, which is then closed.
    #[default]
    Stdin,
    /// As the last command-line argument (stdin is empty).
    Arg,
}

fn default_timeout() -> u64 {
    DEFAULT_AGENT_TIMEOUT_SECS
}

impl ExternalAgent {
    /// Validate the `agent:` value (as JSON); the error is the message for the field.
    pub fn from_json(value: serde_json::Value) -> Result<Self, String> {
        let agent: ExternalAgent = serde_json::from_value(value).map_err(|e| {
            format!(
                "{e} (expected {{command: [PROGRAM, ARGS...], prompt: stdin|arg, timeout_secs: N}})"
            )
        })?;
        if agent.command.first().is_none_or(|p| p.is_empty()) {
            return Err("command: must name a program: [PROGRAM, ARGS...]".to_owned());
        }
        if !(1..=MAX_AGENT_TIMEOUT_SECS).contains(&agent.timeout_secs) {
            return Err(format!(
                "timeout_secs: must be from 1 to {MAX_AGENT_TIMEOUT_SECS}, found {}",
                agent.timeout_secs
            ));
        }
        Ok(agent)
    }

    /// The agent `--agent-cmd CMD` names: `sh -c CMD`, the prompt on stdin, the default timeout.
    pub fn shell(command: &str) -> Self {
        Self {
            command: vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()],
            prompt: PromptVia::Stdin,
            timeout_secs: DEFAULT_AGENT_TIMEOUT_SECS,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::case::{Execution, ExternalAgent, PromptVia, parse_case};

    const CASE: &str =
        "name: ext\nprompt: Go.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n";

    #[test]
    fn the_agent_field_parses_with_defaults() {
        let yaml = format!("{CASE}agent: {{command: [python3, a.py]}}\n");
        let case = parse_case(Path::new("ext.yaml"), &yaml).unwrap();
        assert_eq!(
            case.execution,
            Execution::External(ExternalAgent {
                command: vec!["python3".into(), "a.py".into()],
                prompt: PromptVia::Stdin,
                timeout_secs: 300,
            })
        );
    }

    #[test]
    fn bad_agent_fields_are_located_errors() {
        for (agent, message) in [
            ("{command: []}", "command: must name a program"),
            (
                "{command: [x], timeout_secs: 0}",
                "timeout_secs: must be from 1 to 3600",
            ),
            ("{command: [x], prompt: file}", "unknown variant `file`"),
            ("{command: [x], extra: 1}", "unknown field `extra`"),
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

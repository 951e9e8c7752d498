//! The `agent:` field of a case: an external agent program run instead of evalhost's own
//! agent loop, talking to evalhost's loopback model endpoint.

use serde::Deserialize;

/// An external agent command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalAgent {
    /// Program and arguments (no shell); the program is looked up on `PATH` and started in
    /// the run's workspace.
    pub command: Vec<String>,
    /// How the prompt reaches the program.
    pub prompt: PromptVia,
}

/// The `agent:` field as written. Its `timeout_secs` is the case's run timeout, spelled
/// where it was before the case-level `timeout_secs` existed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentField {
    command: Vec<String>,
    #[serde(default)]
    prompt: PromptVia,
    timeout_secs: Option<f64>,
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

impl ExternalAgent {
    /// Validate the `agent:` value (as JSON): the agent, and the run timeout it gives
    /// (`timeout_secs`), if any. The error is the message for the field.
    pub fn from_json(value: serde_json::Value) -> Result<(Self, Option<f64>), String> {
        let field: AgentField = serde_json::from_value(value).map_err(|e| {
            format!(
                "{e} (expected {{command: [PROGRAM, ARGS...], prompt: stdin|arg, timeout_secs: N}})"
            )
        })?;
        if field.command.first().is_none_or(|p| p.is_empty()) {
            return Err("command: must name a program: [PROGRAM, ARGS...]".to_owned());
        }
        let timeout = field
            .timeout_secs
            .map(|secs| super::check_timeout_secs(secs).map_err(|m| format!("timeout_secs: {m}")))
            .transpose()?;
        let agent = Self {
            command: field.command,
            prompt: field.prompt,
        };
        Ok((agent, timeout))
    }

    /// The agent `--agent-cmd CMD` names: `sh -c CMD`, the prompt on stdin.
    pub fn shell(command: &str) -> Self {
        Self {
            command: vec!["sh".to_owned(), "-c".to_owned(), command.to_owned()],
            prompt: PromptVia::Stdin,
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
            })
        );
        assert_eq!(case.timeout_secs, None);
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
    fn bad_agent_fields_are_located_errors() {
        for (agent, message) in [
            ("{command: []}", "command: must name a program"),
            (
                "{command: [x], timeout_secs: 0}",
                "timeout_secs: must be more than 0 and at most 3600 seconds, found 0",
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

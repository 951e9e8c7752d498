//! `tool_invocation_parity`: per-tool call counts and argument key sets versus the golden.

use std::collections::{BTreeMap, BTreeSet};

use evalhost_sdk::message::{list, name};
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

use super::events::{GoldenEvent, field, payload};

/// `tool_invocation_parity: {count_tolerance: 0, arg_keys: true}`
pub struct ToolInvocationParity;

/// Config of [`ToolInvocationParity`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInvocationParityConfig {
    /// How far each tool's observed `tool.invoke` count may be from the golden's.
    #[serde(default)]
    pub count_tolerance: u64,
    /// Whether each tool's argument key set must equal the golden's.
    #[serde(default)]
    pub arg_keys: bool,
    /// The golden journal's events, injected by the case loader.
    pub golden: Option<Vec<GoldenEvent>>,
}

/// Per tool: how many `tool.invoke` events, and the union of their argument keys.
type ToolStats = BTreeMap<String, (u64, BTreeSet<String>)>;

impl Grader for ToolInvocationParity {
    type Config = ToolInvocationParityConfig;
    const NAME: &'static str = "tool_invocation_parity";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "Each tool is invoked as often as in the golden journal (within a tolerance), with the same argument keys";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "count_tolerance": {"type": "integer", "minimum": 0},
                "arg_keys": {"type": "boolean"},
                "golden": {"type": "array", "description": "Injected by the case loader"},
            },
            "additionalProperties": false,
        })
    }

    fn grade(
        config: &ToolInvocationParityConfig,
        evidence: &Evidence,
    ) -> Result<Verdict, GradeError> {
        let golden = super::events::golden(Self::NAME, &config.golden)?;
        let seen = stats(
            evidence
                .events
                .iter()
                .filter(|e| e.kind == "tool.invoke")
                .map(payload),
        );
        let want = stats(
            golden
                .iter()
                .filter(|e| e.event_type == "tool.invoke")
                .map(|e| e.payload.clone()),
        );
        let tools: BTreeSet<&String> = seen.keys().chain(want.keys()).collect();
        let empty = (0, BTreeSet::new());
        let mut problems = Vec::new();
        for tool in tools {
            let (seen_n, seen_keys) = seen.get(tool).unwrap_or(&empty);
            let (want_n, want_keys) = want.get(tool).unwrap_or(&empty);
            if seen_n.abs_diff(*want_n) > config.count_tolerance {
                problems.push(format!("{} {seen_n} calls, golden {want_n}", name(tool)));
            } else if config.arg_keys && *seen_n > 0 && *want_n > 0 && seen_keys != want_keys {
                problems.push(format!(
                    "{} arg keys {}, golden {}",
                    name(tool),
                    list(seen_keys.iter().map(String::as_str)),
                    list(want_keys.iter().map(String::as_str))
                ));
            }
        }
        Ok(Verdict::pass_if(problems.is_empty(), || {
            format!(
                "{} tolerance {}: {}",
                Self::NAME,
                config.count_tolerance,
                problems.join("; ")
            )
        }))
    }
}

fn stats(payloads: impl Iterator<Item = serde_json::Value>) -> ToolStats {
    let mut out = ToolStats::new();
    for payload in payloads {
        let tool = field(&payload, "Name")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let entry = out.entry(tool).or_default();
        entry.0 += 1;
        entry.1.extend(arg_keys(field(&payload, "Arguments")));
    }
    out
}

/// Keys of the arguments: an object, or JSON text of one.
fn arg_keys(arguments: Option<&serde_json::Value>) -> Vec<String> {
    let parsed;
    let object = match arguments {
        Some(serde_json::Value::String(text)) => {
            parsed = serde_json::from_str::<serde_json::Value>(text).unwrap_or_default();
            &parsed
        }
        Some(value) => value,
        None => return Vec::new(),
    };
    object
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::events::test_support::evidence;
    use super::*;
    use crate::tests::grade;
    use serde_json::json;

    fn observed() -> Evidence {
        evidence(&[
            (
                "tool.invoke",
                0,
                json!({"Name": "read_file", "Arguments": {"path": "a"}}),
            ),
            (
                "tool.invoke",
                10,
                json!({"name": "read_file", "arguments": "{\"path\":\"b\",\"limit\":1}"}),
            ),
            (
                "tool.invoke",
                20,
                json!({"Name": "bash", "Arguments": {"command": "ls"}}),
            ),
        ])
    }

    const GOLDEN: &str = r#"[{"type":"tool.invoke","payload":{"Name":"read_file","Arguments":{"path":"a"}}},{"type":"tool.result","payload":{}}]"#;

    #[test]
    fn counts_must_match_within_the_tolerance() {
        let strict = format!(r#"{{"count_tolerance":0,"golden":{GOLDEN}}}"#);
        assert_eq!(
            grade::<ToolInvocationParity>(&strict, &observed()).message,
            "tool_invocation_parity tolerance 0: bash 1 calls, golden 0; read_file 2 calls, golden 1"
        );
        let loose = format!(r#"{{"count_tolerance":1,"golden":{GOLDEN}}}"#);
        assert!(grade::<ToolInvocationParity>(&loose, &observed()).pass);
    }

    #[test]
    fn arg_keys_must_match_when_asked() {
        let config = format!(r#"{{"count_tolerance":1,"arg_keys":true,"golden":{GOLDEN}}}"#);
        assert_eq!(
            grade::<ToolInvocationParity>(&config, &observed()).message,
            "tool_invocation_parity tolerance 1: read_file arg keys [limit path], golden [path]"
        );
    }

    #[test]
    fn no_golden_is_not_evaluable() {
        assert_eq!(
            evalhost_sdk::grade::<ToolInvocationParity>("{}", &observed()),
            Err(GradeError::NotEvaluable(
                "tool_invocation_parity: no golden journal to compare with".to_owned()
            ))
        );
    }
}

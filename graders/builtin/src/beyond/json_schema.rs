//! `json_schema`: tool arguments or the final text, validated against a JSON Schema.

use evalhost_sdk::message::{count, list, name, quote_excerpt};
use evalhost_sdk::{Evidence, GradeError, Grader, ToolCall, Verdict};
use serde::Deserialize;
use serde_json::Value;

use super::schema::{KEYWORDS, Schema};
use super::validate::validate;
use crate::config::{Text, text_schema};

/// `json_schema: {tool: write_file, schema: {type: object, required: [path]}}`
pub struct JsonSchema;

/// Config of [`JsonSchema`]: exactly one target, and the schema.
#[derive(Debug, Clone, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a map with `schema` and one of `call`, `tool` or `final_text`"
)]
pub struct JsonSchemaConfig {
    /// The call at this 1-based position: its arguments are validated.
    #[serde(default)]
    pub call: Option<u32>,
    /// Every call of this tool: the arguments of each are validated.
    #[serde(default)]
    pub tool: Option<Text>,
    /// `true`: the final text, parsed as JSON, is validated.
    #[serde(default)]
    pub final_text: Option<bool>,
    /// The schema (the subset [`super::schema`] documents), compiled when the
    /// config is checked.
    pub schema: Schema,
}

/// What a [`JsonSchemaConfig`] validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// The call at this 1-based position.
    Call(u32),
    /// Every call of this tool.
    Tool(&'a str),
    /// The final text.
    FinalText,
}

impl JsonSchemaConfig {
    /// The one target the config names, or what is wrong with its targets.
    pub fn target(&self) -> Result<Target<'_>, String> {
        let named = [
            self.call.is_some(),
            self.tool.is_some(),
            self.final_text.is_some(),
        ];
        match named.iter().filter(|n| **n).count() {
            0 => return Err("name a target: `call`, `tool` or `final_text: true`".to_owned()),
            1 => {}
            _ => {
                return Err(
                    "name one target: `call`, `tool` or `final_text`, not several".to_owned(),
                );
            }
        }
        match (self.call, &self.tool, self.final_text) {
            (Some(0), _, _) => Err("call is 0; calls are counted from 1".to_owned()),
            (Some(n), _, _) => Ok(Target::Call(n)),
            (_, Some(tool), _) => {
                tool.check_not_empty("tool name")?;
                Ok(Target::Tool(tool.as_str()))
            }
            (_, _, Some(true)) => Ok(Target::FinalText),
            _ => Err("final_text must be true (omit it to validate tool arguments)".to_owned()),
        }
    }
}

impl Grader for JsonSchema {
    type Config = JsonSchemaConfig;
    const NAME: &'static str = "json_schema";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "A call's arguments, every call of a tool, or the final text is JSON valid against the schema";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "call": {"type": "integer", "minimum": 1, "maximum": u32::MAX, "description": "1-based position of the call whose arguments are validated"},
                "tool": text_schema("Tool name: the arguments of every call of it are validated"),
                "final_text": {"const": true, "description": "Validate the final text, parsed as JSON"},
                "schema": {
                    "type": ["object", "boolean"],
                    "description": format!("JSON Schema; supported keywords: {}", KEYWORDS.join(", ")),
                },
            },
            "required": ["schema"],
            "additionalProperties": false,
        })
    }

    fn check(config: &JsonSchemaConfig) -> Result<(), String> {
        config.target().map(drop)
    }

    fn grade(config: &JsonSchemaConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let target = config.target().map_err(GradeError::InvalidConfig)?;
        Ok(json_schema(target, &config.schema, evidence))
    }
}

/// Passes when every value `target` names in `evidence` is JSON valid against `schema`.
pub fn json_schema(target: Target<'_>, schema: &Schema, evidence: &Evidence) -> Verdict {
    let failure = match target {
        Target::Call(position) => match evidence.call(position) {
            Some(call) => check_call(call, schema),
            None => Some(format!(
                "call {position}: {}",
                match evidence.calls.len() {
                    0 => "no tool calls recorded".to_owned(),
                    n => format!(
                        "only {} recorded",
                        count(n as u64, "tool call", "tool calls")
                    ),
                }
            )),
        },
        Target::Tool(tool) => {
            let mut calls = evidence.calls.iter().filter(|c| c.name == tool).peekable();
            if calls.peek().is_none() {
                Some(format!(
                    "tool {}: no calls of it; calls: {}",
                    name(tool),
                    list(evidence.call_names())
                ))
            } else {
                calls.find_map(|call| check_call(call, schema))
            }
        }
        Target::FinalText => check_text(&evidence.final_text, schema),
    };
    match failure {
        None => Verdict::pass(),
        Some(seen) => Verdict::fail(format!("{} {seen}", JsonSchema::NAME)),
    }
}

fn check_call(call: &ToolCall, schema: &Schema) -> Option<String> {
    let at = format!("call {} ({})", call.index, name(&call.name));
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(value) => check_value(&value, schema).map(|seen| format!("{at}: {seen}")),
        Err(e) => Some(format!(
            "{at}: arguments are not JSON ({e}): {}",
            quote_excerpt(&call.arguments)
        )),
    }
}

fn check_text(text: &str, schema: &Schema) -> Option<String> {
    match serde_json::from_str::<Value>(unfence(text)) {
        Ok(value) => check_value(&value, schema).map(|seen| format!("final text: {seen}")),
        Err(e) => Some(format!(
            "final text: not JSON ({e}): {}",
            quote_excerpt(text)
        )),
    }
}

/// The first violation, and how many more there are.
fn check_value(value: &Value, schema: &Schema) -> Option<String> {
    let violations = validate(schema, value);
    let first = violations.first()?;
    Some(match violations.len() {
        1 => first.to_string(),
        n => format!("{first} (+{} more)", n - 1),
    })
}

/// The text inside one Markdown code fence (```` ```json ... ``` ````) that is
/// the whole (trimmed) text, or the trimmed text itself.
pub fn unfence(text: &str) -> &str {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```")
        .and_then(|rest| rest.strip_suffix("```"));
    match inner {
        // The info string (`json`) runs to the end of the first line.
        Some(inner) => match inner.split_once('\n') {
            Some((_info, body)) => body.trim(),
            None => inner.trim(),
        },
        None => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{grade, invalid_config};

    fn call(index: u32, tool: &str, arguments: &str) -> ToolCall {
        ToolCall {
            arguments: arguments.to_owned(),
            ..ToolCall::completed(index, tool)
        }
    }

    fn evidence(final_text: &str) -> Evidence {
        Evidence {
            final_text: final_text.to_owned(),
            calls: vec![
                call(1, "read_file", r#"{"path": "a.txt"}"#),
                call(2, "write_file", r#"{"path": 7, "content": "x"}"#),
                call(3, "write_file", r#"{"path": "b.txt", "content": "y"}"#),
                call(4, "bash", "{not json"),
            ],
            ..Evidence::default()
        }
    }

    const WRITE: &str = r#""schema": {"type": "object", "required": ["path", "content"],
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "additionalProperties": false}"#;

    fn config(target: &str) -> String {
        format!("{{{target}, {WRITE}}}")
    }

    #[test]
    fn a_call_by_position() {
        let ev = evidence("");
        assert_eq!(
            grade::<JsonSchema>(&config(r#""call": 3"#), &ev),
            Verdict::pass()
        );
        assert_eq!(
            grade::<JsonSchema>(&config(r#""call": 2"#), &ev),
            Verdict::fail("json_schema call 2 (write_file): /path: 7 is not of type string")
        );
        assert_eq!(
            grade::<JsonSchema>(&config(r#""call": 1"#), &ev),
            Verdict::fail(r#"json_schema call 1 (read_file): "content" is a required property"#)
        );
        assert_eq!(
            grade::<JsonSchema>(&config(r#""call": 4"#), &ev),
            Verdict::fail(
                r#"json_schema call 4 (bash): arguments are not JSON (key must be a string at line 1 column 2): "{not json""#
            )
        );
        assert_eq!(
            grade::<JsonSchema>(&config(r#""call": 5"#), &ev),
            Verdict::fail("json_schema call 5: only 4 tool calls recorded")
        );
        assert_eq!(
            grade::<JsonSchema>(&config(r#""call": 1"#), &Evidence::default()),
            Verdict::fail("json_schema call 1: no tool calls recorded")
        );
    }

    #[test]
    fn every_call_of_a_tool() {
        let ev = evidence("");
        assert_eq!(
            grade::<JsonSchema>(&config(r#""tool": "write_file""#), &ev),
            Verdict::fail("json_schema call 2 (write_file): /path: 7 is not of type string")
        );
        let mut fixed = ev.clone();
        fixed.calls[1].arguments = r#"{"path": "a", "content": "b"}"#.to_owned();
        assert_eq!(
            grade::<JsonSchema>(&config(r#""tool": "write_file""#), &fixed),
            Verdict::pass()
        );
        assert_eq!(
            grade::<JsonSchema>(&config(r#""tool": "edit_file""#), &ev),
            Verdict::fail(
                "json_schema tool edit_file: no calls of it; calls: [read_file write_file write_file bash]"
            )
        );
        // Several violations: the first, and a count of the rest.
        assert_eq!(
            grade::<JsonSchema>(&config(r#""tool": "read_file""#), &ev),
            Verdict::fail(r#"json_schema call 1 (read_file): "content" is a required property"#)
        );
        fixed.calls[0].arguments = r#"{"x": 1}"#.to_owned();
        assert_eq!(
            grade::<JsonSchema>(&config(r#""tool": "read_file""#), &fixed),
            Verdict::fail(
                r#"json_schema call 1 (read_file): "path" is a required property (+2 more)"#
            )
        );
    }

    #[test]
    fn the_final_text() {
        let schema = r#"{"final_text": true, "schema": {"type": "object", "required": ["answer"],
            "properties": {"answer": {"type": "integer"}}}}"#;
        assert_eq!(
            grade::<JsonSchema>(schema, &evidence(" {\"answer\": 42}\n")),
            Verdict::pass()
        );
        assert_eq!(
            grade::<JsonSchema>(schema, &evidence("```json\n{\"answer\": 42}\n```")),
            Verdict::pass()
        );
        assert_eq!(
            grade::<JsonSchema>(schema, &evidence(r#"{"answer": "42"}"#)),
            Verdict::fail(r#"json_schema final text: /answer: "42" is not of type integer"#)
        );
        assert_eq!(
            grade::<JsonSchema>(schema, &evidence("The answer is 42.")),
            Verdict::fail(
                r#"json_schema final text: not JSON (expected value at line 1 column 1): "The answer is 42.""#
            )
        );
    }

    #[test]
    fn configs_are_checked() {
        assert_eq!(
            invalid_config::<JsonSchema>(&config(r#""call": 0"#)),
            "call is 0; calls are counted from 1"
        );
        assert_eq!(
            invalid_config::<JsonSchema>(r#"{"schema": {}}"#),
            "name a target: `call`, `tool` or `final_text: true`"
        );
        assert_eq!(
            invalid_config::<JsonSchema>(&config(r#""call": 1, "tool": "bash""#)),
            "name one target: `call`, `tool` or `final_text`, not several"
        );
        assert_eq!(
            invalid_config::<JsonSchema>(r#"{"final_text": false, "schema": {}}"#),
            "final_text must be true (omit it to validate tool arguments)"
        );
        assert_eq!(
            invalid_config::<JsonSchema>(r#"{"tool": "", "schema": {}}"#),
            "tool name is empty"
        );
        assert_eq!(
            invalid_config::<JsonSchema>(
                r#"{"tool": "bash", "schema": {"type": "object", "oneOf": []}}"#
            ),
            "schema: unsupported keyword `oneOf`; supported: type, required, properties, \
             additionalProperties, items, enum, const, minimum, maximum, minLength, maxLength, \
             pattern, minItems, maxItems"
        );
        assert_eq!(
            invalid_config::<JsonSchema>(r#"{"tool": "bash"}"#),
            "missing field `schema`"
        );
    }

    #[test]
    fn fences_are_unwrapped() {
        assert_eq!(unfence("```json\n{}\n```"), "{}");
        assert_eq!(unfence("  ```\n[1]\n```  "), "[1]");
        assert_eq!(unfence("```{}```"), "{}");
        assert_eq!(unfence(" {} "), "{}");
        assert_eq!(unfence("```json\n{}"), "```json\n{}");
    }
}

//! Graders of the recorded tool calls, in the order the model requested them.

use evalhost_sdk::message::{list, name};
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

use crate::config::{Text, text_schema};

/// `tool_called: bash`
pub struct ToolCalled;

impl Grader for ToolCalled {
    type Config = Text;
    const NAME: &'static str = "tool_called";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "At least one recorded call has this tool name";

    fn config_schema() -> serde_json::Value {
        text_schema("Tool name")
    }

    fn check(tool: &Text) -> Result<(), String> {
        tool.check_not_empty("tool name")
    }

    fn grade(tool: &Text, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(tool_called(tool.as_str(), evidence))
    }
}

/// Passes when some recorded call is named `tool`.
pub fn tool_called(tool: &str, evidence: &Evidence) -> Verdict {
    Verdict::pass_if(evidence.call_names().any(|n| n == tool), || {
        format!(
            "{} {}: calls: {}",
            ToolCalled::NAME,
            name(tool),
            list(evidence.call_names())
        )
    })
}

/// `tool_not_called: bash`
pub struct ToolNotCalled;

impl Grader for ToolNotCalled {
    type Config = Text;
    const NAME: &'static str = "tool_not_called";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "No recorded call has this tool name";

    fn config_schema() -> serde_json::Value {
        text_schema("Tool name")
    }

    fn check(tool: &Text) -> Result<(), String> {
        tool.check_not_empty("tool name")
    }

    fn grade(tool: &Text, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(tool_not_called(tool.as_str(), evidence))
    }
}

/// Passes when no recorded call is named `tool`.
pub fn tool_not_called(tool: &str, evidence: &Evidence) -> Verdict {
    Verdict::pass_if(!evidence.call_names().any(|n| n == tool), || {
        format!(
            "{} {}: calls: {}",
            ToolNotCalled::NAME,
            name(tool),
            list(evidence.call_names())
        )
    })
}

/// `tool_order: [bash, write_file]`
pub struct ToolOrder;

impl Grader for ToolOrder {
    type Config = Vec<Text>;
    const NAME: &'static str = "tool_order";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "The listed names appear in that order; other calls may sit between them";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "array",
            "items": text_schema("Tool name"),
            "minItems": 1,
            "description": "Tool names that must appear in this order among the recorded calls",
        })
    }

    fn check(tools: &Vec<Text>) -> Result<(), String> {
        if tools.is_empty() {
            return Err("list of tool names is empty".to_owned());
        }
        tools
            .iter()
            .try_for_each(|tool| tool.check_not_empty("tool name"))
    }

    fn grade(tools: &Vec<Text>, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let tools: Vec<&str> = tools.iter().map(Text::as_str).collect();
        Ok(tool_order(&tools, evidence))
    }
}

/// Passes when `tools` is a subsequence of the recorded call names.
pub fn tool_order(tools: &[&str], evidence: &Evidence) -> Verdict {
    let mut wanted = tools.iter().peekable();
    for called in evidence.call_names() {
        if wanted.peek().is_some_and(|w| **w == called) {
            wanted.next();
        }
    }
    Verdict::pass_if(wanted.peek().is_none(), || {
        format!(
            "{} {}: calls: {}",
            ToolOrder::NAME,
            list(tools.iter().copied()),
            list(evidence.call_names())
        )
    })
}

/// `result_status: {call: 1, status: denied}`
pub struct ResultStatus;

/// Config of [`ResultStatus`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a map with `call` and `status`")]
pub struct ResultStatusConfig {
    /// 1-based position of the call among all recorded calls.
    pub call: u32,
    /// The result status that call must have.
    pub status: Status,
}

/// A tool result status, as the session log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Status {
    Completed,
    Denied,
    InvalidArguments,
    UnknownTool,
    Failed,
    Cancelled,
    TimedOut,
    OutputLimit,
}

impl Status {
    /// Every status, in the order the schema lists them.
    pub const ALL: [Status; 8] = [
        Status::Completed,
        Status::Denied,
        Status::InvalidArguments,
        Status::UnknownTool,
        Status::Failed,
        Status::Cancelled,
        Status::TimedOut,
        Status::OutputLimit,
    ];

    /// The status as the evidence and case files spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Denied => "denied",
            Status::InvalidArguments => "invalid_arguments",
            Status::UnknownTool => "unknown_tool",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
            Status::TimedOut => "timed_out",
            Status::OutputLimit => "output_limit",
        }
    }
}

impl Grader for ResultStatus {
    type Config = ResultStatusConfig;
    const NAME: &'static str = "result_status";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The call at this 1-based position has this result status";

    fn config_schema() -> serde_json::Value {
        let statuses: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
        serde_json::json!({
            "type": "object",
            "properties": {
                "call": {"type": "integer", "minimum": 1, "maximum": u32::MAX, "description": "1-based call position"},
                "status": {"enum": statuses, "description": "Result status of that call"},
            },
            "required": ["call", "status"],
            "additionalProperties": false,
        })
    }

    fn check(config: &ResultStatusConfig) -> Result<(), String> {
        if config.call == 0 {
            Err("call is 0; calls are counted from 1".to_owned())
        } else {
            Ok(())
        }
    }

    fn grade(config: &ResultStatusConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        Ok(result_status(config.call, config.status, evidence))
    }
}

/// Passes when the call at 1-based `position` has result `status`.
pub fn result_status(position: u32, status: Status, evidence: &Evidence) -> Verdict {
    let seen = match evidence.call(position) {
        None => match evidence.calls.len() {
            0 => "no tool calls recorded".to_owned(),
            1 => "only 1 tool call recorded".to_owned(),
            n => format!("only {n} tool calls recorded"),
        },
        Some(call) if call.status == status.as_str() => return Verdict::pass(),
        Some(call) if call.status.is_empty() => "no result recorded".to_owned(),
        Some(call) => format!("status {}", name(&call.status)),
    };
    Verdict::fail(format!(
        "{} call {position} = {}: {seen}",
        ResultStatus::NAME,
        status.as_str()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{grade, invalid_config};
    use evalhost_sdk::ToolCall;

    fn with_calls(calls: &[(&str, &str)]) -> Evidence {
        let calls = calls
            .iter()
            .zip(1..)
            .map(|(&(name, status), index)| ToolCall {
                status: status.to_owned(),
                started: status == "completed",
                ..ToolCall::completed(index, name)
            })
            .collect();
        Evidence {
            calls,
            ..Evidence::default()
        }
    }

    #[test]
    fn tool_called_lists_the_calls_it_saw() {
        let evidence = with_calls(&[("read_file", "completed"), ("bash", "denied")]);
        assert_eq!(grade::<ToolCalled>(r#""bash""#, &evidence), Verdict::pass());
        assert_eq!(
            grade::<ToolCalled>(r#""write_file""#, &evidence),
            Verdict::fail("tool_called write_file: calls: [read_file bash]")
        );
        assert_eq!(
            grade::<ToolCalled>(r#""bash""#, &with_calls(&[])),
            Verdict::fail("tool_called bash: calls: []")
        );
        assert_eq!(invalid_config::<ToolCalled>(r#""""#), "tool name is empty");
    }

    #[test]
    fn tool_not_called_lists_the_calls_it_saw() {
        let evidence = with_calls(&[("read_file", "completed"), ("bash", "completed")]);
        assert_eq!(
            grade::<ToolNotCalled>(r#""write_file""#, &evidence),
            Verdict::pass()
        );
        assert_eq!(
            grade::<ToolNotCalled>(r#""bash""#, &with_calls(&[])),
            Verdict::pass()
        );
        assert_eq!(
            grade::<ToolNotCalled>(r#""bash""#, &evidence),
            Verdict::fail("tool_not_called bash: calls: [read_file bash]")
        );
    }

    #[test]
    fn tool_order_is_a_subsequence() {
        let evidence = with_calls(&[
            ("bash", "completed"),
            ("read_file", "completed"),
            ("write_file", "completed"),
        ]);
        assert_eq!(
            grade::<ToolOrder>(r#"["bash", "write_file"]"#, &evidence),
            Verdict::pass()
        );
        assert_eq!(
            grade::<ToolOrder>(r#"["bash", "read_file", "write_file"]"#, &evidence),
            Verdict::pass()
        );
        let reversed = with_calls(&[("write_file", "completed"), ("bash", "completed")]);
        assert_eq!(
            grade::<ToolOrder>(r#"["bash", "write_file"]"#, &reversed),
            Verdict::fail("tool_order [bash write_file]: calls: [write_file bash]")
        );
        // A name listed twice needs two calls.
        assert_eq!(
            grade::<ToolOrder>(
                r#"["read_file", "read_file"]"#,
                &with_calls(&[("read_file", "completed")])
            ),
            Verdict::fail("tool_order [read_file read_file]: calls: [read_file]")
        );
        assert_eq!(
            invalid_config::<ToolOrder>("[]"),
            "list of tool names is empty"
        );
        assert_eq!(
            invalid_config::<ToolOrder>(r#""bash""#),
            "invalid type: string \"bash\", expected a sequence"
        );
    }

    #[test]
    fn result_status_says_what_the_call_got() {
        let evidence = with_calls(&[("bash", "denied"), ("write_file", "completed")]);
        assert_eq!(
            grade::<ResultStatus>(r#"{"call": 1, "status": "denied"}"#, &evidence),
            Verdict::pass()
        );
        assert_eq!(
            grade::<ResultStatus>(r#"{"call": 1, "status": "completed"}"#, &evidence),
            Verdict::fail("result_status call 1 = completed: status denied")
        );
        assert_eq!(
            grade::<ResultStatus>(r#"{"call": 3, "status": "completed"}"#, &evidence),
            Verdict::fail("result_status call 3 = completed: only 2 tool calls recorded")
        );
        assert_eq!(
            grade::<ResultStatus>(
                r#"{"call": 2, "status": "denied"}"#,
                &with_calls(&[("bash", "completed")])
            ),
            Verdict::fail("result_status call 2 = denied: only 1 tool call recorded")
        );
        assert_eq!(
            grade::<ResultStatus>(r#"{"call": 1, "status": "denied"}"#, &with_calls(&[])),
            Verdict::fail("result_status call 1 = denied: no tool calls recorded")
        );
        assert_eq!(
            grade::<ResultStatus>(
                r#"{"call": 1, "status": "completed"}"#,
                &with_calls(&[("bash", "")])
            ),
            Verdict::fail("result_status call 1 = completed: no result recorded")
        );
    }

    #[test]
    fn result_status_configs_are_checked() {
        assert_eq!(
            invalid_config::<ResultStatus>(r#"{"call": 0, "status": "denied"}"#),
            "call is 0; calls are counted from 1"
        );
        assert_eq!(
            invalid_config::<ResultStatus>(r#"{"call": 1}"#),
            "missing field `status`"
        );
        assert_eq!(
            invalid_config::<ResultStatus>(r#"{"call": 1, "status": "done"}"#),
            "unknown variant `done`, expected one of `completed`, `denied`, `invalid_arguments`, \
             `unknown_tool`, `failed`, `cancelled`, `timed_out`, `output_limit`"
        );
        assert_eq!(
            invalid_config::<ResultStatus>(r#"{"call": 1, "status": "denied", "after": 2}"#),
            "unknown field `after`, expected `call` or `status`"
        );
        assert_eq!(
            invalid_config::<ResultStatus>(r#""denied""#),
            "invalid type: string \"denied\", expected a map with `call` and `status`"
        );
        for status in Status::ALL {
            let config = format!(r#"{{"call": 1, "status": "{}"}}"#, status.as_str());
            assert!(
                evalhost_sdk::check_config::<ResultStatus>(&config).is_ok(),
                "{config}"
            );
        }
    }
}

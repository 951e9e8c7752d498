//! Tool results as each dialect carries them in the request after a call: Responses
//! `function_call_output` and `custom_tool_call_output` items, Chat Completions `role: tool`
//! messages, Anthropic `tool_result` blocks (`is_error: true` is a failed call).

use serde_json::Value;

use super::Dialect;

/// One tool result found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The call it answers.
    pub call_id: String,
    /// The result's text (text parts joined; other content as JSON text).
    pub output: String,
    /// Whether the client marked the call as failed (Anthropic `is_error`).
    pub failed: bool,
}

/// Every tool result of `request` (a request body in `dialect`), in order.
pub(crate) fn tool_results(dialect: Dialect, request: &Value) -> Vec<ToolResult> {
    let list = |field: &str| {
        request
            .get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    match dialect {
        Dialect::Responses => list("input")
            .filter(|item| {
                matches!(
                    item.get("type").and_then(Value::as_str),
                    Some("function_call_output" | "custom_tool_call_output")
                )
            })
            .filter_map(|item| {
                Some(ToolResult {
                    call_id: item.get("call_id")?.as_str()?.to_owned(),
                    output: content_text(item.get("output")),
                    failed: false,
                })
            })
            .collect(),
        Dialect::Chat => list("messages")
            .filter(|message| message.get("role").and_then(Value::as_str) == Some("tool"))
            .filter_map(|message| {
                Some(ToolResult {
                    call_id: message.get("tool_call_id")?.as_str()?.to_owned(),
                    output: content_text(message.get("content")),
                    failed: false,
                })
            })
            .collect(),
        Dialect::Anthropic => list("messages")
            .filter_map(|message| message.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
            .filter_map(|block| {
                Some(ToolResult {
                    call_id: block.get("tool_use_id")?.as_str()?.to_owned(),
                    output: content_text(block.get("content")),
                    failed: block.get("is_error") == Some(&Value::Bool(true)),
                })
            })
            .collect(),
    }
}

/// A content field as text: a string as is, a list of parts by their `text` joined, anything
/// else as JSON text (nothing for a missing field).
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts))
            if parts
                .iter()
                .all(|p| p.get("text").is_some_and(Value::is_string)) =>
        {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        }
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn result(call_id: &str, output: &str, failed: bool) -> ToolResult {
        ToolResult {
            call_id: call_id.to_owned(),
            output: output.to_owned(),
            failed,
        }
    }

    #[test]
    fn every_dialect_s_results_are_found() {
        let responses = json!({"input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
            {"type": "custom_tool_call_output", "call_id": "call_2",
             "output": [{"type": "input_text", "text": "Done!"}]},
        ]});
        assert_eq!(
            tool_results(Dialect::Responses, &responses),
            [
                result("call_1", "ok", false),
                result("call_2", "Done!", false)
            ]
        );
        let chat = json!({"messages": [
            {"role": "assistant", "tool_calls": [{"id": "call_1"}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"returncode\": 0}"},
        ]});
        assert_eq!(
            tool_results(Dialect::Chat, &chat),
            [result("call_1", "{\"returncode\": 0}", false)]
        );
        let anthropic = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "out"},
                {"type": "tool_result", "tool_use_id": "toolu_02", "is_error": true,
                 "content": [{"type": "text", "text": "denied"}]},
            ]},
        ]});
        assert_eq!(
            tool_results(Dialect::Anthropic, &anthropic),
            [
                result("toolu_01", "out", false),
                result("toolu_02", "denied", true)
            ]
        );
        assert_eq!(tool_results(Dialect::Chat, &json!(null)), []);
    }
}

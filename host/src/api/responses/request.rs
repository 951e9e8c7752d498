//! What the endpoint reads out of a Responses request: its tool results
//! (`function_call_output`, `custom_tool_call_output`), the user's follow-up, and the request
//! as the live provider is given it (tool kinds kept as sent).

use serde_json::Value;

use super::wire::{InputItem, ResponsesRequest};
use crate::api::request::{
    ToolResult, add_instructions, content_text, list, message, role, text_of,
};

/// Every tool result of `request`, in order.
pub(crate) fn tool_results(request: &Value) -> Vec<ToolResult> {
    list(request, "input")
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
        .collect()
}

/// The user's messages after the last answer (an assistant message or any output item).
pub(crate) fn trailing_user_texts(request: &Value) -> Vec<String> {
    let Some(items) = request.get("input").and_then(Value::as_array) else {
        return Vec::new();
    };
    crate::api::request::trailing_user_texts(
        items,
        |item| {
            role(item) == Some("assistant")
                || item
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t != "message" && !t.ends_with("_output"))
        },
        |item| (role(item) == Some("user")).then(|| content_text(item.get("content"))),
    )
}

/// The conversation, instructions and tools of `body` into `request`.
pub(crate) fn into_responses(body: &Value, request: &mut ResponsesRequest) {
    if let Some(instructions) = body["instructions"].as_str() {
        add_instructions(request, instructions.to_owned());
    }
    match &body["input"] {
        Value::String(text) => request.input.push(message("user", text.clone())),
        Value::Array(items) => {
            for item in items {
                let item = match item["type"].as_str() {
                    Some("message") | None => message(
                        item["role"].as_str().unwrap_or("user"),
                        content_text(item.get("content")),
                    ),
                    Some("function_call") => InputItem::FunctionCall {
                        call_id: text_of(item, "call_id"),
                        name: text_of(item, "name"),
                        arguments: text_of(item, "arguments"),
                    },
                    Some("custom_tool_call") => InputItem::FunctionCall {
                        call_id: text_of(item, "call_id"),
                        name: text_of(item, "name"),
                        arguments: text_of(item, "input"),
                    },
                    Some("function_call_output" | "custom_tool_call_output") => {
                        InputItem::FunctionCallOutput {
                            call_id: text_of(item, "call_id"),
                            output: content_text(item.get("output")),
                        }
                    }
                    Some(_) => continue,
                };
                request.input.push(item);
            }
        }
        _ => {}
    }
    request.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| serde_json::from_value(tool.clone()).ok())
        .collect();
}

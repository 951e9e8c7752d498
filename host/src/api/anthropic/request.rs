//! What the endpoint reads out of an Anthropic Messages request: its tool results
//! (`tool_result` blocks, `is_error: true` a failed call), the user's follow-up (a `user`
//! message holding tool results is not one), and the request as the Responses request a live
//! provider is given.

use serde_json::Value;

use crate::api::request::{
    ToolResult, add_instructions, content_text, list, message, role, text_of,
};
use crate::api::responses::wire::{FunctionTool, InputItem, ResponsesRequest};

/// Every tool result of `request`, in order.
pub(crate) fn tool_results(request: &Value) -> Vec<ToolResult> {
    list(request, "messages")
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
        .collect()
}

/// The user's messages after the last assistant message, tool results aside.
pub(crate) fn trailing_user_texts(request: &Value) -> Vec<String> {
    let Some(items) = request.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    crate::api::request::trailing_user_texts(
        items,
        |m| role(m) == Some("assistant"),
        |m| {
            (role(m) == Some("user") && !holds_tool_results(m))
                .then(|| content_text(m.get("content")))
        },
    )
}

/// A message with `tool_result` blocks.
fn holds_tool_results(message: &Value) -> bool {
    message
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        })
}

/// The conversation, system prompt and tools of `body` into `request`.
pub(crate) fn into_responses(body: &Value, request: &mut ResponsesRequest) {
    add_instructions(request, content_text(body.get("system")));
    for m in body["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("user");
        let blocks = match &m["content"] {
            Value::Array(blocks) => blocks,
            other => {
                request.input.push(message(role, content_text(Some(other))));
                continue;
            }
        };
        let mut text = String::new();
        for block in blocks {
            match block["type"].as_str() {
                Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
                Some("tool_use") => request.input.push(InputItem::FunctionCall {
                    call_id: text_of(block, "id"),
                    name: text_of(block, "name"),
                    arguments: block["input"].to_string(),
                }),
                Some("tool_result") => request.input.push(InputItem::FunctionCallOutput {
                    call_id: text_of(block, "tool_use_id"),
                    output: content_text(block.get("content")),
                }),
                _ => {}
            }
        }
        if !text.is_empty() {
            request.input.push(message(role, text));
        }
    }
    request.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| {
            let mut converted = FunctionTool::new(
                tool["name"].as_str().unwrap_or_default(),
                tool["description"].as_str().unwrap_or_default(),
                tool["input_schema"].clone(),
            );
            converted.strict = None;
            converted
        })
        .collect();
}

//! What the endpoint reads out of a Chat Completions request: its tool results
//! (`role: tool` messages), the user's follow-up, and the request as the Responses request a
//! live provider is given.

use serde_json::Value;

use crate::api::request::{
    ToolResult, add_instructions, content_text, list, message, role, text_of,
};
use crate::api::responses::wire::{FunctionTool, InputItem, ResponsesRequest};

/// Every tool result of `request`, in order.
pub(crate) fn tool_results(request: &Value) -> Vec<ToolResult> {
    list(request, "messages")
        .filter(|message| role(message) == Some("tool"))
        .filter_map(|message| {
            Some(ToolResult {
                call_id: message.get("tool_call_id")?.as_str()?.to_owned(),
                output: content_text(message.get("content")),
                failed: false,
            })
        })
        .collect()
}

/// The user's messages after the last assistant message.
pub(crate) fn trailing_user_texts(request: &Value) -> Vec<String> {
    let Some(items) = request.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    crate::api::request::trailing_user_texts(
        items,
        |m| role(m) == Some("assistant"),
        |m| (role(m) == Some("user")).then(|| content_text(m.get("content"))),
    )
}

/// The conversation, instructions and tools of `body` into `request`.
pub(crate) fn into_responses(body: &Value, request: &mut ResponsesRequest) {
    for m in body["messages"].as_array().into_iter().flatten() {
        let role = m["role"].as_str().unwrap_or("user");
        match role {
            "system" | "developer" => add_instructions(request, content_text(m.get("content"))),
            "tool" => request.input.push(InputItem::FunctionCallOutput {
                call_id: text_of(m, "tool_call_id"),
                output: content_text(m.get("content")),
            }),
            _ => {
                let content = content_text(m.get("content"));
                if !content.is_empty() || m["tool_calls"].as_array().is_none() {
                    request.input.push(message(role, content));
                }
                for call in m["tool_calls"].as_array().into_iter().flatten() {
                    request.input.push(InputItem::FunctionCall {
                        call_id: text_of(call, "id"),
                        name: text_of(&call["function"], "name"),
                        arguments: text_of(&call["function"], "arguments"),
                    });
                }
            }
        }
    }
    request.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| {
            let function = &tool["function"];
            let mut converted = FunctionTool::new(
                function["name"].as_str().unwrap_or_default(),
                function["description"].as_str().unwrap_or_default(),
                function["parameters"].clone(),
            );
            converted.strict = function["strict"].as_bool();
            converted
        })
        .collect();
}

//! A request in any dialect as the Responses request the live provider is given: the
//! conversation (messages, calls, results), the instructions and the tools. Item kinds that
//! carry nothing the provider can be given back (reasoning, web search calls) are left out.

use serde_json::Value;

use super::Dialect;
use super::results::content_text;
use crate::wire::responses::{FunctionTool, InputItem, ResponsesRequest};

/// `request` (a body in `dialect`) as a Responses request, or why it is not one.
pub(crate) fn to_responses_request(
    dialect: Dialect,
    request: &Value,
) -> Result<ResponsesRequest, String> {
    if !request.is_object() {
        return Err(format!("a {} request is a JSON object", dialect.name()));
    }
    let mut converted = ResponsesRequest {
        model: request["model"].as_str().unwrap_or_default().to_owned(),
        instructions: None,
        input: Vec::new(),
        tools: Vec::new(),
        stream: true,
        store: Some(false),
        max_output_tokens: None,
    };
    match dialect {
        Dialect::Responses => responses(request, &mut converted),
        Dialect::Chat => chat(request, &mut converted),
        Dialect::Anthropic => anthropic(request, &mut converted),
    }
    Ok(converted)
}

fn text_of(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_owned()
}

fn message(role: &str, content: String) -> InputItem {
    InputItem::Message {
        role: role.to_owned(),
        content,
    }
}

fn add_instructions(request: &mut ResponsesRequest, text: String) {
    if text.is_empty() {
        return;
    }
    request.instructions = Some(match request.instructions.take() {
        Some(before) => format!("{before}\n\n{text}"),
        None => text,
    });
}

fn responses(body: &Value, request: &mut ResponsesRequest) {
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

fn chat(body: &Value, request: &mut ResponsesRequest) {
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

fn anthropic(body: &Value, request: &mut ResponsesRequest) {
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_tool_kind_of_a_responses_request_is_kept_as_sent() {
        let tools = json!([
            {"type": "function", "name": "exec_command", "description": "Run", "parameters": {"type": "object"}, "strict": false},
            {"type": "function", "name": "no_params", "description": "none"},
            {"type": "custom", "name": "apply_patch", "description": "Patch", "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}},
            {"type": "namespace", "name": "mcp", "tools": [{"type": "function", "name": "inner"}]},
            {"type": "web_search"},
        ]);
        let body = json!({"model": "m", "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
            {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done"},
            {"type": "reasoning", "summary": []},
        ], "tools": tools});
        let request = to_responses_request(Dialect::Responses, &body).expect("converts");
        assert_eq!(serde_json::to_value(&request.tools).unwrap(), tools);
        assert_eq!(request.input.len(), 3);
        assert_eq!(
            request.input[1],
            InputItem::FunctionCall {
                call_id: "c1".into(),
                name: "apply_patch".into(),
                arguments: "*** Begin Patch".into()
            }
        );
    }

    #[test]
    fn chat_and_anthropic_conversations_become_items() {
        let chat = json!({"model": "m", "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        ], "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]});
        let request = to_responses_request(Dialect::Chat, &chat).expect("converts");
        assert_eq!(request.instructions.as_deref(), Some("sys"));
        assert_eq!(request.input.len(), 3);
        assert_eq!(request.tools[0].name, "bash");
        let anthropic = json!({"model": "m", "system": [{"type": "text", "text": "sys"}], "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.txt"}]},
        ], "tools": [{"name": "Bash", "description": "d", "input_schema": {"type": "object"}}]});
        let request = to_responses_request(Dialect::Anthropic, &anthropic).expect("converts");
        assert_eq!(request.instructions.as_deref(), Some("sys"));
        assert_eq!(
            request.input[1],
            InputItem::FunctionCall {
                call_id: "toolu_01".into(),
                name: "Bash".into(),
                arguments: "{\"command\":\"ls\"}".into()
            }
        );
        assert!(to_responses_request(Dialect::Chat, &json!([1])).is_err());
    }
}

//! What the endpoint reads out of a Gemini request: its head (the model and whether it streams
//! are in the path), its tool results (`functionResponse` parts), the user's follow-up, and
//! the request as the Responses request a live provider is given.
//!
//! Calls and results are paired by id when the client sends one (gemini-cli sends back the id
//! the endpoint gave each call); otherwise a result answers the oldest unanswered call of its
//! name, and a call without an id is known as `call_{i}`, the i-th call of the conversation,
//! as the script numbers them.

use std::collections::VecDeque;

use serde_json::Value;

use super::wire::{Content, FunctionDeclaration, Part, Tool};
use super::{Method, parse_path};
use crate::api::head::RequestHead;
use crate::api::request::{ToolResult, add_instructions, message};
use crate::api::responses::wire::{FunctionTool, InputItem, ResponsesRequest};

/// The head of a request at `path` (query string included): the model and the stream come
/// from the path (`?alt=sse` asks for Server-Sent Events, else a stream is one JSON array);
/// the body only has to be JSON.
pub(crate) fn head(path: &str, body: &[u8]) -> Result<RequestHead, serde_json::Error> {
    serde_json::from_slice::<serde::de::IgnoredAny>(body)?;
    let (bare, query) = path.split_once('?').unwrap_or((path, ""));
    let (model, method) = parse_path(bare).unwrap_or(("", Method::Generate));
    let stream = method == Method::StreamGenerate;
    Ok(RequestHead {
        stream,
        model: (!model.is_empty()).then(|| model.to_owned()),
        include_usage: false,
        stream_as_array: stream && !query.split('&').any(|pair| pair == "alt=sse"),
        custom_tools: Vec::new(),
    })
}

/// One step of a conversation, its calls and results known by their ids.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Text {
        role: String,
        text: String,
    },
    Call {
        id: String,
        name: String,
        args: Value,
    },
    Result {
        id: String,
        output: String,
        failed: bool,
    },
}

/// The conversation of a request, read leniently (what is not Gemini's shape is skipped).
fn contents(request: &Value) -> Vec<Content> {
    request
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|content| serde_json::from_value(content.clone()).ok())
        .collect()
}

/// The steps of `contents`, in order (thoughts left out).
fn steps(contents: &[Content]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut calls = 0;
    let mut unanswered: VecDeque<(String, String)> = VecDeque::new();
    for content in contents {
        let role = content.role.as_deref().unwrap_or("user");
        // A turn's text parts are one message.
        let mut text_at: Option<usize> = None;
        for part in &content.parts {
            if let Some(call) = &part.function_call {
                text_at = None;
                calls += 1;
                let id = call.id.clone().unwrap_or_else(|| format!("call_{calls}"));
                unanswered.push_back((id.clone(), call.name.clone()));
                steps.push(Step::Call {
                    id,
                    name: call.name.clone(),
                    args: call.args.clone(),
                });
            } else if let Some(response) = &part.function_response {
                text_at = None;
                let answered = match &response.id {
                    Some(id) => unanswered.iter().position(|(call, _)| call == id),
                    None => unanswered
                        .iter()
                        .position(|(_, name)| *name == response.name),
                };
                let id = match (answered.and_then(|k| unanswered.remove(k)), &response.id) {
                    (_, Some(id)) => id.clone(),
                    (Some((id, _)), None) => id,
                    (None, None) => format!("{}_result", response.name),
                };
                let (output, failed) = output(&response.response);
                steps.push(Step::Result { id, output, failed });
            } else if let Some(text) = text(part) {
                if let Some(Step::Text { text: before, .. }) =
                    text_at.and_then(|k| steps.get_mut(k))
                {
                    before.push_str(text);
                    continue;
                }
                text_at = Some(steps.len());
                steps.push(Step::Text {
                    role: role.to_owned(),
                    text: text.to_owned(),
                });
            }
        }
    }
    steps
}

/// A part's text, unless it is a thought.
fn text(part: &Part) -> Option<&str> {
    (part.thought != Some(true))
        .then_some(part.text.as_deref())
        .flatten()
}

/// A function response as text: its `output` (or `error`, a failed call) when a string, else
/// the response as JSON text.
fn output(response: &Value) -> (String, bool) {
    if let Some(error) = response.get("error") {
        let text = error
            .as_str()
            .map_or_else(|| error.to_string(), str::to_owned);
        return (text, true);
    }
    match response.get("output").or_else(|| response.get("content")) {
        Some(Value::String(text)) => (text.clone(), false),
        Some(other) => (other.to_string(), false),
        None if response.is_null() => (String::new(), false),
        None => (response.to_string(), false),
    }
}

/// Every tool result of `request`, in order.
pub(crate) fn tool_results(request: &Value) -> Vec<ToolResult> {
    steps(&contents(request))
        .into_iter()
        .filter_map(|step| match step {
            Step::Result { id, output, failed } => Some(ToolResult {
                call_id: id,
                output,
                failed,
            }),
            _ => None,
        })
        .collect()
}

/// The user's texts after the last `model` turn (a turn of function responses is not one).
pub(crate) fn trailing_user_texts(request: &Value) -> Vec<String> {
    let contents = contents(request);
    let Some(last) = contents
        .iter()
        .rposition(|c| c.role.as_deref() == Some("model"))
    else {
        return Vec::new();
    };
    contents[last + 1..]
        .iter()
        .filter(|c| c.role.as_deref().unwrap_or("user") == "user")
        .filter(|c| c.parts.iter().all(|p| p.function_response.is_none()))
        .map(|c| c.parts.iter().filter_map(text).collect::<String>())
        .filter(|text| !text.is_empty())
        .collect()
}

/// The conversation, system instruction and function declarations of `body` into `request`.
pub(crate) fn into_responses(body: &Value, request: &mut ResponsesRequest) {
    let system: Option<Content> = body
        .get("systemInstruction")
        .or_else(|| body.get("system_instruction"))
        .and_then(|c| serde_json::from_value(c.clone()).ok());
    if let Some(system) = &system {
        add_instructions(request, system.parts.iter().filter_map(text).collect());
    }
    for step in steps(&contents(body)) {
        request.input.push(match step {
            Step::Text { role, text } => {
                message(if role == "model" { "assistant" } else { "user" }, text)
            }
            Step::Call { id, name, args } => InputItem::FunctionCall {
                call_id: id,
                name,
                arguments: args.to_string(),
            },
            Step::Result { id, output, .. } => InputItem::FunctionCallOutput {
                call_id: id,
                output,
            },
        });
    }
    request.tools = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| serde_json::from_value::<Tool>(tool.clone()).ok())
        .flat_map(|tool| tool.function_declarations)
        .map(|declaration| function_tool(&declaration))
        .collect();
}

/// A declared function as a Responses function tool, its parameters as JSON Schema.
fn function_tool(declaration: &FunctionDeclaration) -> FunctionTool {
    let parameters = match (&declaration.parameters_json_schema, &declaration.parameters) {
        (Some(schema), _) => schema.clone(),
        (None, Some(openapi)) => json_schema(openapi),
        (None, None) => Value::Null,
    };
    FunctionTool::new(&declaration.name, &declaration.description, parameters)
}

/// Gemini's OpenAPI-subset schema as JSON Schema: its upper-case type names (`OBJECT`,
/// `STRING`) lower-cased, everywhere in the schema.
fn json_schema(openapi: &Value) -> Value {
    match openapi {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("type", Value::String(name)) => Value::String(name.to_ascii_lowercase()),
                        _ => json_schema(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(json_schema).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn conversation() -> Value {
        json!({
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "List and write."}]},
                {"role": "model", "parts": [
                    {"text": "thinking", "thought": true},
                    {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "ls"}}},
                    {"functionCall": {"name": "write_file", "args": {"file_path": "a", "content": "b"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"id": "call_1", "name": "run_shell_command", "response": {"output": "a.txt"}}},
                    {"functionResponse": {"name": "write_file", "response": {"error": "denied"}}}
                ]},
                {"role": "model", "parts": [{"text": "Done."}]},
                {"role": "user", "parts": [{"text": "Now "}, {"text": "again."}]}
            ],
            "tools": [{"functionDeclarations": [
                {"name": "run_shell_command", "description": "Run",
                 "parameters": {"type": "OBJECT", "properties": {"command": {"type": "STRING"}}}},
                {"name": "write_file", "parametersJsonSchema": {"type": "object"}}
            ]}, {"googleSearch": {}}]
        })
    }

    #[test]
    fn results_pair_with_their_calls_by_id_else_by_name() {
        assert_eq!(
            tool_results(&conversation()),
            [
                ToolResult {
                    call_id: "call_1".into(),
                    output: "a.txt".into(),
                    failed: false
                },
                ToolResult {
                    call_id: "call_2".into(),
                    output: "denied".into(),
                    failed: true
                },
            ]
        );
    }

    #[test]
    fn a_follow_up_is_the_user_text_after_the_last_model_turn() {
        assert_eq!(trailing_user_texts(&conversation()), ["Now again."]);
        let opening = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
        assert!(trailing_user_texts(&opening).is_empty());
        assert!(trailing_user_texts(&json!(null)).is_empty());
    }

    #[test]
    fn the_conversation_becomes_responses_items_and_tools_json_schema() {
        let mut request = ResponsesRequest {
            model: String::new(),
            instructions: None,
            input: Vec::new(),
            tools: Vec::new(),
            stream: true,
            store: None,
            max_output_tokens: None,
        };
        into_responses(&conversation(), &mut request);
        assert_eq!(request.instructions.as_deref(), Some("Be brief."));
        assert_eq!(request.input.len(), 7, "{:?}", request.input);
        assert_eq!(request.input[6], message("user", "Now again.".into()));
        assert_eq!(
            request.input[2],
            InputItem::FunctionCall {
                call_id: "call_2".into(),
                name: "write_file".into(),
                arguments: r#"{"content":"b","file_path":"a"}"#.into()
            }
        );
        assert_eq!(request.tools.len(), 2);
        assert_eq!(
            request.tools[0].parameters,
            json!({"type": "object", "properties": {"command": {"type": "string"}}})
        );
    }

    #[test]
    fn the_head_comes_from_the_path() {
        let streamed = head(
            "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
            b"{}",
        )
        .unwrap();
        assert!(streamed.stream && !streamed.stream_as_array);
        let array = head("/v1beta/models/m:streamGenerateContent", b"{}").unwrap();
        assert!(array.stream && array.stream_as_array);
        assert_eq!(streamed.model.as_deref(), Some("gemini-x"));
        assert!(
            !head("/v1beta/models/m:generateContent", b"{}")
                .unwrap()
                .stream
        );
        assert!(head("/v1beta/models/m:generateContent", b"{").is_err());
    }
}

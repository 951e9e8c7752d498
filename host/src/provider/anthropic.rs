//! Anthropic Messages: the agent's Responses request as messages with content blocks
//! (`text`, `tool_use`, `tool_result`), and a Messages stream back to output items.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{ProviderError, ProviderReply};
use crate::model::SseEvent;
use crate::model::responses::{InputItem, ResponsesRequest};
use crate::session::OutputItem;

/// The API version header sent with every request.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// `{base_url}/v1/messages`, or `{base_url}/messages` when the base already ends in `/v1`.
pub(crate) fn url(base_url: &str) -> String {
    if base_url.ends_with("/v1") {
        format!("{base_url}/messages")
    } else {
        format!("{base_url}/v1/messages")
    }
}

/// The Messages request. Consecutive blocks of one role share a message, as the API requires;
/// call outputs are `tool_result` blocks of a user message.
pub(crate) fn body(request: &ResponsesRequest, model: &str, max_tokens: u32) -> Value {
    let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, block: Value| match messages.last_mut() {
        Some((last, blocks)) if last == role => blocks.push(block),
        _ => messages.push((role.to_owned(), vec![block])),
    };
    for item in &request.input {
        match item {
            InputItem::Message { role, content } => {
                let role = if role == "assistant" {
                    "assistant"
                } else {
                    "user"
                };
                push(role, json!({"type": "text", "text": content}));
            }
            InputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let input: Value = serde_json::from_str(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                push(
                    "assistant",
                    json!({"type": "tool_use", "id": call_id, "name": name, "input": input}),
                );
            }
            InputItem::FunctionCallOutput { call_id, output } => {
                push(
                    "user",
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": output}),
                );
            }
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
    });
    if let Some(instructions) = &request.instructions {
        body["system"] = json!(instructions);
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    body
}

#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
}

/// Reads one Messages stream up to `message_stop`.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    blocks: BTreeMap<u64, Block>,
    input_tokens: u64,
    output_tokens: u64,
}

impl Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent,
    ) -> Result<Option<ProviderReply>, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
            message: format!("Messages event is not JSON: {e}"),
        })?;
        match value["type"].as_str().unwrap_or_default() {
            "message_start" => {
                let usage = &value["message"]["usage"];
                self.input_tokens = [
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                ]
                .iter()
                .filter_map(|k| usage[*k].as_u64())
                .sum();
                self.output_tokens = usage["output_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                let index = value["index"].as_u64().unwrap_or(self.blocks.len() as u64);
                let block = &value["content_block"];
                let block = match block["type"].as_str() {
                    Some("tool_use") => Block::ToolUse {
                        id: block["id"].as_str().unwrap_or_default().to_owned(),
                        name: block["name"].as_str().unwrap_or_default().to_owned(),
                        json: String::new(),
                    },
                    Some("text") => {
                        Block::Text(block["text"].as_str().unwrap_or_default().to_owned())
                    }
                    // thinking and other blocks are not acted on
                    _ => return Ok(None),
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let index = value["index"].as_u64().unwrap_or(0);
                let delta = &value["delta"];
                match (self.blocks.get_mut(&index), delta["type"].as_str()) {
                    (Some(Block::Text(text)), Some("text_delta")) => {
                        text.push_str(delta["text"].as_str().unwrap_or_default());
                    }
                    (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                        json.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(out) = value["usage"]["output_tokens"].as_u64() {
                    self.output_tokens = out;
                }
            }
            "message_stop" => return self.reply().map(Some),
            "error" => {
                let error = &value["error"];
                let kind = error["type"].as_str().unwrap_or("error");
                let message = error["message"].as_str().unwrap_or(kind);
                return Err(ProviderError::Failed {
                    message: format!("{kind}: {message}"),
                    transient: matches!(kind, "overloaded_error" | "api_error"),
                });
            }
            _ => {}
        }
        Ok(None)
    }

    pub(crate) fn end(self) -> ProviderError {
        ProviderError::Stream {
            message: "the Messages stream ended before `message_stop`".to_owned(),
        }
    }

    fn reply(&mut self) -> Result<ProviderReply, ProviderError> {
        let mut output = Vec::new();
        for block in std::mem::take(&mut self.blocks).into_values() {
            match block {
                Block::Text(text) if !text.is_empty() => output.push(OutputItem::Message { text }),
                Block::Text(_) => {}
                Block::ToolUse { id, name, json } => output.push(OutputItem::FunctionCall {
                    call_id: id,
                    name,
                    arguments: if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        json
                    },
                }),
            }
        }
        Ok(ProviderReply {
            output,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        })
    }
}

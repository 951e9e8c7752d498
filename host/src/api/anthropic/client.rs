//! Anthropic Messages: the agent's Responses request as messages with content blocks
//! (`text`, `tool_use`, `tool_result`, and the `thinking` blocks of earlier replies), and a
//! Messages stream back to output items.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::provider::carry::Carried;
use crate::api::provider::error::reported;
use crate::api::provider::error::ProviderError;
use crate::api::reply::Reply;
use crate::config::ProviderConfig;
use crate::session::OutputItem;
use crate::wire::SseEvent;
use crate::api::responses::wire::{InputItem, ResponsesRequest};

/// The API version header sent with every request.
const API_VERSION: &str = "2023-06-01";

/// The key (`x-api-key`) and the API version of every request.
pub(crate) fn headers(
    builder: reqwest::RequestBuilder,
    key: Option<&str>,
) -> reqwest::RequestBuilder {
    let builder = builder.header("anthropic-version", API_VERSION);
    match key {
        Some(key) => builder.header("x-api-key", key),
        None => builder,
    }
}

/// `{base_url}/v1/messages`, or `{base_url}/messages` when the base already ends in `/v1`.
pub(crate) fn url(base_url: &str) -> String {
    if base_url.ends_with("/v1") {
        format!("{base_url}/messages")
    } else {
        format!("{base_url}/v1/messages")
    }
}

/// The request's function tools as Anthropic tools; other kinds exist only in the Responses
/// API and are not offered (the model cannot call them through this translation).
pub(crate) fn tools(request: &ResponsesRequest) -> Vec<Value> {
    request
        .tools
        .iter()
        .filter(|t| t.is_function())
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters_schema()}))
        .collect()
}

/// The Messages request. Consecutive blocks of one role share a message, as the API requires;
/// call outputs are `tool_result` blocks of a user message. With thinking on, an assistant
/// message with calls starts with the thinking blocks of the reply that made them, signatures
/// intact, as the API requires in a tool loop.
pub(crate) fn body(
    request: &ResponsesRequest,
    config: &ProviderConfig,
    carried: &Carried,
) -> Value {
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
    for (role, blocks) in &mut messages {
        if role == "assistant" {
            restore_thinking(blocks, carried);
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let tools = tools(request);
    let mut body = json!({
        "model": config.model,
        "max_tokens": max_tokens(request, config),
        "messages": messages,
        "stream": true,
    });
    if let Some(instructions) = &request.instructions {
        body["system"] = json!(instructions);
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    match (config.thinking_budget_tokens, &config.reasoning_effort) {
        (Some(budget), effort) => {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            if let Some(effort) = effort {
                body["output_config"] = json!({"effort": effort});
            }
        }
        (None, Some(effort)) => {
            body["thinking"] = json!({"type": "adaptive"});
            body["output_config"] = json!({"effort": effort});
        }
        (None, None) => {}
    }
    body
}

/// `max_tokens`: the request's own cap (the judge's) within the configured one, but never at
/// or below a configured thinking budget, which Anthropic refuses.
fn max_tokens(request: &ResponsesRequest, config: &ProviderConfig) -> u32 {
    match request.max_output_tokens {
        None => config.max_tokens,
        Some(max) => {
            let floor = config.thinking_budget_tokens.map_or(1, |b| b + 1);
            max.min(config.max_tokens).max(floor)
        }
    }
}

/// Start an assistant message with the thinking blocks of the reply whose first call it
/// holds, unless it already starts with thinking.
fn restore_thinking(blocks: &mut Vec<Value>, carried: &Carried) {
    if blocks.first().is_some_and(is_thinking) {
        return;
    }
    let first_call = blocks
        .iter()
        .find(|b| b["type"] == "tool_use")
        .and_then(|b| b["id"].as_str());
    if let Some(thinking) = first_call.and_then(|id| carried.recall(id)) {
        let rest = std::mem::take(blocks);
        blocks.extend(thinking.iter().filter(|b| is_thinking(b)).cloned());
        blocks.extend(rest);
    }
}

fn is_thinking(block: &Value) -> bool {
    matches!(
        block["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    )
}

#[derive(Debug)]
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// Reasoning, kept to be passed back with the calls that follow it.
    Thinking {
        thinking: String,
        signature: String,
    },
    /// Reasoning the API encrypted; passed back as received.
    RedactedThinking(Value),
}

/// Reads one Messages stream up to `message_stop`.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    blocks: BTreeMap<u64, Block>,
    input_tokens: u64,
    output_tokens: u64,
    /// Cache reads (`cache_read_input_tokens`), part of `input_tokens`.
    cached_input_tokens: u64,
}

/// Input tokens of a usage object: uncached, cache writes and cache reads; `None` when it
/// reports none of them.
fn input_tokens(usage: &Value) -> Option<u64> {
    let counts: Vec<u64> = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|k| usage[*k].as_u64())
    .collect();
    (!counts.is_empty()).then(|| counts.iter().sum())
}

impl Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent,
    ) -> Result<Option<Reply>, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        let value: Value = serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
            message: format!("Messages event is not JSON: {e}"),
        })?;
        let kind = value["type"].as_str().or(event.event.as_deref());
        match kind.unwrap_or_default() {
            "message_start" => {
                let usage = &value["message"]["usage"];
                self.input_tokens = input_tokens(usage).unwrap_or(0);
                self.output_tokens = usage["output_tokens"].as_u64().unwrap_or(0);
                self.cached_input_tokens = usage["cache_read_input_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                let index = value["index"].as_u64().unwrap_or(self.blocks.len() as u64);
                let block = &value["content_block"];
                let text = |key: &str| block[key].as_str().unwrap_or_default().to_owned();
                let block = match block["type"].as_str() {
                    Some("tool_use") => Block::ToolUse {
                        id: text("id"),
                        name: text("name"),
                        json: String::new(),
                    },
                    Some("text") => Block::Text(text("text")),
                    Some("thinking") => Block::Thinking {
                        thinking: text("thinking"),
                        signature: text("signature"),
                    },
                    Some("redacted_thinking") => Block::RedactedThinking(block.clone()),
                    // server tool blocks and others are not acted on
                    _ => return Ok(None),
                };
                self.blocks.insert(index, block);
            }
            "content_block_delta" => {
                let index = value["index"].as_u64().unwrap_or(0);
                let delta = &value["delta"];
                let text = |key: &str| delta[key].as_str().unwrap_or_default();
                match (self.blocks.get_mut(&index), delta["type"].as_str()) {
                    (Some(Block::Text(t)), Some("text_delta")) => t.push_str(text("text")),
                    (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => {
                        json.push_str(text("partial_json"));
                    }
                    (Some(Block::Thinking { thinking, .. }), Some("thinking_delta")) => {
                        thinking.push_str(text("thinking"));
                    }
                    (Some(Block::Thinking { signature, .. }), Some("signature_delta")) => {
                        signature.push_str(text("signature"));
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                // Counts here are cumulative: they replace message_start's when present.
                let usage = &value["usage"];
                if let Some(out) = usage["output_tokens"].as_u64() {
                    self.output_tokens = out;
                }
                if let Some(input) = input_tokens(usage) {
                    self.input_tokens = self.input_tokens.max(input);
                }
                if let Some(cached) = usage["cache_read_input_tokens"].as_u64() {
                    self.cached_input_tokens = self.cached_input_tokens.max(cached);
                }
            }
            "message_stop" => return self.reply().map(Some),
            // `overloaded_error` (529), `api_error` (500), `rate_limit_error` (429) are
            // retried like the same status over HTTP.
            "error" => return Err(reported(&value)),
            _ => {}
        }
        Ok(None)
    }

    pub(crate) fn end(self) -> ProviderError {
        ProviderError::Stream {
            message: "the Messages stream ended before `message_stop`".to_owned(),
        }
    }

    fn reply(&mut self) -> Result<Reply, ProviderError> {
        let mut reply = Reply {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self.cached_input_tokens,
            ..Reply::default()
        };
        for block in std::mem::take(&mut self.blocks).into_values() {
            match block {
                Block::Text(text) if !text.is_empty() => {
                    reply.output.push(OutputItem::Message { text });
                }
                Block::Text(_) => {}
                Block::ToolUse { id, name, json } => reply.output.push(OutputItem::FunctionCall {
                    call_id: id,
                    name,
                    arguments: if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        json
                    },
                }),
                Block::Thinking {
                    thinking,
                    signature,
                } => reply.reasoning.push(
                    json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                ),
                Block::RedactedThinking(block) => reply.reasoning.push(block),
            }
        }
        Ok(reply)
    }
}

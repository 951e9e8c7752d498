//! Anthropic Messages: the agent's Responses request as messages with content blocks
//! (`text`, `tool_use`, `tool_result`, and the `thinking` blocks of earlier replies), and a
//! Messages stream back to output items.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::wire::{
    BlockDelta, ContentBlock, MessageParam, MessagesRequest, OutputConfig, StreamEvent, Thinking,
    Tool,
};
use crate::api::provider::carry::Carried;
use crate::api::provider::error::{ProviderError, reported};
use crate::api::reply::Reply;
use crate::api::responses::wire::{InputItem, ResponsesRequest};
use crate::config::ProviderConfig;
use crate::session::OutputItem;
use crate::wire::SseEvent;

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
pub(crate) fn declared_tools(request: &ResponsesRequest) -> Vec<Tool<'_>> {
    request
        .tools
        .iter()
        .filter(|t| t.is_function())
        .map(|t| Tool {
            name: Cow::Borrowed(&t.name),
            description: Cow::Borrowed(&t.description),
            input_schema: t.parameters_schema(),
        })
        .collect()
}

/// The Messages request. Consecutive blocks of one role share a message, as the API requires;
/// call outputs are `tool_result` blocks of a user message. With thinking on, an assistant
/// message with calls starts with the thinking blocks of the reply that made them, signatures
/// intact, as the API requires in a tool loop.
pub(crate) fn body<'a>(
    request: &'a ResponsesRequest,
    config: &'a ProviderConfig,
    carried: &Carried,
) -> Value {
    let mut messages: Vec<MessageParam<'a>> = Vec::new();
    let mut push = |role: &'static str, block: ContentBlock<'a>| match messages.last_mut() {
        Some(last) if last.role == role => last.content.push(block),
        _ => messages.push(MessageParam {
            role: Cow::Borrowed(role),
            content: vec![block],
        }),
    };
    for item in &request.input {
        match item {
            InputItem::Message { role, content } => {
                let role = if role == "assistant" {
                    "assistant"
                } else {
                    "user"
                };
                push(
                    role,
                    ContentBlock::Text {
                        text: content.into(),
                    },
                );
            }
            InputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let input: Value = serde_json::from_str(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                push(
                    "assistant",
                    ContentBlock::ToolUse {
                        id: call_id.into(),
                        name: name.into(),
                        input,
                    },
                );
            }
            InputItem::FunctionCallOutput { call_id, output } => {
                push(
                    "user",
                    ContentBlock::ToolResult {
                        tool_use_id: call_id.into(),
                        content: output.into(),
                        is_error: None,
                    },
                );
            }
        }
    }
    for message in &mut messages {
        if message.role == "assistant" {
            restore_thinking(&mut message.content, carried);
        }
    }
    let thinking = match (config.thinking_budget_tokens, &config.reasoning_effort) {
        (Some(budget_tokens), _) => Some(Thinking::Enabled { budget_tokens }),
        (None, Some(_)) => Some(Thinking::Adaptive),
        (None, None) => None,
    };
    let body = MessagesRequest {
        model: Cow::Borrowed(&config.model),
        max_tokens: max_tokens(request, config),
        messages,
        stream: true,
        system: request.instructions.as_deref().map(Cow::Borrowed),
        tools: declared_tools(request),
        thinking,
        output_config: config
            .reasoning_effort
            .as_deref()
            .map(|effort| OutputConfig {
                effort: Cow::Borrowed(effort),
            }),
    };
    // Plain structs of strings and JSON values always encode.
    serde_json::to_value(body).unwrap_or_default()
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
fn restore_thinking(blocks: &mut Vec<ContentBlock<'_>>, carried: &Carried) {
    if blocks.first().is_some_and(ContentBlock::is_thinking) {
        return;
    }
    let first_call = blocks.iter().find_map(|block| match block {
        ContentBlock::ToolUse { id, .. } => Some(id.as_ref()),
        _ => None,
    });
    if let Some(kept) = first_call.and_then(|id| carried.recall(id)) {
        let thinking = kept
            .iter()
            .filter_map(|block| ContentBlock::deserialize(block).ok())
            .filter(ContentBlock::is_thinking);
        blocks.splice(0..0, thinking.collect::<Vec<_>>());
    }
}

/// A block being read: as started, its text or reasoning grown by the deltas, and a call's
/// input as the JSON text its deltas spell.
#[derive(Debug)]
struct Block {
    block: ContentBlock<'static>,
    json: String,
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

impl Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn event(&mut self, event: SseEvent) -> Result<Option<Reply>, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        let read = match serde_json::from_str::<StreamEvent<'static>>(data) {
            Ok(read) => read,
            Err(error) => match untyped(data, event.event.as_deref(), &error)? {
                Some(read) => read,
                None => return Ok(None),
            },
        };
        match read {
            StreamEvent::MessageStart { message } => {
                let usage = message.usage;
                self.input_tokens = usage.input().unwrap_or(0);
                self.output_tokens = usage.output_tokens.unwrap_or(0);
                self.cached_input_tokens = usage.cache_read_input_tokens.unwrap_or(0);
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                // server tool blocks and others are not acted on
                if content_block != ContentBlock::Other {
                    let index = index.unwrap_or(self.blocks.len() as u64);
                    let block = Block {
                        block: content_block,
                        json: String::new(),
                    };
                    self.blocks.insert(index, block);
                }
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                if let Some(Block { block, json }) = self.blocks.get_mut(&index) {
                    match (block, delta) {
                        (ContentBlock::Text { text }, BlockDelta::TextDelta { text: piece }) => {
                            text.to_mut().push_str(&piece);
                        }
                        (
                            ContentBlock::ToolUse { .. },
                            BlockDelta::InputJsonDelta { partial_json },
                        ) => {
                            json.push_str(&partial_json);
                        }
                        (
                            ContentBlock::Thinking { thinking, .. },
                            BlockDelta::ThinkingDelta { thinking: piece },
                        ) => {
                            thinking.to_mut().push_str(&piece);
                        }
                        (
                            ContentBlock::Thinking { signature, .. },
                            BlockDelta::SignatureDelta { signature: piece },
                        ) => {
                            signature.to_mut().push_str(&piece);
                        }
                        _ => {}
                    }
                }
            }
            StreamEvent::MessageDelta { usage, .. } => {
                // Counts here are cumulative: they replace message_start's when present.
                if let Some(out) = usage.output_tokens {
                    self.output_tokens = out;
                }
                if let Some(input) = usage.input() {
                    self.input_tokens = self.input_tokens.max(input);
                }
                if let Some(cached) = usage.cache_read_input_tokens {
                    self.cached_input_tokens = self.cached_input_tokens.max(cached);
                }
            }
            StreamEvent::MessageStop => return self.reply().map(Some),
            // `overloaded_error` (529), `api_error` (500), `rate_limit_error` (429) are
            // retried like the same status over HTTP.
            StreamEvent::Error { .. } => return Err(reported(&as_sent(data))),
            StreamEvent::ContentBlockStop { .. } | StreamEvent::Ping | StreamEvent::Other => {}
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
        for Block { block, json } in std::mem::take(&mut self.blocks).into_values() {
            match block {
                ContentBlock::Text { text } if !text.is_empty() => {
                    reply.output.push(OutputItem::Message {
                        text: text.into_owned(),
                    });
                }
                ContentBlock::ToolUse { id, name, .. } => {
                    reply.output.push(OutputItem::FunctionCall {
                        call_id: id.into_owned(),
                        name: name.into_owned(),
                        arguments: if json.trim().is_empty() {
                            "{}".to_owned()
                        } else {
                            json
                        },
                    });
                }
                // Kept as the API sent them, to be passed back with the calls.
                thinking if thinking.is_thinking() => {
                    reply
                        .reasoning
                        .push(serde_json::to_value(thinking).unwrap_or_default());
                }
                _ => {}
            }
        }
        Ok(reply)
    }
}

/// The event's JSON, as sent (an event typed once already is JSON).
fn as_sent(data: &str) -> Value {
    serde_json::from_str(data).unwrap_or_default()
}

/// An event the typed read refused. One without a `type` takes its SSE `event:` name, as the
/// API names every event both ways; one with neither is nothing to act on. An `error` event
/// is the error it reports, whatever its shape; another is malformed.
fn untyped(
    data: &str,
    name: Option<&str>,
    error: &serde_json::Error,
) -> Result<Option<StreamEvent<'static>>, ProviderError> {
    let mut value: Value = serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
        message: format!("Messages event is not JSON: {e}"),
    })?;
    let typed = value.get("type").and_then(Value::as_str);
    let named = typed.is_none();
    let Some(kind) = typed.or(name).map(str::to_owned) else {
        return Ok(None);
    };
    if kind == "error" {
        return Err(reported(&value));
    }
    let malformed = |error: &dyn std::fmt::Display| ProviderError::Malformed {
        message: format!("Messages `{kind}` event: {error}"),
    };
    match value.as_object_mut() {
        Some(object) if named => {
            object.insert("type".to_owned(), Value::String(kind.clone()));
            serde_json::from_value(value)
                .map(Some)
                .map_err(|e| malformed(&e))
        }
        _ => Err(malformed(error)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(name: Option<&str>, data: Value) -> SseEvent {
        SseEvent {
            event: name.map(str::to_owned),
            data: data.to_string(),
            ..SseEvent::default()
        }
    }

    #[test]
    fn an_event_without_a_type_is_read_by_its_sse_name() {
        let mut decoder = Decoder::new();
        let events = [
            event(
                Some("message_start"),
                json!({"message": {"usage": {"input_tokens": 3, "cache_read_input_tokens": 5}}}),
            ),
            event(
                Some("content_block_start"),
                json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            event(
                Some("content_block_delta"),
                json!({"index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
            ),
            event(None, json!({"no": "type"})),
            event(
                Some("message_delta"),
                json!({"usage": {"output_tokens": 2}}),
            ),
        ];
        for event in events {
            assert!(decoder.event(event).unwrap().is_none());
        }
        let reply = decoder
            .event(event(Some("message_stop"), json!({})))
            .unwrap()
            .expect("message_stop completes the reply");
        assert_eq!(reply.output[0].text(), Some("hi"));
        assert_eq!(
            (
                reply.input_tokens,
                reply.output_tokens,
                reply.cached_input_tokens
            ),
            (8, 2, 5)
        );
    }

    #[test]
    fn an_error_event_is_the_providers_error_whatever_its_shape() {
        let overloaded = json!({"type": "error",
                                "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let error = Decoder::new().event(event(None, overloaded)).unwrap_err();
        assert!(error.is_retryable(), "{error}");
        assert!(
            error.to_string().contains("overloaded_error: Overloaded"),
            "{error}"
        );
        let odd = json!({"error": "quota exhausted"});
        let error = Decoder::new().event(event(Some("error"), odd)).unwrap_err();
        assert!(error.to_string().contains("quota exhausted"), "{error}");
    }
}

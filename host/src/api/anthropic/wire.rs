//! Wire types of Anthropic Messages, as the endpoint sends them (`server.rs`) and the live
//! provider sends and reads them (`client.rs`): the request (`system`, `messages` of content
//! blocks, `tools`, `thinking`, `output_config`), the `message` object, the events of a stream
//! (`message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
//! `message_stop`, `ping`, `error`), and the error body.
//!
//! Strings are `Cow`s: the endpoint encodes straight from the reply it borrows, the client reads
//! owned strings. Reading is lenient: unknown fields are ignored, a field that is missing,
//! `null` or not of its type reads as its default, and blocks, deltas and events of other
//! types (server tools, citations, ...) read as `Other`. The endpoint reads a request as JSON (`request.rs`), since it must take
//! whatever a client sends (`system` and `tool_result` content as a string or as blocks).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::lenient::lenient;

/// `POST {base}/v1/messages`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessagesRequest<'a> {
    /// The model.
    pub model: Cow<'a, str>,
    /// Most tokens of the answer, thinking included.
    pub max_tokens: u32,
    /// The conversation: `user` and `assistant` turns, alternating.
    pub messages: Vec<MessageParam<'a>>,
    /// Whether the answer is streamed as events.
    pub stream: bool,
    /// The system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<Cow<'a, str>>,
    /// The tools the model may call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    /// Extended thinking: a token budget, or adaptive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    /// `effort`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig<'a>>,
}

/// One turn of a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageParam<'a> {
    /// `user` or `assistant`.
    pub role: Cow<'a, str>,
    /// Its blocks, in order.
    pub content: Vec<ContentBlock<'a>>,
}

/// A tool of a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool<'a> {
    /// Its name.
    pub name: Cow<'a, str>,
    /// What it does, for the model.
    pub description: Cow<'a, str>,
    /// JSON Schema of its input object.
    pub input_schema: Value,
}

/// `thinking`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thinking {
    /// Think within a budget of tokens (models before adaptive thinking).
    Enabled {
        /// The budget, below `max_tokens`.
        budget_tokens: u32,
    },
    /// The model decides how much to think (`output_config.effort` guides it).
    Adaptive,
}

/// `output_config`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputConfig<'a> {
    /// `low`, `medium`, `high`, ...
    pub effort: Cow<'a, str>,
}

/// A content block: of a request's turn, of a `message`, or started in a stream (its text or
/// input then empty, filled by deltas).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock<'a> {
    /// Text.
    Text {
        /// The text.
        #[serde(default, deserialize_with = "lenient")]
        text: Cow<'a, str>,
    },
    /// A call.
    ToolUse {
        /// Pairs the call with its `tool_result`: `toolu_...`.
        #[serde(default, deserialize_with = "lenient")]
        id: Cow<'a, str>,
        /// The tool.
        #[serde(default, deserialize_with = "lenient")]
        name: Cow<'a, str>,
        /// Its input, a JSON object.
        #[serde(default)]
        input: Value,
    },
    /// A call's result, in a user turn.
    ToolResult {
        /// The call it answers.
        #[serde(default, deserialize_with = "lenient")]
        tool_use_id: Cow<'a, str>,
        /// The result text.
        #[serde(default, deserialize_with = "lenient")]
        content: Cow<'a, str>,
        /// Whether the call failed.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "lenient"
        )]
        is_error: Option<bool>,
    },
    /// The model's reasoning, passed back intact (signature and all) with the calls it
    /// preceded.
    Thinking {
        /// The reasoning.
        #[serde(default, deserialize_with = "lenient")]
        thinking: Cow<'a, str>,
        /// Its opaque signature.
        #[serde(default, deserialize_with = "lenient")]
        signature: Cow<'a, str>,
    },
    /// Reasoning the API encrypted, passed back as received.
    RedactedThinking {
        /// The encrypted reasoning.
        #[serde(default, deserialize_with = "lenient")]
        data: Cow<'a, str>,
    },
    /// Server tool blocks and other types, not acted on.
    #[default]
    #[serde(other, skip_serializing)]
    Other,
}

impl ContentBlock<'_> {
    /// Whether this is a `thinking` or `redacted_thinking` block.
    pub fn is_thinking(&self) -> bool {
        matches!(
            self,
            ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. }
        )
    }
}

/// A `message`: the whole answer, not streamed, or (empty) in `message_start`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Message<'a> {
    /// `msg_...`.
    #[serde(default, deserialize_with = "lenient")]
    pub id: Cow<'a, str>,
    /// Always `message`.
    #[serde(rename = "type", default, deserialize_with = "lenient")]
    pub kind: Cow<'a, str>,
    /// Always `assistant`.
    #[serde(default, deserialize_with = "lenient")]
    pub role: Cow<'a, str>,
    /// The model that answered.
    #[serde(default, deserialize_with = "lenient")]
    pub model: Cow<'a, str>,
    /// Its blocks.
    #[serde(default, deserialize_with = "lenient")]
    pub content: Vec<ContentBlock<'a>>,
    /// `end_turn`, `tool_use`, `max_tokens`, ...; `null` in `message_start`.
    #[serde(default, deserialize_with = "lenient")]
    pub stop_reason: Option<Cow<'a, str>>,
    /// The stop sequence that ended it (`null`).
    #[serde(default, deserialize_with = "lenient")]
    pub stop_sequence: Option<Cow<'a, str>>,
    /// Token counts.
    #[serde(default, deserialize_with = "lenient")]
    pub usage: Usage,
}

/// Token counts. A count the API leaves out is `None` (and not sent): `message_delta` has only
/// the output's, or the counts that changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens neither written to nor read from the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub input_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub cache_creation_input_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub cache_read_input_tokens: Option<u64>,
    /// Output tokens (cumulative in `message_delta`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub output_tokens: Option<u64>,
}

impl Usage {
    /// All input tokens: uncached, cache writes and cache reads; `None` when it reports none.
    pub fn input(&self) -> Option<u64> {
        let counts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        counts
            .iter()
            .any(Option::is_some)
            .then(|| counts.iter().flatten().sum())
    }
}

/// One event of a stream, by its `type` (also its SSE `event:` name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent<'a> {
    /// The message, without content, and the input usage.
    MessageStart {
        /// The message so far.
        #[serde(default, deserialize_with = "lenient")]
        message: Message<'a>,
    },
    /// A block starts at `index`.
    ContentBlockStart {
        /// Its position in the message (read as the next one when left out).
        #[serde(default, deserialize_with = "lenient")]
        index: Option<u64>,
        /// The block, its text or input empty.
        #[serde(default, deserialize_with = "lenient")]
        content_block: ContentBlock<'a>,
    },
    /// A piece of the block at `index`.
    ContentBlockDelta {
        /// The block's position.
        #[serde(default, deserialize_with = "lenient")]
        index: u64,
        /// The piece.
        #[serde(default, deserialize_with = "lenient")]
        delta: BlockDelta<'a>,
    },
    /// The block at `index` is complete.
    ContentBlockStop {
        /// The block's position.
        #[serde(default, deserialize_with = "lenient")]
        index: u64,
    },
    /// The stop reason, and the usage so far (cumulative).
    MessageDelta {
        /// The stop reason.
        #[serde(default, deserialize_with = "lenient")]
        delta: MessageDelta<'a>,
        /// The counts.
        #[serde(default, deserialize_with = "lenient")]
        usage: Usage,
    },
    /// The message is complete.
    MessageStop,
    /// A keep-alive.
    Ping,
    /// The stream failed (`overloaded_error`, `api_error`, ...).
    Error {
        /// What failed.
        #[serde(default, deserialize_with = "lenient")]
        error: ErrorDetail<'a>,
    },
    /// Events of other types, not acted on.
    #[serde(other, skip_serializing)]
    Other,
}

impl StreamEvent<'_> {
    /// The event's `type`, its SSE `event:` name too.
    pub fn kind(&self) -> &'static str {
        match self {
            StreamEvent::MessageStart { .. } => "message_start",
            StreamEvent::ContentBlockStart { .. } => "content_block_start",
            StreamEvent::ContentBlockDelta { .. } => "content_block_delta",
            StreamEvent::ContentBlockStop { .. } => "content_block_stop",
            StreamEvent::MessageDelta { .. } => "message_delta",
            StreamEvent::MessageStop => "message_stop",
            StreamEvent::Ping => "ping",
            StreamEvent::Error { .. } => "error",
            StreamEvent::Other => "other",
        }
    }
}

/// A piece of a block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta<'a> {
    /// Text of a `text` block.
    TextDelta {
        /// The piece.
        #[serde(default, deserialize_with = "lenient")]
        text: Cow<'a, str>,
    },
    /// A fragment of a `tool_use` block's input, JSON text.
    InputJsonDelta {
        /// The fragment.
        #[serde(default, deserialize_with = "lenient")]
        partial_json: Cow<'a, str>,
    },
    /// Reasoning of a `thinking` block.
    ThinkingDelta {
        /// The piece.
        #[serde(default, deserialize_with = "lenient")]
        thinking: Cow<'a, str>,
    },
    /// The signature of a `thinking` block.
    SignatureDelta {
        /// The signature (or a piece of it).
        #[serde(default, deserialize_with = "lenient")]
        signature: Cow<'a, str>,
    },
    /// Citations and other kinds, not acted on.
    #[default]
    #[serde(other, skip_serializing)]
    Other,
}

/// The `delta` of `message_delta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageDelta<'a> {
    /// `end_turn`, `tool_use`, `max_tokens`, ...
    #[serde(default, deserialize_with = "lenient")]
    pub stop_reason: Option<Cow<'a, str>>,
    /// The stop sequence that ended it (`null`).
    #[serde(default, deserialize_with = "lenient")]
    pub stop_sequence: Option<Cow<'a, str>>,
}

/// The error body of the Anthropic API (an HTTP error's body, and the `error` event of a
/// stream): `{"type": "error", "error": {"type", "message"}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorBody<'a> {
    /// Always `error`.
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    /// What failed.
    pub error: ErrorDetail<'a>,
}

/// The error itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorDetail<'a> {
    /// `invalid_request_error`, `not_found_error`, `overloaded_error`, `api_error`, ...
    #[serde(rename = "type", default, deserialize_with = "lenient")]
    pub kind: Cow<'a, str>,
    /// What went wrong.
    #[serde(default, deserialize_with = "lenient")]
    pub message: Cow<'a, str>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn events_read_leniently_and_other_types_are_other() {
        let read = |value: Value| serde_json::from_value::<StreamEvent<'static>>(value).unwrap();
        assert_eq!(
            read(json!({"type": "content_block_start", "index": 1,
                        "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "input": {}}})),
            StreamEvent::ContentBlockStart {
                index: Some(1),
                content_block: ContentBlock::Other
            }
        );
        assert_eq!(
            read(json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "citations_delta", "citation": {}}})),
            StreamEvent::ContentBlockDelta {
                index: 0,
                delta: BlockDelta::Other
            }
        );
        assert_eq!(
            read(
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": 9, "server_tool_use": null}})
            ),
            StreamEvent::MessageDelta {
                delta: MessageDelta {
                    stop_reason: Some("end_turn".into()),
                    stop_sequence: None
                },
                usage: Usage {
                    output_tokens: Some(9),
                    ..Usage::default()
                }
            }
        );
        assert_eq!(read(json!({"type": "fresh_event"})), StreamEvent::Other);
        assert_eq!(
            read(json!({"type": "message_start", "message": null})),
            StreamEvent::MessageStart {
                message: Message::default()
            }
        );
    }

    #[test]
    fn input_counts_cache_writes_and_reads_and_none_when_unreported() {
        let usage = Usage {
            input_tokens: Some(3),
            cache_creation_input_tokens: Some(100),
            cache_read_input_tokens: Some(1000),
            output_tokens: Some(5),
        };
        assert_eq!(usage.input(), Some(1103));
        let output_only = Usage {
            output_tokens: Some(5),
            ..Usage::default()
        };
        assert_eq!(output_only.input(), None);
    }
}

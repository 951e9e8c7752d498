//! Wire types of OpenAI Chat Completions, as the endpoint sends them (`server.rs`) and the live
//! provider sends and reads them (`client.rs`): the request (`messages` with their tool calls,
//! `tools`, `stream_options`), the `chat.completion` object, the `chat.completion.chunk` of a
//! stream with its deltas, and the usage (`prompt_tokens_details.cached_tokens`).
//!
//! Strings are `Cow`s: the endpoint encodes straight from the reply it borrows, the client reads
//! owned strings. Reading is lenient, as servers and gateways differ: unknown fields are
//! ignored, and a field that is missing, `null` or not of its type reads as its default (a
//! delta's `content` that is a list of parts, as some servers send, is no text). Nothing
//! evalhost lacks is invented on the way out: an unset `Option` is left out, except the fields
//! OpenAI sends as `null`.
//!
//! The endpoint reads a request as JSON (`request.rs`), since it must take whatever a client
//! sends; its failures are OpenAI's error body, `{"error": {"message", "type", "param",
//! "code"}}`, the same for every OpenAI API (the Responses codec's). A server that fails a
//! stream sends a chunk with that `error` object.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::lenient::lenient;

/// `POST {base}/chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatRequest<'a> {
    /// The model.
    pub model: Cow<'a, str>,
    /// The conversation, the system prompt first.
    pub messages: Vec<RequestMessage<'a>>,
    /// The functions the model may call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool<'a>>,
    /// Whether the answer is streamed as chunks.
    pub stream: bool,
    /// `include_usage`: a last chunk with the usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// `low`, `medium`, `high`, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<Cow<'a, str>>,
    /// Most tokens of the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// `stream_options`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamOptions {
    /// Ask for the usage chunk (empty `choices`) before `[DONE]`.
    pub include_usage: bool,
}

/// One message of a request: `system`, `user`, `assistant` (with the calls it made) or `tool`
/// (a call's result).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestMessage<'a> {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Cow<'a, str>,
    /// The text; `None` (sent as `null`) in an assistant message that only calls tools.
    pub content: Option<Cow<'a, str>>,
    /// An assistant message's calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall<'a>>,
    /// A `tool` message: the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Cow<'a, str>>,
}

impl<'a> RequestMessage<'a> {
    /// A message of `role` with `content`.
    pub fn new(role: impl Into<Cow<'a, str>>, content: Option<Cow<'a, str>>) -> Self {
        Self {
            role: role.into(),
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A whole call, in an assistant message of a request or of a `chat.completion`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall<'a> {
    /// Pairs the call with its `tool` message.
    #[serde(default, deserialize_with = "lenient")]
    pub id: Cow<'a, str>,
    /// Always `function`.
    #[serde(rename = "type", default, deserialize_with = "lenient")]
    pub kind: Cow<'a, str>,
    /// The function and its arguments.
    #[serde(default, deserialize_with = "lenient")]
    pub function: FunctionCall<'a>,
}

impl<'a> ToolCall<'a> {
    /// A call of function `name` with `arguments` (JSON text).
    pub fn function(
        id: impl Into<Cow<'a, str>>,
        name: impl Into<Cow<'a, str>>,
        arguments: impl Into<Cow<'a, str>>,
    ) -> Self {
        Self {
            id: id.into(),
            kind: Cow::Borrowed("function"),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

/// A call's function: its name and its arguments as JSON text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall<'a> {
    /// The function.
    #[serde(default, deserialize_with = "lenient")]
    pub name: Cow<'a, str>,
    /// Its arguments, JSON text.
    #[serde(default, deserialize_with = "lenient")]
    pub arguments: Cow<'a, str>,
}

/// A tool of a request: a function with its JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tool<'a> {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: Cow<'a, str>,
    /// The function.
    pub function: FunctionDeclaration<'a>,
}

/// A declared function.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionDeclaration<'a> {
    /// Its name.
    pub name: Cow<'a, str>,
    /// What it does, for the model.
    pub description: Cow<'a, str>,
    /// JSON Schema of its arguments object.
    pub parameters: Value,
}

/// A `chat.completion`: the whole answer, not streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletion<'a> {
    /// `chatcmpl-...`.
    #[serde(default, deserialize_with = "lenient")]
    pub id: Cow<'a, str>,
    /// Always `chat.completion`.
    #[serde(default, deserialize_with = "lenient")]
    pub object: Cow<'a, str>,
    /// Unix seconds.
    #[serde(default, deserialize_with = "lenient")]
    pub created: u64,
    /// The model that answered.
    #[serde(default, deserialize_with = "lenient")]
    pub model: Cow<'a, str>,
    /// The answers (one).
    #[serde(default, deserialize_with = "lenient")]
    pub choices: Vec<Choice<'a>>,
    /// Token counts.
    #[serde(default, deserialize_with = "lenient")]
    pub usage: Option<Usage>,
    /// Sent as `null`.
    #[serde(default, deserialize_with = "lenient")]
    pub system_fingerprint: Option<Cow<'a, str>>,
}

/// One answer of a `chat.completion`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice<'a> {
    /// Its index.
    #[serde(default, deserialize_with = "lenient")]
    pub index: u32,
    /// The assistant's message.
    #[serde(default, deserialize_with = "lenient")]
    pub message: CompletionMessage<'a>,
    /// Sent as `null`; not read.
    #[serde(default, skip_deserializing)]
    pub logprobs: Option<Value>,
    /// `stop`, `tool_calls`, `length`, ...
    #[serde(default, deserialize_with = "lenient")]
    pub finish_reason: Option<Cow<'a, str>>,
}

/// The assistant message of a `chat.completion`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionMessage<'a> {
    /// Always `assistant`.
    #[serde(default, deserialize_with = "lenient")]
    pub role: Cow<'a, str>,
    /// The text (`null` when there is none).
    #[serde(default, deserialize_with = "lenient")]
    pub content: Option<Cow<'a, str>>,
    /// The refusal (`null` when none).
    #[serde(default, deserialize_with = "lenient")]
    pub refusal: Option<Cow<'a, str>>,
    /// The calls.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient"
    )]
    pub tool_calls: Vec<ToolCall<'a>>,
}

/// One `chat.completion.chunk` of a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletionChunk<'a> {
    /// The same `chatcmpl-...` on every chunk.
    #[serde(default, deserialize_with = "lenient")]
    pub id: Cow<'a, str>,
    /// Always `chat.completion.chunk`.
    #[serde(default, deserialize_with = "lenient")]
    pub object: Cow<'a, str>,
    /// Unix seconds.
    #[serde(default, deserialize_with = "lenient")]
    pub created: u64,
    /// The model that answers.
    #[serde(default, deserialize_with = "lenient")]
    pub model: Cow<'a, str>,
    /// Sent as `null`.
    #[serde(default, deserialize_with = "lenient")]
    pub system_fingerprint: Option<Cow<'a, str>>,
    /// The deltas (one choice; none in the usage chunk).
    #[serde(default, deserialize_with = "lenient")]
    pub choices: Vec<ChunkChoice<'a>>,
    /// Left out unless the request asked for the usage (`None`); then `null` on every chunk
    /// (`Some(None)`) but the last, which has it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub usage: Option<Option<Usage>>,
    /// The error a server or gateway reports in the stream (OpenAI's error object, or a
    /// gateway's own shape), as sent: `provider::error::reported` reads its many shapes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub error: Option<Value>,
}

/// One choice of a chunk: its delta, and the `finish_reason` on its last chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice<'a> {
    /// Its index.
    #[serde(default, deserialize_with = "lenient")]
    pub index: u32,
    /// What this chunk adds.
    #[serde(default, deserialize_with = "lenient")]
    pub delta: Delta<'a>,
    /// Sent as `null`; not read.
    #[serde(default, skip_deserializing)]
    pub logprobs: Option<Value>,
    /// `stop`, `tool_calls`, `length`, ... on the choice's last chunk; `null` before.
    #[serde(default, deserialize_with = "lenient")]
    pub finish_reason: Option<Cow<'a, str>>,
}

/// What a chunk adds to the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta<'a> {
    /// `assistant`, on the first chunk.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub role: Option<Cow<'a, str>>,
    /// A piece of the text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub content: Option<Cow<'a, str>>,
    /// A piece of a refusal; `Some(None)` is sent as `null` (the first chunk's "no refusal").
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub refusal: Option<Option<Cow<'a, str>>>,
    /// Pieces of calls.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient"
    )]
    pub tool_calls: Vec<ToolCallDelta<'a>>,
}

/// A piece of a call: the first with the call's `index`, `id`, `type` and function name, later
/// ones fragments of its arguments. Servers differ: some repeat the id (and name) on every
/// piece, some leave out `index`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCallDelta<'a> {
    /// Which call of the answer.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub index: Option<u64>,
    /// The call's id.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub id: Option<Cow<'a, str>>,
    /// `function`.
    #[serde(
        rename = "type",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub kind: Option<Cow<'a, str>>,
    /// The function's name and a piece of the arguments.
    #[serde(default, deserialize_with = "lenient")]
    pub function: FunctionDelta<'a>,
}

/// A piece of a call's function.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionDelta<'a> {
    /// The function's name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub name: Option<Cow<'a, str>>,
    /// A fragment of the arguments' JSON text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub arguments: Option<Cow<'a, str>>,
}

/// Token counts. A count a server leaves out is `None` (and not sent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the request.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub prompt_tokens: Option<u64>,
    /// Tokens of the answer.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub completion_tokens: Option<u64>,
    /// Their sum.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub total_tokens: Option<u64>,
    /// `cached_tokens`: of the request's tokens, those read from the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
}

impl Usage {
    /// The counts of an answer: `prompt` and `completion` tokens, and their sum.
    pub fn counted(prompt: u64, completion: u64) -> Self {
        Self {
            prompt_tokens: Some(prompt),
            completion_tokens: Some(completion),
            total_tokens: Some(prompt + completion),
            prompt_tokens_details: None,
        }
    }
}

/// `prompt_tokens_details`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptTokensDetails {
    /// Tokens read from the prompt cache.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub cached_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_chunk_reads_leniently() {
        let chunk: ChatCompletionChunk<'static> = serde_json::from_value(json!({
            "choices": [{"delta": {"content": [{"type": "text", "text": "x"}], "tool_calls": null,
                                   "refusal": null, "reasoning_content": "hm"},
                         "finish_reason": null, "logprobs": {"content": []}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": null,
                      "prompt_tokens_details": {"cached_tokens": 3}},
            "service_tier": "default",
        }))
        .expect("a lenient read");
        let delta = &chunk.choices[0].delta;
        assert_eq!(delta.content, None, "a list of parts is no text");
        assert!(delta.tool_calls.is_empty() && delta.refusal.is_none());
        let usage = chunk.usage.flatten().expect("usage");
        assert_eq!(usage.prompt_tokens, Some(7));
        assert_eq!(usage.completion_tokens, None);
        assert_eq!(
            usage.prompt_tokens_details.and_then(|d| d.cached_tokens),
            Some(3)
        );
        let empty: ChatCompletionChunk<'static> =
            serde_json::from_str(r#"{"choices": null, "usage": null}"#).expect("nulls");
        assert!(empty.choices.is_empty() && empty.usage.is_none());
    }

    #[test]
    fn usage_is_left_out_unless_asked_and_null_until_the_last_chunk() {
        let mut chunk = ChatCompletionChunk {
            id: "chatcmpl-1".into(),
            object: "chat.completion.chunk".into(),
            created: 0,
            model: "m".into(),
            system_fingerprint: None,
            choices: Vec::new(),
            usage: None,
            error: None,
        };
        let text = |chunk: &ChatCompletionChunk<'_>| serde_json::to_string(chunk).unwrap();
        assert!(!text(&chunk).contains("usage"), "{}", text(&chunk));
        chunk.usage = Some(None);
        assert!(text(&chunk).contains(r#""usage":null"#), "{}", text(&chunk));
        chunk.usage = Some(Some(Usage::counted(2, 3)));
        assert!(
            text(&chunk)
                .contains(r#""usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}"#),
            "{}",
            text(&chunk)
        );
    }
}

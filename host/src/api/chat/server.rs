//! The OpenAI Chat Completions codec.
//!
//! Streamed: a first chunk with the assistant role, content deltas, `tool_calls` deltas (the
//! first of each call with its `index`, `id`, `type` and `function.name`, then argument
//! fragments), a last chunk with the `finish_reason` (`stop` or `tool_calls`), the usage chunk
//! (empty `choices`) when `stream_options.include_usage` asked for it, and `data: [DONE]`.
//! Not streamed: one `chat.completion` object. Ids: `chatcmpl-N`.

use std::borrow::Cow;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::wire::{
    ChatCompletion, ChatCompletionChunk, Choice, ChunkChoice, CompletionMessage, Delta,
    FunctionDelta, ToolCall, ToolCallDelta, Usage,
};
use crate::api::head::Answering;
use crate::api::reply::Reply;
use crate::api::streamed::{split_deltas, sse};
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// The reply's texts, joined.
fn text(reply: &Reply) -> Option<Cow<'_, str>> {
    let texts: Vec<&str> = reply.output.iter().filter_map(OutputItem::text).collect();
    match texts.as_slice() {
        [] => None,
        [one] => Some(Cow::Borrowed(one)),
        many => Some(Cow::Owned(many.concat())),
    }
}

fn calls(reply: &Reply) -> Vec<(&str, &str, &str)> {
    reply.output.iter().filter_map(OutputItem::call).collect()
}

fn usage(reply: &Reply) -> Usage {
    Usage::counted(reply.input_tokens, reply.output_tokens)
}

/// The reply as a chat completion, streamed or not as the request asked.
pub(crate) fn encode(reply: &Reply, ctx: &Answering<'_>) -> Response {
    let calls = calls(reply);
    let finish_reason = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let id = format!("chatcmpl-{}", ctx.n);
    if !ctx.head.stream {
        let body = ChatCompletion {
            id: id.into(),
            object: "chat.completion".into(),
            created: 0,
            model: ctx.model.into(),
            choices: vec![Choice {
                index: 0,
                message: CompletionMessage {
                    role: "assistant".into(),
                    content: text(reply),
                    refusal: None,
                    tool_calls: calls
                        .iter()
                        .map(|&(call_id, name, arguments)| {
                            ToolCall::function(call_id, name, arguments)
                        })
                        .collect(),
                },
                logprobs: None,
                finish_reason: Some(finish_reason.into()),
            }],
            usage: Some(usage(reply)),
            system_fingerprint: None,
        };
        return (StatusCode::OK, axum::Json(body)).into_response();
    }
    let mut frames = Frames {
        id: &id,
        model: ctx.model,
        usage: ctx.head.include_usage.then_some(None),
        frames: Vec::new(),
    };
    frames.delta(Delta {
        role: Some("assistant".into()),
        content: Some("".into()),
        refusal: Some(None),
        tool_calls: Vec::new(),
    });
    if let Some(text) = text(reply) {
        for piece in split_deltas(&text) {
            frames.delta(Delta {
                content: Some(piece.into()),
                ..Delta::default()
            });
        }
    }
    for (index, &(call_id, name, arguments)) in calls.iter().enumerate() {
        let index = Some(index as u64);
        frames.delta(Delta {
            tool_calls: vec![ToolCallDelta {
                index,
                id: Some(call_id.into()),
                kind: Some("function".into()),
                function: FunctionDelta {
                    name: Some(name.into()),
                    arguments: Some("".into()),
                },
            }],
            ..Delta::default()
        });
        for piece in split_deltas(arguments) {
            frames.delta(Delta {
                tool_calls: vec![ToolCallDelta {
                    index,
                    function: FunctionDelta {
                        name: None,
                        arguments: Some(piece.into()),
                    },
                    ..ToolCallDelta::default()
                }],
                ..Delta::default()
            });
        }
    }
    frames.push(vec![ChunkChoice {
        index: 0,
        delta: Delta::default(),
        logprobs: None,
        finish_reason: Some(finish_reason.into()),
    }]);
    if frames.usage.is_some() {
        frames.usage = Some(Some(usage(reply)));
        frames.push(Vec::new());
    }
    let mut frames = frames.frames;
    frames.push(data("[DONE]".to_owned()));
    sse(frames)
}

/// A chunk stream being built: every chunk with the answer's id and model, and `usage` as the
/// request asked (left out, or `null` until the usage chunk).
struct Frames<'a> {
    id: &'a str,
    model: &'a str,
    usage: Option<Option<Usage>>,
    frames: Vec<Bytes>,
}

impl Frames<'_> {
    /// A chunk of one choice adding `delta`.
    fn delta(&mut self, delta: Delta<'_>) {
        self.push(vec![ChunkChoice {
            index: 0,
            delta,
            logprobs: None,
            finish_reason: None,
        }]);
    }

    fn push(&mut self, choices: Vec<ChunkChoice<'_>>) {
        let chunk = ChatCompletionChunk {
            id: Cow::Borrowed(self.id),
            object: Cow::Borrowed("chat.completion.chunk"),
            created: 0,
            model: Cow::Borrowed(self.model),
            system_fingerprint: None,
            choices,
            usage: self.usage,
            error: None,
        };
        // Plain structs of strings and numbers always encode.
        self.frames
            .push(data(serde_json::to_string(&chunk).unwrap_or_default()));
    }
}

fn data(data: String) -> Bytes {
    Bytes::from(
        SseEvent {
            data,
            ..SseEvent::default()
        }
        .encode(),
    )
}

/// `GET /v1/models`: the run's model, as OpenAI lists models.
pub(crate) fn models(model: &str) -> Response {
    let body = json!({
        "object": "list",
        "data": [{"id": model, "object": "model", "created": 0, "owned_by": "evalhost"}],
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::head::RequestHead;
    use crate::api::provider::ReplyStream;
    use crate::api::streamed::body;
    use crate::wire::Api;

    fn reply() -> Reply {
        Reply {
            output: vec![
                OutputItem::Message {
                    text: "Reading it: «é».".into(),
                },
                OutputItem::FunctionCall {
                    call_id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"in.txt"}"#.into(),
                },
                OutputItem::FunctionCall {
                    call_id: "call_2".into(),
                    name: "list".into(),
                    arguments: "{}".into(),
                },
            ],
            input_tokens: 12,
            output_tokens: 5,
            ..Reply::default()
        }
    }

    #[test]
    fn what_the_endpoint_streams_the_live_client_reads_back() {
        for include_usage in [true, false] {
            let head = RequestHead {
                stream: true,
                include_usage,
                ..RequestHead::default()
            };
            let ctx = Answering {
                n: 3,
                model: "m",
                head: &head,
            };
            let mut stream = ReplyStream::new(Api::Chat);
            let read = stream.push(&body(encode(&reply(), &ctx))).unwrap();
            let read = read.expect("`[DONE]` completes the reply");
            assert_eq!(read.output, reply().output);
            let tokens = (read.input_tokens, read.output_tokens);
            assert_eq!(tokens, if include_usage { (12, 5) } else { (0, 0) });
        }
    }

    #[test]
    fn a_completion_has_the_text_the_calls_and_the_usage() {
        let head = RequestHead::default();
        let ctx = Answering {
            n: 3,
            model: "m",
            head: &head,
        };
        let completion: ChatCompletion<'_> =
            serde_json::from_slice(&body(encode(&reply(), &ctx))).unwrap();
        assert_eq!(
            (&*completion.id, &*completion.object),
            ("chatcmpl-3", "chat.completion")
        );
        let choice = &completion.choices[0];
        assert_eq!(choice.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(choice.message.content.as_deref(), Some("Reading it: «é»."));
        assert_eq!(
            choice.message.tool_calls[1],
            ToolCall::function("call_2", "list", "{}")
        );
        assert_eq!(completion.usage, Some(Usage::counted(12, 5)));
    }
}

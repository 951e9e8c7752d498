//! The OpenAI Responses codec: a [`Reply`] as OpenAI's API sends it.
//!
//! Streamed, every event carries its `sequence_number`: `response.created`,
//! `response.in_progress`; per message `response.output_item.added`,
//! `response.content_part.added`, `response.output_text.delta`..., `response.output_text.done`,
//! `response.content_part.done`, `response.output_item.done`; per call
//! `response.output_item.added`, `response.function_call_arguments.delta`..., `.done`,
//! `response.output_item.done` (a call to a tool the request declared `custom` is a
//! `custom_tool_call` with `response.custom_tool_call_input.*`); then `response.completed`
//! with the usage. Not streamed, the same `response` object in one JSON body.
//!
//! Ids are derived from the request number, so an answer is the same bytes on every run:
//! `resp_N`, `msg_N`, `fc_N`, `ctc_N` (`_K` appended for the K-th further item of a response).

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Answering;
use crate::model::SseEvent;
use crate::model::record::Reply;
use crate::session::OutputItem;

/// How many deltas a text or an argument string is split into, at most.
pub(crate) const DELTAS: usize = 3;

/// One output item of a reply, with the ids it gets in request `n`.
struct Item<'a> {
    index: usize,
    kind: ItemKind<'a>,
}

enum ItemKind<'a> {
    Message {
        id: String,
        text: &'a str,
    },
    Call {
        id: String,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    Custom {
        id: String,
        call_id: &'a str,
        name: &'a str,
        input: String,
    },
}

fn items<'a>(reply: &'a Reply, ctx: &Answering<'_>) -> Vec<Item<'a>> {
    let n = ctx.n;
    reply
        .output
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let kind = match item {
                OutputItem::Message { text } => ItemKind::Message {
                    id: item_id("msg", n, index),
                    text,
                },
                OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } if ctx.head.custom_tools.iter().any(|t| t == name) => ItemKind::Custom {
                    id: item_id("ctc", n, index),
                    call_id,
                    name,
                    input: custom_input(arguments),
                },
                OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } => ItemKind::Call {
                    id: item_id("fc", n, index),
                    call_id,
                    name,
                    arguments,
                },
            };
            Item { index, kind }
        })
        .collect()
}

/// The free-text input of a call to a custom tool: the `input` string of the script's
/// arguments (`{input: "*** Begin Patch..."}`), a JSON string as is, else the JSON text.
/// The id of output item `index` of response `n` (`msg_3`, `fc_3_1`, ...): the first item
/// keeps the ids a one-item reply always had.
pub(crate) fn item_id(prefix: &str, n: u32, index: usize) -> String {
    if index == 0 {
        format!("{prefix}_{n}")
    } else {
        format!("{prefix}_{n}_{index}")
    }
}

pub(crate) fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::String(text)) => text,
        Ok(Value::Object(map))
            if map.len() == 1 && map.get("input").is_some_and(Value::is_string) =>
        {
            map["input"].as_str().unwrap_or_default().to_owned()
        }
        _ => arguments.to_owned(),
    }
}

impl Item<'_> {
    /// The item as it is when finished (`done: true`) or as first announced.
    fn json(&self, done: bool) -> Value {
        let status = if done { "completed" } else { "in_progress" };
        match &self.kind {
            ItemKind::Message { id, text } => json!({
                "type": "message", "id": id, "status": status, "role": "assistant",
                "content": if done { vec![text_part(text)] } else { Vec::new() },
            }),
            ItemKind::Call {
                id,
                call_id,
                name,
                arguments,
            } => json!({
                "type": "function_call", "id": id, "call_id": call_id, "name": name,
                "arguments": if done { *arguments } else { "" }, "status": status,
            }),
            ItemKind::Custom {
                id,
                call_id,
                name,
                input,
            } => json!({
                "type": "custom_tool_call", "id": id, "call_id": call_id, "name": name,
                "input": if done { input.as_str() } else { "" }, "status": status,
            }),
        }
    }
}

fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

/// The `response` object of request `n`.
fn response(
    ctx: &Answering<'_>,
    status: &str,
    output: Vec<Value>,
    usage: Value,
    error: Value,
) -> Value {
    json!({
        "id": format!("resp_{}", ctx.n),
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": ctx.model,
        "output": output,
        "usage": usage,
        "error": error,
        "incomplete_details": null,
        "instructions": null,
        "metadata": {},
        "parallel_tool_calls": true,
        "temperature": 1.0,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "text": {"format": {"type": "text"}},
    })
}

fn usage(reply: &Reply) -> Value {
    json!({
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    })
}

/// The reply as a Responses answer: an SSE stream when the request asked for one, else one
/// `response` object.
pub(crate) fn encode(reply: &Reply, ctx: &Answering<'_>) -> Response {
    let items = items(reply, ctx);
    let output: Vec<Value> = items.iter().map(|item| item.json(true)).collect();
    let completed = response(ctx, "completed", output, usage(reply), Value::Null);
    if !ctx.head.stream {
        return (StatusCode::OK, axum::Json(completed)).into_response();
    }
    let mut events = Events::default();
    let started = response(ctx, "in_progress", Vec::new(), Value::Null, Value::Null);
    events.push(json!({"type": "response.created", "response": started.clone()}));
    events.push(json!({"type": "response.in_progress", "response": started}));
    for item in &items {
        let output_index = item.index;
        events.push(json!({
            "type": "response.output_item.added", "output_index": output_index,
            "item": item.json(false),
        }));
        match &item.kind {
            ItemKind::Message { id, text } => {
                let part = |text: &str| {
                    json!({
                        "item_id": id, "output_index": output_index, "content_index": 0,
                        "part": text_part(text),
                    })
                };
                events.push(typed("response.content_part.added", part("")));
                for delta in split_deltas(text) {
                    events.push(json!({
                        "type": "response.output_text.delta", "item_id": id,
                        "output_index": output_index, "content_index": 0, "delta": delta,
                        "logprobs": [],
                    }));
                }
                events.push(json!({
                    "type": "response.output_text.done", "item_id": id,
                    "output_index": output_index, "content_index": 0, "text": text,
                    "logprobs": [],
                }));
                events.push(typed("response.content_part.done", part(text)));
            }
            ItemKind::Call {
                id,
                name,
                arguments,
                ..
            } => {
                for delta in split_deltas(arguments) {
                    events.push(json!({
                        "type": "response.function_call_arguments.delta", "item_id": id,
                        "output_index": output_index, "delta": delta,
                    }));
                }
                events.push(json!({
                    "type": "response.function_call_arguments.done", "item_id": id,
                    "output_index": output_index, "name": name, "arguments": arguments,
                }));
            }
            ItemKind::Custom { id, input, .. } => {
                for delta in split_deltas(input) {
                    events.push(json!({
                        "type": "response.custom_tool_call_input.delta", "item_id": id,
                        "output_index": output_index, "delta": delta,
                    }));
                }
                events.push(json!({
                    "type": "response.custom_tool_call_input.done", "item_id": id,
                    "output_index": output_index, "input": input,
                }));
            }
        }
        events.push(json!({
            "type": "response.output_item.done", "output_index": output_index,
            "item": item.json(true),
        }));
    }
    events.push(json!({"type": "response.completed", "response": completed}));
    events.into_response()
}

/// A failed request: `response.failed` streamed, else an HTTP error with the code.
pub(crate) fn failure(code: &str, message: &str, ctx: &Answering<'_>) -> Response {
    if !ctx.head.stream {
        let status = if code == "provider_error" {
            StatusCode::BAD_GATEWAY
        } else {
            StatusCode::BAD_REQUEST
        };
        let body = json!({"error": {
            "message": message, "type": "invalid_request_error", "param": null, "code": code,
        }});
        return (status, axum::Json(body)).into_response();
    }
    let failed = response(
        ctx,
        "failed",
        Vec::new(),
        Value::Null,
        json!({"code": code, "message": message}),
    );
    let mut events = Events::default();
    events.push(json!({"type": "response.failed", "response": failed}));
    events.into_response()
}

/// The error shape of the OpenAI APIs: `{"error": {"message", "type", "param", "code"}}`.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    let kind = if status == StatusCode::NOT_FOUND {
        "not_found_error"
    } else {
        "invalid_request_error"
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    (status, axum::Json(body)).into_response()
}

fn typed(kind: &str, mut event: Value) -> Value {
    event["type"] = Value::from(kind);
    event
}

/// A Responses event stream being built: each event gets the next `sequence_number`.
#[derive(Default)]
struct Events(Vec<Bytes>);

impl Events {
    fn push(&mut self, mut event: Value) {
        event["sequence_number"] = Value::from(self.0.len());
        let kind = event["type"].as_str().map(str::to_owned);
        self.0.push(Bytes::from(
            SseEvent {
                event: kind,
                data: event.to_string(),
                ..SseEvent::default()
            }
            .encode(),
        ));
    }

    fn into_response(self) -> Response {
        sse(self.0)
    }
}

/// A `200 OK` event stream sending each chunk as its own body frame, as a live service does.
pub(crate) fn sse(chunks: Vec<Bytes>) -> Response {
    let chunks = chunks.into_iter().map(Ok::<_, Infallible>);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(futures_util::stream::iter(chunks)),
    )
        .into_response()
}

/// Split text into up to [`DELTAS`] non-empty pieces on character boundaries.
pub(crate) fn split_deltas(text: &str) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(DELTAS);
    let mut start = 0;
    for k in 1..DELTAS {
        let mut cut = text.len() * k / DELTAS;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        if cut > start {
            pieces.push(&text[start..cut]);
            start = cut;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_rejoin_to_the_text() {
        for text in ["", "a", "ab", "hello world", "ééé", "日本語のテキスト"] {
            let pieces = split_deltas(text);
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().all(|p| !p.is_empty()));
            assert!(pieces.len() <= DELTAS);
        }
        assert_eq!(split_deltas("hello world").len(), 3);
    }

    #[test]
    fn a_custom_tool_gets_its_input_text() {
        assert_eq!(
            custom_input(r#"{"input":"*** Begin Patch"}"#),
            "*** Begin Patch"
        );
        assert_eq!(custom_input(r#""raw""#), "raw");
        assert_eq!(custom_input(r#"{"a":1,"b":2}"#), r#"{"a":1,"b":2}"#);
    }
}

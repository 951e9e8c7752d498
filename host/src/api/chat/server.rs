//! The OpenAI Chat Completions codec.
//!
//! Streamed: a first chunk with the assistant role, content deltas, `tool_calls` deltas (the
//! first of each call with its `index`, `id`, `type` and `function.name`, then argument
//! fragments), a last chunk with the `finish_reason` (`stop` or `tool_calls`), the usage chunk
//! (empty `choices`) when `stream_options.include_usage` asked for it, and `data: [DONE]`.
//! Not streamed: one `chat.completion` object. Ids: `chatcmpl-N`.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::api::head::Answering;
use crate::api::reply::Reply;
use crate::api::streamed::{split_deltas, sse};
use crate::session::OutputItem;
use crate::wire::SseEvent;

fn text(reply: &Reply) -> Option<String> {
    let texts: Vec<&str> = reply.output.iter().filter_map(OutputItem::text).collect();
    (!texts.is_empty()).then(|| texts.concat())
}

fn calls(reply: &Reply) -> Vec<(&str, &str, &str)> {
    reply.output.iter().filter_map(OutputItem::call).collect()
}

fn usage(reply: &Reply) -> Value {
    json!({
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    })
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
        let mut message = json!({"role": "assistant", "content": text(reply), "refusal": null});
        if !calls.is_empty() {
            message["tool_calls"] = calls
                .iter()
                .map(|(call_id, name, arguments)| {
                    json!({"id": call_id, "type": "function",
                           "function": {"name": name, "arguments": arguments}})
                })
                .collect();
        }
        let body = json!({
            "id": id, "object": "chat.completion", "created": 0, "model": ctx.model,
            "choices": [{"index": 0, "message": message, "logprobs": null,
                         "finish_reason": finish_reason}],
            "usage": usage(reply),
            "system_fingerprint": null,
        });
        return (StatusCode::OK, axum::Json(body)).into_response();
    }
    let include_usage = ctx.head.include_usage;
    let chunk = |delta: Value, finish: Value| {
        let mut chunk = json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": ctx.model,
            "system_fingerprint": null,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if include_usage {
            chunk["usage"] = Value::Null;
        }
        chunk
    };
    let mut chunks = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    if let Some(text) = text(reply) {
        for delta in split_deltas(&text) {
            chunks.push(chunk(json!({"content": delta}), Value::Null));
        }
    }
    for (index, (call_id, name, arguments)) in calls.iter().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        for delta in split_deltas(arguments) {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": delta}}]}),
                Value::Null,
            ));
        }
    }
    chunks.push(chunk(json!({}), Value::from(finish_reason)));
    if include_usage {
        chunks.push(json!({
            "id": id, "object": "chat.completion.chunk", "created": 0, "model": ctx.model,
            "system_fingerprint": null, "choices": [], "usage": usage(reply),
        }));
    }
    let mut frames: Vec<Bytes> = chunks.iter().map(|c| data(&c.to_string())).collect();
    frames.push(data("[DONE]"));
    sse(frames)
}

fn data(text: &str) -> Bytes {
    Bytes::from(
        SseEvent {
            data: text.to_owned(),
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

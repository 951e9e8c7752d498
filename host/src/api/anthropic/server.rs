//! The Anthropic Messages codec.
//!
//! Streamed: `message_start` (the message with empty content and the input usage),
//! per block `content_block_start` / `content_block_delta` (`text_delta` or
//! `input_json_delta`) / `content_block_stop`, `message_delta` with the `stop_reason`
//! (`end_turn` or `tool_use`) and the output usage, `message_stop`. Not streamed: one
//! `message` object. Ids: `msg_N`; call ids are the script's (`toolu_NN`).

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::api::head::Answering;
use crate::api::reply::{BYTES_PER_TOKEN, Reply};
use crate::api::streamed::{split_deltas, sse};
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// A block's content: text, or a call's input as a JSON object.
fn block(item: &OutputItem) -> Value {
    match item {
        OutputItem::Message { text } => json!({"type": "text", "text": text}),
        OutputItem::FunctionCall {
            call_id,
            name,
            arguments,
        } => json!({"type": "tool_use", "id": call_id, "name": name, "input": input(arguments)}),
    }
}

/// A call's arguments as the `input` object (arguments that are not a JSON object are kept
/// under `arguments`, so nothing is lost).
fn input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(object @ Value::Object(_)) => object,
        _ => json!({"arguments": arguments}),
    }
}

fn message(reply: &Reply, ctx: &Answering<'_>, content: Vec<Value>, stop_reason: Value) -> Value {
    json!({
        "id": format!("msg_{}", ctx.n),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": reply.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": reply.output_tokens,
        },
    })
}

/// The reply as an Anthropic message, streamed or not as the request asked.
pub(crate) fn encode(reply: &Reply, ctx: &Answering<'_>) -> Response {
    let calls = reply
        .output
        .iter()
        .any(|item| matches!(item, OutputItem::FunctionCall { .. }));
    let stop_reason = if calls { "tool_use" } else { "end_turn" };
    if !ctx.head.stream {
        let content = reply.output.iter().map(block).collect();
        let body = message(reply, ctx, content, Value::from(stop_reason));
        return (StatusCode::OK, axum::Json(body)).into_response();
    }
    let mut start = message(reply, ctx, Vec::new(), Value::Null);
    start["usage"]["output_tokens"] = Value::from(1);
    let mut events = vec![json!({"type": "message_start", "message": start})];
    for (index, item) in reply.output.iter().enumerate() {
        let (first, deltas): (Value, Vec<Value>) = match item {
            OutputItem::Message { text } => (
                json!({"type": "text", "text": ""}),
                split_deltas(text)
                    .into_iter()
                    .map(|t| json!({"type": "text_delta", "text": t}))
                    .collect(),
            ),
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let json = input(arguments).to_string();
                let deltas = split_deltas(&json)
                    .into_iter()
                    .map(|t| json!({"type": "input_json_delta", "partial_json": t}))
                    .collect();
                (
                    json!({"type": "tool_use", "id": call_id, "name": name, "input": {}}),
                    deltas,
                )
            }
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": first}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": reply.output_tokens},
    }));
    events.push(json!({"type": "message_stop"}));
    let frames: Vec<Bytes> = events
        .iter()
        .map(|event| {
            Bytes::from(
                SseEvent {
                    event: event["type"].as_str().map(str::to_owned),
                    data: event.to_string(),
                    ..SseEvent::default()
                }
                .encode(),
            )
        })
        .collect();
    sse(frames)
}

/// The error shape of the Anthropic API: `{"type": "error", "error": {"type", "message"}}`.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    let kind = match status {
        StatusCode::NOT_FOUND => "not_found_error",
        StatusCode::BAD_GATEWAY | StatusCode::INTERNAL_SERVER_ERROR => "api_error",
        _ => "invalid_request_error",
    };
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (status, axum::Json(body)).into_response()
}

/// `POST /v1/messages/count_tokens`: the synthetic count of the body.
pub(crate) fn count_tokens(body: &[u8]) -> Response {
    let tokens = body.len() as u64 / BYTES_PER_TOKEN;
    (StatusCode::OK, axum::Json(json!({"input_tokens": tokens}))).into_response()
}

/// `GET /v1/models` with Anthropic headers: the run's model, as Anthropic lists models.
pub(crate) fn models(model: &str) -> Response {
    let body = json!({
        "data": [{"type": "model", "id": model, "display_name": model,
                  "created_at": "1970-01-01T00:00:00Z"}],
        "has_more": false, "first_id": model, "last_id": model,
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

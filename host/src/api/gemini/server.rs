//! The Gemini codec: a [`Reply`] as Google's `generateContent` sends it.
//!
//! Not streamed (`:generateContent`): one `GenerateContentResponse`, its one candidate the
//! `model` turn (text parts, `functionCall` parts with the call's id and its arguments as an
//! object), `finishReason: STOP` and `usageMetadata`. Streamed (`:streamGenerateContent`,
//! Server-Sent Events): the same answer in chunks, each a `GenerateContentResponse`: a text's
//! deltas, then each call whole, the last chunk carrying `finishReason` and `usageMetadata`;
//! without `?alt=sse`, as Google answers it too, the same chunks as one JSON array.
//! Ids: `resp_N`. Failures are Google's error body with its status name.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::wire::{
    Candidate, Content, ErrorBody, ErrorDetail, FunctionCall, GenerateContentResponse, Part,
    UsageMetadata, status_name,
};
use super::{Method, parse_path};
use crate::api::head::Answering;
use crate::api::reply::{BYTES_PER_TOKEN, Reply};
use crate::api::streamed::{split_deltas, sse};
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// A call's arguments as the object Gemini sends (text that is not JSON is sent as a string).
fn args(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}

fn call_part(call_id: &str, name: &str, arguments: &str) -> Part {
    Part {
        function_call: Some(FunctionCall {
            id: Some(call_id.to_owned()),
            name: name.to_owned(),
            args: args(arguments),
        }),
        ..Part::default()
    }
}

fn text_part(text: &str) -> Part {
    Part {
        text: Some(text.to_owned()),
        ..Part::default()
    }
}

fn usage(reply: &Reply) -> UsageMetadata {
    UsageMetadata {
        prompt_token_count: reply.input_tokens,
        candidates_token_count: reply.output_tokens,
        thoughts_token_count: 0,
        cached_content_token_count: reply.cached_input_tokens,
        total_token_count: reply.input_tokens + reply.output_tokens,
    }
}

/// One `GenerateContentResponse` holding `parts`, finished (with the usage) when `last`.
fn response(
    parts: Vec<Part>,
    last: Option<&Reply>,
    ctx: &Answering<'_>,
) -> GenerateContentResponse {
    GenerateContentResponse {
        candidates: vec![Candidate {
            content: Some(Content {
                role: Some("model".to_owned()),
                parts,
            }),
            finish_reason: last.map(|_| "STOP".to_owned()),
            index: 0,
        }],
        usage_metadata: last.map(usage),
        model_version: Some(ctx.model.to_owned()),
        response_id: Some(format!("resp_{}", ctx.n)),
        prompt_feedback: None,
    }
}

/// The reply as Gemini's answer, streamed or not as the request's path asked.
pub(crate) fn encode(reply: &Reply, ctx: &Answering<'_>) -> Response {
    if !ctx.head.stream {
        let parts = reply
            .output
            .iter()
            .map(|item| match item {
                OutputItem::Message { text } => text_part(text),
                OutputItem::FunctionCall {
                    call_id,
                    name,
                    arguments,
                } => call_part(call_id, name, arguments),
            })
            .collect();
        return (
            StatusCode::OK,
            axum::Json(response(parts, Some(reply), ctx)),
        )
            .into_response();
    }
    let mut chunks: Vec<Vec<Part>> = Vec::new();
    for item in &reply.output {
        match item {
            OutputItem::Message { text } => {
                chunks.extend(split_deltas(text).into_iter().map(|d| vec![text_part(d)]));
            }
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => chunks.push(vec![call_part(call_id, name, arguments)]),
        }
    }
    if chunks.is_empty() {
        chunks.push(vec![text_part("")]);
    }
    let count = chunks.len();
    let chunks: Vec<GenerateContentResponse> = chunks
        .into_iter()
        .enumerate()
        .map(|(k, parts)| response(parts, (k + 1 == count).then_some(reply), ctx))
        .collect();
    if ctx.head.stream_as_array {
        return (StatusCode::OK, axum::Json(chunks)).into_response();
    }
    let frames: Vec<Bytes> = chunks
        .iter()
        .map(|chunk| {
            // Plain structs of strings and numbers always encode.
            let data = serde_json::to_string(chunk).unwrap_or_default();
            Bytes::from(
                SseEvent {
                    data,
                    ..SseEvent::default()
                }
                .encode(),
            )
        })
        .collect();
    sse(frames)
}

/// Google's error body: `{"error": {"code", "message", "status"}}`.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    let body = ErrorBody {
        error: ErrorDetail {
            code: status.as_u16(),
            message: message.to_owned(),
            status: status_name(status.as_u16()).to_owned(),
        },
    };
    (status, axum::Json(body)).into_response()
}

/// `GET .../models` (the run's model listed) or `GET .../models/{model}` (that model).
pub(crate) fn models(path: &str, model: &str) -> Response {
    let named = match parse_path(path) {
        Some((named, Method::Models)) if !named.is_empty() => named,
        _ => model,
    };
    let entry = json!({
        "name": format!("models/{named}"),
        "version": "001",
        "displayName": named,
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    });
    let body = if path.ends_with("/models") {
        json!({"models": [entry]})
    } else {
        entry
    };
    (StatusCode::OK, axum::Json(body)).into_response()
}

/// `POST .../models/{model}:countTokens`: the synthetic count of the body.
pub(crate) fn count_tokens(body: &[u8]) -> Response {
    let tokens = body.len() as u64 / BYTES_PER_TOKEN;
    (StatusCode::OK, axum::Json(json!({"totalTokens": tokens}))).into_response()
}

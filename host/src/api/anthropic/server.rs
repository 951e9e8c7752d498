//! The Anthropic Messages codec.
//!
//! Streamed: `message_start` (the message with empty content and the input usage),
//! per block `content_block_start` / `content_block_delta` (`text_delta` or
//! `input_json_delta`) / `content_block_stop`, `message_delta` with the `stop_reason`
//! (`end_turn` or `tool_use`) and the output usage, `message_stop`. Not streamed: one
//! `message` object. Ids: `msg_N`; call ids are the script's (`toolu_NN`).

use std::borrow::Cow;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::wire::{
    BlockDelta, ContentBlock, ErrorBody, ErrorDetail, Message, MessageDelta, StreamEvent, Usage,
};
use crate::api::head::Answering;
use crate::api::reply::{BYTES_PER_TOKEN, Reply};
use crate::api::streamed::{split_deltas, sse};
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// A block's content: text, or a call's input as a JSON object.
fn block(item: &OutputItem) -> ContentBlock<'_> {
    match item {
        OutputItem::Message { text } => ContentBlock::Text { text: text.into() },
        OutputItem::FunctionCall {
            call_id,
            name,
            arguments,
        } => ContentBlock::ToolUse {
            id: call_id.into(),
            name: name.into(),
            input: input(arguments),
        },
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

fn message<'a>(
    reply: &Reply,
    ctx: &'a Answering<'_>,
    content: Vec<ContentBlock<'a>>,
    stop_reason: Option<&'static str>,
) -> Message<'a> {
    Message {
        id: format!("msg_{}", ctx.n).into(),
        kind: "message".into(),
        role: "assistant".into(),
        model: ctx.model.into(),
        content,
        stop_reason: stop_reason.map(Cow::Borrowed),
        stop_sequence: None,
        usage: Usage {
            input_tokens: Some(reply.input_tokens),
            cache_creation_input_tokens: Some(0),
            cache_read_input_tokens: Some(0),
            output_tokens: Some(reply.output_tokens),
        },
    }
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
        let body = message(reply, ctx, content, Some(stop_reason));
        return (StatusCode::OK, axum::Json(body)).into_response();
    }
    let mut start = message(reply, ctx, Vec::new(), None);
    start.usage.output_tokens = Some(1);
    let mut frames = vec![frame(&StreamEvent::MessageStart { message: start })];
    for (index, item) in reply.output.iter().enumerate() {
        let index = index as u64;
        match item {
            OutputItem::Message { text } => block_frames(
                &mut frames,
                index,
                ContentBlock::Text { text: "".into() },
                &split_deltas(text),
                |text| BlockDelta::TextDelta { text: text.into() },
            ),
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => block_frames(
                &mut frames,
                index,
                ContentBlock::ToolUse {
                    id: call_id.into(),
                    name: name.into(),
                    input: Value::Object(serde_json::Map::new()),
                },
                &split_deltas(&input(arguments).to_string()),
                |json| BlockDelta::InputJsonDelta {
                    partial_json: json.into(),
                },
            ),
        }
        frames.push(frame(&StreamEvent::ContentBlockStop { index }));
    }
    frames.push(frame(&StreamEvent::MessageDelta {
        delta: MessageDelta {
            stop_reason: Some(stop_reason.into()),
            stop_sequence: None,
        },
        usage: Usage {
            output_tokens: Some(reply.output_tokens),
            ..Usage::default()
        },
    }));
    frames.push(frame(&StreamEvent::MessageStop));
    sse(frames)
}

/// A block's `content_block_start` (the block empty) and a `content_block_delta` per piece.
fn block_frames(
    frames: &mut Vec<Bytes>,
    index: u64,
    first: ContentBlock<'_>,
    pieces: &[&str],
    delta: fn(&str) -> BlockDelta<'_>,
) {
    frames.push(frame(&StreamEvent::ContentBlockStart {
        index: Some(index),
        content_block: first,
    }));
    for piece in pieces {
        frames.push(frame(&StreamEvent::ContentBlockDelta {
            index,
            delta: delta(piece),
        }));
    }
}

/// One event on the wire, its `type` its `event:` name.
fn frame(event: &StreamEvent<'_>) -> Bytes {
    // Plain structs of strings, numbers and JSON values always encode.
    let data = serde_json::to_string(event).unwrap_or_default();
    Bytes::from(SseEvent::new(event.kind(), data).encode())
}

/// The error shape of the Anthropic API: `{"type": "error", "error": {"type", "message"}}`.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    let kind = match status {
        StatusCode::NOT_FOUND => "not_found_error",
        StatusCode::BAD_GATEWAY | StatusCode::INTERNAL_SERVER_ERROR => "api_error",
        _ => "invalid_request_error",
    };
    let body = ErrorBody {
        kind: "error".into(),
        error: ErrorDetail {
            kind: kind.into(),
            message: message.into(),
        },
    };
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
                    call_id: "toolu_01".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"in.txt"}"#.into(),
                },
            ],
            input_tokens: 12,
            output_tokens: 5,
            ..Reply::default()
        }
    }

    #[test]
    fn what_the_endpoint_streams_the_live_client_reads_back() {
        let head = RequestHead {
            stream: true,
            ..RequestHead::default()
        };
        let ctx = Answering {
            n: 3,
            model: "m",
            head: &head,
        };
        let bytes = body(encode(&reply(), &ctx));
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.starts_with("event: message_start\ndata: {\"type\":\"message_start\""),
            "{text}"
        );
        let read = ReplyStream::new(Api::Anthropic).push(&bytes).unwrap();
        let read = read.expect("`message_stop` completes the reply");
        assert_eq!(read.output, reply().output);
        assert_eq!((read.input_tokens, read.output_tokens), (12, 5));
    }

    #[test]
    fn a_message_has_its_blocks_and_arguments_that_are_no_object_are_kept() {
        let head = RequestHead::default();
        let ctx = Answering {
            n: 3,
            model: "m",
            head: &head,
        };
        let mut reply = reply();
        reply.output.push(OutputItem::FunctionCall {
            call_id: "toolu_02".into(),
            name: "echo".into(),
            arguments: "not json".into(),
        });
        let message: Message<'_> = serde_json::from_slice(&body(encode(&reply, &ctx))).unwrap();
        assert_eq!((&*message.id, &*message.kind), ("msg_3", "message"));
        assert_eq!(message.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(
            message.content[2],
            ContentBlock::ToolUse {
                id: "toolu_02".into(),
                name: "echo".into(),
                input: json!({"arguments": "not json"}),
            }
        );
        assert_eq!(message.usage.input(), Some(12));
    }
}

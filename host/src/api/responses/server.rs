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

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

use crate::api::head::Answering;
use crate::api::reply::Reply;
use crate::api::streamed::{split_deltas, sse};
use crate::session::OutputItem;
use crate::wire::SseEvent;

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

/// The id of output item `index` of response `n` (`msg_3`, `fc_3_1`, ...): the first item
/// keeps the ids a one-item reply always had.
pub(crate) fn item_id(prefix: &str, n: u32, index: usize) -> String {
    if index == 0 {
        format!("{prefix}_{n}")
    } else {
        format!("{prefix}_{n}_{index}")
    }
}

/// The free-text input of a call to a custom tool: the `input` string of the script's
/// arguments (`{input: "*** Begin Patch..."}`), a JSON string as is, else the JSON text.
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

impl<'a> Item<'a> {
    /// The item as it is when finished (`done: true`) or as first announced.
    fn wire(&self, done: bool) -> WireItem<'_> {
        let status = if done { "completed" } else { "in_progress" };
        let done_or_empty = |text: &'a str| if done { text } else { "" };
        match &self.kind {
            ItemKind::Message { id, text } => WireItem::Message {
                id,
                status,
                role: "assistant",
                content: if done {
                    vec![TextPart::of(text)]
                } else {
                    Vec::new()
                },
            },
            ItemKind::Call {
                id,
                call_id,
                name,
                arguments,
            } => WireItem::FunctionCall {
                id,
                call_id,
                name,
                arguments: done_or_empty(arguments),
                status,
            },
            ItemKind::Custom {
                id,
                call_id,
                name,
                input,
            } => WireItem::CustomToolCall {
                id,
                call_id,
                name,
                input: if done { input } else { "" },
                status,
            },
        }
    }
}

/// An output item on the wire.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireItem<'a> {
    Message {
        id: &'a str,
        status: &'static str,
        role: &'static str,
        content: Vec<TextPart<'a>>,
    },
    FunctionCall {
        id: &'a str,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
        status: &'static str,
    },
    CustomToolCall {
        id: &'a str,
        call_id: &'a str,
        name: &'a str,
        input: &'a str,
        status: &'static str,
    },
}

/// An `output_text` content part.
#[derive(Serialize)]
struct TextPart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    annotations: [(); 0],
    logprobs: [(); 0],
}

impl<'a> TextPart<'a> {
    fn of(text: &'a str) -> Self {
        Self {
            kind: "output_text",
            text,
            annotations: [],
            logprobs: [],
        }
    }
}

/// The `response` object of request `n`.
#[derive(Serialize)]
struct WireResponse<'a> {
    id: String,
    object: &'static str,
    created_at: u64,
    status: &'static str,
    model: &'a str,
    output: &'a [WireItem<'a>],
    usage: Option<Usage>,
    error: Option<WireError<'a>>,
    incomplete_details: Option<()>,
    instructions: Option<()>,
    metadata: Empty,
    parallel_tool_calls: bool,
    temperature: f64,
    tool_choice: &'static str,
    tools: [(); 0],
    top_p: f64,
    text: TextFormat,
}

impl<'a> WireResponse<'a> {
    fn new(ctx: &Answering<'a>, status: &'static str, output: &'a [WireItem<'a>]) -> Self {
        Self {
            id: format!("resp_{}", ctx.n),
            object: "response",
            created_at: 0,
            status,
            model: ctx.model,
            output,
            usage: None,
            error: None,
            incomplete_details: None,
            instructions: None,
            metadata: Empty {},
            parallel_tool_calls: true,
            temperature: 1.0,
            tool_choice: "auto",
            tools: [],
            top_p: 1.0,
            text: TextFormat {
                format: FormatType { kind: "text" },
            },
        }
    }
}

#[derive(Serialize)]
struct Empty {}

#[derive(Serialize)]
struct TextFormat {
    format: FormatType,
}

#[derive(Serialize)]
struct FormatType {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct WireError<'a> {
    code: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
struct Usage {
    input_tokens: u64,
    input_tokens_details: InputDetails,
    output_tokens: u64,
    output_tokens_details: OutputDetails,
    total_tokens: u64,
}

#[derive(Serialize)]
struct InputDetails {
    cached_tokens: u64,
    cache_write_tokens: u64,
}

#[derive(Serialize)]
struct OutputDetails {
    reasoning_tokens: u64,
}

impl Usage {
    fn of(reply: &Reply) -> Self {
        Self {
            input_tokens: reply.input_tokens,
            input_tokens_details: InputDetails {
                cached_tokens: reply.cached_input_tokens,
                cache_write_tokens: 0,
            },
            output_tokens: reply.output_tokens,
            output_tokens_details: OutputDetails {
                reasoning_tokens: 0,
            },
            total_tokens: reply.input_tokens + reply.output_tokens,
        }
    }
}

/// The fields of one streamed event besides its `type` and `sequence_number`.
#[derive(Serialize)]
#[serde(untagged)]
enum Fields<'a> {
    Response {
        response: &'a WireResponse<'a>,
    },
    Item {
        output_index: usize,
        item: WireItem<'a>,
    },
    Part {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        part: TextPart<'a>,
    },
    TextDelta {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        delta: &'a str,
        logprobs: [(); 0],
    },
    TextDone {
        item_id: &'a str,
        output_index: usize,
        content_index: usize,
        text: &'a str,
        logprobs: [(); 0],
    },
    Delta {
        item_id: &'a str,
        output_index: usize,
        delta: &'a str,
    },
    ArgumentsDone {
        item_id: &'a str,
        output_index: usize,
        name: &'a str,
        arguments: &'a str,
    },
    InputDone {
        item_id: &'a str,
        output_index: usize,
        input: &'a str,
    },
}

/// The reply as a Responses answer: an SSE stream when the request asked for one, else one
/// `response` object.
pub(crate) fn encode(reply: &Reply, ctx: &Answering<'_>) -> Response {
    let items = items(reply, ctx);
    let output: Vec<WireItem<'_>> = items.iter().map(|item| item.wire(true)).collect();
    let mut completed = WireResponse::new(ctx, "completed", &output);
    completed.usage = Some(Usage::of(reply));
    if !ctx.head.stream {
        return (StatusCode::OK, axum::Json(completed)).into_response();
    }
    let mut events = Events::default();
    let started = WireResponse::new(ctx, "in_progress", &[]);
    events.push("response.created", Fields::Response { response: &started });
    events.push(
        "response.in_progress",
        Fields::Response { response: &started },
    );
    for item in &items {
        let output_index = item.index;
        events.push(
            "response.output_item.added",
            Fields::Item {
                output_index,
                item: item.wire(false),
            },
        );
        match &item.kind {
            ItemKind::Message { id, text } => {
                let part = |text| Fields::Part {
                    item_id: id,
                    output_index,
                    content_index: 0,
                    part: TextPart::of(text),
                };
                events.push("response.content_part.added", part(""));
                for delta in split_deltas(text) {
                    let delta = Fields::TextDelta {
                        item_id: id,
                        output_index,
                        content_index: 0,
                        delta,
                        logprobs: [],
                    };
                    events.push("response.output_text.delta", delta);
                }
                let done = Fields::TextDone {
                    item_id: id,
                    output_index,
                    content_index: 0,
                    text,
                    logprobs: [],
                };
                events.push("response.output_text.done", done);
                events.push("response.content_part.done", part(text));
            }
            ItemKind::Call {
                id,
                name,
                arguments,
                ..
            } => {
                for delta in split_deltas(arguments) {
                    let delta = Fields::Delta {
                        item_id: id,
                        output_index,
                        delta,
                    };
                    events.push("response.function_call_arguments.delta", delta);
                }
                let done = Fields::ArgumentsDone {
                    item_id: id,
                    output_index,
                    name,
                    arguments,
                };
                events.push("response.function_call_arguments.done", done);
            }
            ItemKind::Custom { id, input, .. } => {
                for delta in split_deltas(input) {
                    let delta = Fields::Delta {
                        item_id: id,
                        output_index,
                        delta,
                    };
                    events.push("response.custom_tool_call_input.delta", delta);
                }
                let done = Fields::InputDone {
                    item_id: id,
                    output_index,
                    input,
                };
                events.push("response.custom_tool_call_input.done", done);
            }
        }
        events.push(
            "response.output_item.done",
            Fields::Item {
                output_index,
                item: item.wire(true),
            },
        );
    }
    events.push(
        "response.completed",
        Fields::Response {
            response: &completed,
        },
    );
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
    let mut failed = WireResponse::new(ctx, "failed", &[]);
    failed.error = Some(WireError { code, message });
    let mut events = Events::default();
    events.push("response.failed", Fields::Response { response: &failed });
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

/// A Responses event stream being built: each event gets its `type` and the next
/// `sequence_number`, and is encoded straight from borrowed, typed parts.
#[derive(Default)]
struct Events(Vec<Bytes>);

/// One streamed event on the wire.
#[derive(Serialize)]
struct Event<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    sequence_number: usize,
    #[serde(flatten)]
    fields: Fields<'a>,
}

impl Events {
    fn push(&mut self, kind: &'static str, fields: Fields<'_>) {
        let event = Event {
            kind,
            sequence_number: self.0.len(),
            fields,
        };
        // Plain structs of strings and numbers always encode.
        let data = serde_json::to_string(&event).unwrap_or_default();
        self.0.push(Bytes::from(SseEvent::new(kind, data).encode()));
    }

    fn into_response(self) -> Response {
        sse(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

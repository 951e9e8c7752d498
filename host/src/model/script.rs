//! One model script: which answer request N gets, and the first way the agent broke it.
//!
//! Deciding the answer ([`Script::answer`] → [`Plan`]) is kept apart from putting it on the
//! wire (the server), so fault steps (HTTP errors with `retry-after`, hangs, streams dropped
//! mid-way) become new [`Plan`] variants without touching how steps are matched to requests.

use std::sync::Mutex;

use axum::body::Bytes;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::responses::{ResponseError, ResponseItem, ResponseObject, ResponseUsage, StreamEvent};
use crate::case::{RecordedUsage, ScriptReply, ScriptStep};

/// Model name reported when a request names none.
const DEFAULT_MODEL_NAME: &str = "scripted";

/// Synthetic tokens: bytes divided by this (the same rule as Mino's scripted model).
const BYTES_PER_TOKEN: u64 = 4;

/// How many output text deltas a text step is split into, at most.
const TEXT_DELTAS: usize = 3;

/// What the server does with one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Plan {
    /// Answer `200 OK` with these events as an SSE stream.
    Stream(Vec<StreamEvent>),
    /// Answer with an HTTP error and a JSON error body.
    Reject { status: StatusCode, message: String },
}

/// A script and the progress of the run that uses it.
#[derive(Debug)]
pub(crate) struct Script {
    steps: Vec<ScriptStep>,
    /// `call_K` for the K-th call of the script, per step, in item order.
    call_ids: Vec<Vec<String>>,
    state: Mutex<ScriptState>,
}

#[derive(Debug, Default)]
struct ScriptState {
    /// Requests received so far.
    requests: u32,
    /// The first failure; later ones are usually consequences of it.
    failure: Option<String>,
    /// Every request body and what it was answered, in order. Kept as received: only
    /// [`Script::exchanges`] (for external agents' session logs) needs them as JSON.
    exchanges: Vec<(Bytes, Plan)>,
}

impl Script {
    pub(crate) fn new(steps: Vec<ScriptStep>) -> Self {
        let mut calls = 0;
        let call_ids = steps
            .iter()
            .map(|step| {
                items(&step.reply)
                    .into_iter()
                    .filter(|item| matches!(item, ScriptReply::Call { .. }))
                    .map(|_| {
                        calls += 1;
                        format!("call_{calls}")
                    })
                    .collect()
            })
            .collect();
        Self {
            steps,
            call_ids,
            state: Mutex::new(ScriptState::default()),
        }
    }

    /// Decide the answer to the next request, whose body is `body`, and record both.
    pub(crate) fn answer(&self, body: Bytes) -> Plan {
        let plan = self.decide(&body);
        self.lock().exchanges.push((body, plan.clone()));
        plan
    }

    /// What crossed the script so far: each request (as JSON, `null` if it was not) and
    /// its answer, in order.
    pub(crate) fn exchanges(&self) -> Vec<(Value, Plan)> {
        self.lock()
            .exchanges
            .iter()
            .map(|(body, plan)| {
                let request = serde_json::from_slice(body).unwrap_or(Value::Null);
                (request, plan.clone())
            })
            .collect()
    }

    fn decide(&self, body: &[u8]) -> Plan {
        let n = {
            let mut state = self.lock();
            state.requests += 1;
            state.requests
        };
        // Only `stream` and `model` are needed to answer; the rest of the body (the whole
        // conversation, tool outputs included) is skipped, not built into a tree.
        let head = match RequestHead::parse(body) {
            Ok(head) => head,
            Err(e) => {
                let message = format!("Request {n} is not a JSON Responses request: {e}");
                self.record_failure(&message);
                return Plan::Reject {
                    status: StatusCode::BAD_REQUEST,
                    message,
                };
            }
        };
        if !head.stream {
            let message = format!(
                "Request {n} did not ask for a stream: the scripted model answers only \"stream\": true"
            );
            self.record_failure(&message);
            return Plan::Reject {
                status: StatusCode::BAD_REQUEST,
                message,
            };
        }
        let model = head.model.as_deref().unwrap_or(DEFAULT_MODEL_NAME);
        let index = n as usize - 1;
        let Some(step) = self.steps.get(index) else {
            return self.fail(
                n,
                model,
                "script_exhausted",
                format!("Model script exhausted: request {n} has no scripted response"),
            );
        };
        if let Some(expected) = &step.expect_input_contains
            && !body_contains(body, expected)
        {
            return self.fail(
                n,
                model,
                "script_expectation_failed",
                format!("Request {n} did not contain \"{expected}\""),
            );
        }
        let input_tokens = body.len() as u64 / BYTES_PER_TOKEN;
        let call_ids = self.call_ids.get(index).cloned().unwrap_or_default();
        Plan::Stream(step_events(
            n,
            model,
            &step.reply,
            call_ids,
            input_tokens,
            step.usage,
        ))
    }

    /// Record a failure the agent caused; only the first one is kept.
    pub(crate) fn record_failure(&self, message: &str) {
        self.lock()
            .failure
            .get_or_insert_with(|| message.to_owned());
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.lock().failure.clone()
    }

    pub(crate) fn requests(&self) -> u32 {
        self.lock().requests
    }

    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }

    fn fail(&self, n: u32, model: &str, code: &str, message: String) -> Plan {
        self.record_failure(&message);
        Plan::Stream(vec![StreamEvent::Failed {
            response: ResponseObject {
                status: "failed".to_owned(),
                error: Some(ResponseError {
                    code: Some(code.to_owned()),
                    message,
                }),
                ..response(n, model)
            },
        }])
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ScriptState> {
        // A panic elsewhere while holding the lock cannot leave the counters half-updated.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether the request contains `expected`: in the raw body, or in any string of the JSON,
/// so text with quotes or line breaks (escaped in the body) still matches.
fn body_contains(body: &[u8], expected: &str) -> bool {
    String::from_utf8_lossy(body).contains(expected)
        || serde_json::from_slice::<Value>(body)
            .is_ok_and(|request| json_strings_contain(&request, expected))
}

/// The two fields of a request the script reads.
#[derive(Debug, Default)]
struct RequestHead {
    /// Whether `"stream": true` was sent.
    stream: bool,
    /// `model`, when it is a string.
    model: Option<String>,
}

impl RequestHead {
    /// Any JSON value is accepted (a body that is not an object asks for no stream); only
    /// text that is not JSON is an error.
    fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Fields<'a> {
            #[serde(borrow, default)]
            stream: Option<&'a RawValue>,
            #[serde(borrow, default)]
            model: Option<&'a RawValue>,
        }
        match serde_json::from_slice::<Fields<'_>>(body) {
            Ok(fields) => Ok(Self {
                stream: fields.stream.is_some_and(|raw| raw.get() == "true"),
                model: fields
                    .model
                    .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok()),
            }),
            // Not an object, a duplicate field, or not JSON at all: the generic parse
            // (the last of duplicate fields wins) reads what is there or says what is wrong.
            Err(_) => serde_json::from_slice::<Value>(body).map(|request| Self {
                stream: request.get("stream") == Some(&Value::Bool(true)),
                model: request
                    .get("model")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }),
        }
    }
}

fn json_strings_contain(value: &Value, expected: &str) -> bool {
    match value {
        Value::String(s) => s.contains(expected),
        Value::Array(items) => items.iter().any(|v| json_strings_contain(v, expected)),
        Value::Object(map) => map.values().any(|v| json_strings_contain(v, expected)),
        _ => false,
    }
}

/// The output items of a reply in order: a [`ScriptReply::Items`] flattened.
fn items(reply: &ScriptReply) -> Vec<&ScriptReply> {
    match reply {
        ScriptReply::Items(list) => list.iter().flat_map(items).collect(),
        other => vec![other],
    }
}

/// The event stream answering request `n` with `reply`. Ids and timestamps are derived from
/// `n`, so a scripted stream is the same bytes on every run. The usage is `recorded` when the
/// step has it, else synthetic (`input_tokens` from the request, output bytes / 4).
fn step_events(
    n: u32,
    model: &str,
    reply: &ScriptReply,
    call_ids: Vec<String>,
    input_tokens: u64,
    recorded: Option<RecordedUsage>,
) -> Vec<StreamEvent> {
    let mut events = vec![StreamEvent::Created {
        response: ResponseObject {
            status: "in_progress".to_owned(),
            ..response(n, model)
        },
    }];
    let mut call_ids = call_ids.into_iter();
    let mut output = Vec::new();
    for (output_index, reply) in items(reply).into_iter().enumerate() {
        // The first item keeps the ids a one-item reply always had.
        let suffix = if output_index == 0 {
            String::new()
        } else {
            format!("_{output_index}")
        };
        let item = match reply {
            ScriptReply::Call { tool, arguments } => ResponseItem::function_call(
                format!("fc_{n}{suffix}"),
                call_ids
                    .next()
                    .unwrap_or_else(|| format!("call_{n}{suffix}")),
                tool.clone(),
                arguments.to_string(),
            ),
            // `items` never yields a list; an empty message stands in for one.
            ScriptReply::Text(_) | ScriptReply::Items(_) => {
                let text = match reply {
                    ScriptReply::Text(text) => text.as_str(),
                    _ => "",
                };
                let item_id = format!("msg_{n}{suffix}");
                for delta in split_deltas(text) {
                    events.push(StreamEvent::OutputTextDelta {
                        item_id: item_id.clone(),
                        output_index: output_index as u32,
                        content_index: 0,
                        delta: delta.to_owned(),
                    });
                }
                ResponseItem::message(item_id, text.to_owned())
            }
        };
        events.push(StreamEvent::OutputItemDone {
            output_index: output_index as u32,
            item: item.clone(),
        });
        output.push(item);
    }
    let usage = match recorded {
        Some(recorded) => ResponseUsage::new(recorded.input_tokens, recorded.output_tokens),
        None => {
            let output_bytes = serde_json::to_string(&output).map_or(0, |s| s.len()) as u64;
            ResponseUsage::new(input_tokens, output_bytes / BYTES_PER_TOKEN)
        }
    };
    events.push(StreamEvent::Completed {
        response: ResponseObject {
            status: "completed".to_owned(),
            output,
            usage: Some(usage),
            ..response(n, model)
        },
    });
    events
}

fn response(n: u32, model: &str) -> ResponseObject {
    ResponseObject {
        id: format!("resp_{n}"),
        object: "response".to_owned(),
        created_at: 0,
        model: model.to_owned(),
        ..ResponseObject::default()
    }
}

/// Split text into up to [`TEXT_DELTAS`] non-empty pieces on character boundaries.
fn split_deltas(text: &str) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(TEXT_DELTAS);
    let mut start = 0;
    for k in 1..TEXT_DELTAS {
        let mut cut = text.len() * k / TEXT_DELTAS;
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
            assert!(pieces.len() <= TEXT_DELTAS);
        }
        assert_eq!(split_deltas("hello world").len(), 3);
    }

    #[test]
    fn the_head_reads_stream_and_model_as_a_full_parse_would() {
        let head = |body: &str| {
            let head = RequestHead::parse(body.as_bytes()).expect("JSON");
            (head.stream, head.model)
        };
        let named = |name: &str| Some(name.to_owned());
        assert_eq!(
            head(r#"{"input":[{"x":"\"}"}],"stream":true,"model":"gpt\u0041"}"#),
            (true, named("gptA"))
        );
        assert_eq!(head(r#"{"stream": "true", "model": 7}"#), (false, None));
        assert_eq!(head(r#"{"model":"m"}"#), (false, named("m")));
        assert_eq!(
            head("{ \"stream\" :\n true , \"model\" : \"m\" }"),
            (true, named("m"))
        );
        // Not an object: valid JSON, so no error, but it asks for no stream.
        assert_eq!(head("[1, 2]"), (false, None));
        assert_eq!(head("null"), (false, None));
        // Duplicate fields: the last one wins, as in a full parse.
        assert_eq!(
            head(r#"{"stream":false,"stream":true,"model":"a","model":"b"}"#),
            (true, named("b"))
        );
        assert!(RequestHead::parse(b"{\"stream\": tru").is_err());
        assert!(RequestHead::parse(b"").is_err());
    }
}

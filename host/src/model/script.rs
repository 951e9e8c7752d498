//! One model script: which answer request N gets, and the first way the agent broke it.
//!
//! The script answers in no API ([`Reply`]); the session's codec puts the answer on the
//! wire in the API the request used.

use std::sync::Mutex;

use serde_json::Value;

use crate::api::Reply;
use crate::api::reply::BYTES_PER_TOKEN;
use crate::api::responses::server::item_id;
use crate::api::responses::wire::ResponseItem;
use crate::case::{RecordedUsage, ScriptReply, ScriptStep};
use crate::session::OutputItem;
use crate::wire::Api;

/// Why the script could not answer a request: a code for the API's error and the text
/// recorded as the run's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptFailure {
    pub code: &'static str,
    pub message: String,
}

/// A script and the first way the run broke it.
#[derive(Debug)]
pub(crate) struct Script {
    steps: Vec<ScriptStep>,
    /// `K` for the K-th call of the script, per step, in item order.
    call_numbers: Vec<Vec<usize>>,
    /// The first failure; later ones are usually consequences of it.
    failure: Mutex<Option<String>>,
}

impl Script {
    pub(crate) fn new(steps: Vec<ScriptStep>) -> Self {
        let mut calls = 0;
        let call_numbers = steps
            .iter()
            .map(|step| {
                items(&step.reply)
                    .into_iter()
                    .filter(|item| matches!(item, ScriptReply::Call { .. }))
                    .map(|_| {
                        calls += 1;
                        calls
                    })
                    .collect()
            })
            .collect();
        Self {
            steps,
            call_numbers,
            failure: Mutex::new(None),
        }
    }

    /// The answer to request `n` (1-based), whose body is `body`, in `api` (call ids take
    /// its form).
    pub(crate) fn answer(&self, n: u32, api: Api, body: &[u8]) -> Result<Reply, ScriptFailure> {
        let index = n as usize - 1;
        let Some(step) = self.steps.get(index) else {
            return Err(self.fail(
                "script_exhausted",
                format!("Model script exhausted: request {n} has no scripted response"),
            ));
        };
        if let Some(expected) = &step.expect_input_contains
            && !body_contains(body, expected)
        {
            return Err(self.fail(
                "script_expectation_failed",
                format!("Request {n} did not contain \"{expected}\""),
            ));
        }
        let mut numbers = self.call_numbers.get(index).into_iter().flatten();
        let output: Vec<OutputItem> = items(&step.reply)
            .into_iter()
            .map(|item| match item {
                ScriptReply::Call { tool, arguments } => OutputItem::FunctionCall {
                    call_id: api.call_id(numbers.next().copied().unwrap_or(0)),
                    name: tool.clone(),
                    arguments: arguments.to_string(),
                },
                ScriptReply::Text(text) => OutputItem::Message { text: text.clone() },
                // `items` never yields a list; an empty message stands in for one.
                ScriptReply::Items(_) => OutputItem::Message {
                    text: String::new(),
                },
            })
            .collect();
        let usage = step.usage.unwrap_or_else(|| RecordedUsage {
            input_tokens: body.len() as u64 / BYTES_PER_TOKEN,
            cached_input_tokens: 0,
            output_tokens: synthetic_output_bytes(n, &output) / BYTES_PER_TOKEN,
        });
        Ok(Reply {
            output,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            ..Reply::default()
        })
    }

    /// Record a failure; only the first one is kept.
    pub(crate) fn fail(&self, code: &'static str, message: String) -> ScriptFailure {
        self.lock().get_or_insert_with(|| message.clone());
        ScriptFailure { code, message }
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.lock().clone()
    }

    pub(crate) fn len(&self) -> usize {
        self.steps.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        // An `Option` cannot be left half-updated by a panic elsewhere.
        self.failure.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The size of the output as the Responses API encodes its items (`msg_N`, `fc_N` ids): the
/// synthetic output token count of every API, the one it always was.
fn synthetic_output_bytes(n: u32, output: &[OutputItem]) -> u64 {
    let items: Vec<ResponseItem> = output
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            OutputItem::Message { text } => {
                ResponseItem::message(item_id("msg", n, index), text.clone())
            }
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => ResponseItem::function_call(
                item_id("fc", n, index),
                call_id.clone(),
                name.clone(),
                arguments.clone(),
            ),
        })
        .collect();
    serde_json::to_string(&items).map_or(0, |s| s.len()) as u64
}

/// Whether the request contains `expected`: in the raw body, or in any string of the JSON,
/// so text with quotes or line breaks (escaped in the body) still matches.
fn body_contains(body: &[u8], expected: &str) -> bool {
    String::from_utf8_lossy(body).contains(expected)
        || serde_json::from_slice::<Value>(body)
            .is_ok_and(|request| json_strings_contain(&request, expected))
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

//! One finished run as one OTLP trace of GenAI spans (docs/traces.md, "OTLP out"): an
//! `invoke_agent` span for the run, a `chat` span per model exchange and an `execute_tool` span
//! per tool call under it, and a `gen_ai.evaluation.result` event on the run's span per
//! verdict. Built from the run's session log alone, as evidence is.

use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event as SpanEvent, SpanKind};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::semconv as sc;
use crate::session::{CallStatus, Event, OutputItem, Record};

/// The agent name evalhost's own agent loop exports as `gen_ai.agent.name`.
pub const OWN_AGENT: &str = "evalhost";

/// A finished run, as the exporter needs it.
#[derive(Debug, Clone)]
pub struct FinishedRun<'a> {
    /// The suite run's id (the history's, else empty): one of the trace id's inputs, and
    /// `evalhost.run.id`.
    pub suite_run: &'a str,
    pub case: &'a str,
    pub run: u32,
    /// The agent: [`OWN_AGENT`], a preset's name, or `command`.
    pub agent: &'a str,
    /// `gen_ai.provider.name`: the live provider's API, or `evalhost.scripted` in replay.
    pub provider: &'a str,
    /// When the run started (Unix time in nanoseconds).
    pub started_unix_nanos: u64,
    pub duration_ms: u64,
    pub records: &'a [Record],
    pub pass: bool,
    /// The run's error, when it ended with one.
    pub error: Option<&'a str>,
    pub verdicts: Vec<VerdictResult<'a>>,
}

/// One verdict, as a `gen_ai.evaluation.result` event.
#[derive(Debug, Clone)]
pub struct VerdictResult<'a> {
    /// `gen_ai.evaluation.name`: the entry as reports name it (`graders[2] file_contains`).
    pub name: String,
    /// `gen_ai.evaluation.score.label`: `pass`, `fail`, `not_evaluable` or `error`.
    pub label: &'a str,
    /// `gen_ai.evaluation.score.value`, where the verdict has one (a pass or a fail).
    pub score: Option<f64>,
    /// `gen_ai.evaluation.explanation`: the verdict's message (left out when empty).
    pub message: &'a str,
}

/// The resource every exported run shares: `service.name` evalhost and its version.
pub(crate) fn resource() -> Resource {
    Resource {
        attributes: vec![
            kv(sc::SERVICE_NAME, "evalhost"),
            kv(sc::SERVICE_VERSION, env!("CARGO_PKG_VERSION")),
        ],
        ..Resource::default()
    }
}

/// The run's spans in one `ResourceSpans` (one trace).
pub fn resource_spans(run: &FinishedRun<'_>) -> ResourceSpans {
    ResourceSpans {
        resource: Some(resource()),
        scope_spans: vec![ScopeSpans {
            scope: Some(InstrumentationScope {
                name: "evalhost".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ..InstrumentationScope::default()
            }),
            spans: spans(run),
            schema_url: sc::SCHEMA_URL.into(),
        }],
        schema_url: sc::SCHEMA_URL.into(),
    }
}

/// The run's span first, then its model exchanges and tool calls in the order they began.
pub fn spans(run: &FinishedRun<'_>) -> Vec<Span> {
    let trace_id = trace_id(run);
    let ids = SpanIds::new(&trace_id);
    let at = |ms: u64| run.started_unix_nanos + ms * 1_000_000;
    let mut model = String::new();
    let mut children: Vec<Span> = Vec::new();
    // Messages so far, as the conventions' input messages of the next model request.
    let mut history: Vec<Value> = Vec::new();
    let mut prompt: Vec<Value> = Vec::new();
    let mut final_text = String::new();
    // The open request of each `n`: its start, and where the history stood.
    let mut open: Vec<(u32, u64)> = Vec::new();
    // Calls the model asked for: (call id, arguments), and tool starts seen.
    let mut asked: Vec<(String, String)> = Vec::new();
    let mut started: Vec<(String, u64)> = Vec::new();
    let (mut input_tokens, mut output_tokens, mut cached) = (0u64, 0u64, 0u64);
    let mut last_ms = 0;
    for record in run.records {
        last_ms = last_ms.max(record.at_ms);
        match &record.event {
            Event::SessionStart { model: m, .. } => model.clone_from(m),
            Event::UserMessage { text } => {
                let message = json!({"role": "user", "parts": [{"type": "text", "content": text}]});
                prompt.push(message.clone());
                history.push(message);
            }
            Event::ModelRequest { n, .. } => open.push((*n, record.at_ms)),
            Event::ModelRetry { .. } => {}
            Event::ModelResponse {
                n,
                output,
                input_tokens: input,
                output_tokens: out,
                cached_input_tokens,
            } => {
                input_tokens += input;
                output_tokens += out;
                cached += cached_input_tokens;
                let start = match open.iter().position(|(m, _)| m == n) {
                    Some(i) => open.remove(i).1,
                    None => record.at_ms,
                };
                let message = output_message(output);
                let text: String = output.iter().filter_map(OutputItem::text).collect();
                if !text.is_empty() {
                    final_text = text;
                }
                for (call_id, _, arguments) in output.iter().filter_map(OutputItem::call) {
                    asked.push((call_id.to_owned(), arguments.to_owned()));
                }
                let reason = message["finish_reason"]
                    .as_str()
                    .unwrap_or("stop")
                    .to_owned();
                let mut attributes = vec![
                    kv(sc::OPERATION_NAME, sc::OP_CHAT),
                    kv(sc::PROVIDER_NAME, run.provider),
                    kv(sc::REQUEST_MODEL, &model),
                    kv(sc::RESPONSE_MODEL, &model),
                    kv_int(sc::USAGE_INPUT_TOKENS, *input),
                    kv_int(sc::USAGE_OUTPUT_TOKENS, *out),
                    kv_strings(sc::RESPONSE_FINISH_REASONS, &[reason]),
                    kv(
                        sc::INPUT_MESSAGES,
                        &Value::from(history.clone()).to_string(),
                    ),
                    kv(sc::OUTPUT_MESSAGES, &json!([message]).to_string()),
                ];
                if *cached_input_tokens > 0 {
                    attributes.push(kv_int(
                        sc::USAGE_CACHE_READ_INPUT_TOKENS,
                        *cached_input_tokens,
                    ));
                }
                history.push(message);
                children.push(Span {
                    name: format!("{} {model}", sc::OP_CHAT).trim_end().to_owned(),
                    kind: SpanKind::Client as i32,
                    start_time_unix_nano: at(start),
                    end_time_unix_nano: at(record.at_ms),
                    attributes,
                    ..Span::default()
                });
            }
            Event::ToolStart { call_id, .. } => started.push((call_id.clone(), record.at_ms)),
            Event::ToolResult {
                call_id,
                name,
                status,
                output,
                duration_ms,
            } => {
                let start = match started.iter().position(|(id, _)| id == call_id) {
                    Some(i) => started.remove(i).1,
                    None => record.at_ms.saturating_sub(*duration_ms),
                };
                let arguments = asked
                    .iter()
                    .position(|(id, _)| id == call_id)
                    .map(|i| asked.remove(i).1)
                    .unwrap_or_default();
                history.push(json!({"role": "tool", "parts": [
                    {"type": "tool_call_response", "id": call_id, "response": output}
                ]}));
                let mut attributes = vec![
                    kv(sc::OPERATION_NAME, sc::OP_EXECUTE_TOOL),
                    kv(sc::TOOL_NAME, name),
                    kv(sc::TOOL_CALL_ID, call_id),
                    kv(sc::TOOL_TYPE, "function"),
                    kv(sc::TOOL_CALL_ARGUMENTS, &arguments),
                    kv(sc::TOOL_CALL_RESULT, output),
                ];
                let status = if *status == CallStatus::Completed {
                    None
                } else {
                    attributes.push(kv(sc::ERROR_TYPE, status.as_str()));
                    Some(error_status(status.as_str()))
                };
                children.push(Span {
                    name: format!("{} {name}", sc::OP_EXECUTE_TOOL),
                    kind: SpanKind::Internal as i32,
                    start_time_unix_nano: at(start),
                    end_time_unix_nano: at(start.max(record.at_ms)),
                    attributes,
                    status,
                    ..Span::default()
                });
            }
            Event::TurnEnd { final_text: text } => final_text.clone_from(text),
            Event::VerifierResult {
                rewards,
                exit_code,
                duration_ms,
                error,
                ..
            } => {
                let mut attributes: Vec<KeyValue> = rewards
                    .iter()
                    .map(|(key, value)| {
                        kv_double(&format!("evalhost.verifier.reward.{key}"), *value)
                    })
                    .collect();
                if let Some(code) = exit_code {
                    attributes.push(kv_int("evalhost.verifier.exit_code", *code as u64));
                }
                children.push(Span {
                    name: "evalhost.verifier".into(),
                    kind: SpanKind::Internal as i32,
                    start_time_unix_nano: at(record.at_ms.saturating_sub(*duration_ms)),
                    end_time_unix_nano: at(record.at_ms),
                    attributes,
                    status: error.as_deref().map(error_status),
                    ..Span::default()
                });
            }
            Event::SessionSkills { .. } | Event::RunError { .. } | Event::EndpointError { .. } => {}
        }
    }
    let end_ms = run.duration_ms.max(last_ms);
    let root_id = ids.next();
    let mut attributes = vec![
        kv(sc::OPERATION_NAME, sc::OP_INVOKE_AGENT),
        kv(sc::AGENT_NAME, run.agent),
        kv(sc::PROVIDER_NAME, run.provider),
        kv(sc::REQUEST_MODEL, &model),
        kv(
            sc::CONVERSATION_ID,
            &format!("{}/{}/{}", run.suite_run, run.case, run.run),
        ),
        kv_int(sc::USAGE_INPUT_TOKENS, input_tokens),
        kv_int(sc::USAGE_OUTPUT_TOKENS, output_tokens),
        kv(sc::INPUT_MESSAGES, &Value::from(prompt).to_string()),
        kv(
            sc::OUTPUT_MESSAGES,
            &json!([{"role": "assistant", "parts": [{"type": "text", "content": final_text}], "finish_reason": "stop"}])
                .to_string(),
        ),
        kv("evalhost.case", run.case),
        kv_int("evalhost.run", u64::from(run.run)),
        kv("evalhost.run.id", run.suite_run),
        kv_bool("evalhost.pass", run.pass),
    ];
    if cached > 0 {
        attributes.push(kv_int(sc::USAGE_CACHE_READ_INPUT_TOKENS, cached));
    }
    let status = run.error.map(|error| {
        attributes.push(kv(sc::ERROR_TYPE, "run_error"));
        error_status(error)
    });
    let events = run
        .verdicts
        .iter()
        .map(|verdict| {
            let mut attributes = vec![
                kv(sc::EVALUATION_NAME, &verdict.name),
                kv(sc::EVALUATION_SCORE_LABEL, verdict.label),
            ];
            if let Some(score) = verdict.score {
                attributes.push(kv_double(sc::EVALUATION_SCORE_VALUE, score));
            }
            if !verdict.message.is_empty() {
                attributes.push(kv(sc::EVALUATION_EXPLANATION, verdict.message));
            }
            SpanEvent {
                time_unix_nano: at(end_ms),
                name: sc::EVENT_EVALUATION_RESULT.into(),
                attributes,
                ..SpanEvent::default()
            }
        })
        .collect();
    let root = Span {
        trace_id: trace_id.to_vec(),
        span_id: root_id.to_vec(),
        name: format!("{} {}", sc::OP_INVOKE_AGENT, run.agent),
        kind: SpanKind::Internal as i32,
        start_time_unix_nano: at(0),
        end_time_unix_nano: at(end_ms),
        attributes,
        events,
        status,
        ..Span::default()
    };
    let mut spans = Vec::with_capacity(children.len() + 1);
    spans.push(root);
    children.sort_by_key(|span| span.start_time_unix_nano);
    for mut child in children {
        child.trace_id = trace_id.to_vec();
        child.span_id = ids.next().to_vec();
        child.parent_span_id = root_id.to_vec();
        spans.push(child);
    }
    spans
}

/// A response's output items as the conventions' output message.
fn output_message(output: &[OutputItem]) -> Value {
    let mut calls = false;
    let parts: Vec<Value> = output
        .iter()
        .map(|item| match item {
            OutputItem::Message { text } => json!({"type": "text", "content": text}),
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                calls = true;
                // The conventions' arguments are the object; text that is not JSON stays text.
                let arguments = serde_json::from_str::<Value>(arguments)
                    .unwrap_or_else(|_| Value::String(arguments.clone()));
                json!({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
            }
        })
        .collect();
    let reason = if calls { "tool_call" } else { "stop" };
    json!({"role": "assistant", "parts": parts, "finish_reason": reason})
}

/// The run's trace id: the first 16 bytes of a SHA-256 of what makes it unique (the suite
/// run, the case, the run, when it started), so a run exported twice keeps its id.
fn trace_id(run: &FinishedRun<'_>) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(b"evalhost trace\0")
        .chain_update(run.suite_run.as_bytes())
        .chain_update(b"\0")
        .chain_update(run.case.as_bytes())
        .chain_update(b"\0")
        .chain_update(run.run.to_le_bytes())
        .chain_update(run.started_unix_nanos.to_le_bytes())
        .finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    id
}

/// Span ids of one trace: 8 bytes of a SHA-256 of the trace id and the span's number.
struct SpanIds {
    trace: [u8; 16],
    next: std::cell::Cell<u64>,
}

impl SpanIds {
    fn new(trace: &[u8; 16]) -> Self {
        Self {
            trace: *trace,
            next: std::cell::Cell::new(0),
        }
    }

    fn next(&self) -> [u8; 8] {
        let n = self.next.get();
        self.next.set(n + 1);
        let digest = Sha256::new()
            .chain_update(self.trace)
            .chain_update(n.to_le_bytes())
            .finalize();
        let mut id = [0u8; 8];
        id.copy_from_slice(&digest[..8]);
        id
    }
}

fn error_status(message: &str) -> Status {
    Status {
        message: message.to_owned(),
        code: StatusCode::Error as i32,
    }
}

fn value(value: any_value::Value) -> Option<AnyValue> {
    Some(AnyValue { value: Some(value) })
}

fn kv(key: &str, text: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: value(any_value::Value::StringValue(text.to_owned())),
        ..KeyValue::default()
    }
}

fn kv_int(key: &str, n: u64) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: value(any_value::Value::IntValue(
            i64::try_from(n).unwrap_or(i64::MAX),
        )),
        ..KeyValue::default()
    }
}

fn kv_double(key: &str, x: f64) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: value(any_value::Value::DoubleValue(x)),
        ..KeyValue::default()
    }
}

fn kv_bool(key: &str, b: bool) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: value(any_value::Value::BoolValue(b)),
        ..KeyValue::default()
    }
}

fn kv_strings(key: &str, texts: &[String]) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: value(any_value::Value::ArrayValue(ArrayValue {
            values: texts
                .iter()
                .map(|text| AnyValue {
                    value: Some(any_value::Value::StringValue(text.clone())),
                })
                .collect(),
        })),
        ..KeyValue::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(at_ms: u64, event: Event) -> Record {
        Record { at_ms, event }
    }

    fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a any_value::Value> {
        span.attributes
            .iter()
            .find(|kv| kv.key == key)
            .and_then(|kv| kv.value.as_ref())
            .and_then(|v| v.value.as_ref())
    }

    fn text(span: &Span, key: &str) -> String {
        match attribute(span, key) {
            Some(any_value::Value::StringValue(s)) => s.clone(),
            other => panic!("{key}: {other:?}"),
        }
    }

    /// A failed call is an `execute_tool` span with an error status and `error.type`; a run
    /// that ended with an error is an errored root; a not-evaluable verdict has a label and no
    /// score; the spans start where their records say, after the run's start.
    #[test]
    fn failures_are_error_statuses_and_verdicts_events() {
        let records = vec![
            record(
                0,
                Event::SessionStart {
                    case: "c".into(),
                    run: 1,
                    mode: "replay".into(),
                    model: "m".into(),
                },
            ),
            record(0, Event::UserMessage { text: "Go.".into() }),
            record(
                5,
                Event::ModelRequest {
                    n: 1,
                    body: crate::session::RequestBody::from(serde_json::Value::Null),
                },
            ),
            record(
                9,
                Event::ModelResponse {
                    n: 1,
                    output: vec![OutputItem::FunctionCall {
                        call_id: "call_1".into(),
                        name: "bash".into(),
                        arguments: "{\"command\":\"false\"}".into(),
                    }],
                    input_tokens: 10,
                    output_tokens: 2,
                    cached_input_tokens: 0,
                },
            ),
            record(
                10,
                Event::ToolStart {
                    call_id: "call_1".into(),
                    name: "bash".into(),
                },
            ),
            record(
                30,
                Event::ToolResult {
                    call_id: "call_1".into(),
                    name: "bash".into(),
                    status: CallStatus::Failed,
                    output: "exit 1".into(),
                    duration_ms: 20,
                },
            ),
            record(
                31,
                Event::RunError {
                    message: "model script ran out".into(),
                },
            ),
        ];
        let run = FinishedRun {
            suite_run: "r",
            case: "c",
            run: 1,
            agent: OWN_AGENT,
            provider: "evalhost.scripted",
            started_unix_nanos: 1_000_000_000,
            duration_ms: 40,
            records: &records,
            pass: false,
            error: Some("model script ran out"),
            verdicts: vec![VerdictResult {
                name: "graders[0] file_exists \"a\"".into(),
                label: "not_evaluable",
                score: None,
                message: "no workspace",
            }],
        };
        let spans = spans(&run);
        assert_eq!(spans.len(), 3);
        let (root, chat, tool) = (&spans[0], &spans[1], &spans[2]);
        assert_eq!(root.status.as_ref().unwrap().code, StatusCode::Error as i32);
        assert_eq!(text(root, sc::ERROR_TYPE), "run_error");
        assert_eq!(chat.parent_span_id, root.span_id);
        assert_eq!(chat.start_time_unix_nano, 1_005_000_000);
        assert_eq!(chat.end_time_unix_nano, 1_009_000_000);
        assert_eq!(
            text(tool, sc::TOOL_CALL_ARGUMENTS),
            "{\"command\":\"false\"}"
        );
        assert_eq!(text(tool, sc::ERROR_TYPE), "failed");
        assert_eq!(tool.status.as_ref().unwrap().code, StatusCode::Error as i32);
        assert_eq!(
            (tool.start_time_unix_nano, tool.end_time_unix_nano),
            (1_010_000_000, 1_030_000_000)
        );
        let event = &root.events[0];
        assert_eq!(event.name, sc::EVENT_EVALUATION_RESULT);
        assert!(
            event
                .attributes
                .iter()
                .all(|kv| kv.key != sc::EVALUATION_SCORE_VALUE)
        );
        assert_eq!(root.end_time_unix_nano, 1_040_000_000);
        // The same run exported again keeps its ids.
        assert_eq!(super::spans(&run)[0].trace_id, root.trace_id);
    }
}

//! The mapping on small OTLP JSON documents written here: both conventions' names, content on
//! spans, on their events and in log records, and errors that name line, column and field.

use std::path::Path;

use serde_json::{Value, json};

use super::runs;
use crate::evidence::Evidence;
use crate::session::{Event, Record};
use crate::trace::{ImportedRun, TraceError};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
/// 2026-01-01, in nanoseconds.
const BASE_NS: u64 = 1_767_225_600_000_000_000;

/// An OTLP `AnyValue` of a JSON value.
fn any(value: &Value) -> Value {
    match value {
        Value::String(text) => json!({"stringValue": text}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n}),
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(any).collect::<Vec<_>>()}})
        }
        Value::Object(map) => {
            json!({"kvlistValue": {"values": key_values(&Value::Object(map.clone()))}})
        }
        Value::Null => json!({}),
    }
}

fn key_values(attributes: &Value) -> Vec<Value> {
    attributes
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, value)| json!({"key": key, "value": any(value)}))
        .collect()
}

/// A span of the trace, `start` and `end` in ms after [`BASE_NS`].
fn span(id: &str, name: &str, start: u64, end: u64, attributes: Value) -> Value {
    json!({
        "traceId": TRACE, "spanId": id, "parentSpanId": "00f067aa0ba902b7", "name": name, "kind": 1,
        "startTimeUnixNano": (BASE_NS + start * 1_000_000).to_string(),
        "endTimeUnixNano": (BASE_NS + end * 1_000_000).to_string(),
        "attributes": key_values(&attributes),
    })
}

fn traces(spans: Vec<Value>) -> Value {
    json!({"resourceSpans": [{"resource": {"attributes": key_values(&json!({"service.name": "t"}))},
        "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]})
}

/// A log record of the span `span_id`, its event's name as OTLP 1.5 writes it.
fn event(span_id: &str, name: &str, body: Value) -> Value {
    json!({"traceId": TRACE, "spanId": span_id, "eventName": name, "body": any(&body),
        "attributes": key_values(&json!({"gen_ai.system": "openai"}))})
}

fn logs(records: Vec<Value>) -> Value {
    json!({"resourceLogs": [{"scopeLogs": [{"scope": {"name": "t"}, "logRecords": records}]}]})
}

fn import(text: &str) -> (Vec<ImportedRun>, Vec<String>) {
    runs(Path::new("t.json"), text.as_bytes()).unwrap_or_else(|error| panic!("{error}"))
}

fn one_run(text: &str) -> (ImportedRun, Vec<String>) {
    let (mut runs, notes) = import(text);
    assert_eq!(runs.len(), 1, "{runs:?}");
    (runs.remove(0), notes)
}

fn timeline(records: &[Record]) -> Vec<(u64, &'static str)> {
    records
        .iter()
        .map(|record| (record.at_ms, record.event.kind()))
        .collect()
}

fn evidence_of(run: &ImportedRun) -> Evidence {
    Evidence::from_session(&run.records, Default::default())
}

fn messages(value: Value) -> String {
    value.to_string()
}

/// The latest conventions: an agent span, two chat spans with the conversation as JSON text,
/// a tool span between them, and an HTTP span the instrumentation of the client made.
fn latest() -> Value {
    let first_in = json!([
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "What is in a.txt?"}]}
    ]);
    let first_out = json!([{"role": "assistant", "finish_reason": "tool_calls", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": {"path": "a.txt"}}]}]);
    let mut second_in = first_in.as_array().unwrap().clone();
    second_in.push(json!({"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": {"path": "a.txt"}}]}));
    second_in.push(json!({"role": "tool", "parts": [
        {"type": "tool_call_response", "id": "call_1", "response": "alpha"}]}));
    let second_out = json!([{"role": "assistant", "finish_reason": "stop",
        "parts": [{"type": "text", "content": "It says alpha."}]}]);
    traces(vec![
        span(
            "1111111111111111",
            "chat m",
            10,
            30,
            json!({
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "m", "gen_ai.response.model": "m-2026",
                "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 7,
                "gen_ai.usage.cache_read.input_tokens": 64,
                "gen_ai.response.finish_reasons": ["tool_calls"],
                "gen_ai.input.messages": messages(first_in), "gen_ai.output.messages": messages(first_out),
            }),
        ),
        span(
            "2222222222222222",
            "execute_tool read_file",
            31,
            36,
            json!({
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file",
                "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": "{\"path\":\"a.txt\"}",
                "gen_ai.tool.call.result": "alpha",
            }),
        ),
        span(
            "3333333333333333",
            "chat m",
            40,
            52,
            json!({
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                "gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": 5,
                "gen_ai.input.messages": messages(Value::Array(second_in)),
                "gen_ai.output.messages": messages(second_out),
            }),
        ),
        span(
            "4444444444444444",
            "POST",
            12,
            28,
            json!({"http.request.method": "POST"}),
        ),
        span(
            "00f067aa0ba902b7",
            "invoke_agent reader",
            2,
            60,
            json!({
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reader",
            }),
        ),
    ])
}

#[test]
fn the_latest_conventions_make_the_run_in_the_order_its_spans_began() {
    let (run, notes) = one_run(&latest().to_string());
    assert_eq!(run.label, format!("trace {TRACE}"));
    assert_eq!(run.model, "m-2026");
    assert_eq!(run.duration_ms, 58, "the invoke_agent span's");
    assert!(run.usage_recorded);
    assert_eq!(
        timeline(&run.records),
        [
            (0, "session_start"),
            (8, "user_message"),
            (8, "model_request"),
            (28, "model_response"),
            (29, "tool_start"),
            (34, "tool_result"),
            (38, "model_request"),
            (50, "model_response"),
            (58, "turn_end"),
        ],
        "at_ms from the trace's first span (the agent's, at 2 ms)"
    );
    let Event::ModelRequest { n: 1, body } = &run.records[2].event else {
        panic!("{:?}", run.records[2])
    };
    assert_eq!(
        body.to_value()[1]["parts"][0]["content"],
        "What is in a.txt?",
        "the recorded messages, parsed"
    );
    let evidence = evidence_of(&run);
    assert_eq!(evidence.case_name, format!("trace {TRACE}"));
    assert_eq!(evidence.mode, "trace");
    assert_eq!(evidence.prompt, "What is in a.txt?");
    assert_eq!(evidence.final_text, "It says alpha.");
    assert_eq!(evidence.calls.len(), 1);
    let call = &evidence.calls[0];
    assert_eq!(
        (
            call.call_id.as_str(),
            call.name.as_str(),
            call.arguments.as_str()
        ),
        ("call_1", "read_file", r#"{"path":"a.txt"}"#)
    );
    assert_eq!(
        (call.status.as_str(), call.output.as_str(), call.duration_ms),
        ("completed", "alpha", 5)
    );
    assert!(call.started);
    assert_eq!(
        (
            evidence.usage.requests,
            evidence.usage.input_tokens,
            evidence.usage.output_tokens
        ),
        (2, 220, 12),
        "an integer written as a string counts too"
    );
    assert_eq!(evidence.usage.cached_input_tokens, 64);
    for expected in [
        "spans that are not GenAI (`POST`): 1",
        "system messages (kept only in the request bodies): 1",
        "spans with the attribute `gen_ai.provider.name` (no record carries it): 1",
        "the agent's name `reader` (`gen_ai.agent.name`; no record carries it): 1",
    ] {
        assert!(
            notes.iter().any(|note| note == expected),
            "{expected}: {notes:#?}"
        );
    }
    assert!(
        !notes.iter().any(|note| note.contains("finished with")),
        "stop and tool_calls are the records' own: {notes:#?}"
    );
}

#[test]
fn the_older_names_and_results_known_only_from_the_next_request() {
    // Before 1.37: no operation name, `gen_ai.system`; prompt and completion tokens; the
    // conversation as `gen_ai.prompt` / `gen_ai.completion` in span events; no tool spans.
    let prompt = |messages: Value| json!({"name": "gen_ai.content.prompt", "attributes": key_values(&json!({"gen_ai.prompt": messages.to_string()}))});
    let completion = |messages: Value| json!({"name": "gen_ai.content.completion", "attributes": key_values(&json!({"gen_ai.completion": messages.to_string()}))});
    let user = json!({"role": "user", "content": "Count the files."});
    let asked = json!({"role": "assistant", "tool_calls": [{"id": "c9", "type": "function",
        "function": {"name": "bash", "arguments": "{\"command\":\"ls | wc -l\"}"}}]});
    let mut first = span(
        "1111111111111111",
        "openai.chat",
        0,
        10,
        json!({
            "gen_ai.system": "openai", "gen_ai.request.model": "gpt-x",
            "gen_ai.usage.prompt_tokens": 11, "gen_ai.usage.completion_tokens": 3,
        }),
    );
    first["events"] = json!([prompt(json!([user])), completion(json!([asked]))]);
    let mut second = span(
        "2222222222222222",
        "openai.chat",
        30,
        35,
        json!({
            "gen_ai.system": "openai", "gen_ai.usage.prompt_tokens": 20, "gen_ai.usage.completion_tokens": 4,
            "gen_ai.response.finish_reasons": ["length"],
        }),
    );
    second["events"] = json!([
        prompt(json!([user, asked, {"role": "tool", "tool_call_id": "c9", "content": "3\n"}])),
        completion(json!([{"role": "assistant", "content": "There are 3"}])),
    ]);
    let (run, notes) = one_run(&traces(vec![first, second]).to_string());
    assert_eq!(run.model, "gpt-x");
    assert_eq!(run.duration_ms, 35, "no agent span: the trace's spans");
    assert_eq!(
        timeline(&run.records),
        [
            (0, "session_start"),
            (0, "user_message"),
            (0, "model_request"),
            (10, "model_response"),
            (10, "tool_start"),
            (30, "tool_result"),
            (30, "model_request"),
            (35, "model_response"),
            (35, "turn_end"),
        ]
    );
    let evidence = evidence_of(&run);
    assert_eq!(evidence.prompt, "Count the files.");
    let call = &evidence.calls[0];
    assert_eq!(
        (call.name.as_str(), call.arguments.as_str()),
        ("bash", r#"{"command":"ls | wc -l"}"#)
    );
    assert_eq!(
        (call.status.as_str(), call.output.as_str(), call.duration_ms),
        ("completed", "3\n", 20)
    );
    assert_eq!(evidence.final_text, "There are 3");
    assert_eq!(
        (evidence.usage.input_tokens, evidence.usage.output_tokens),
        (31, 7)
    );
    assert!(
        notes.contains(
            &"responses that finished with `length` (no record carries it): 1".to_owned()
        ),
        "{notes:#?}"
    );
}

/// JSON lines as the collector's file exporter writes them: the spans on one line (no
/// content: the 1.30 conventions keep it off spans), their log events on the next, each
/// joined to its span by trace and span id (one with the older `event.name` attribute).
#[test]
fn log_events_are_joined_to_their_spans_across_lines() {
    let chat = |id: &str, start, end, tokens: u64| {
        span(
            id,
            "chat m",
            start,
            end,
            json!({
                "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "m",
                "gen_ai.usage.input_tokens": tokens, "gen_ai.usage.output_tokens": 1,
            }),
        )
    };
    let spans = traces(vec![
        chat("1111111111111111", 0, 5, 10),
        span(
            "2222222222222222",
            "execute_tool f",
            6,
            7,
            json!({
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f", "gen_ai.tool.call.id": "c1",
            }),
        ),
        chat("3333333333333333", 8, 9, 20),
    ]);
    let call = json!({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
    let mut older = event("1111111111111111", "", json!({"content": "Do f."}));
    older["attributes"] = json!(key_values(&json!({"event.name": "gen_ai.user.message"})));
    let records = logs(vec![
        older,
        event(
            "1111111111111111",
            "gen_ai.choice",
            json!({"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "tool_calls": call["tool_calls"]}}),
        ),
        event(
            "3333333333333333",
            "gen_ai.user.message",
            json!({"content": "Do f."}),
        ),
        event("3333333333333333", "gen_ai.assistant.message", call),
        event(
            "3333333333333333",
            "gen_ai.tool.message",
            json!({"content": "f done", "id": "c1"}),
        ),
        event(
            "3333333333333333",
            "gen_ai.choice",
            json!({"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Done."}}),
        ),
        event(
            "9999999999999999",
            "gen_ai.user.message",
            json!({"content": "elsewhere"}),
        ),
    ]);
    let text = format!("{spans}\n{records}\n");
    let (run, notes) = one_run(&text);
    let evidence = evidence_of(&run);
    assert_eq!(evidence.prompt, "Do f.");
    assert_eq!(evidence.calls.len(), 1, "{:?}", evidence.calls);
    assert_eq!(
        (
            evidence.calls[0].name.as_str(),
            evidence.calls[0].output.as_str()
        ),
        ("f", "f done"),
        "the tool span has no result: the next request's tool message has"
    );
    assert_eq!(evidence.final_text, "Done.");
    assert_eq!(evidence.usage.input_tokens, 30);
    let Event::ModelRequest { body, .. } = &run.records[2].event else {
        panic!("{:?}", run.records)
    };
    assert_eq!(
        body.to_value(),
        json!([{"role": "user", "content": "Do f."}]),
        "the events' bodies"
    );
    assert!(
        notes.contains(&"log records of no model request span: 1".to_owned()),
        "{notes:#?}"
    );

    // The spans alone: counts, the tool span's call, and a note that content was not captured.
    let (run, notes) = one_run(&spans.to_string());
    let evidence = evidence_of(&run);
    assert_eq!(
        (evidence.prompt.as_str(), evidence.final_text.as_str()),
        ("", "")
    );
    assert_eq!(
        evidence.calls.len(),
        1,
        "from the execute_tool span: {:?}",
        evidence.calls
    );
    assert_eq!(evidence.usage.requests, 2);
    assert!(
        notes.iter().any(
            |note| note.starts_with("model request spans without content") && note.ends_with(": 2")
        ),
        "{notes:#?}"
    );
}

/// The inference details event (a log record, or a span event) carries the messages as
/// structured values.
#[test]
fn the_inference_details_event_carries_structured_messages() {
    let input = json!([{"role": "user", "parts": [{"type": "text", "content": "Hi."}]}]);
    let output = json!([{"role": "assistant", "parts": [{"type": "text", "content": "Hello."}], "finish_reason": "stop"}]);
    let details = json!({"gen_ai.operation.name": "chat", "gen_ai.input.messages": input, "gen_ai.output.messages": output});
    let spans = traces(vec![span(
        "1111111111111111",
        "chat m",
        0,
        4,
        json!({"gen_ai.operation.name": "chat"}),
    )]);
    let mut record = event(
        "1111111111111111",
        "gen_ai.client.inference.operation.details",
        Value::Null,
    );
    record["attributes"] = json!(key_values(&details));
    let (run, _) = one_run(&format!("{spans}\n{}", logs(vec![record])));
    let evidence = evidence_of(&run);
    assert_eq!(
        (evidence.prompt.as_str(), evidence.final_text.as_str()),
        ("Hi.", "Hello.")
    );
    assert!(!run.usage_recorded, "no usage attributes");

    let mut with_event = span(
        "1111111111111111",
        "chat m",
        0,
        4,
        json!({"gen_ai.operation.name": "chat"}),
    );
    with_event["events"] = json!([{"name": "gen_ai.client.inference.operation.details", "attributes": key_values(&details)}]);
    let (run, _) = one_run(&traces(vec![with_event]).to_string());
    assert_eq!(evidence_of(&run).final_text, "Hello.");
}

#[test]
fn failures_of_tools_and_of_the_agent() {
    let mut tool = span(
        "2222222222222222",
        "execute_tool f",
        6,
        7,
        json!({
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f",
        }),
    );
    tool["status"] = json!({"code": 2, "message": "no such file"});
    let mut agent = span(
        "00f067aa0ba902b7",
        "invoke_agent",
        0,
        20,
        json!({
            "gen_ai.operation.name": "invoke_agent", "error.type": "TimeoutError",
        }),
    );
    agent["status"] = json!({"code": 2, "message": "gave up"});
    let chat = span(
        "1111111111111111",
        "chat",
        1,
        5,
        json!({"gen_ai.operation.name": "chat"}),
    );
    let (run, _) = one_run(&traces(vec![agent, chat, tool]).to_string());
    let evidence = evidence_of(&run);
    assert_eq!(
        evidence.calls.len(),
        1,
        "the call known from its span alone"
    );
    assert_eq!(
        (
            evidence.calls[0].status.as_str(),
            evidence.calls[0].output.as_str()
        ),
        ("failed", "no such file")
    );
    assert_eq!(
        evidence.run_error.as_deref(),
        Some("the agent failed: TimeoutError: gave up")
    );
    assert!(
        !run.records
            .iter()
            .any(|record| record.event.kind() == "turn_end")
    );
}

#[test]
fn traces_without_genai_spans_are_no_runs_and_are_counted() {
    let mut other = span("5555555555555555", "GET /", 0, 1, json!({}));
    other["traceId"] = json!("0af7651916cd43dd8448eb211c80319c");
    let mut document = latest();
    document["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array_mut()
        .unwrap()
        .push(other);
    let (runs, notes) = import(&document.to_string());
    assert_eq!(runs.len(), 1);
    assert!(
        notes.contains(&"traces without a GenAI agent, model or tool span: 1".to_owned()),
        "{notes:#?}"
    );
}

fn error(text: &str) -> String {
    match runs(Path::new("t.json"), text.as_bytes()) {
        Err(error) => error.to_string(),
        Ok(runs) => panic!("imported: {runs:?}"),
    }
}

#[test]
fn a_wrong_field_is_named_with_its_line_and_column() {
    let mut document = latest();
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["startTimeUnixNano"] = json!("soon");
    let pretty = serde_json::to_string_pretty(&document).unwrap();
    let line = 1 + pretty
        .lines()
        .position(|line| line.contains("\"soon\""))
        .unwrap();
    let message = error(&pretty);
    assert!(
        message.starts_with(&format!("t.json:{line}:"))
            && message.contains(": resourceSpans[0].scopeSpans[0].spans[2].startTimeUnixNano: "),
        "{message}"
    );

    // JSON lines: the line of the request that is wrong.
    let mut bad_id = latest();
    bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = json!("not hex");
    let message = error(&format!("{}\n{bad_id}\n", latest()));
    assert!(
        message.starts_with("t.json:2:")
            && message.contains(": resourceSpans[0].scopeSpans[0].spans[0].spanId: "),
        "{message}"
    );

    let mut bad_value = latest();
    bad_value["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"][0]["value"] =
        json!({"intValue": "many"});
    let message = error(&bad_value.to_string());
    assert!(
        message.contains(": resourceSpans[0].scopeSpans[0].spans[1].attributes[0].value"),
        "{message}"
    );

    let message = error("{\"resourceSpans\": [}");
    assert!(
        message.starts_with("t.json:1:20: resourceSpans: "),
        "{message}"
    );
    let message = error("{\"resource_spans\": []}");
    assert!(message.contains("lowerCamelCase"), "{message}");
}

#[test]
fn bytes_that_are_no_otlp_protobuf_are_refused() {
    let garbage = b"\x0a\xff\xff\xff\xff\x0f";
    match runs(Path::new("t.pb"), garbage) {
        Err(error @ TraceError::Protobuf { .. }) => {
            assert!(
                error
                    .to_string()
                    .starts_with("t.pb: not an OTLP protobuf `ExportTraceServiceRequest`: "),
                "{error}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn protobuf_traces_and_logs_decode() {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message;

    let request: ExportTraceServiceRequest = serde_json::from_value(latest()).unwrap();
    let (runs_read, _) = runs(Path::new("t.pb"), &request.encode_to_vec()).unwrap();
    assert_eq!(evidence_of(&runs_read[0]).final_text, "It says alpha.");

    let logs_only: ExportLogsServiceRequest = serde_json::from_value(logs(vec![event(
        "1111111111111111",
        "gen_ai.user.message",
        json!({"content": "x"}),
    )]))
    .unwrap();
    let (runs_read, notes) = runs(Path::new("t.pb"), &logs_only.encode_to_vec()).unwrap();
    assert!(runs_read.is_empty());
    assert_eq!(notes, ["log records of no model request span: 1"]);
}

#[test]
fn a_thousand_unmapped_attributes_are_counted_not_listed() {
    let attributes: serde_json::Map<String, Value> = (0..1000)
        .map(|i| (format!("x.{i}"), json!(i)))
        .chain([("gen_ai.operation.name".to_owned(), json!("chat"))])
        .collect();
    let (_, notes) = one_run(
        &traces(vec![span(
            "1111111111111111",
            "chat",
            0,
            1,
            Value::Object(attributes),
        )])
        .to_string(),
    );
    assert!(notes.len() <= 101, "{}", notes.len());
    assert!(
        notes
            .iter()
            .any(|note| note
                .starts_with("other things no record carries (past the first 100 kinds): ")),
        "{notes:#?}"
    );
}

/// A later user message (the next turn of a conversation) is the first request that sends it.
#[test]
fn each_later_user_message_is_a_user_message_record() {
    let text = |role: &str, content: &str| json!({"role": role, "parts": [{"type": "text", "content": content}]});
    let chat = |id: &str, start, input: Value, answer: &str| {
        span(
            id,
            "chat",
            start,
            start + 1,
            json!({
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": input.to_string(),
                "gen_ai.output.messages": json!([text("assistant", answer)]).to_string(),
            }),
        )
    };
    let spans = vec![
        chat(
            "1111111111111111",
            0,
            json!([text("user", "Hi.")]),
            "Hello.",
        ),
        chat(
            "2222222222222222",
            5,
            json!([
                text("user", "Hi."),
                text("assistant", "Hello."),
                text("user", "Bye.")
            ]),
            "Bye!",
        ),
    ];
    let (run, _) = one_run(&traces(spans).to_string());
    let users: Vec<&str> = run
        .records
        .iter()
        .filter_map(|record| match &record.event {
            Event::UserMessage { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["Hi.", "Bye."]);
    let evidence = evidence_of(&run);
    assert_eq!(
        (evidence.prompt.as_str(), evidence.final_text.as_str()),
        ("Hi.", "Bye!")
    );
}

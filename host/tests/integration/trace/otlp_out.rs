//! OTLP out (docs/traces.md): `evalhost run --otlp URL` sends one GenAI trace per run to a
//! collector this test starts, which decodes each request with OpenTelemetry's official proto
//! definitions (`trace/tools/collector.py`); `--otel-file` writes the same traces as OTLP JSON
//! lines; a collector that refuses or hangs is a warning, and the suite still passes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;
use crate::support::python::python_modules;

const OTEL_PROTO: &str = "pip install opentelemetry-proto==1.45.2";

/// The collector, killed when dropped.
struct Collector {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Collector {
    fn start(dir: &Path, hang: bool) -> Collector {
        let out = dir.join("received.jsonl");
        let mut command = Command::new("python3");
        command
            .arg(repo().join("host/tests/integration/trace/tools/collector.py"))
            .arg(&out)
            .stdout(Stdio::piped());
        if hang {
            command.arg("--hang");
        }
        let mut child = command.spawn().expect("start the collector");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the collector's port");
        Collector { child, port, out }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span received, in arrival order.
    fn spans(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .flat_map(|request| {
                assert_eq!(request["path"], "/v1/traces", "{request}");
                request["spans"].as_array().unwrap().clone()
            })
            .collect()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn attribute<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

/// The mino suite (five cases, tool calls among them) sent to the collector: one trace per
/// run whose `invoke_agent` span holds a `chat` span per model exchange and an
/// `execute_tool` span per call, each a child of it, with the conventions' attributes, and
/// one `gen_ai.evaluation.result` event per verdict. The file holds the same traces.
#[test]
fn a_suite_sends_one_genai_trace_per_run_to_the_collector_and_the_file() {
    let Some(()) = python_modules(
        "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
        OTEL_PROTO,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(dir.path(), false);
    let file = dir.path().join("traces.jsonl");
    let output = Evalhost::new()
        .args([
            "run",
            "cases/mino",
            "--otlp",
            &collector.url(),
            "--otel-file",
        ])
        .arg(&file)
        .run();
    output.assert_code(0);
    output.assert_stdout_contains(&format!(
        "Exported 5 runs as OpenTelemetry traces to {}/v1/traces",
        collector.url()
    ));
    output.assert_stdout_contains("Wrote 5 runs as OpenTelemetry traces (OTLP JSON lines) to");
    let spans = collector.spans();
    let roots: Vec<&Value> = spans
        .iter()
        .filter(|s| attribute(s, "gen_ai.operation.name") == "invoke_agent")
        .collect();
    assert_eq!(roots.len(), 5, "one invoke_agent span per run: {spans:#?}");
    for root in &roots {
        assert_eq!(root["parent_span_id"], "", "{root}");
        assert_eq!(root["name"], "invoke_agent evalhost");
        assert_eq!(root["resource"]["service.name"], "evalhost");
        assert_eq!(
            root["schema_url"],
            "https://opentelemetry.io/schemas/1.38.0"
        );
        assert_eq!(attribute(root, "gen_ai.provider.name"), "evalhost.scripted");
        assert!(
            attribute(root, "gen_ai.usage.input_tokens")
                .as_i64()
                .unwrap()
                > 0,
            "{root}"
        );
    }
    // bash-approved: prompt, two model exchanges, one bash call, four verdicts that pass.
    let root = roots
        .iter()
        .find(|s| attribute(s, "evalhost.case") == "bash-approved")
        .expect("the bash-approved run");
    let children: Vec<&Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == root["trace_id"] && s["span_id"] != root["span_id"])
        .collect();
    assert!(
        children
            .iter()
            .all(|s| s["parent_span_id"] == root["span_id"]),
        "every span is a child of the run's: {children:#?}"
    );
    let chats: Vec<&&Value> = children
        .iter()
        .filter(|s| attribute(s, "gen_ai.operation.name") == "chat")
        .collect();
    assert_eq!(chats.len(), 2, "{children:#?}");
    assert_eq!(
        attribute(chats[0], "gen_ai.response.finish_reasons"),
        &serde_json::json!(["tool_call"])
    );
    assert_eq!(
        attribute(chats[1], "gen_ai.response.finish_reasons"),
        &serde_json::json!(["stop"])
    );
    assert!(
        attribute(chats[0], "gen_ai.usage.output_tokens")
            .as_i64()
            .unwrap()
            > 0
    );
    let output_messages: Value = serde_json::from_str(
        attribute(chats[1], "gen_ai.output.messages")
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        output_messages[0]["parts"][0]["content"],
        "The command printed evalhost-42."
    );
    let tools: Vec<&&Value> = children
        .iter()
        .filter(|s| attribute(s, "gen_ai.operation.name") == "execute_tool")
        .collect();
    assert_eq!(tools.len(), 1, "{children:#?}");
    assert_eq!(tools[0]["name"], "execute_tool bash");
    assert_eq!(attribute(tools[0], "gen_ai.tool.name"), "bash");
    assert!(
        attribute(tools[0], "gen_ai.tool.call.result")
            .as_str()
            .unwrap()
            .contains("evalhost-42"),
        "{}",
        tools[0]
    );
    let events = root["events"].as_array().unwrap();
    assert_eq!(events.len(), 4, "one event per verdict: {root}");
    for event in events {
        assert_eq!(event["name"], "gen_ai.evaluation.result");
        assert_eq!(event["attributes"]["gen_ai.evaluation.score.label"], "pass");
        assert_eq!(event["attributes"]["gen_ai.evaluation.score.value"], 1.0);
    }
    assert!(
        events[2]["attributes"]["gen_ai.evaluation.name"]
            .as_str()
            .unwrap()
            .starts_with("graders[2] final_text_contains"),
        "{events:?}"
    );
    // The file: OTLP JSON, one request per run, the same trace ids (hex).
    let text = std::fs::read_to_string(&file).unwrap();
    let file_roots: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|request| request["resourceSpans"][0]["scopeSpans"][0]["spans"][0].clone())
        .collect();
    assert_eq!(file_roots.len(), 5, "{text}");
    for file_root in &file_roots {
        assert!(
            roots.iter().any(|r| r["trace_id"] == file_root["traceId"]),
            "{file_root}"
        );
    }
}

/// A failing run's span says so, and its failing verdict is a `fail` event with the
/// grader's message: mino-failing has cases that fail.
#[test]
fn a_failed_verdict_is_a_fail_event_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("traces.jsonl");
    let output = Evalhost::new()
        .args(["run", "cases/mino-failing", "--otel-file"])
        .arg(&file)
        .run();
    output.assert_code(1);
    let text = std::fs::read_to_string(&file).unwrap();
    let fails: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .flat_map(|request| {
            request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["events"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|event| {
            event["attributes"].as_array().unwrap().iter().any(|kv| {
                kv["key"] == "gen_ai.evaluation.score.label" && kv["value"]["stringValue"] == "fail"
            })
        })
        .collect();
    assert!(!fails.is_empty(), "{text}");
    assert!(
        fails.iter().all(|event| event["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|kv| kv["key"] == "gen_ai.evaluation.explanation")),
        "{fails:#?}"
    );
}

/// A collector that refuses connections: a warning naming it and the runs not exported; the
/// suite's result is its own (exit 0).
#[test]
fn a_refusing_collector_is_a_warning_and_the_suite_still_passes() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let output = Evalhost::new()
        .args(["run", "cases/mino"])
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        )
        .run();
    output.assert_code(0);
    output.assert_stderr_contains(&format!(
        "OpenTelemetry export to http://127.0.0.1:{port}/v1/traces failed"
    ));
    output.assert_stderr_contains("5 runs not exported");
}

/// A collector that accepts and never answers costs the suite at most the export timeout
/// (`OTEL_EXPORTER_OTLP_TIMEOUT`, here 1 s): evalhost ends with a warning instead of hanging.
#[test]
fn a_hanging_collector_costs_at_most_the_export_timeout() {
    let Some(()) = python_modules(
        "opentelemetry.proto.collector.trace.v1.trace_service_pb2",
        OTEL_PROTO,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(dir.path(), true);
    let started = std::time::Instant::now();
    let output = Evalhost::new()
        .args(["run", "cases/mino", "--otlp", &collector.url()])
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
        .run();
    output.assert_code(0);
    output.assert_stderr_contains("OpenTelemetry export to");
    // Generous: a hang would be forever; the bound is the timeout once, not per run.
    assert!(started.elapsed().as_secs() < 60, "{output}");
}

/// Settings evalhost cannot honour are refused before anything runs, naming the variable.
#[test]
fn grpc_and_a_bad_url_are_refused_before_anything_runs() {
    let output = Evalhost::new()
        .args(["run", "cases/mino"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .run();
    output.assert_code(2);
    output.assert_stderr_contains("OTEL_EXPORTER_OTLP_PROTOCOL is `grpc`");
    let output = Evalhost::new()
        .args(["run", "cases/mino", "--otlp", "localhost:4318"])
        .run();
    output.assert_code(2);
    output.assert_stderr_contains("--otlp: `localhost:4318` is not an http:// or https:// URL");
}

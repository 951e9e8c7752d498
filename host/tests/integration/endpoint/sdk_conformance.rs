//! The official clients are the conformance test of the model endpoint: agents built on the
//! `openai`, `anthropic` and `google-genai` Python SDKs (pinned in `.ci/run`, `tests/data/endpoint/`) run as
//! external agents against evalhost's scripted endpoint, in every mode the SDKs offer
//! (streamed, not streamed, the stream helpers). Each agent validates every event and object
//! it gets against the SDK's own types and round-trips the scripted tool calls; the test checks
//! the run passes its graders and what the session log and evidence recorded.
//!
//! Without the SDKs the tests are skipped, unless `EVALHOST_REQUIRE_TOOLCHAINS=1` (as `.ci/run`
//! sets it), where a missing SDK fails them.

use crate::support::evalhost::{Evalhost, Output};
use std::path::{Path, PathBuf};

use serde_json::Value;

fn sdks() -> Option<()> {
    crate::support::common::python_sdks()
}

fn agent(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/endpoint")
        .join(script)
}

/// A suite with one case per mode of `script`, each running `script MODE PROMPT`.
fn suite(script: &str, modes: &[&str], body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    for mode in modes {
        let case = format!(
            "name: {mode}\nprompt: What does in.txt say?\n\
             agent: {{command: [python3, \"{}\", {mode}], prompt: arg, timeout_secs: 300}}\n\
             workspace:\n  files:\n    in.txt: forty-two\n{body}",
            agent(script).display()
        );
        std::fs::write(dir.path().join(format!("cases/{mode}.yaml")), case).unwrap();
    }
    dir
}

fn run(dir: &Path) -> Output {
    let out = dir.join("out");
    Evalhost::new()
        .args(["run", "--out", out.to_str().unwrap(), "cases"])
        .current_dir(dir)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-cache"),
        )
        .run()
}

fn evidence(dir: &Path, case: &str) -> Value {
    let path = dir.join(format!("out/{case}/run-1.evidence.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn session_kinds(dir: &Path, case: &str) -> Vec<String> {
    let path = dir.join(format!("out/{case}/run-1.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).unwrap();
            record["type"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn the_openai_sdk_accepts_every_responses_answer_and_round_trips_calls() {
    let Some(()) = sdks() else { return };
    let modes = ["responses-stream", "responses-create", "responses-helper"];
    let dir = suite(
        "openai_agent.py",
        &modes,
        "model:
  - calls:
      - {tool: read_file, arguments: {path: in.txt}}
      - {tool: write_note, arguments: {input: a note from the model}}
  - text: The file says forty-two.
    expect_input_contains: forty-two
graders:
  - tool_order: [read_file, write_note]
  - result_status: {call: 1, status: completed}
  - result_status: {call: 2, status: completed}
  - final_text_contains: The file says forty-two.
  - file_contains: {path: answer.txt, text: The file says forty-two.}
  - file_contains: {path: note.txt, text: a note from the model}
  - max_requests: 2
",
    );
    let evalhost_output = run(dir.path());
    evalhost_output.assert_code(0);
    for mode in modes {
        let evidence = evidence(dir.path(), mode);
        let calls = &evidence["calls"];
        assert_eq!(calls[0]["call_id"], "call_1", "{mode}");
        assert_eq!(calls[0]["output"], "forty-two", "{mode}");
        assert_eq!(calls[1]["call_id"], "call_2", "{mode}");
        assert_eq!(calls[1]["output"], "Done!", "{mode}");
        assert_eq!(evidence["usage"]["requests"], 2, "{mode}");
        assert_eq!(
            session_kinds(dir.path(), mode),
            [
                "session_start",
                "user_message",
                "model_request",
                "model_response",
                // Both tools started when the answer asking for them was sent; their
                // results came back with the next request.
                "tool_start",
                "tool_start",
                "tool_result",
                "tool_result",
                "model_request",
                "model_response",
                "turn_end"
            ],
            "{mode}"
        );
    }
}

#[test]
fn the_openai_sdk_accepts_every_chat_completions_answer() {
    let Some(()) = sdks() else { return };
    let modes = ["chat-stream", "chat-create", "chat-helper"];
    let dir = suite(
        "openai_agent.py",
        &modes,
        "model:
  - calls:
      - {tool: read_file, arguments: {path: in.txt}}
      - {tool: read_file, arguments: {path: in.txt}}
  - text: The file says forty-two.
    expect_input_contains: forty-two
graders:
  - tool_order: [read_file, read_file]
  - result_status: {call: 2, status: completed}
  - final_text_contains: The file says forty-two.
  - file_contains: {path: answer.txt, text: The file says forty-two.}
",
    );
    let evalhost_output = run(dir.path());
    evalhost_output.assert_code(0);
    for mode in modes {
        let evidence = evidence(dir.path(), mode);
        assert_eq!(evidence["calls"][1]["call_id"], "call_2", "{mode}");
        assert_eq!(evidence["calls"][1]["output"], "forty-two", "{mode}");
    }
}

#[test]
fn the_anthropic_sdk_accepts_every_messages_answer_and_tool_errors_are_failed_calls() {
    let Some(()) = sdks() else { return };
    let modes = ["create", "stream", "helper"];
    let dir = suite(
        "anthropic_agent.py",
        &modes,
        "model:
  - call: {tool: read_file, arguments: {path: missing.txt}}
  - call: {tool: read_file, arguments: {path: in.txt}}
    expect_input_contains: No such file
  - text: The file says forty-two.
    expect_input_contains: forty-two
graders:
  - tool_order: [read_file, read_file]
  - result_status: {call: 1, status: failed}
  - result_status: {call: 2, status: completed}
  - final_text_contains: The file says forty-two.
  - file_contains: {path: answer.txt, text: The file says forty-two.}
  - max_requests: 3
",
    );
    let evalhost_output = run(dir.path());
    evalhost_output.assert_code(0);
    for mode in modes {
        let evidence = evidence(dir.path(), mode);
        assert_eq!(evidence["calls"][0]["call_id"], "toolu_01", "{mode}");
        assert_eq!(evidence["calls"][0]["status"], "failed", "{mode}");
        assert_eq!(evidence["calls"][1]["output"], "forty-two", "{mode}");
    }
}

#[test]
fn the_google_genai_sdk_accepts_every_gemini_answer_and_round_trips_calls_by_id() {
    let Some(()) = sdks() else { return };
    let modes = ["create", "stream"];
    let dir = suite(
        "gemini_agent.py",
        &modes,
        "model:
  - call: {tool: read_file, arguments: {path: missing.txt}}
  - call: {tool: read_file, arguments: {path: in.txt}}
    expect_input_contains: No such file
  - text: The file says forty-two.
    expect_input_contains: forty-two
graders:
  - tool_order: [read_file, read_file]
  - result_status: {call: 1, status: failed}
  - result_status: {call: 2, status: completed}
  - final_text_contains: The file says forty-two.
  - file_contains: {path: answer.txt, text: The file says forty-two.}
  - max_requests: 3
  - no_endpoint_errors: {}
",
    );
    let evalhost_output = run(dir.path());
    evalhost_output.assert_code(0);
    for mode in modes {
        let evidence = evidence(dir.path(), mode);
        assert_eq!(evidence["calls"][0]["call_id"], "call_1", "{mode}");
        assert_eq!(evidence["calls"][0]["status"], "failed", "{mode}");
        assert_eq!(evidence["calls"][1]["call_id"], "call_2", "{mode}");
        assert_eq!(evidence["calls"][1]["output"], "forty-two", "{mode}");
        assert_eq!(
            session_kinds(dir.path(), mode)
                .iter()
                .filter(|kind| *kind == "model_request")
                .count(),
            3,
            "{mode}: count_tokens is answered, not counted"
        );
    }
}

#[test]
fn unserved_requests_are_warnings_in_every_report_and_fail_no_endpoint_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    let case = |name: &str, graders: &str| {
        format!(
            "name: {name}\nprompt: Hello\n\
             agent: {{command: [python3, \"{}\"]}}\n\
             model:\n  - text: Hi there.\ngraders:\n  - final_text_contains: Hi there.\n{graders}",
            agent("unserved_agent.py").display()
        )
    };
    std::fs::write(dir.path().join("cases/knocks.yaml"), case("knocks", "")).unwrap();
    std::fs::write(
        dir.path().join("cases/strict.yaml"),
        case("strict", "  - no_endpoint_errors:\n"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let html = dir.path().join("report.html");
    let output = Evalhost::new()
        .args(["run", "--out", out.to_str().unwrap(), "--html"])
        .arg(&html)
        .arg("cases")
        .current_dir(dir.path())
        .run();
    output.assert_code(1);
    let stdout = output.stdout();
    let warnings = [
        "warning: model endpoint: GET /v1/responses answered 404: WebSocket upgrade to /v1/responses is not served: evalhost's endpoint speaks HTTP; POST /v1/responses instead",
        "warning: model endpoint: POST /v1/completions answered 404: POST /v1/completions is not served: the endpoint serves POST /v1/responses, POST /v1/chat/completions, POST /v1/messages and POST /v1beta/models/MODEL:generateContent (or :streamGenerateContent)",
        "warning: model endpoint: HEAD /v1/messages answered 405: HEAD /v1/messages is not served: the endpoint accepts POST /v1/messages",
    ];
    for case in ["knocks", "strict"] {
        for warning in warnings {
            assert!(
                stdout.contains(&format!("\n  {case} run 1: {warning}\n")),
                "{warning}\n{stdout}"
            );
        }
    }
    assert!(
        stdout.contains(
            "  strict run 1: graders[1] no_endpoint_errors: 3 requests not served: GET /v1/responses (404), POST /v1/completions (404), HEAD /v1/messages (405)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("\nknocks  "), "{stdout}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let knocks = &report["cases"][0]["runs"][0];
    assert_eq!(knocks["pass"], true);
    assert_eq!(knocks["warnings"].as_array().unwrap().len(), 3);
    let evidence = evidence(dir.path(), "knocks");
    let kinds: Vec<&str> = evidence["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .filter(|k| *k == "endpoint.error")
        .collect();
    assert_eq!(kinds.len(), 3);
    let kinds = session_kinds(dir.path(), "knocks");
    assert_eq!(kinds.iter().filter(|k| *k == "endpoint_error").count(), 3);
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains("Warning: model endpoint: HEAD /v1/messages answered 405"),
        "the HTML report shows the warning"
    );
}

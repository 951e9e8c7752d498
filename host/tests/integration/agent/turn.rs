//! The agent loop end to end: real HTTP to the scripted model on 127.0.0.1, real tools,
//! and the session log the graders' evidence is built from.

use crate::support::agent::{Harness, call, expecting, text};
use evalhost::internals::session::Approve;
use evalhost::internals::session::{Event, OutputItem};
use serde_json::json;

#[tokio::test]
async fn approved_bash_call_completes_and_the_log_tells_the_story() {
    let h = Harness::new().await;
    let run = h
        .run(
            Approve::All,
            vec![
                call(
                    "bash",
                    json!({"command": "echo hello > out.txt; cat out.txt"}),
                ),
                expecting(text("Wrote hello."), "hello"),
            ],
        )
        .await;
    assert_eq!(run.failure, None);
    let outcome = run.outcome();
    assert_eq!(outcome.final_text, "Wrote hello.");
    assert_eq!((outcome.requests, outcome.tool_calls), (2, 1));
    assert_eq!(
        run.kinds(),
        [
            "session_start",
            "user_message",
            "model_request",
            "model_response",
            "tool_start",
            "tool_result",
            "model_request",
            "model_response",
            "turn_end",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("out.txt")).expect("bash wrote the file"),
        "hello\n"
    );

    let evidence = run.evidence();
    assert_eq!(evidence.final_text, "Wrote hello.");
    assert_eq!(evidence.prompt, "Do the thing.");
    assert_eq!(evidence.run_error, None);
    assert_eq!(evidence.usage.requests, 2);
    assert_eq!(evidence.usage.input_tokens, outcome.input_tokens);
    assert_eq!(evidence.usage.output_tokens, outcome.output_tokens);
    let call = run.single_call();
    assert_eq!(call.call_id, "call_1");
    assert_eq!(call.name, "bash");
    assert_eq!(call.status, "completed");
    assert_eq!(call.output, "hello\n");
    assert!(call.started);
}

#[tokio::test]
async fn requests_carry_instructions_tools_and_the_whole_input_so_far() {
    let h = Harness::new().await;
    let run = h
        .run(
            Approve::All,
            vec![call("bash", json!({"command": "echo hi"})), text("Done.")],
        )
        .await;
    run.outcome();
    let first = run.request_body(1);
    assert_eq!(first["stream"], json!(true));
    assert_eq!(first["model"], json!("scripted"));
    assert_eq!(
        first["instructions"],
        json!(evalhost::internals::agent::DEFAULT_INSTRUCTIONS)
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            assert_eq!(t["parameters"]["type"], "object");
            t["name"].as_str().expect("name")
        })
        .collect();
    assert_eq!(
        tools,
        ["bash", "read_file", "write_file", "edit_file", "list_files"]
    );
    assert_eq!(
        first["input"],
        json!([{"type": "message", "role": "user", "content": "Do the thing."}])
    );
    assert_eq!(
        run.request_body(2)["input"],
        json!([
            {"type": "message", "role": "user", "content": "Do the thing."},
            {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"echo hi\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "hi\n"},
        ])
    );
}

#[tokio::test]
async fn recorded_usage_is_the_synthetic_count_of_what_was_sent() {
    let h = Harness::new().await;
    let run = h
        .run(Approve::None, vec![text("Hello there, nothing to do.")])
        .await;
    let outcome = run.outcome();
    let sent = serde_json::to_vec(&run.request_body(1)).expect("body");
    assert_eq!(outcome.input_tokens, sent.len() as u64 / 4);
    let response = run
        .records
        .iter()
        .find_map(|r| match &r.event {
            Event::ModelResponse {
                output,
                input_tokens,
                output_tokens,
                ..
            } => Some((output.clone(), *input_tokens, *output_tokens)),
            _ => None,
        })
        .expect("response recorded");
    assert_eq!(
        response.0,
        [OutputItem::Message {
            text: "Hello there, nothing to do.".into()
        }]
    );
    assert_eq!(response.1, outcome.input_tokens);
    assert!(response.2 > 0);
    assert_eq!(response.2, outcome.output_tokens);
}

#[tokio::test]
async fn declined_bash_call_is_denied_and_never_runs() {
    let h = Harness::new().await;
    std::fs::create_dir(h.workspace.join("build")).expect("build dir");
    let run = h
        .run(
            Approve::None,
            vec![
                call("bash", json!({"command": "rm -rf build"})),
                expecting(
                    text("The command was not approved, so nothing was deleted."),
                    "did not approve",
                ),
            ],
        )
        .await;
    assert_eq!(run.failure, None);
    assert_eq!(
        run.outcome().final_text,
        "The command was not approved, so nothing was deleted."
    );
    assert!(h.workspace.join("build").is_dir(), "the command never ran");
    assert!(!run.kinds().contains(&"tool_start"));
    let call = run.single_call();
    assert_eq!(call.status, "denied");
    assert!(call.output.contains("did not approve"), "{}", call.output);
    assert!(!call.started);
}

#[tokio::test]
async fn exhausted_script_ends_the_turn_with_its_message() {
    let h = Harness::new().await;
    let run = h
        .run(Approve::All, vec![call("bash", json!({"command": "true"}))])
        .await;
    let message = "Model script exhausted: request 2 has no scripted response";
    assert_eq!(run.error(), message);
    assert_eq!(run.failure.as_deref(), Some(message));
    assert_eq!(
        run.records.last().map(|r| &r.event),
        Some(&Event::RunError {
            message: message.into()
        })
    );
    let evidence = run.evidence();
    assert_eq!(evidence.run_error.as_deref(), Some(message));
    assert_eq!(evidence.calls[0].status, "completed");
}

#[tokio::test]
async fn missing_expected_input_ends_the_turn_with_its_message() {
    let h = Harness::new().await;
    let run = h
        .run(
            Approve::None,
            vec![
                call("bash", json!({"command": "true"})),
                expecting(text("unreachable"), "was approved"),
            ],
        )
        .await;
    let message = "Request 2 did not contain \"was approved\"";
    assert_eq!(run.error(), message);
    assert_eq!(run.failure.as_deref(), Some(message));
    assert_eq!(run.kinds().last(), Some(&"run_error"));
}

#[tokio::test]
async fn request_limit_cancels_the_calls_it_cannot_answer() {
    let h = Harness::new().await;
    let run = h
        .run_with(
            vec![
                call("bash", json!({"command": "echo one > one.txt"})),
                call("bash", json!({"command": "echo two > two.txt"})),
                text("never reached"),
            ],
            |config| {
                config.approve = Approve::All;
                config.limits.max_requests = 2;
            },
        )
        .await;
    assert_eq!(run.error(), "Turn exceeded the limit of 2 model requests");
    assert!(h.workspace.join("one.txt").exists());
    assert!(
        !h.workspace.join("two.txt").exists(),
        "a call whose result could never be sent does not run"
    );
    let statuses: Vec<String> = run.evidence().calls.into_iter().map(|c| c.status).collect();
    assert_eq!(statuses, ["completed", "cancelled"]);
    assert_eq!(run.kinds().last(), Some(&"run_error"));
}

#[tokio::test]
async fn default_limit_is_eight_requests() {
    let h = Harness::new().await;
    let steps = (0..9)
        .map(|_| call("read_file", json!({"path": "missing.txt"})))
        .collect();
    let run = h.run(Approve::None, steps).await;
    assert_eq!(run.error(), "Turn exceeded the limit of 8 model requests");
    assert_eq!(run.evidence().usage.requests, 8);
}

#[tokio::test]
async fn tool_call_limit_ends_the_turn() {
    let h = Harness::new().await;
    let run = h
        .run_with(
            vec![
                call("read_file", json!({"path": "a"})),
                call("read_file", json!({"path": "b"})),
                text("never reached"),
            ],
            |config| config.limits.max_tool_calls = 1,
        )
        .await;
    assert_eq!(run.error(), "Turn exceeded the limit of 1 tool calls");
    let calls = run.evidence().calls;
    assert_eq!(calls[0].status, "failed");
    assert_eq!(calls[1].status, "cancelled");
    assert!(!calls[1].started);
}

#[tokio::test]
async fn unreachable_model_is_a_run_error() {
    let h = Harness::new().await;
    // Bind and drop a listener so the port is (almost certainly) closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let mut log = evalhost::internals::session::SessionLog::create(&h.root.path().join("s.jsonl"))
        .expect("log");
    let config = h.config(&format!("http://127.0.0.1:{port}/v1"), Approve::None);
    let error = evalhost::internals::agent::run_turn(&config, "hi", &mut log)
        .await
        .expect_err("nothing listens");
    let message = error.to_string();
    assert!(message.starts_with("Model request 1 failed: "), "{message}");
    assert_eq!(
        log.records().last().map(|r| &r.event),
        Some(&Event::RunError { message })
    );
}

#[tokio::test]
async fn every_call_gets_exactly_one_result() {
    let h = Harness::new().await;
    h.seed("notes.md", "hello");
    let run = h
        .run(
            Approve::None,
            vec![
                call("read_file", json!({"path": "notes.md"})),
                call("delete_file", json!({"path": "notes.md"})),
                call("bash", json!({"command": "true"})),
                call("write_file", json!({"path": ".env", "content": "x"})),
                call("edit_file", json!({"path": "notes.md"})),
                text("done"),
            ],
        )
        .await;
    run.outcome();
    let mut ids: Vec<String> = run
        .records
        .iter()
        .filter_map(|r| match &r.event {
            Event::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    ids.dedup();
    assert_eq!(ids, ["call_1", "call_2", "call_3", "call_4", "call_5"]);
    let statuses: Vec<(String, bool)> = run
        .evidence()
        .calls
        .into_iter()
        .map(|c| (c.status, c.started))
        .collect();
    assert_eq!(
        statuses,
        [
            ("completed".to_owned(), true),
            ("unknown_tool".to_owned(), false),
            ("denied".to_owned(), false),
            ("denied".to_owned(), false),
            ("invalid_arguments".to_owned(), false),
        ]
    );
    // The user message, then each call paired with its output.
    assert_eq!(
        run.request_body(6)["input"].as_array().map(Vec::len),
        Some(11)
    );
}

//! An external agent in live mode: the same Python test agent talks to evalhost's recording
//! pass-through endpoint, which forwards to a fake provider on 127.0.0.1; the evidence comes
//! from what crossed the endpoint, plus the workspace.

use std::path::Path;

use crate::support::live::{FakeProvider, Project, Step, chat_call, chat_text, responses_output};
use serde_json::json;

#[test]
fn an_external_agent_runs_live_through_the_recording_endpoint() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(chat_call(
                "call_q",
                "read_file",
                &json!({"path": "in.txt"}),
                30,
                4,
            )),
            Step::Sse(chat_text("The file says forty-two.", 41, 6)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "");
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external_agent/agent.py");
    project.case(
        "external",
        &format!(
            "prompt: What does in.txt say? Write it to answer.txt.\nruns: 1\n\
             agent: {{command: [python3, \"{}\"], prompt: stdin, timeout_secs: 300}}\n\
             workspace:\n  files:\n    in.txt: forty-two\n\
             graders:\n  - tool_called: read_file\n  - final_text_contains: forty-two\n\
             \x20 - file_contains: {{path: answer.txt, text: forty-two}}\n",
            agent.display()
        ),
    );
    let out = project.path().join("out");
    let output = project.evalhost(&["run", "--live", "--out", out.to_str().unwrap(), "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains("Eval live mode: 1 cases, 1 runs each, model fake-model."),
        "the header counts the runs the case set, not --runs: {stdout}"
    );
    assert!(
        stdout.contains("\nexternal  1     1 "),
        "the case's own runs: 1 wins: {stdout}"
    );
    // The provider saw the tool result the agent sent back on its second request.
    let received = fake.received();
    assert_eq!(received.len(), 2);
    assert!(
        received[1].body.to_string().contains("forty-two"),
        "{:?}",
        received[1].body
    );
    // Usage is the provider's, summed over the two requests.
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("external/run-1.evidence.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(evidence["usage"]["input_tokens"], 71);
    assert_eq!(evidence["usage"]["output_tokens"], 10);
    assert_eq!(evidence["calls"][0]["name"], "read_file");
}

#[test]
fn every_tool_kind_a_responses_client_declares_reaches_the_provider_as_sent() {
    let fake = FakeProvider::start(
        vec![Step::Sse(responses_output(
            json!([{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "No tools needed."}]}]),
            12,
            3,
        ))],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-responses", &fake, "");
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/endpoint/tools_agent.py");
    project.case(
        "tools",
        &format!(
            "prompt: Anything to do?\nruns: 1\n\
             agent: {{command: [python3, \"{}\"], timeout_secs: 300}}\n\
             graders:\n  - final_text_contains: No tools needed.\n",
            agent.display()
        ),
    );
    let out = project.path().join("out");
    let output = project.evalhost(&["run", "--live", "--out", out.to_str().unwrap(), "cases"]);
    output.assert_code(0);
    let received = fake.received();
    assert_eq!(received.len(), 1);
    let sent: serde_json::Value =
        serde_json::from_str(include_str!("../../data/endpoint/tools.json"))
            .expect("the tools the agent declares");
    assert_eq!(received[0].body["tools"], sent);
}

/// The official SDKs, live: Chat Completions and Anthropic Messages requests pass through to a
/// Chat Completions provider and back, tool call round trip included.
#[test]
fn chat_and_anthropic_clients_pass_through_live() {
    if crate::support::common::python_sdks().is_none() {
        return;
    }
    let round = || {
        vec![
            Step::Sse(chat_call(
                "call_q",
                "read_file",
                &json!({"path": "in.txt"}),
                30,
                4,
            )),
            Step::Sse(chat_text("The file says forty-two.", 41, 6)),
        ]
    };
    let fake = FakeProvider::start(
        [round(), round()].concat(),
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/endpoint");
    for (name, script, mode) in [
        ("a-chat", "openai_agent.py", "chat-stream"),
        ("b-anthropic", "anthropic_agent.py", "stream"),
    ] {
        project.case(
            name,
            &format!(
                "prompt: What does in.txt say?\nruns: 1\n\
                 agent: {{command: [python3, \"{}\", {mode}], prompt: arg, timeout_secs: 300}}\n\
                 workspace:\n  files:\n    in.txt: forty-two\n\
                 graders:\n  - tool_called: read_file\n  - final_text_contains: forty-two\n\
                 \x20 - result_status: {{call: 1, status: completed}}\n",
                data.join(script).display()
            ),
        );
    }
    let out = project.path().join("out");
    let evalhost_output = project.evalhost(&[
        "run",
        "--live",
        "--jobs",
        "1",
        "--out",
        out.to_str().unwrap(),
        "cases",
    ]);
    evalhost_output.assert_code(0);
    let received = fake.received();
    assert_eq!(received.len(), 4);
    // The second request of each round carries the tool result, in the provider's dialect.
    for second in [&received[1], &received[3]] {
        let messages = second.body["messages"].as_array().expect("messages");
        assert!(
            messages.iter().any(|m| m["role"] == "tool"
                && m["tool_call_id"] == "call_q"
                && m["content"] == "forty-two"),
            "{messages:?}"
        );
    }
    for case in ["a-chat", "b-anthropic"] {
        let evidence: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("{case}/run-1.evidence.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(evidence["usage"]["input_tokens"], 71, "{case}");
        assert_eq!(evidence["calls"][0]["output"], "forty-two", "{case}");
    }
}

//! `evalhost record --live CASE`: a live run against a fake provider becomes a replay case
//! that replays green, with the responses as received and `expect_input_contains` lines.

use crate::support::live;

use crate::support::live::{FakeProvider, Project, Step, chat_call, chat_text, responses_output};
use serde_json::json;

const WRITE_CASE: &str = "description: Write a greeting.\nprompt: Write hello to b.txt, then read it back.\napprove: all\ngraders:\n  - file_contains: {path: b.txt, text: hello}\n  - tool_order: [write_file, read_file]\n";

#[test]
fn a_recorded_live_run_replays_green() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(chat_call(
                "call_a",
                "write_file",
                &json!({"path": "b.txt", "content": "hello"}),
                8,
                2,
            )),
            Step::Sse(chat_call(
                "call_b",
                "read_file",
                &json!({"path": "b.txt"}),
                9,
                2,
            )),
            Step::Sse(chat_text("b.txt says hello", 10, 3)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", WRITE_CASE);
    let history = project.path().join("h.db");
    let evalhost_output = project.evalhost(&[
        "record",
        "--live",
        "cases/greet.yaml",
        "--output",
        "cases/greet-replay.yaml",
        "--history",
        history.to_str().unwrap(),
    ]);
    evalhost_output.assert_code(0);
    let stdout = evalhost_output.stdout();
    assert!(
        stdout.contains("Recorded greet live (3 requests"),
        "{stdout}"
    );
    // The live run is in the history, as a live run of the fake model.
    assert!(stdout.contains("Recorded as run "), "{stdout}");
    let run = evalhost::history::Location::Sqlite(history.clone())
        .open_existing()
        .unwrap()
        .resolve("latest")
        .unwrap();
    assert_eq!(
        (
            run.command.as_str(),
            run.mode.as_str(),
            run.model.as_str(),
            run.runs
        ),
        ("record", "live", "fake-model", 1)
    );
    assert_eq!(run.provider.as_deref(), Some("openai-chat"));
    let recorded = std::fs::read_to_string(project.path().join("cases/greet-replay.yaml")).unwrap();
    assert!(
        recorded.starts_with("name: \"greet-replay\"\n"),
        "{recorded}"
    );
    assert!(
        recorded.contains("  - call: {tool: \"write_file\", arguments: {\"content\":\"hello\",\"path\":\"b.txt\"}}\n"),
        "{recorded}"
    );
    assert!(
        recorded.contains("  - text: \"b.txt says hello\"\n"),
        "{recorded}"
    );
    // The read_file result (the file's content) must be in the request that follows it.
    assert!(
        recorded.contains("  - text: \"b.txt says hello\"\n    expect_input_contains: \"hello\"\n"),
        "{recorded}"
    );

    // Replay: no provider involved, the script answers, and every grader passes.
    let requests_before = fake.received().len();
    let output = project.evalhost(&["run", "cases/greet-replay.yaml"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("All cases passed."), "{stdout}");
    assert_eq!(
        fake.received().len(),
        requests_before,
        "replay must not call the provider"
    );
}

#[test]
fn record_refuses_to_overwrite_and_reports_a_failed_live_run() {
    let fake = FakeProvider::start(vec![], Step::Status(500, None, "upstream exploded"));
    let project = Project::for_fake("openai-chat", &fake, "max_retries = 0\n");
    project.case("greet", WRITE_CASE);
    std::fs::write(project.path().join("cases/taken.yaml"), "x").unwrap();
    let evalhost_output = project.evalhost(&[
        "record",
        "--live",
        "cases/greet.yaml",
        "--output",
        "cases/taken.yaml",
    ]);
    evalhost_output.assert_code(2);
    let stderr = evalhost_output.stderr();
    assert!(
        stderr.contains("cases/taken.yaml already exists"),
        "{stderr}"
    );

    let output = project.evalhost(&["record", "--live", "cases/greet.yaml"]);
    output.assert_code(3);
    let stderr = output.stderr();
    assert!(
        stderr.contains("the live run of greet failed, nothing was written"),
        "{stderr}"
    );
    assert!(!project.path().join("cases/greet-recorded.yaml").exists());
}

/// A provider nobody answers for: the live run fails, which `record --help` documents as
/// exit status 3 (the arguments were fine).
#[test]
fn an_unreachable_provider_is_a_failed_live_run_exit_3() {
    let project = Project::new(
        "[provider]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"fake-model\"\n\
         api_key_env = \"EVALHOST_TEST_KEY\"\nmax_retries = 0\ntimeout_secs = 5\n",
    );
    project.case("greet", WRITE_CASE);
    let output = project.evalhost(&["record", "--live", "cases/greet.yaml"]);
    output.assert_code(3);
    let stderr = output.stderr();
    // One line; the end is the OS's words (`Connection refused (os error 111)` on Linux).
    assert!(
        stderr.starts_with(
            "Error: the live run of greet failed, nothing was written: Provider openai-chat \
             (model fake-model) failed on request 1: connection failed: "
        ) && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(!project.path().join("cases/greet-recorded.yaml").exists());
    let output = project.evalhost(&["record", "--help"]);
    let help = output.stdout();
    assert!(
        help.contains("3 the live run\nfailed (e.g. the provider could not be reached)"),
        "{help}"
    );
}

/// `evalhost record` for AgentCompany: the configured provider answers, the fixture is written
/// with the recorded turns and ledgers, and (once a rubric is added) it replays green.
#[test]
fn an_agentcompany_fixture_is_recorded_live_and_replays() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(chat_call(
                "call_a",
                "write_file",
                &json!({"path": "plan.md", "content": "hire engineering"}),
                80,
                12,
            )),
            Step::Sse(chat_text("Plan written to plan.md.", 95, 7)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "");
    let scenario = project.path().join("cases/scenarios/plan-team");
    std::fs::create_dir_all(&scenario).unwrap();
    std::fs::write(scenario.join("system.txt"), "You are the CEO.\n").unwrap();
    std::fs::write(scenario.join("user.txt"), "Write a hiring plan.").unwrap();
    let args = [
        "record",
        "--scenario",
        "Hiring plan",
        "--fixture-id",
        "plan-team",
        "--system-prompt-file",
        "cases/scenarios/plan-team/system.txt",
        "--user-message-file",
        "cases/scenarios/plan-team/user.txt",
        "--output",
        "cases/plan-team.jsonl",
    ];

    let evalhost_output = project.evalhost_with(&args, &[]);
    evalhost_output.assert_code(2);
    let stderr = evalhost_output.stderr();
    assert!(
        stderr.contains("EVALHOST_TEST_KEY"),
        "the missing key variable is named: {stderr}"
    );
    assert!(
        fake.received().is_empty(),
        "nothing is sent without the key"
    );

    let evalhost_output = project.evalhost(&args);
    evalhost_output.assert_code(0);
    let path = project.path().join("cases/plan-team.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(lines[0]["type"], "meta");
    assert_eq!(lines[0]["model"], "fake-model");
    assert!(
        lines[0]["recordedAt"].as_str().unwrap().starts_with("20"),
        "{text}"
    );
    assert_eq!(lines[1]["content"][0]["text"], "Write a hiring plan.");
    assert_eq!(lines[2]["role"], "assistant");
    assert_eq!(lines[2]["content"][0]["name"], "write_file");
    assert_eq!(lines[2]["tokenLedger"]["input"], 80);
    assert_eq!(lines[2]["tokenLedger"]["output"], 12);
    assert_eq!(lines[3]["role"], "toolResult");
    assert_eq!(lines[3]["isError"], false);
    assert_eq!(lines[4]["content"][0]["text"], "Plan written to plan.md.");
    assert_eq!(lines[5]["type"], "assertions");
    assert!(!text.contains(live::SECRET), "the key is never written");

    // A fixture needs a rubric dimension before it runs: add one and an assertion, then replay.
    let assertions = json!({"type": "assertions", "assertions": [{"kind": "tool_called", "name": "write_file"}],
        "semanticRubric": [{"id": "plan", "question": "Is there a plan?", "passRubric": "mentions the plan",
            "failRubric": "no plan", "mustContain": ["plan.md"], "mustNotContain": []}]});
    let mut fixture: Vec<String> = text.lines().map(str::to_owned).collect();
    *fixture.last_mut().unwrap() = assertions.to_string();
    std::fs::write(&path, fixture.join("\n") + "\n").unwrap();
    let before = fake.received().len();
    let output = project.evalhost(&["run", "cases/plan-team.jsonl"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("plan-team"), "{stdout}");
    assert_eq!(
        fake.received().len(),
        before,
        "replay must not call the provider"
    );
}

/// A real external agent (the official OpenAI SDK) recorded live: a response with two calls
/// becomes one step with both, the `agent:` is kept, and the recording replays green with the
/// provider gone; the replay's session promotes to a Nexus case that passes.
#[test]
fn an_external_agent_with_parallel_calls_is_recorded_and_replays_offline() {
    if crate::support::common::python_sdks().is_none() {
        return;
    }
    let call = |id: &str, path: &str| {
        json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": format!("call_{id}"),
               "name": "read_file", "arguments": json!({"path": path}).to_string(), "status": "completed"})
    };
    let fake = FakeProvider::start(
        vec![
            Step::Sse(responses_output(
                json!([call("a", "a.txt"), call("b", "b.txt")]),
                30,
                8,
            )),
            Step::Sse(responses_output(
                json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "alpha and beta", "annotations": []}]}]),
                40,
                4,
            )),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-responses", &fake, "");
    let agent = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/endpoint/openai_agent.py");
    project.case(
        "two",
        &format!(
            "prompt: What do a.txt and b.txt say?\ntimeout_secs: 300\n\
             agent: {{command: [python3, \"{}\", responses-stream], prompt: arg}}\n\
             workspace:\n  files:\n    a.txt: alpha\n    b.txt: beta\n\
             graders:\n  - tool_called: read_file\n  - final_text_contains: alpha and beta\n",
            agent.display()
        ),
    );
    let evalhost_output = project.evalhost(&[
        "record",
        "--live",
        "cases/two.yaml",
        "--output",
        "cases/two-replay.yaml",
    ]);
    evalhost_output.assert_code(0);
    let recorded = std::fs::read_to_string(project.path().join("cases/two-replay.yaml")).unwrap();
    assert!(
        recorded.contains(&format!(
            "agent: {{command: [\"python3\", \"{}\", \"responses-stream\"], prompt: arg}}\ntimeout_secs: 300\n",
            agent.display()
        )),
        "{recorded}"
    );
    assert!(
        recorded.contains(
            "  - calls: [{tool: \"read_file\", arguments: {\"path\":\"a.txt\"}}, {tool: \"read_file\", arguments: {\"path\":\"b.txt\"}}]\n"
        ),
        "{recorded}"
    );
    drop(fake);

    let output = project.evalhost(&["run", "--out", "out", "cases/two-replay.yaml"]);
    output.assert_code(0);
    let output = project.evalhost(&[
        "promote",
        "--session",
        "out/two-replay/run-1.jsonl",
        "--case",
        "two-promoted",
        "--cases-dir",
        "nexus",
    ]);
    output.assert_code(0);
    let output = project.evalhost(&["run", "nexus/two-promoted"]);
    output.assert_code(0);
}

//! `evalhost record --live CASE`: a live run against a fake provider becomes a replay case
//! that replays green, with the responses as received and `expect_input_contains` lines.

mod live_support;

use live_support::{FakeProvider, Project, Step, chat_call, chat_text};
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
    let (code, stdout, stderr) = project.evalhost(&[
        "record",
        "--live",
        "cases/greet.yaml",
        "--output",
        "cases/greet-replay.yaml",
    ]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("Recorded greet live (3 requests"),
        "{stdout}"
    );
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
    let (code, stdout, stderr) = project.evalhost(&["run", "cases/greet-replay.yaml"]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
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
    let (code, _, stderr) = project.evalhost(&[
        "record",
        "--live",
        "cases/greet.yaml",
        "--output",
        "cases/taken.yaml",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cases/taken.yaml already exists"),
        "{stderr}"
    );

    let (code, _, stderr) = project.evalhost(&["record", "--live", "cases/greet.yaml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the live run of greet failed, nothing was written"),
        "{stderr}"
    );
    assert!(!project.path().join("cases/greet-recorded.yaml").exists());
}

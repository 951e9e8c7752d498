//! `evalhost run --live` end to end: the real binary against fake providers on 127.0.0.1
//! (Chat Completions, Anthropic Messages, Responses), never the internet.

use std::time::Duration;

use crate::support::live::*;
use serde_json::json;

const GREET: &str = "prompt: Say hello.\ngraders:\n  - final_text_contains: hello\n";

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn live_defaults_to_three_runs_sums_usage_and_skips_replay_only_cases() {
    let fake = FakeProvider::start(vec![], Step::Sse(chat_text("Well hello there", 40, 6)));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", GREET);
    project.case(
        "scripted-only",
        "prompt: x\nlive: false\nmodel:\n  - text: hello\ngraders:\n  - final_text_contains: hello\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "Skipped replay-only cases (live: false): scripted-only"
    );
    assert_eq!(
        lines[1],
        "Eval live mode: 1 cases, 3 runs each, model fake-model."
    );
    assert!(!stdout.contains("scripted-only  "), "{stdout}");
    let row = lines.iter().find(|l| l.starts_with("greet")).expect("row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    // CASE RUNS PASS pass@k pass^k RATE_CI95 REQ TOOLS IN_TOK OUT_TOK STATUS
    assert_eq!(
        cells,
        [
            "greet",
            "3",
            "3",
            "1.00",
            "1.00",
            "0.44-1.00",
            "1.0",
            "0.0",
            "120",
            "18",
            "pass"
        ]
    );
    let received = fake.received();
    assert_eq!(received.len(), 3, "one request per run, nothing cached");
    assert!(received.iter().all(|r| r.path == "/v1/chat/completions"));
    let body = &received[0].body;
    assert_eq!(body["model"], "fake-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][1]["content"], "Say hello.");
    assert_eq!(
        received[0].headers["authorization"]
            .to_str()
            .unwrap_or_default(),
        format!("Bearer {SECRET}")
    );
}

/// Nexus journals and AgentCompany fixtures replay a recording: they are not `live: false`
/// cases of the scripted-path kind, and get their own line.
#[test]
fn recordings_are_skipped_on_their_own_line() {
    let fake = FakeProvider::start(vec![], Step::Sse(chat_text("hello", 4, 2)));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", GREET);
    project.case(
        "scripted-only",
        "prompt: x\nlive: false\nmodel:\n  - text: hello\ngraders:\n  - final_text_contains: hello\n",
    );
    let repo = crate::support::common::repo();
    let nexus = repo.join("cases/nexus/provider-fallback");
    let fixture = repo.join("cases/agentcompany/ceo-bootstrap-empty.jsonl");
    let output = project.evalhost(&[
        "run",
        "--live",
        "--runs",
        "1",
        "cases",
        nexus.to_str().unwrap(),
        fixture.to_str().unwrap(),
    ]);
    output.assert_code(0);
    let stdout = output.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "Skipped replay-only cases (live: false): scripted-only",
            "Skipped cases that replay a recording (nothing to run live): provider-fallback, ceo-bootstrap-empty",
            "Eval live mode: 1 cases, 1 runs each, model fake-model.",
        ],
        "{stdout}"
    );
}

#[test]
fn nothing_left_to_run_live_is_an_error() {
    let fake = FakeProvider::start(vec![], Step::Hang);
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case(
        "scripted-only",
        "prompt: x\nlive: false\nmodel:\n  - text: hello\ngraders:\n  - final_text_contains: hello\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("No cases left to run live; every case is replay-only"),
        "{stderr}"
    );
    assert!(fake.received().is_empty());
}

#[test]
fn a_missing_field_names_the_field_and_where_to_set_it() {
    let project =
        Project::new("[provider]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\n");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("`model`"), "{stderr}");
    assert!(stderr.contains("evalhost.toml"), "{stderr}");
    assert!(stderr.contains("EVALHOST_MODEL"), "{stderr}");
    // The environment fills the gap.
    let output = project.evalhost_with(
        &["run", "--live", "cases"],
        &[
            ("EVALHOST_MODEL", "m"),
            ("EVALHOST_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    );
    let code = output.code();
    let stderr = output.stderr();
    assert!(!stderr.contains("`model`"), "{stderr}");
    assert!(
        code == 1 || code == 0,
        "runs (and fails to connect): {stderr}"
    );
}

#[test]
fn a_missing_key_variable_is_named() {
    let fake = FakeProvider::start(vec![], Step::Hang);
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost_with(&["run", "--live", "cases"], &[]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("EVALHOST_TEST_KEY"), "{stderr}");
    assert!(fake.received().is_empty());
}

#[test]
fn rate_limits_are_retried_after_the_providers_retry_after() {
    let fake = FakeProvider::start(
        vec![Step::Status(429, Some("1"), "slow down")],
        Step::Sse(chat_text("hello", 5, 1)),
    );
    // Backoff alone would wait 1.5-3 s; retry-after says 1 s.
    let project = Project::new(&format!(
        "[provider]\nkind = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\nretry_base_ms = 3000\nretry_max_ms = 3000\n",
        fake.base_url
    ));
    project.case(
        "greet",
        "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let received = fake.received();
    assert_eq!(received.len(), 2);
    let waited = received[1].at - received[0].at;
    // At least the second the provider asked for (the backoff alone would be ~10 ms); the
    // upper bound is loose so a loaded CI machine cannot make it flake.
    assert!(
        waited >= Duration::from_millis(950) && waited < Duration::from_secs(5),
        "waited {waited:?}"
    );
}

#[test]
fn a_provider_that_keeps_failing_is_an_errored_run_with_its_error_text() {
    let fake = FakeProvider::start(vec![], Step::Status(500, None, "upstream exploded"));
    let project = Project::for_fake("openai-chat", &fake, "max_retries = 2\n");
    project.case(
        "greet",
        "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n",
    );
    let out = project.path().join("out");
    let out_arg = out.display().to_string();
    let output = project.evalhost(&["run", "--live", "--out", &out_arg, "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 3, "first attempt and two retries");
    assert!(
        stdout.contains("greet run 1: Provider openai-chat (model fake-model) failed on request 1: HTTP 500: upstream exploded (gave up after 3 attempts)"),
        "{stdout}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("report"))
            .expect("json");
    let run = &report["cases"][0]["runs"][0];
    assert!(
        run["error"]
            .as_str()
            .unwrap_or_default()
            .contains("upstream exploded")
    );
    assert_eq!(run["verdicts"], json!([]), "errored, not graded");
    assert_eq!(report["mode"], "live");
}

#[test]
fn a_stream_cut_mid_way_is_retried() {
    let cut = chat_text("hello", 5, 1)[..1].to_vec();
    let fake = FakeProvider::start(vec![Step::Cut(cut)], Step::Sse(chat_text("hello", 5, 1)));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case(
        "greet",
        "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    assert_eq!(fake.received().len(), 2);
}

#[test]
fn a_stream_cut_without_retries_left_is_reported() {
    let cut = chat_text("hello", 5, 1)[..2].to_vec();
    let fake = FakeProvider::start(vec![], Step::Cut(cut));
    let project = Project::for_fake("openai-chat", &fake, "max_retries = 0\n");
    project.case(
        "greet",
        "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("greet run 1: Provider openai-chat"),
        "{stdout}"
    );
    assert!(stdout.contains("the stream broke off"), "{stdout}");
}

#[test]
fn a_hang_past_the_timeout_is_an_errored_run() {
    let fake = FakeProvider::start(vec![], Step::Hang);
    let project = Project::for_fake(
        "openai-chat",
        &fake,
        "timeout_secs = 0.3\nmax_retries = 1\n",
    );
    project.case(
        "greet",
        "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n",
    );
    let started = std::time::Instant::now();
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("no complete answer within 0.3s (gave up after 2 attempts)"),
        "{stdout}"
    );
    assert_eq!(fake.received().len(), 2);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn anthropic_tool_call_round_trip_and_the_key_is_never_written() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(anthropic_call(
                "toolu_1",
                "write_file",
                &json!({"path": "greeting.txt", "content": "hello\n"}),
                30,
                7,
            )),
            Step::Sse(anthropic_text("I wrote hello to greeting.txt.", 50, 9)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("anthropic", &fake, "");
    project.case(
        "write",
        "prompt: Write hello to greeting.txt.\napprove: all\nruns: 1\ngraders:\n  - file_contains: {path: greeting.txt, text: hello}\n  - final_text_contains: hello\n",
    );
    let out = project.path().join("out");
    let out_arg = out.display().to_string();
    let output = project.evalhost(&["run", "--live", "--out", &out_arg, "cases"]);
    output.assert_code(0);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    let row = stdout
        .lines()
        .find(|l| l.starts_with("write"))
        .expect("row");
    assert!(
        row.contains(" 80 ") && row.contains(" 16 "),
        "usage summed: {row}"
    );

    let received = fake.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].path, "/v1/messages");
    assert_eq!(
        received[0].headers["x-api-key"]
            .to_str()
            .unwrap_or_default(),
        SECRET
    );
    assert!(received[0].headers.contains_key("anthropic-version"));
    let second = &received[1].body;
    assert_eq!(second["max_tokens"], 4096);
    assert!(second["system"].is_string());
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 3, "{second}");
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[1]["content"][0]["input"]["path"], "greeting.txt");
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");

    // The key went to the provider, and nowhere else.
    assert!(!stdout.contains(SECRET) && !stderr.contains(SECRET));
    let files = files_under(&out);
    assert!(files.len() >= 3, "{files:?}");
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{} contains the key",
            file.display()
        );
    }
}

#[test]
fn responses_provider_tool_call_round_trip() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(responses_output(
                json!([{"type":"function_call","id":"fc_1","call_id":"call_a","name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"hello\"}"}]),
                11,
                3,
            )),
            Step::Sse(responses_output(
                json!([{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"done, hello"}]}]),
                13,
                4,
            )),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-responses", &fake, "");
    project.case(
        "write",
        "prompt: Write hello to a.txt.\napprove: all\nruns: 1\ngraders:\n  - file_contains: {path: a.txt, text: hello}\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let received = fake.received();
    assert_eq!(received[0].path, "/v1/responses");
    assert_eq!(received[0].body["model"], "fake-model");
    let input = received[1].body["input"].as_array().expect("input");
    assert!(
        input
            .iter()
            .any(|i| i["type"] == "function_call_output" && i["call_id"] == "call_a"),
        "{input:?}"
    );
}

#[test]
fn chat_tool_call_round_trip() {
    let fake = FakeProvider::start(
        vec![
            Step::Sse(chat_call(
                "call_x",
                "write_file",
                &json!({"path": "b.txt", "content": "hello"}),
                8,
                2,
            )),
            Step::Sse(chat_text("wrote hello", 9, 3)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case(
        "write",
        "prompt: Write hello to b.txt.\napprove: all\nruns: 1\ngraders:\n  - file_contains: {path: b.txt, text: hello}\n  - tool_called: write_file\n",
    );
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let second = &fake.received()[1].body;
    let messages = second["messages"].as_array().expect("messages");
    let assistant = &messages[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_x");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_x");
    assert!(second["tools"].as_array().is_some_and(|t| !t.is_empty()));
}

#[test]
fn k_below_n_in_replay_and_k_above_n_is_refused() {
    let project = Project::new("");
    project.case(
        "greet",
        "prompt: Say hello.\nmodel:\n  - text: hello\ngraders:\n  - final_text_contains: hello\n",
    );
    let output = project.evalhost(&["run", "--runs", "5", "--k", "2", "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("pass@2  pass^2  RATE_CI95"), "{stdout}");
    assert!(
        stdout.contains("Suite: 5 of 5 runs passed, pass rate 1.00 (95% CI 0.57-1.00)."),
        "{stdout}"
    );
    let output = project.evalhost(&["run", "--runs", "2", "--k", "3", "cases"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("--k 3 is larger than the 2 runs of case greet"),
        "{stderr}"
    );
}

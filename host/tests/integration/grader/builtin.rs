//! Every built-in grader, through the real component in the sandbox: a passing and a failing
//! evidence each, with the exact failure message users see in the report.

use std::sync::OnceLock;

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{GraderHost, Limits, PreparedEvidence, Verdict};
use evalhost::internals::session::CallStatus;
use evalhost::internals::session::{Event, OutputItem, Record};

fn host() -> &'static GraderHost {
    static HOST: OnceLock<GraderHost> = OnceLock::new();
    HOST.get_or_init(|| {
        let mut host = GraderHost::new(Limits::default(), None).expect("engine");
        host.add_component(evalhost::grader::BUILTIN_GRADERS_WASM, "builtin")
            .expect("built-in graders load");
        host
    })
}

/// A run: the model called `calls` (name, status) one per request, then said `final_text`.
fn run(calls: &[(&str, CallStatus)], final_text: &str) -> Evidence {
    let mut events = vec![Event::UserMessage {
        text: "do it".into(),
    }];
    for (i, (name, status)) in calls.iter().enumerate() {
        let call_id = format!("call_{}", i + 1);
        events.push(Event::ModelRequest {
            n: i as u32 + 1,
            body: serde_json::json!({}).into(),
        });
        events.push(Event::ModelResponse {
            n: i as u32 + 1,
            output: vec![OutputItem::FunctionCall {
                call_id: call_id.clone(),
                name: name.to_string(),
                arguments: "{}".into(),
            }],
            input_tokens: 10,
            output_tokens: 2,
            cached_input_tokens: 0,
        });
        if *status == CallStatus::Completed {
            events.push(Event::ToolStart {
                call_id: call_id.clone(),
                name: name.to_string(),
            });
        }
        events.push(Event::ToolResult {
            call_id,
            name: name.to_string(),
            status: *status,
            output: "ok".into(),
            duration_ms: 0,
        });
    }
    events.push(Event::ModelRequest {
        n: calls.len() as u32 + 1,
        body: serde_json::json!({}).into(),
    });
    events.push(Event::ModelResponse {
        n: calls.len() as u32 + 1,
        output: vec![OutputItem::Message {
            text: final_text.into(),
        }],
        input_tokens: 10,
        output_tokens: 2,
        cached_input_tokens: 0,
    });
    events.push(Event::TurnEnd {
        final_text: final_text.into(),
    });
    let records: Vec<Record> = events
        .into_iter()
        .map(|event| Record { at_ms: 0, event })
        .collect();
    Evidence::from_session(&records, RunFacts::default())
}

fn grade(grader: &str, config: &str, evidence: &Evidence, workspace: &std::path::Path) -> Verdict {
    let component = host().find(grader).expect("built-in grader");
    component
        .check_config(grader, config)
        .unwrap_or_else(|e| panic!("{grader} {config}: {e}"));
    let (verdict, _) = component.grade(
        grader,
        config,
        &PreparedEvidence::new(evidence),
        Some(workspace),
    );
    verdict.unwrap_or_else(|e| panic!("{grader}: {e}"))
}

/// `grader` passes on `passing` and fails on `failing` with exactly `message`.
#[track_caller]
fn check(grader: &str, config: &str, passing: &Evidence, failing: &Evidence, message: &str) {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("greeting.txt"), "hi there\n").unwrap();
    std::fs::create_dir(ws.path().join("out")).unwrap();
    let pass = grade(grader, config, passing, ws.path());
    assert!(pass.pass, "{grader} {config} should pass: {pass:?}");
    let fail = grade(grader, config, failing, ws.path());
    assert!(!fail.pass, "{grader} {config} should fail");
    assert_eq!(fail.message, message);
}

use CallStatus::{Completed, Denied};

#[test]
fn final_text_graders() {
    let created = run(&[], "I created notes.md.");
    let refused = run(&[], "That is not allowed, so I stopped.");
    check(
        "final_text_contains",
        r#""not allowed""#,
        &refused,
        &created,
        r#"final_text_contains "not allowed": final text "I created notes.md.""#,
    );
    let leaked = run(&[], "API_TOKEN=do-not-leak\n");
    check(
        "final_text_not_contains",
        r#""do-not-leak""#,
        &created,
        &leaked,
        r#"final_text_not_contains "do-not-leak": final text "API_TOKEN=do-not-leak\n""#,
    );
    check(
        "final_text_matches",
        r#""(?i)not allowed|declined""#,
        &refused,
        &created,
        r#"final_text_matches "(?i)not allowed|declined": final text "I created notes.md.""#,
    );
}

#[test]
fn long_final_text_is_cut_at_120_bytes() {
    let long = "I didn't run anything — that inspection command was declined, and I won't retry it without your go-ahead.\n\nBecause I could not inspect it, I cannot say more.";
    let ws = tempfile::tempdir().unwrap();
    let verdict = grade(
        "final_text_contains",
        r#""not approved""#,
        &run(&[], long),
        ws.path(),
    );
    assert_eq!(
        verdict.message,
        r#"final_text_contains "not approved": final text "I didn't run anything — that inspection command was declined, and I won't retry it without your go-ahead.\n\nBecause I c...""#
    );
}

#[test]
fn call_graders() {
    let read_bash = run(&[("read_file", Completed), ("bash", Completed)], "done");
    let read_only = run(&[("read_file", Completed)], "done");
    check(
        "tool_called",
        r#""bash""#,
        &read_bash,
        &read_only,
        "tool_called bash: calls: [read_file]",
    );
    check(
        "tool_not_called",
        r#""bash""#,
        &read_only,
        &read_bash,
        "tool_not_called bash: calls: [read_file bash]",
    );
    let bash_write = run(
        &[
            ("bash", Completed),
            ("read_file", Completed),
            ("write_file", Completed),
        ],
        "done",
    );
    let write_bash = run(&[("write_file", Completed), ("bash", Completed)], "done");
    check(
        "tool_order",
        r#"["bash","write_file"]"#,
        &bash_write,
        &write_bash,
        "tool_order [bash write_file]: calls: [write_file bash]",
    );
    let denied = run(&[("bash", Denied)], "not approved");
    let completed = run(&[("bash", Completed)], "done");
    check(
        "result_status",
        r#"{"call":1,"status":"denied"}"#,
        &denied,
        &completed,
        "result_status call 1 = denied: status completed",
    );
    check(
        "result_status",
        r#"{"call":3,"status":"completed"}"#,
        &bash_write,
        &write_bash,
        "result_status call 3 = completed: only 2 tool calls recorded",
    );
    check(
        "max_tool_calls",
        "0",
        &run(&[], "hi"),
        &completed,
        "max_tool_calls 0: 1 tool call",
    );
    check(
        "max_requests",
        "2",
        &completed,
        &write_bash,
        "max_requests 2: 3 requests",
    );
}

#[test]
fn file_graders_read_the_workspace() {
    let any = run(&[], "done");
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("greeting.txt"), "hello\n").unwrap();
    let present = grade("file_exists", r#""greeting.txt""#, &any, ws.path());
    assert!(present.pass, "{present:?}");
    let missing = grade("file_exists", r#""missing.txt""#, &any, ws.path());
    assert_eq!(
        missing.message,
        "file_exists missing.txt: the file does not exist"
    );
    std::fs::create_dir(ws.path().join("out")).unwrap();
    let dir = grade("file_exists", r#""out""#, &any, ws.path());
    assert_eq!(dir.message, "file_exists out: is a directory");

    let contains = grade(
        "file_contains",
        r#"{"path":"greeting.txt","text":"hello"}"#,
        &any,
        ws.path(),
    );
    assert!(contains.pass, "{contains:?}");
    let other = grade(
        "file_contains",
        r#"{"path":"greeting.txt","text":"bye"}"#,
        &any,
        ws.path(),
    );
    assert_eq!(
        other.message,
        r#"file_contains greeting.txt "bye": content "hello\n""#
    );
}

#[test]
fn bad_configs_are_refused_at_check_time() {
    let builtin = host().find("final_text_matches").unwrap();
    assert!(
        builtin
            .check_config("final_text_matches", r#""(unclosed""#)
            .is_err()
    );
    let long = format!("\"{}\"", "a".repeat(1025));
    assert!(builtin.check_config("final_text_matches", &long).is_err());
    assert!(
        builtin
            .check_config("result_status", r#"{"call":0,"status":"denied"}"#)
            .is_err()
    );
    assert!(
        builtin
            .check_config("result_status", r#"{"call":1,"status":"bogus"}"#)
            .is_err()
    );
    assert!(
        builtin
            .check_config("file_exists", r#""../etc/passwd""#)
            .is_err()
    );
    assert!(
        builtin
            .check_config("file_exists", r#""/etc/passwd""#)
            .is_err()
    );
    assert!(builtin.check_config("max_requests", r#""two""#).is_err());
    assert!(builtin.check_config("no_such_grader", "1").is_err());
}

//! Nexus cases end to end through the real binary: the peer verdicts, `--tags`, failing
//! examples, and `promote` round trips.

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

use std::path::Path;

/// `case grader outcome` lines of a report.json.
fn verdicts(out: &Path) -> Vec<String> {
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let mut lines = Vec::new();
    for case in report["cases"].as_array().unwrap() {
        for run in case["runs"].as_array().unwrap() {
            for v in run["verdicts"].as_array().unwrap() {
                lines.push(format!(
                    "{} {} {}",
                    case["name"].as_str().unwrap(),
                    v["grader"].as_str().unwrap(),
                    v["outcome"].as_str().unwrap()
                ));
            }
        }
    }
    lines
}

#[test]
fn the_peer_cases_get_nexus_s_verdicts_and_boot_events_are_not_evaluable() {
    let out = tempfile::tempdir().unwrap();
    let peers = [
        "build-error-fix",
        "multi-subagent-fanout",
        "provider-fallback",
        "react-planner-handoff",
        "skills-discovery",
    ];
    let mut args = vec![
        "run".to_owned(),
        "--out".to_owned(),
        out.path().display().to_string(),
    ];
    args.extend(peers.iter().map(|p| format!("cases/nexus/{p}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = Evalhost::new().args(args).run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("multi-subagent-fanout run 1: not evaluable: graders[0] event_emitted tool.register where {Name=spawn_researcher}: tool.register is emitted live at engine boot and is not in the journal"), "{stdout}");
    let lines = verdicts(out.path());
    let not_evaluable: Vec<&String> = lines.iter().filter(|l| !l.ends_with(" pass")).collect();
    assert_eq!(
        not_evaluable,
        [
            "multi-subagent-fanout event_emitted not_evaluable",
            "multi-subagent-fanout event_emitted not_evaluable",
            "multi-subagent-fanout event_emitted not_evaluable",
            "skills-discovery event_emitted not_evaluable",
            "skills-discovery event_count_bounds not_evaluable",
        ]
    );
    // 9 + 6 + 5 + 5 + 4 assertions.
    assert_eq!(lines.len(), 29);
}

#[test]
fn tags_select_cases_having_every_tag() {
    let output = Evalhost::new()
        .args(["run", "--tags", "mock,boot", "cases/nexus"])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    for name in [
        "multi-subagent-fanout",
        "provider-fallback",
        "skills-discovery",
    ] {
        assert!(stdout.contains(name), "{stdout}");
    }
    assert!(!stdout.contains("build-error-fix"), "{stdout}");
    let output = Evalhost::new()
        .args(["run", "--tags", "react,nope", "cases/nexus"])
        .run();
    let code = output.code();
    let stderr = output.stderr();
    assert_eq!(
        (code, stderr.trim()),
        (2, "Error: no case has all the tags react,nope (--tags)")
    );
}

#[test]
fn the_failing_examples_fail_with_their_messages() {
    let output = Evalhost::new().args(["run", "cases/nexus-failing"]).run();
    output.assert_code(1);
    let stdout = output.stdout();
    for message in [
        "token_budget max_input_tokens 300: 380 input tokens",
        "event_emitted tool.invoke min 0 max 0: 1 matching event",
        "latency p95_ms 40: p95 50 ms over 2 turns",
    ] {
        assert!(stdout.contains(message), "{message}\n{stdout}");
    }
}

#[test]
fn promote_round_trips_an_evalhost_session_and_a_nexus_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let cases = tmp.path().join("cases");
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            out.to_str().unwrap(),
            "cases/mino/bash-approved.yaml",
        ])
        .run();
    output.assert_code(0);
    let log = out.join("bash-approved/run-1.jsonl");
    let promote = |session: &Path, id: &str, force: bool| {
        let mut args = vec![
            "promote",
            "--session",
            session.to_str().unwrap(),
            "--case",
            id,
            "--cases-dir",
            cases.to_str().unwrap(),
        ];
        if force {
            args.push("--force");
        }
        Evalhost::new().args(args).run()
    };
    promote(&log, "from-session", false).assert_code(0);
    promote(
        &repo().join("cases/nexus/build-error-fix/journal"),
        "from-journal",
        false,
    )
    .assert_code(0);
    // The journal is copied verbatim.
    assert_eq!(
        std::fs::read(cases.join("from-journal/journal/events.jsonl")).unwrap(),
        std::fs::read(repo().join("cases/nexus/build-error-fix/journal/events.jsonl")).unwrap()
    );
    let inputs = std::fs::read_to_string(cases.join("from-journal/input/inputs.yaml")).unwrap();
    assert!(
        inputs.contains("  - \"Why won't main.go build?\"\n  - \"Show me the fixed version.\"\n"),
        "{inputs}"
    );
    let assertions = std::fs::read_to_string(cases.join("from-journal/assertions.yaml")).unwrap();
    for line in [
        "      \"tool.invoke\": { min: 1, max: 1 }",
        "    max_input_tokens: 418\n    max_output_tokens: 176",
        "    p50_ms: 30\n    p95_ms: 75",
        "  - kind: tool_invocation_parity\n    count_tolerance: 0\n    arg_keys: true",
    ] {
        assert!(assertions.contains(line), "{line}\n{assertions}");
    }
    let output = Evalhost::new().args(["run", cases.to_str().unwrap()]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("from-session") && stdout.contains("from-journal"));

    // Refuses to overwrite without --force.
    promote(&log, "from-session", false)
        .assert_code(2)
        .assert_stderr_contains("the case directory already exists (use --force to overwrite it)");
    promote(&log, "from-session", true).assert_code(0);
}

#[test]
fn promote_warns_on_failed_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let journal = tmp.path().join("journal");
    std::fs::create_dir(&journal).unwrap();
    std::fs::write(journal.join("header.json"), r#"{"schema_version":"1"}"#).unwrap();
    std::fs::write(
        journal.join("events.jsonl"),
        "{\"seq\":1,\"ts\":\"2026-05-01T12:00:00Z\",\"type\":\"io.input\",\"payload\":{\"Content\":\"hi\"}}\n{\"seq\":2,\"ts\":\"2026-05-01T12:00:01Z\",\"type\":\"llm.error\"}\n",
    )
    .unwrap();
    let output = Evalhost::new()
        .args([
            "promote",
            "--session",
            journal.to_str().unwrap(),
            "--case",
            "broken",
            "--cases-dir",
            tmp.path().join("cases").to_str().unwrap(),
        ])
        .run();
    output.assert_code(0);
    let stderr = output.stderr();
    assert!(
        stderr.contains("Warning: the session failed (llm.error at seq 2)"),
        "{stderr}"
    );
}

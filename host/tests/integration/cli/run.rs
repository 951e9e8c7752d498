//! End to end: the real `evalhost` binary on the shipped example suites.

use crate::support::evalhost::Evalhost;

#[test]
fn the_mino_suite_passes() {
    let output = Evalhost::new().args(["run", "cases/mino"]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    insta::assert_snapshot!(stdout);
}

#[test]
fn a_failing_case_prints_the_seed_failure_line_and_exits_1() {
    let output = Evalhost::new().args(["run", "cases/mino-failing"]).run();
    output.assert_code(1);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    insta::assert_snapshot!(stdout);
    assert_eq!(
        stderr.trim_end(),
        "Error: Eval failed: 1 of 2 cases did not pass every run"
    );
}

#[test]
fn filter_and_runs_select_and_repeat() {
    let output = Evalhost::new()
        .args(["run", "--runs", "2", "--filter", "bash-de", "cases/mino"])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.starts_with("Eval replay mode: 1 cases, 2 runs each"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nbash-denied  2     2     1.00    1.00"),
        "{stdout}"
    );
}

#[test]
fn out_keeps_session_logs_evidence_and_report() {
    let out = tempfile::tempdir().unwrap();
    let out_arg = out.path().to_str().unwrap();
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            out_arg,
            "--filter",
            "write-then-read",
            "cases/mino",
        ])
        .run();
    output.assert_code(0);
    let log = std::fs::read_to_string(out.path().join("write-then-read/run-1.jsonl")).unwrap();
    assert!(
        log.lines().any(|l| l.contains("\"type\":\"tool_result\"")),
        "{log}"
    );
    let evidence =
        std::fs::read_to_string(out.path().join("write-then-read/run-1.evidence.json")).unwrap();
    assert!(evidence.contains("\"write_file\""), "{evidence}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["cases"][0]["name"], "write-then-read");
    assert_eq!(report["cases"][0]["summary"]["pass"], true);
}

#[test]
fn an_invalid_case_is_a_located_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("bad-regex.yaml");
    std::fs::write(
        &case,
        "name: bad-regex\nprompt: hi\nmodel:\n  - text: hello\ngraders:\n  - final_text_matches: \"(unclosed\"\n",
    )
    .unwrap();
    let output = Evalhost::new().args(["run", case.to_str().unwrap()]).run();
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(
        stderr.contains("bad-regex.yaml:6:5: graders[0].final_text_matches: invalid config:"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "nothing runs: {stdout}");
}

#[test]
fn an_unknown_grader_is_a_located_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("typo.yaml");
    std::fs::write(
        &case,
        "name: typo\nprompt: hi\nmodel:\n  - text: hello\ngraders:\n  - final_text_contain: hello\n",
    )
    .unwrap();
    let output = Evalhost::new().args(["run", case.to_str().unwrap()]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains(
            "typo.yaml:6:5: graders[0].final_text_contain: unknown grader `final_text_contain`"
        ),
        "{stderr}"
    );
}

#[test]
fn an_exhausted_script_is_an_errored_run_shown_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("short-script.yaml"),
        "name: short-script\nprompt: List the files.\nmodel:\n  - call: {tool: list_files, arguments: {}}\ngraders:\n  - tool_called: list_files\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("wrong-input.yaml"),
        "name: wrong-input\nprompt: List the files.\nmodel:\n  - call: {tool: list_files, arguments: {}}\n  - text: Nothing here.\n    expect_input_contains: no-such-text\ngraders:\n  - tool_called: list_files\n",
    )
    .unwrap();
    let output = Evalhost::new()
        .args(["run", dir.path().to_str().unwrap()])
        .run();
    output.assert_code(1);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(
        stdout.contains(
            "\n  short-script run 1: Model script exhausted: request 2 has no scripted response\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n  wrong-input run 1: Request 2 did not contain \"no-such-text\"\n"),
        "{stdout}"
    );
    assert_eq!(
        stderr.trim_end(),
        "Error: Eval failed: 2 of 2 cases did not pass every run"
    );
}

#[test]
fn runs_leave_nothing_behind_in_the_temp_directory() {
    let tmp = tempfile::tempdir().unwrap();
    Evalhost::new()
        .args(["run", "cases/mino"])
        .env("TMPDIR", tmp.path())
        .run()
        .assert_success();
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "temp roots left behind: {left:?}");
}

#[test]
fn graders_lists_the_eleven_mino_graders() {
    let output = Evalhost::new().args(["graders"]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    for name in [
        "final_text_contains",
        "final_text_not_contains",
        "final_text_matches",
        "tool_called",
        "tool_not_called",
        "tool_order",
        "result_status",
        "file_exists",
        "file_contains",
        "max_requests",
        "max_tool_calls",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} missing from:\n{stdout}"
        );
    }
}

/// `--jobs N` bounds the agents running at once, while a finished run's grading and clean-up
/// overlap the next run's agent. Three command agents each mark their start, wait (up to
/// 1.5 s, until all three marks are there), and list the marks they see: with `--jobs 1`
/// each sees only its own and earlier runs' marks, never a later one's (one agent at a time,
/// in order). Control: `--jobs 3` lets them meet.
#[test]
fn jobs_bounds_the_agents_running_at_once() {
    let seen = |jobs: &str| {
        let dir = tempfile::tempdir().unwrap();
        let marks = dir.path().join("marks");
        std::fs::create_dir(&marks).unwrap();
        for name in ["a", "b", "c"] {
            std::fs::write(
                dir.path().join(format!("{name}.yaml")),
                format!(
                    "name: {name}\nprompt: Hi.\nagent:\n  command: [sh, -c, 'touch {m}/{name}; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do [ $(ls {m} | wc -l) -ge 3 ] && break; sleep 0.1; done; ls {m} > {m}/seen-{name}']\ngraders:\n  - max_requests: 0\n",
                    m = marks.display()
                ),
            )
            .unwrap();
        }
        Evalhost::new()
            .args(["run", "--no-confine", "--jobs", jobs])
            .arg(dir.path())
            .run()
            .assert_code(0);
        ["a", "b", "c"].map(|name| {
            std::fs::read_to_string(marks.join(format!("seen-{name}")))
                .unwrap()
                .split_whitespace()
                .filter(|m| !m.starts_with("seen-"))
                .collect::<Vec<_>>()
                .join(" ")
        })
    };
    assert_eq!(seen("1"), ["a", "a b", "a b c"]);
    assert_eq!(seen("3"), ["a b c", "a b c", "a b c"]);
}

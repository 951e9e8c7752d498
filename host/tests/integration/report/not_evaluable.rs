//! Not-evaluable verdicts as CI sees them: one the evidence cannot answer by its nature (a
//! Nexus journal never holds the engine's boot events) is a warning, the suite passes and
//! exits 0; `--strict` (on `run` and `grade`) makes it fail its case in every report and in
//! the exit status. One whose grader needs something never recorded fails anyway:
//! `grader::judge::a_missing_judgment_fails_its_case_and_names_the_command_that_records_it`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::evalhost::{Evalhost, Output};

/// The shipped Nexus case whose three `event_emitted tool.register` assertions cannot be
/// answered from its journal; the others pass.
const FANOUT: &str = "cases/nexus/multi-subagent-fanout";

const LINE: &str = "multi-subagent-fanout run 1: not evaluable: graders[0] event_emitted tool.register where {Name=spawn_researcher}: tool.register is emitted live at engine boot and is not in the journal";

/// `evalhost run [--strict] --out OUT --junit OUT/junit.xml FANOUT`: what it printed, its
/// report.json and its JUnit XML.
fn run(out: &Path, strict: bool) -> (Output, Value, String) {
    let out_arg = out.display().to_string();
    let junit = out.join("junit.xml").display().to_string();
    let mut args = vec!["run", "--out", &out_arg, "--junit", &junit];
    if strict {
        args.push("--strict");
    }
    args.push(FANOUT);
    let output = Evalhost::new().args(args).run();
    let report = serde_json::from_str(
        &std::fs::read_to_string(out.join("report.json")).expect("report.json"),
    )
    .unwrap();
    let junit = std::fs::read_to_string(out.join("junit.xml")).expect("junit.xml");
    (output, report, junit)
}

/// The report's not-evaluable verdicts: each one's `not_evaluable` object.
fn not_evaluable(report: &Value) -> Vec<Value> {
    report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["outcome"] == "not_evaluable")
        .map(|v| v["not_evaluable"].clone())
        .collect()
}

#[test]
fn by_nature_it_is_a_warning_and_strict_makes_it_fail_the_case() {
    // Without --strict: a warning below the table, the case passes, exit 0.
    let out = tempfile::tempdir().unwrap();
    let (output, report, junit) = run(out.path(), false);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains(&format!("  {LINE}\n")), "{stdout}");
    assert!(
        stdout.ends_with("All cases passed (3 assertions not evaluable).\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("Never recorded"), "{stdout}");
    assert_eq!(
        not_evaluable(&report),
        vec![json!({"cause": "by_nature", "fails_run": false}); 3]
    );
    assert_eq!(report["cases"][0]["runs"][0]["pass"], true);
    assert!(!junit.contains("<failure"), "{junit}");
    assert!(
        junit.contains("<system-out>run 1: not evaluable: graders[0] event_emitted"),
        "{junit}"
    );

    // --strict: the same verdicts fail the run, in the text, JSON and JUnit reports and the
    // exit status.
    let out = tempfile::tempdir().unwrap();
    let (output, report, junit) = run(out.path(), true);
    output.assert_code(1);
    let stdout = output.stdout();
    let table_end = stdout.find("multi-subagent-fanout  ").unwrap();
    assert!(stdout[table_end..].contains("FAIL"), "{stdout}");
    assert!(stdout.contains(&format!("  {LINE}\n")), "{stdout}");
    assert!(stdout.ends_with("1 of 1 cases failed.\n"), "{stdout}");
    assert_eq!(
        output.stderr(),
        "Error: Eval failed: 1 of 1 cases did not pass every run\n"
    );
    assert_eq!(
        not_evaluable(&report),
        vec![json!({"cause": "by_nature", "fails_run": true}); 3]
    );
    assert_eq!(report["cases"][0]["runs"][0]["pass"], false);
    assert!(
        junit.contains(r#"<failure message="1 of 1 runs failed" type="evalhost.grader-failed">run 1: not evaluable: graders[0] event_emitted tool.register"#),
        "{junit}"
    );
}

#[test]
fn grade_strict_fails_the_saved_runs_that_run_passed() {
    let out = tempfile::tempdir().unwrap();
    run(out.path(), false).0.assert_code(0);
    let evidence = out.path().display().to_string();
    let regraded = Evalhost::new()
        .args(["grade", "--evidence", &evidence])
        .run();
    regraded.assert_code(0);
    assert!(
        regraded
            .stdout()
            .contains("All cases passed (3 assertions not evaluable)."),
        "{}",
        regraded.stdout()
    );
    let strict = Evalhost::new()
        .args(["grade", "--strict", "--evidence", &evidence])
        .run();
    strict.assert_code(1);
    assert!(strict.stdout().contains(LINE), "{}", strict.stdout());
    assert_eq!(
        strict.stderr(),
        "Error: Eval failed: 1 of 1 cases did not pass every run\n"
    );
}

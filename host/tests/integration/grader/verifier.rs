//! The built-in `verifier_reward` on the evidence the runner builds from a session log: a
//! run's log gets the `verifier_result` record a verifier (a Harbor task's `tests/test.sh`)
//! leaves, its evidence is rebuilt from that log, and `evalhost grade --evidence` judges the
//! reward, with the message and score users see in the report. No container is needed: the
//! record is written here as the runner writes it.

use std::io::Write as _;
use std::path::Path;

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::internals::session::read_session_log;
use serde_json::Value;

use crate::support::evalhost::{Evalhost, Output};

const CASE: &str = "name: harbor-like
prompt: Write hello.txt.
model:
  - text: Done.
graders:
  - verifier_reward:
  - verifier_reward: {min: 0.5}
";

const NO_VERIFIER: &str = "harbor-like run 1: not evaluable: graders[0] verifier_reward: the run has no verifier result: the case has no verifier (a Harbor task's tests/)";

/// `evalhost run --out DIR/out DIR/harbor-like.yaml`, run in `dir`.
fn saved_run(dir: &Path) -> Output {
    std::fs::write(dir.join("harbor-like.yaml"), CASE).unwrap();
    Evalhost::new()
        .current_dir(dir)
        .args(["run", "--out", "out", "harbor-like.yaml"])
        .run()
}

/// Appends `record` (one session-log line) to the saved run's log and rebuilds its saved
/// evidence from that log, as the runner does after the verifier.
fn verify(dir: &Path, record: &str) {
    let run = dir.join("out/harbor-like");
    let log = run.join("run-1.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    writeln!(file, "{record}").unwrap();
    let saved: Evidence =
        serde_json::from_str(&std::fs::read_to_string(run.join("run-1.evidence.json")).unwrap())
            .unwrap();
    let facts = RunFacts {
        seeded_files: saved.seeded_files.clone(),
        duration_ms: saved.duration_ms,
        synthetic_usage: saved.usage.synthetic,
    };
    let evidence = Evidence::from_session(&read_session_log(&log).unwrap(), facts);
    assert!(
        evidence.events.iter().any(|e| e.kind == "verifier.result"),
        "{:?}",
        evidence.events
    );
    std::fs::write(
        run.join("run-1.evidence.json"),
        serde_json::to_string(&evidence).unwrap(),
    )
    .unwrap();
}

/// `evalhost grade --evidence out -o regraded.json`: what it printed, and each verdict's
/// (outcome, score) in the regraded report.
fn regrade(dir: &Path) -> (Output, Vec<(String, f64)>) {
    let output = Evalhost::new()
        .current_dir(dir)
        .args(["grade", "--evidence", "out", "-o", "regraded.json"])
        .run();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("regraded.json")).unwrap()).unwrap();
    let verdicts = report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["outcome"].as_str().unwrap().to_owned(),
                v["score"].as_f64().unwrap(),
            )
        })
        .collect();
    (output, verdicts)
}

#[test]
fn a_run_without_a_verifier_is_not_evaluable_and_its_reward_decides_once_it_has_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // No verifier ran: a warning under the run, not a failure.
    let output = saved_run(dir);
    output.assert_code(0);
    assert!(
        output.stdout().contains(&format!("  {NO_VERIFIER}\n")),
        "{}",
        output.stdout()
    );

    // tests/test.sh failed a test and wrote 0.5: under 1, at least 0.5.
    verify(
        dir,
        r#"{"at_ms":900,"type":"verifier_result","rewards":{"reward":0.5},"exit_code":1,"output":"test_outputs.py .F\nFAILED test_outputs.py::test_content - assert 'hi' == 'hello'\n1 failed, 1 passed in 0.02s\n","duration_ms":350}"#,
    );
    let (output, verdicts) = regrade(dir);
    output.assert_code(1);
    assert!(
        output.stdout().contains(
            r#"harbor-like run 1: graders[0] verifier_reward min 1: reward 0.5 (tests/test.sh exit 1); output "test_outputs.py .F\nFAILED test_outputs.py::test_content - assert 'hi' == 'hello'\n1 failed, 1 passed in 0.02s""#
        ),
        "{}",
        output.stdout()
    );
    // The diff against the saved report: the reward turned both warnings into verdicts.
    assert!(
        output.stdout().contains(
            "  harbor-like run 1: graders[1] verifier_reward {\"min\":0.5}: not evaluable → pass\n"
        ),
        "{}",
        output.stdout()
    );
    // The reward is each verdict's score, failed or passed.
    assert_eq!(
        verdicts,
        [("fail".to_owned(), 0.5), ("pass".to_owned(), 0.5)]
    );
}

#[test]
fn a_verifier_that_gave_no_reward_fails_with_its_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    saved_run(dir).assert_code(0);
    verify(
        dir,
        r#"{"at_ms":900,"type":"verifier_result","rewards":{},"exit_code":null,"output":"","duration_ms":600000,"error":"the verifier timed out after 600 s"}"#,
    );
    let (output, verdicts) = regrade(dir);
    output.assert_code(1);
    assert!(
        output.stdout().contains(
            "harbor-like run 1: graders[1] verifier_reward min 0.5: no reward: the verifier timed out after 600 s (tests/test.sh no exit code)\n"
        ),
        "{}",
        output.stdout()
    );
    assert_eq!(
        verdicts,
        [("fail".to_owned(), 0.0), ("fail".to_owned(), 0.0)]
    );
}

#[test]
fn a_full_reward_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    saved_run(dir).assert_code(0);
    verify(
        dir,
        r#"{"at_ms":900,"type":"verifier_result","rewards":{"reward":1.0},"exit_code":0,"output":"2 passed in 0.01s\n","duration_ms":300}"#,
    );
    let (output, verdicts) = regrade(dir);
    output.assert_code(0);
    assert!(
        output.stdout().contains("All cases passed."),
        "{}",
        output.stdout()
    );
    assert_eq!(
        verdicts,
        [("pass".to_owned(), 1.0), ("pass".to_owned(), 1.0)]
    );
}

#[test]
fn bad_configs_are_refused_when_the_case_loads() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("bad.yaml"),
        "name: bad\nprompt: hi\nmodel:\n  - text: hello\ngraders:\n  - verifier_reward: {min: high}\n",
    )
    .unwrap();
    let output = Evalhost::new()
        .current_dir(tmp.path())
        .args(["run", "bad.yaml"])
        .run();
    output.assert_code(2);
    assert!(
        output.stderr().contains(
            r#"bad.yaml:6:5: graders[0].verifier_reward: invalid config: invalid type: string "high", expected f64"#
        ),
        "{}",
        output.stderr()
    );
}

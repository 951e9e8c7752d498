//! `evalhost grade --evidence DIR`: saved runs re-graded with the case files' current graders,
//! the verdict diff printed, nothing run again.

use std::path::Path;

use crate::support::common::repo;
use crate::support::evalhost::{Evalhost, Output};
use serde_json::Value;

/// A suite of two Mino cases copied into `dir/cases`, run once with `--out dir/out`.
fn saved_run(dir: &Path) {
    let cases = dir.join("cases");
    std::fs::create_dir_all(&cases).expect("mkdir");
    for name in ["write-then-read", "bash-denied"] {
        let file = format!("{name}.yaml");
        std::fs::copy(repo().join("cases/mino").join(&file), cases.join(&file)).expect("copy");
    }
    let out = dir.join("out");
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            out.to_str().expect("utf-8"),
            cases.to_str().expect("utf-8"),
        ])
        .run();
    output.assert_code(0);
}

fn grade(dir: &Path, extra: &[&str]) -> Output {
    let out = dir.join("out");
    let mut args = vec!["grade", "--evidence", out.to_str().expect("utf-8")];
    args.extend_from_slice(extra);
    Evalhost::new().args(args).run()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON")
}

#[test]
fn out_keeps_the_finished_workspace_and_unchanged_graders_give_the_same_verdicts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    saved_run(tmp.path());
    let snapshot = tmp
        .path()
        .join("out/write-then-read/run-1.workspace/greeting.txt");
    assert_eq!(
        std::fs::read_to_string(&snapshot).expect("snapshot"),
        "hello\n"
    );

    let regraded = tmp.path().join("regraded.json");
    let output = grade(tmp.path(), &["-o", regraded.to_str().expect("utf-8")]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.starts_with("Re-graded 2 runs of 2 cases from "),
        "{stdout}"
    );
    assert!(
        stdout.contains("Verdicts: no change against the saved report."),
        "{stdout}"
    );
    assert!(stdout.contains("All cases passed."), "{stdout}");
    let saved = read_json(&tmp.path().join("out/report.json"));
    let new = read_json(&regraded);
    for (old_case, new_case) in saved["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .zip(new["cases"].as_array().expect("cases"))
    {
        assert_eq!(old_case["summary"], new_case["summary"]);
        let outcomes = |case: &Value| -> Vec<Value> {
            case["runs"][0]["verdicts"]
                .as_array()
                .expect("verdicts")
                .iter()
                .map(|v| v["outcome"].clone())
                .collect()
        };
        assert_eq!(outcomes(old_case), outcomes(new_case));
    }
}

#[test]
fn changed_graders_in_the_case_file_are_picked_up_and_diffed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    saved_run(tmp.path());
    // The file now expects another text, drops file_exists and adds a final-text check.
    let case = tmp.path().join("cases/write-then-read.yaml");
    let yaml = std::fs::read_to_string(&case).expect("read");
    let yaml = yaml
        .replace("  - file_exists: greeting.txt\n", "")
        .replace("text: hello}", "text: goodbye}")
        + "  - final_text_contains: greeting.txt\n";
    std::fs::write(&case, yaml).expect("write");

    let regraded = tmp.path().join("regraded.json");
    let output = grade(tmp.path(), &["-o", regraded.to_str().expect("utf-8")]);
    output.assert_code(1);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(
        stderr.trim_end(),
        "Error: Eval failed: 1 of 2 cases did not pass every run"
    );
    for expected in [
        "  write-then-read run 1: graders[0] file_contains {\"path\":\"greeting.txt\",\"text\":\"goodbye\"}: new grader: fail",
        "  write-then-read run 1: graders[1] final_text_contains \"greeting.txt\": new grader: pass",
        "  write-then-read run 1: graders[0] file_exists \"greeting.txt\": removed grader (was pass)",
        "  write-then-read run 1: graders[1] file_contains {\"path\":\"greeting.txt\",\"text\":\"hello\"}: removed grader (was pass)",
        "  write-then-read run 1: run pass → FAIL",
    ] {
        assert!(
            stdout.contains(expected),
            "missing `{expected}` in:\n{stdout}"
        );
    }
    let report = read_json(&regraded);
    let case = report["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == "write-then-read")
        .expect("case");
    assert_eq!(case["summary"]["pass"], false);
    assert_eq!(report["summary"]["passed"], 1);
}

#[test]
fn without_a_workspace_snapshot_file_graders_see_an_empty_workspace() {
    let tmp = tempfile::tempdir().expect("tempdir");
    saved_run(tmp.path());
    std::fs::remove_dir_all(tmp.path().join("out/write-then-read/run-1.workspace"))
        .expect("remove snapshot");
    let output = grade(tmp.path(), &[]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("Note: write-then-read run 1 has no workspace snapshot"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "write-then-read run 1: graders[0] file_exists \"greeting.txt\": pass → fail"
        ),
        "{stdout}"
    );
}

#[test]
fn cases_missing_from_the_paths_and_broken_evidence_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    saved_run(tmp.path());
    let output = grade(tmp.path(), &["cases/nexus"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("of the saved report is not among the cases loaded from `cases/nexus`"),
        "{stderr}"
    );

    let evidence = tmp.path().join("out/bash-denied/run-1.evidence.json");
    std::fs::write(&evidence, "{\n  \"case_name\": 7\n}").expect("write");
    let output = grade(tmp.path(), &[]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("run-1.evidence.json:2:") && stderr.contains("not an evidence file"),
        "{stderr}"
    );
}

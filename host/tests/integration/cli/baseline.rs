//! `evalhost baseline --against OLD NEW`: regressions fail with exit 1, a readable table says
//! which; improvements and one-sided cases are listed without failing.

use crate::support::evalhost::{Evalhost, Output};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A real report of the Mino suite (every case passes), as `run --out` writes it.
fn mino_report(dir: &Path) -> Value {
    let output = Evalhost::new()
        .args(["run", "--out", dir.to_str().expect("utf-8"), "cases/mino"])
        .run();
    output.assert_code(0);
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("JSON")
}

fn write(dir: &Path, name: &str, report: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(report).expect("JSON")).expect("write");
    path
}

fn baseline(old: &Path, new: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["baseline", "--against", old.to_str().expect("utf-8")];
    args.push(new.to_str().expect("utf-8"));
    args.extend_from_slice(extra);
    Evalhost::new().args(args).run()
}

fn case_mut<'a>(report: &'a mut Value, name: &str) -> &'a mut Value {
    report["cases"]
        .as_array_mut()
        .expect("cases")
        .iter_mut()
        .find(|c| c["name"] == name)
        .expect("case in report")
}

/// Make the case's only run fail, as the runner would have reported it.
fn fail_case(report: &mut Value, name: &str) {
    let case = case_mut(report, name);
    case["runs"][0]["pass"] = Value::Bool(false);
    case["summary"]["passed"] = Value::from(0);
    case["summary"]["pass_rate"] = Value::from(0.0);
    case["summary"]["pass"] = Value::Bool(false);
}

#[test]
fn the_same_report_has_no_regression() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("out");
    mino_report(&out);
    // A directory stands for its report.json, as with Nexus.
    let output = baseline(&out, &out.join("report.json"), &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("Regressions: none."), "{stdout}");
    assert!(stdout.ends_with("No regressions.\n"), "{stdout}");
}

#[test]
fn pass_to_fail_and_token_growth_fail_with_a_table_naming_the_case() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let old = mino_report(&tmp.path().join("out"));
    let mut new = old.clone();
    fail_case(&mut new, "bash-denied");
    let tokens = case_mut(&mut new, "write-then-read");
    let input = tokens["summary"]["input_tokens"].as_u64().expect("tokens");
    tokens["summary"]["input_tokens"] = Value::from(input * 2);
    // A case removed and one added: listed, not failed.
    new["cases"]
        .as_array_mut()
        .expect("cases")
        .retain(|c| c["name"] != "unknown-tool");
    let mut added = case_mut(&mut new, "bash-approved").clone();
    added["name"] = Value::from("brand-new");
    new["cases"].as_array_mut().expect("cases").push(added);
    let old_path = write(tmp.path(), "old.json", &old);
    let new_path = write(tmp.path(), "new.json", &new);

    let output = baseline(&old_path, &new_path, &[]);
    output.assert_code(1);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(
        stderr.trim_end(),
        format!(
            "Error: Baseline failed: 2 regressions against {}",
            old_path.display()
        )
    );
    let line = |case: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(case))
            .unwrap_or_else(|| panic!("no row for {case}:\n{stdout}"))
            .to_owned()
    };
    let flip = line("bash-denied");
    assert!(
        flip.contains("status") && flip.contains("pass → fail"),
        "{flip}"
    );
    let growth = line("write-then-read");
    assert!(
        growth.contains("tokens/run") && growth.contains("+20%"),
        "{growth}"
    );
    assert!(
        stdout.contains("Only in the baseline (not compared): unknown-tool."),
        "{stdout}"
    );
    assert!(
        stdout.contains("Only in the new report (not compared): brand-new."),
        "{stdout}"
    );

    // Looser limits let the token growth through; the pass→fail still fails.
    let output = baseline(&old_path, &new_path, &["--max-token-growth", "inf"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(!stdout.contains("tokens/run"), "{stdout}");
}

#[test]
fn a_fixed_case_is_an_improvement_not_a_failure() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let new = mino_report(&tmp.path().join("out"));
    let mut old = new.clone();
    fail_case(&mut old, "protected-env");
    let old_path = write(tmp.path(), "old.json", &old);
    let new_path = write(tmp.path(), "new.json", &new);
    let output = baseline(&old_path, &new_path, &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("Improvements (1):"), "{stdout}");
    assert!(stdout.contains("fail → pass"), "{stdout}");
}

#[test]
fn unreadable_reports_and_bad_thresholds_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut report = mino_report(&tmp.path().join("out"));
    let good = write(tmp.path(), "good.json", &report);
    report["schema_version"] = Value::from(99);
    let future = write(tmp.path(), "future.json", &report);
    let output = baseline(&good, &future, &[]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("future.json: schema_version: the report has schema version 99"),
        "{stderr}"
    );
    let output = baseline(&tmp.path().join("missing.json"), &good, &[]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("missing.json"), "{stderr}");
    let output = baseline(&good, &good, &["--max-drop=-1"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.contains("expected a number >= 0"), "{stderr}");
}

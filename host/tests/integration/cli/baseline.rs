//! `evalhost baseline --against OLD NEW`: `compare` of two reports with the baseline as A.
//! A pass-rate drop with evidence (beyond `--max-drop`) or token growth beyond its limit fails
//! with exit 1 and a row naming the case; a single lost run is too few runs to tell;
//! improvements and one-sided cases are listed without failing.

use crate::support::evalhost::{Evalhost, Output};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A real report of the Mino suite with `runs` runs a case (every run passes), as `run --out`
/// writes it.
fn mino_report(dir: &Path, runs: u32) -> Value {
    let output = Evalhost::new()
        .args(["run", "--runs", &runs.to_string(), "--out"])
        .arg(dir)
        .arg("cases/mino")
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
    Evalhost::new()
        .args(["baseline", "--against"])
        .arg(old)
        .arg(new)
        .args(extra)
        .run()
}

fn case_mut<'a>(report: &'a mut Value, name: &str) -> &'a mut Value {
    report["cases"]
        .as_array_mut()
        .expect("cases")
        .iter_mut()
        .find(|c| c["name"] == name)
        .expect("case in report")
}

/// Make every run of the case fail, as the runner would have reported it.
fn fail_case(report: &mut Value, name: &str) {
    let case = case_mut(report, name);
    for run in case["runs"].as_array_mut().expect("runs") {
        run["pass"] = Value::Bool(false);
    }
    case["summary"]["passed"] = Value::from(0);
    case["summary"]["pass_rate"] = Value::from(0.0);
    case["summary"]["pass"] = Value::Bool(false);
}

/// The row of `case` in the comparison's table.
fn row(stdout: &str, case: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with(case))
        .unwrap_or_else(|| panic!("no row for {case}:\n{stdout}"))
        .to_owned()
}

#[test]
fn the_same_report_has_no_regression() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("out");
    mino_report(&out, 1);
    // A directory stands for its report.json, as with Nexus.
    let output = baseline(&out, &out.join("report.json"), &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(
            "Pass rates: 0 regressed, 0 improved, 0 no evidence of a change, 5 too few runs to tell"
        ),
        "{stdout}"
    );
    assert!(stdout.ends_with("No regressions.\n"), "{stdout}");
}

#[test]
fn a_drop_with_evidence_and_token_growth_fail_with_rows_naming_the_cases() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let old = mino_report(&tmp.path().join("out"), 20);
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
    assert!(
        stdout.starts_with(&format!(
            "Comparing {} (5 cases) with the baseline {} (5 cases).\n",
            new_path.display(),
            old_path.display()
        )),
        "{stdout}"
    );
    // 20/20 → 0/20: Fisher's p = 2/C(40,20) = 1.5e-11.
    let drop = row(stdout, "bash-denied");
    assert!(
        drop.contains("20/20") && drop.contains("0/20") && drop.contains("1.5e-11"),
        "{drop}"
    );
    assert!(drop.ends_with("regressed"), "{drop}");
    let growth = row(stdout, "write-then-read");
    assert!(
        growth.contains("tokens/run") && growth.contains("limit ±20%"),
        "{growth}"
    );
    assert!(
        stdout.contains("Limits: a pass-rate change with evidence counts beyond 0.05; tokens/run beyond ±20%; ms/run beyond ±50% and 100 ms.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Only in A (not compared): unknown-tool.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Only in B (not compared): brand-new.\n"),
        "{stdout}"
    );
    assert!(
        stdout
            .ends_with("Regressions (2): bash-denied (pass rate), write-then-read (tokens/run).\n"),
        "{stdout}"
    );

    // Looser limits let the token growth through; the drop still fails.
    let output = baseline(&old_path, &new_path, &["--max-token-growth", "inf"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(!stdout.contains("tokens/run"), "{stdout}");
    // A minimum effect of a whole pass rate counts no drop: nothing fails but the tokens.
    let output = baseline(&old_path, &new_path, &["--max-drop", "1"]);
    output.assert_code(1);
    assert!(
        row(output.stdout(), "bash-denied").starts_with("bash-denied")
            && row(output.stdout(), "bash-denied").contains("negligible"),
        "{output}"
    );
    assert!(
        output
            .stdout()
            .ends_with("Regressions (1): write-then-read (tokens/run).\n"),
        "{output}"
    );
}

/// One run a case: pass → fail used to fail the baseline ("status"); one run is no evidence.
#[test]
fn a_single_lost_run_is_too_few_runs_to_tell() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let old = mino_report(&tmp.path().join("out"), 1);
    let mut new = old.clone();
    fail_case(&mut new, "bash-denied");
    let old_path = write(tmp.path(), "old.json", &old);
    let new_path = write(tmp.path(), "new.json", &new);
    let output = baseline(&old_path, &new_path, &[]);
    output.assert_code(0);
    let flip = row(output.stdout(), "bash-denied");
    assert!(flip.contains("1/1") && flip.contains("0/1"), "{flip}");
    // Pooled rate 1/2: 0.4 vs 0.6 needs 107 runs a side.
    assert!(
        flip.ends_with("too few runs to tell (needs 107 runs a side)"),
        "{flip}"
    );
    assert!(output.stdout().ends_with("No regressions.\n"), "{output}");
}

#[test]
fn a_fixed_case_is_an_improvement_not_a_failure() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let new = mino_report(&tmp.path().join("out"), 20);
    let mut old = new.clone();
    fail_case(&mut old, "protected-env");
    let old_path = write(tmp.path(), "old.json", &old);
    let new_path = write(tmp.path(), "new.json", &new);
    let output = baseline(&old_path, &new_path, &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        row(stdout, "protected-env").ends_with("improved"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Pass rates: 0 regressed, 1 improved"),
        "{stdout}"
    );
}

#[test]
fn unreadable_reports_and_bad_thresholds_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut report = mino_report(&tmp.path().join("out"), 1);
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
    let output = baseline(&good, &good, &["--alpha", "0"]);
    output.assert_code(2);
    assert!(
        output
            .stderr()
            .contains("expected a rate above 0 and below 1"),
        "{output}"
    );
}

//! `evalhost compare A B` on real runs of a suite: a case that stopped passing over 20 runs is
//! a regression with evidence (exit 1), one lost run of three is "too few runs to tell"
//! (exit 0), a case whose file changed is marked, `--json` prints the comparison, bad input is
//! a usage error.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::evalhost::{Evalhost, Output};

/// A suite of two cases: `a-steady` always passes; `b-greets` passes when the scripted model
/// says `greeting` and it contains "hello".
fn suite(dir: &Path, greeting: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("suite dir");
    std::fs::write(
        dir.join("a-steady.yaml"),
        "name: a-steady\nprompt: Say ok.\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n",
    )
    .expect("case");
    std::fs::write(
        dir.join("b-greets.yaml"),
        format!(
            "name: b-greets\nprompt: Say hello.\nmodel:\n  - text: {greeting}\ngraders:\n  - final_text_contains: hello\n"
        ),
    )
    .expect("case");
    dir.to_owned()
}

/// `evalhost` in `tmp`, its data directory there too.
fn evalhost(tmp: &Path) -> Evalhost {
    Evalhost::new()
        .current_dir(tmp)
        .env("XDG_DATA_HOME", tmp.join("data"))
}

/// `run --runs RUNS --out OUT SUITE`; the `--out` directory.
fn run(tmp: &Path, suite: &Path, runs: u32, out: &str) -> PathBuf {
    let out = tmp.join(out);
    let output = evalhost(tmp)
        .args(["run", "--runs", &runs.to_string(), "--out"])
        .arg(&out)
        .arg(suite)
        .run();
    assert!(matches!(output.code(), 0 | 1), "{output}");
    out
}

fn compare(tmp: &Path, a: &Path, b: &Path, extra: &[&str]) -> Output {
    evalhost(tmp).arg("compare").arg(a).arg(b).args(extra).run()
}

/// The two runs of 20: `b-greets` passes every run on A and none on B.
fn twenty_runs_each(tmp: &Path) -> (PathBuf, PathBuf) {
    let a = run(
        tmp,
        &suite(&tmp.join("suite-a"), "hello there"),
        20,
        "out-a",
    );
    let b = run(tmp, &suite(&tmp.join("suite-b"), "goodbye"), 20, "out-b");
    (a, b)
}

fn row<'a>(stdout: &'a str, case: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(case))
        .unwrap_or_else(|| panic!("no row for {case}:\n{stdout}"))
}

#[test]
fn a_case_that_stopped_passing_over_twenty_runs_regressed_with_evidence() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (a, b) = twenty_runs_each(tmp.path());
    let output = compare(tmp.path(), &a, &b, &[]);
    output.assert_code(1);
    let stdout = output.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[2],
        "Tests: per case: Fisher's exact test, two-sided; Benjamini–Hochberg FDR 5% over 2 cases; suite: Wilcoxon signed-rank over 2 paired cases.",
        "{output}"
    );
    // The changed case first, although it comes second in the suite.
    assert!(lines[3].starts_with("CASE"), "{output}");
    assert!(lines[4].starts_with("b-greets"), "{output}");
    let greets = row(stdout, "b-greets");
    assert!(greets.contains("20/20 (0.84-1.00)"), "{greets}");
    assert!(greets.contains("0/20 (0.00-0.16)"), "{greets}");
    assert!(greets.contains("-1.00"), "{greets}");
    // Its case file differs between the suites (the model's text): compared, and marked.
    assert!(greets.ends_with("regressed; case changed"), "{greets}");
    // Nothing changed, but 20 runs cannot tell a 20-point change at a pass rate of 1.
    assert!(
        row(stdout, "a-steady").contains("too few runs to tell (needs 44 runs a side)"),
        "{output}"
    );
    assert!(
        stdout.ends_with("Regressions (1): b-greets (pass rate).\n"),
        "{output}"
    );
    assert_eq!(
        output.stderr().trim_end(),
        format!(
            "Error: Compare failed: 1 case regressed with evidence (B {} against A {})",
            b.display(),
            a.display()
        )
    );

    // The other way round it is an improvement: no failure.
    let output = compare(tmp.path(), &b, &a, &[]);
    output.assert_code(0);
    assert!(
        row(output.stdout(), "b-greets").ends_with("improved; case changed"),
        "{output}"
    );
    assert!(output.stdout().ends_with("No regressions.\n"), "{output}");
}

#[test]
fn one_lost_run_of_three_is_too_few_runs_to_tell() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = run(
        tmp.path(),
        &suite(&tmp.path().join("suite"), "hello"),
        3,
        "out-a",
    );
    // B: the same report with its third run of b-greets failed, as the runner reports it.
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("report.json")).expect("report"))
            .expect("JSON");
    let case = report["cases"]
        .as_array_mut()
        .expect("cases")
        .iter_mut()
        .find(|c| c["name"] == "b-greets")
        .expect("b-greets");
    case["runs"][2]["pass"] = Value::Bool(false);
    case["summary"]["passed"] = Value::from(2);
    case["summary"]["pass"] = Value::Bool(false);
    let b = tmp.path().join("b.json");
    std::fs::write(&b, serde_json::to_string(&report).expect("JSON")).expect("write");

    let output = compare(tmp.path(), &a, &b, &[]);
    output.assert_code(0);
    let greets = row(output.stdout(), "b-greets");
    assert!(greets.contains("3/3") && greets.contains("2/3"), "{greets}");
    assert!(greets.contains("-0.33"), "{greets}");
    // Fleiss's continuity-corrected sample size around the pooled rate 5/6 (0.73 vs 0.93):
    // 62.9 → 63 runs a side.
    assert!(
        greets.ends_with("too few runs to tell (needs 63 runs a side)"),
        "{greets}"
    );
    assert!(output.stdout().ends_with("No regressions.\n"), "{output}");
    assert_eq!(output.stderr(), "");
}

#[test]
fn json_prints_every_case_with_its_test() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (a, b) = twenty_runs_each(tmp.path());
    let output = compare(tmp.path(), &a, &b, &["--json", "--alpha", "0.01"]);
    output.assert_code(1);
    let json: Value = serde_json::from_str(output.stdout()).expect("--json prints JSON");
    assert_eq!(json["options"]["alpha"], 0.01);
    assert_eq!(json["tests"]["per_case"], "fisher_exact_two_sided");
    assert_eq!(json["a"]["label"], a.to_str().expect("utf-8"));
    let cases = json["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2);
    let greets = &cases[0];
    assert_eq!(greets["name"], "b-greets");
    assert_eq!(greets["verdict"]["kind"], "regressed");
    assert_eq!(greets["changed_case"], true);
    assert_eq!(
        (
            greets["a"]["passed"].as_u64(),
            greets["b"]["passed"].as_u64()
        ),
        (Some(20), Some(0))
    );
    // 2 / C(40, 20) (scipy's fisher_exact: 1.4508889103849688e-11).
    let p = greets["p_value"].as_f64().expect("p");
    assert!((p / 1.4508889103849688e-11 - 1.0).abs() < 1e-6, "{p}");
    assert_eq!(cases[1]["verdict"]["kind"], "too_few_runs");
    assert_eq!(cases[1]["verdict"]["runs_needed"], 44);
    assert_eq!(json["suite"]["worse"], 1);
    assert_eq!(json["suite"]["tied"], 1);
    assert_eq!(json["only_a"], Value::Array(vec![]));
}

#[test]
fn unreadable_reports_and_bad_rates_are_usage_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let a = run(
        tmp.path(),
        &suite(&tmp.path().join("suite"), "hello"),
        1,
        "out",
    );
    let output = compare(tmp.path(), &a, &tmp.path().join("missing.json"), &[]);
    output.assert_code(2);
    assert!(output.stderr().contains("missing.json"), "{output}");
    let output = compare(tmp.path(), &a, &a, &["--alpha", "1"]);
    output.assert_code(2);
    assert!(
        output
            .stderr()
            .contains("expected a rate above 0 and below 1"),
        "{output}"
    );
    // The same run twice: nothing regressed.
    compare(tmp.path(), &a, &a, &[]).assert_code(0);
}

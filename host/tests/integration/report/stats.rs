//! pass@k / pass^k at any k ≤ n, the Wilson interval per case and per suite, in the JSON
//! report and the text table.

use evalhost::evidence::Usage;
use evalhost::report::{
    CaseReport, CaseSummary, Interval, REPORT_SCHEMA_VERSION, RunReport, SuiteReport, SuiteSummary,
    render_text,
};

fn runs(outcomes: &[bool]) -> Vec<RunReport> {
    outcomes
        .iter()
        .enumerate()
        .map(|(i, &pass)| RunReport {
            run: i as u32 + 1,
            pass,
            error: (!pass).then(|| "boom".to_owned()),
            usage: Usage::default(),
            cost_usd: None,
            recorded_cost_usd: None,
            tool_calls: 0,
            duration_ms: 0,
            verdicts: Vec::new(),
            warnings: Vec::new(),
            image: None,
            source: None,
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-4
}

fn suite(cases: Vec<(&str, Vec<RunReport>)>, k: Option<u32>) -> SuiteReport {
    let cases: Vec<CaseReport> = cases
        .into_iter()
        .map(|(name, runs)| CaseReport {
            digest: None,
            tags: Vec::new(),
            name: name.to_owned(),
            path: format!("{name}.yaml"),
            confine: Default::default(),
            summary: CaseSummary::with_k(&runs, k),
            runs,
        })
        .collect();
    SuiteReport {
        provenance: Default::default(),
        prices: None,
        budget: None,
        schema_version: REPORT_SCHEMA_VERSION,
        evalhost_version: "0".into(),
        mode: "live".into(),
        model: "m".into(),
        runs_per_case: 5,
        k,
        interrupted: false,
        cancelled: Vec::new(),
        agents: Vec::new(),
        confinement: None,
        summary: SuiteSummary::of(&cases),
        cases: cases.into(),
    }
}

#[test]
fn five_runs_three_passes_at_k_two() {
    let s = CaseSummary::with_k(&runs(&[true, false, true, false, true]), Some(2));
    assert_eq!((s.runs, s.passed, s.k), (5, 3, 2));
    assert!(close(s.pass_at_k, 0.9), "{}", s.pass_at_k);
    assert!(close(s.pass_hat_k, 0.3), "{}", s.pass_hat_k);
    assert!(close(s.pass_rate, 0.6));
    assert!(close(s.pass_rate_ci95.low, 0.2307) && close(s.pass_rate_ci95.high, 0.8824));
    assert!(!s.pass, "pass^k < 1 is never a pass");
}

#[test]
fn default_k_is_n_and_k_is_capped_at_n() {
    let r = runs(&[true, false, true]);
    let s = CaseSummary::of(&r);
    assert_eq!(s.k, 3);
    assert_eq!((s.pass_at_k, s.pass_hat_k), (1.0, 0.0));
    let capped = CaseSummary::with_k(&r, Some(9));
    assert_eq!(capped.k, 3);
    assert_eq!(capped.pass_hat_k, 0.0);
}

#[test]
fn a_case_passes_only_when_pass_hat_k_is_one() {
    let all = CaseSummary::with_k(&runs(&[true, true, true]), Some(1));
    assert!(all.pass && all.pass_hat_k == 1.0);
    let one_failed = CaseSummary::with_k(&runs(&[true, true, false]), Some(1));
    assert!(!one_failed.pass);
}

#[test]
fn suite_interval_counts_every_run() {
    let report = suite(
        vec![
            ("a", runs(&[true, true, true, true, true])),
            ("b", runs(&[true, false, true, false, true])),
        ],
        Some(2),
    );
    assert_eq!((report.summary.runs, report.summary.passed), (10, 8));
    assert!(close(report.summary.pass_rate, 0.8));
    let expected = Interval::wilson(10, 8);
    assert_eq!(report.summary.pass_rate_ci95, expected);
    assert!(
        close(expected.low, 0.4902) && close(expected.high, 0.9433),
        "{expected:?}"
    );

    let json: serde_json::Value =
        serde_json::from_str(&report.to_json().expect("json")).expect("json");
    assert_eq!(json["k"], 2);
    assert_eq!(json["summary"]["passed"], 8);
    assert!(json["summary"]["pass_rate_ci95"]["low"].as_f64().is_some());
    let b = &json["cases"][1]["summary"];
    assert_eq!(b["k"], 2);
    assert!(close(b["pass_at_k"].as_f64().unwrap_or(0.0), 0.9));
    assert!(close(b["pass_hat_k"].as_f64().unwrap_or(0.0), 0.3));
    assert!(close(
        b["pass_rate_ci95"]["high"].as_f64().unwrap_or(0.0),
        0.8824
    ));
}

#[test]
fn table_shows_k_and_the_interval_when_runs_repeat() {
    let report = suite(
        vec![("b", runs(&[true, false, true, false, true]))],
        Some(2),
    );
    let text = render_text(&report).expect("text");
    let header = text.lines().nth(1).unwrap_or_default();
    assert!(
        header.contains("pass@2") && header.contains("pass^2"),
        "{text}"
    );
    assert!(header.contains("RATE_CI95"), "{text}");
    let row = text.lines().nth(2).unwrap_or_default();
    assert!(
        row.contains("0.90") && row.contains("0.30") && row.contains("0.23-0.88"),
        "{text}"
    );
    assert!(
        text.contains("Suite: 3 of 5 runs passed, pass rate 0.60 (95% CI 0.23-0.88)."),
        "{text}"
    );
}

#[test]
fn single_runs_keep_the_mino_table() {
    let report = suite(vec![("a", runs(&[true]))], None);
    let text = render_text(&report).expect("text");
    assert!(
        !text.contains("RATE_CI95") && !text.contains("Suite:"),
        "{text}"
    );
    assert!(
        text.lines()
            .nth(1)
            .unwrap_or_default()
            .contains("pass@k  pass^k")
    );
}

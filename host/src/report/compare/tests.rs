use std::collections::HashMap;

use super::*;

fn case(name: &str, passed: u32, runs: u32) -> CaseSide {
    CaseSide {
        name: name.into(),
        digest: None,
        runs,
        passed,
        input_tokens: 100 * u64::from(runs),
        output_tokens: 0,
        duration_ms: 10 * u64::from(runs),
        cost_usd: None,
    }
}

fn side(label: &str, cases: Vec<CaseSide>) -> Side {
    Side {
        label: label.into(),
        cases,
    }
}

fn run(a: Vec<CaseSide>, b: Vec<CaseSide>) -> Comparison {
    compare(
        &side("A", a),
        &side("B", b),
        &HashMap::new(),
        &CompareOptions::default(),
    )
    .expect("compared")
}

fn row<'a>(c: &'a Comparison, name: &str) -> &'a CaseComparison {
    c.cases
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn twenty_of_twenty_to_none_is_a_regression_with_evidence() {
    let c = run(vec![case("x", 20, 20)], vec![case("x", 0, 20)]);
    let x = row(&c, "x");
    assert_eq!(x.verdict, Verdict::Regressed);
    assert_eq!(x.difference, -1.0);
    // 2/C(40,20) (scipy: 1.4508889103849688e-11); one case: q = p.
    assert!((x.p_value - 1.4508889103849688e-11).abs() < 1e-18);
    assert_eq!(x.q_value, x.p_value);
    assert_eq!(c.regressions().count(), 1);
    assert_eq!((c.suite.better, c.suite.worse, c.suite.tied), (0, 1, 0));
    let text = render_comparison(&c, false);
    assert!(
        text.ends_with("Regressions (1): x (pass rate).\n"),
        "{text}"
    );
}

#[test]
fn one_of_three_runs_lost_is_too_few_runs_to_tell() {
    let c = run(vec![case("x", 3, 3)], vec![case("x", 2, 3)]);
    let x = row(&c, "x");
    assert_eq!(x.p_value, 1.0);
    // Pooled 5/6: rates 0.733 and 0.933 (Fleiss, continuity-corrected).
    let needed = power::runs_needed(5.0 / 6.0);
    assert!((44..=107).contains(&needed), "{needed}");
    assert_eq!(
        x.verdict,
        Verdict::TooFewRuns {
            runs_needed: needed
        }
    );
    assert_eq!(c.regressions().count(), 0);
    let text = render_comparison(&c, false);
    assert!(
        text.contains(&format!(
            "too few runs to tell (needs {needed} runs a side)"
        )),
        "{text}"
    );
    assert!(text.ends_with("No regressions.\n"), "{text}");
    // 3/3 vs 0/3: p = 0.1, still no evidence.
    let c = run(vec![case("x", 3, 3)], vec![case("x", 0, 3)]);
    assert!((row(&c, "x").p_value - 0.1).abs() < 1e-12);
    assert!(matches!(row(&c, "x").verdict, Verdict::TooFewRuns { .. }));
}

#[test]
fn enough_runs_without_a_change_is_no_evidence() {
    let c = run(vec![case("x", 100, 100)], vec![case("x", 99, 100)]);
    assert_eq!(row(&c, "x").verdict, Verdict::NoEvidence);
    let c = run(vec![case("x", 60, 120)], vec![case("x", 58, 120)]);
    assert_eq!(row(&c, "x").verdict, Verdict::NoEvidence);
    // 107 runs are needed around 0.5: 100 are too few.
    let c = run(vec![case("x", 50, 100)], vec![case("x", 48, 100)]);
    assert_eq!(
        row(&c, "x").verdict,
        Verdict::TooFewRuns { runs_needed: 107 }
    );
}

#[test]
fn the_false_discovery_rate_is_controlled_across_cases() {
    // 10/10 → 5/10 alone: p = 0.0325 (scipy), a regression at 5%.
    let alone = run(vec![case("x", 10, 10)], vec![case("x", 5, 10)]);
    assert!((row(&alone, "x").p_value - 0.032507739938080496).abs() < 1e-12);
    assert_eq!(row(&alone, "x").verdict, Verdict::Regressed);
    // Among 20 unchanged cases it is not: q = p · 21.
    let mut a = vec![case("x", 10, 10)];
    let mut b = vec![case("x", 5, 10)];
    for i in 0..20 {
        a.push(case(&format!("same-{i}"), 10, 10));
        b.push(case(&format!("same-{i}"), 10, 10));
    }
    let c = run(a.clone(), b.clone());
    let x = row(&c, "x");
    assert!((x.q_value - (x.p_value * 21.0).min(1.0)).abs() < 1e-12);
    assert!(matches!(x.verdict, Verdict::TooFewRuns { .. }));
    // A laxer rate finds it again.
    let lax = CompareOptions {
        alpha: 0.9,
        ..CompareOptions::default()
    };
    let c = compare(&side("A", a), &side("B", b), &HashMap::new(), &lax).unwrap();
    assert_eq!(row(&c, "x").verdict, Verdict::Regressed);
}

#[test]
fn improvements_and_the_order_of_rows() {
    let a = vec![
        case("steady", 5, 5),
        case("fixed", 0, 20),
        case("broken", 20, 20),
        case("other", 1, 2),
    ];
    let b = vec![
        case("other", 1, 2),
        case("fixed", 20, 20),
        case("steady", 5, 5),
        case("broken", 0, 20),
    ];
    let c = run(a, b);
    let names: Vec<&str> = c.cases.iter().map(|r| r.name.as_str()).collect();
    // Regressed, improved, then B's order.
    assert_eq!(names, ["broken", "fixed", "other", "steady"]);
    assert_eq!(row(&c, "fixed").verdict, Verdict::Improved);
    assert_eq!(c.improvements().count(), 1);
    assert_eq!((c.suite.better, c.suite.worse, c.suite.tied), (1, 1, 2));
    assert_eq!(c.a.runs, 47);
    assert_eq!(c.a.passed, 26);
    assert_eq!(c.b.passed, 26);
}

#[test]
fn one_sided_and_unfinished_cases_are_listed_not_compared() {
    let c = run(
        vec![case("gone", 1, 1), case("both", 1, 1), case("cut", 3, 3)],
        vec![case("cut", 0, 0), case("both", 1, 1), case("added", 1, 1)],
    );
    assert_eq!(c.only_a, ["gone"]);
    assert_eq!(c.only_b, ["added"]);
    assert_eq!(c.unfinished, ["cut"]);
    assert_eq!(c.cases.len(), 1);
    let text = render_comparison(&c, false);
    assert!(text.contains("Only in A (not compared): gone.\n"), "{text}");
    assert!(
        text.contains("Only in B (not compared): added.\n"),
        "{text}"
    );
    assert!(
        text.contains("No finished run on one side (not compared): cut.\n"),
        "{text}"
    );
}

#[test]
fn nothing_in_common() {
    let c = run(vec![case("a", 1, 1)], vec![]);
    assert!(c.cases.is_empty());
    assert_eq!(c.suite.p_value, 1.0);
    assert_eq!(c.tokens_per_run, None);
    let text = render_comparison(&c, false);
    assert!(text.contains("Suite: no case was compared."), "{text}");
    assert!(text.ends_with("No regressions.\n"), "{text}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let dup = side("A", vec![case("x", 1, 1), case("x", 1, 1)]);
    let one = side("B", vec![case("x", 1, 1)]);
    let options = CompareOptions::default();
    let error = compare(&dup, &one, &HashMap::new(), &options).unwrap_err();
    assert_eq!(error.to_string(), "A: case `x` appears more than once");
    let error = compare(&one, &dup, &HashMap::new(), &options).unwrap_err();
    assert!(matches!(error, CompareError::DuplicateCase { .. }));
    for alpha in [0.0, 1.0, -0.1, f64::NAN] {
        let options = CompareOptions {
            alpha,
            ..CompareOptions::default()
        };
        assert!(matches!(
            compare(&one, &one, &HashMap::new(), &options),
            Err(CompareError::Alpha(_))
        ));
    }
    let options = CompareOptions {
        max_token_growth: Some(-1.0),
        ..CompareOptions::default()
    };
    assert!(compare(&one, &one, &HashMap::new(), &options).is_err());
    // More passes than runs: capped.
    let c = run(vec![case("x", 9, 3)], vec![case("x", 3, 3)]);
    assert_eq!(row(&c, "x").a.passed, 3);
    assert_eq!(row(&c, "x").p_value, 1.0);
}

#[test]
fn changed_cases_and_flaky_marks_are_carried() {
    let mut old = case("x", 3, 3);
    old.digest = Some("aaa".into());
    let mut new = case("x", 3, 3);
    new.digest = Some("bbb".into());
    let mut same_old = case("y", 3, 3);
    same_old.digest = Some("ccc".into());
    let mut same_new = case("y", 3, 3);
    same_new.digest = Some("ccc".into());
    let flaky = HashMap::from([("y".to_owned(), Flaky { runs: 40, flips: 7 })]);
    let c = compare(
        &side("A", vec![old, same_old, case("z", 1, 1)]),
        &side("B", vec![new, same_new, case("z", 1, 1)]),
        &flaky,
        &CompareOptions::default(),
    )
    .unwrap();
    assert!(row(&c, "x").changed_case);
    assert!(!row(&c, "y").changed_case);
    assert!(
        !row(&c, "z").changed_case,
        "unknown digests are not a change"
    );
    assert_eq!(row(&c, "y").flaky, Some(Flaky { runs: 40, flips: 7 }));
    assert_eq!(row(&c, "x").flaky, None);
    let text = render_comparison(&c, false);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{text}"))
            .to_owned()
    };
    assert!(line("x ").ends_with("; case changed"), "{text}");
    assert!(
        line("y ").ends_with("; flaky: 7 flips in 40 runs"),
        "{text}"
    );
}

#[test]
fn a_minimum_effect_makes_a_small_change_with_evidence_negligible() {
    // 5000/10000 → 4800/10000: p = 0.0049 (scipy), a drop of 0.02.
    let a = vec![case("x", 5000, 10000)];
    let b = vec![case("x", 4800, 10000)];
    let c = run(a.clone(), b.clone());
    assert_eq!(row(&c, "x").verdict, Verdict::Regressed);
    let options = CompareOptions {
        min_effect: 0.05,
        ..CompareOptions::default()
    };
    let c = compare(&side("A", a), &side("B", b), &HashMap::new(), &options).unwrap();
    assert_eq!(row(&c, "x").verdict, Verdict::Negligible);
    assert_eq!(c.regressions().count(), 0);
}

#[test]
fn token_and_latency_limits_flag_growth() {
    let with = |name: &str, tokens: u64, ms: u64| CaseSide {
        input_tokens: tokens,
        duration_ms: ms,
        ..case(name, 1, 1)
    };
    let a = vec![
        with("tokens", 100, 10),
        with("at-limit", 100, 10),
        with("slow", 100, 100),
        with("fast-noise", 100, 4),
        with("cheaper", 200, 10),
        with("from-zero", 0, 0),
    ];
    let b = vec![
        with("tokens", 121, 10),
        with("at-limit", 120, 10),
        with("slow", 100, 251),
        with("fast-noise", 100, 9),
        with("cheaper", 100, 10),
        with("from-zero", 500, 500),
    ];
    let options = CompareOptions {
        max_token_growth: Some(0.2),
        max_latency_growth: Some(0.5),
        min_latency_growth_ms: 100.0,
        ..CompareOptions::default()
    };
    let c = compare(&side("A", a), &side("B", b), &HashMap::new(), &options).unwrap();
    let regressed: Vec<&str> = c.regressions().map(|r| r.name.as_str()).collect();
    assert_eq!(regressed, ["tokens", "slow"]);
    let improved: Vec<&str> = c.improvements().map(|r| r.name.as_str()).collect();
    assert_eq!(improved, ["cheaper"]);
    assert_eq!(row(&c, "tokens").flags[0].metric, Metric::TokensPerRun);
    assert_eq!(row(&c, "slow").flags[0].metric, Metric::MsPerRun);
    let text = render_comparison(&c, false);
    assert!(
        text.contains("tokens/run 100 → 121 (+21%, limit ±20%)"),
        "{text}"
    );
    assert!(
        text.ends_with("Regressions (2): tokens (tokens/run), slow (ms/run).\n"),
        "{text}"
    );
    assert!(
        text.contains("Limits: tokens/run beyond ±20%; ms/run beyond ±50% and 100 ms.\n"),
        "{text}"
    );
    // Without limits nothing is flagged.
    assert!(
        run(vec![with("t", 100, 10)], vec![with("t", 1000, 10)])
            .cases
            .iter()
            .all(|r| r.flags.is_empty())
    );
}

#[test]
fn tokens_duration_and_cost_side_by_side() {
    let priced = |name: &str, cost: Option<f64>, tokens: u64| CaseSide {
        cost_usd: cost,
        input_tokens: tokens,
        output_tokens: tokens,
        ..case(name, 2, 2)
    };
    let c = run(
        vec![priced("x", Some(0.5), 100), priced("y", Some(0.25), 100)],
        vec![priced("x", Some(1.0), 200), priced("y", Some(0.5), 100)],
    );
    // Per run: A (200 + 200) / 4 = 100, B (400 + 200) / 4 = 150.
    let tokens = c.tokens_per_run.unwrap();
    assert_eq!((tokens.a, tokens.b, tokens.absolute), (100.0, 150.0, 50.0));
    assert_eq!(tokens.relative, Some(0.5));
    let cost = c.cost_usd.unwrap();
    assert_eq!((cost.a, cost.b), (0.75, 1.5));
    assert_eq!(row(&c, "x").cost_usd.unwrap().relative, Some(1.0));
    let text = render_comparison(&c, false);
    assert!(
        text.contains(
            "Per run: tokens A 100, B 150 (+50, +50%); duration A 10 ms, B 10 ms (+0 ms, +0%).\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("Cost: A $0.7500, B $1.5000 (+0.7500, +100% USD).\n"),
        "{text}"
    );
    // One unknown cost: no suite cost.
    let c = run(
        vec![priced("x", Some(0.5), 1), priced("y", None, 1)],
        vec![priced("x", Some(1.0), 1), priced("y", Some(0.5), 1)],
    );
    assert_eq!(c.cost_usd, None);
    assert!(row(&c, "y").cost_usd.is_none());
}

#[test]
fn the_text_states_the_tests_and_colours_only_when_asked() {
    let c = run(
        vec![case("x", 20, 20), case("y", 3, 3)],
        vec![case("x", 0, 20), case("y", 3, 3)],
    );
    let text = render_comparison(&c, false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "A: A, 2 cases.");
    assert_eq!(lines[1], "B: B, 2 cases.");
    assert_eq!(
        lines[2],
        "Tests: per case: Fisher's exact test, two-sided; Benjamini–Hochberg FDR 5% over 2 cases; suite: Wilcoxon signed-rank over 2 paired cases."
    );
    assert!(lines[3].starts_with("CASE"), "{text}");
    assert!(lines[4].starts_with("x "), "{text}");
    assert!(lines[4].contains("20/20 (0.84-1.00)"), "{text}");
    assert!(lines[4].ends_with("regressed"), "{text}");
    assert!(!text.contains('\x1b'));
    assert!(
        text.contains("Paired test: Wilcoxon signed-rank V = 0, p = 1.000 (exact); 0 cases better on B, 1 worse, 1 the same.\n"),
        "{text}"
    );
    let colored = render_comparison(&c, true);
    assert!(colored.contains("\x1b[1;31mregressed\x1b[0m"), "{colored}");
}

#[test]
fn the_json_names_verdicts_and_tests() {
    let c = run(
        vec![case("x", 20, 20), case("y", 3, 3)],
        vec![case("x", 0, 20), case("y", 2, 3)],
    );
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["cases"][0]["verdict"]["kind"], "regressed");
    assert_eq!(json["cases"][1]["verdict"]["kind"], "too_few_runs");
    assert!(json["cases"][1]["verdict"]["runs_needed"].as_u64().unwrap() > 3);
    assert_eq!(json["tests"]["per_case"], "fisher_exact_two_sided");
    assert_eq!(json["suite"]["method"], "exact");
    assert_eq!(json["options"]["alpha"], 0.05);
}

#[test]
fn a_report_becomes_a_side() {
    use crate::report::{CaseReport, RunReport};
    // Made from JSON, as a saved report is read (fields added later have defaults).
    let runs: Vec<RunReport> = [(true, 30), (false, 50)]
        .into_iter()
        .enumerate()
        .map(|(i, (pass, duration_ms))| {
            serde_json::from_value(serde_json::json!({
                "run": i + 1,
                "pass": pass,
                "error": null,
                "usage": {"requests": 1, "input_tokens": 7, "output_tokens": 3, "synthetic": true},
                "tool_calls": 0,
                "duration_ms": duration_ms,
                "verdicts": [],
            }))
            .expect("a run report")
        })
        .collect();
    let mut case = CaseReport::of_runs("x", runs);
    case.digest = Some("5e1f".into());
    let report = super::super::tests::suite(vec![case], vec![]);
    let side = Side::of_report("old.json", &report).unwrap();
    assert_eq!(side.label, "old.json");
    assert_eq!(
        side.cases,
        [CaseSide {
            name: "x".into(),
            digest: Some("5e1f".into()),
            runs: 2,
            passed: 1,
            input_tokens: 14,
            output_tokens: 6,
            duration_ms: 80,
            cost_usd: None,
        }]
    );
}

#[test]
fn a_reports_cost_is_known_when_every_runs_is() {
    use crate::report::{CaseReport, RunReport};
    let run = |cost: Option<f64>| -> RunReport {
        serde_json::from_value(serde_json::json!({
            "run": 1, "pass": true, "error": null,
            "usage": {"requests": 1, "input_tokens": 7, "output_tokens": 3, "synthetic": false},
            "cost_usd": cost,
            "tool_calls": 0, "duration_ms": 5, "verdicts": [],
        }))
        .expect("a run report")
    };
    let priced = CaseReport::of_runs("priced", vec![run(Some(0.25)), run(Some(0.5))]);
    let partly = CaseReport::of_runs("partly", vec![run(Some(0.25)), run(None)]);
    let report = super::super::tests::suite(vec![priced, partly], vec![]);
    let side = Side::of_report("r", &report).unwrap();
    assert_eq!(side.cases[0].cost_usd, Some(0.75));
    assert_eq!(side.cases[1].cost_usd, None);
}

/// 10,000 cases a side, in reversed order, of up to 32 runs: compared and rendered (the time
/// is `bench`'s to measure, not a test's).
#[test]
fn ten_thousand_cases_compare() {
    let n = 10_000u32;
    let a: Vec<CaseSide> = (0..n)
        .map(|i| case(&format!("case-{i:05}"), (i * 7) % 33, 32))
        .collect();
    let b: Vec<CaseSide> = (0..n)
        .rev()
        .map(|i| case(&format!("case-{i:05}"), (i * 11) % 33, 32))
        .collect();
    let c = run(a, b);
    assert_eq!(c.cases.len(), n as usize);
    assert_eq!(c.suite.pairs, n as usize);
    assert_eq!(c.suite.method, PairedMethod::Normal);
    assert!(c.regressions().count() > 0);
    let text = render_comparison(&c, false);
    assert!(text.lines().count() > n as usize);
}

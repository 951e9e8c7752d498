//! `schema/report.schema.json` describes `report.json` exactly: real suites' reports (passing,
//! failing, Nexus, an errored run, an erroring grader) validate against it, and so does a
//! hand-made report with every optional part filled; a field the schema does not know is
//! refused at every level, so a field added to the Rust types but not to the schema fails here.

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;
use crate::support::guests;
use evalhost::evidence::Usage;
use evalhost::grader::BundleRef;
use evalhost::judge::JudgeUsage;
use evalhost::report::{
    CancelledRun, CaseReport, CaseSummary, GraderVerdict, NotEvaluable, NotEvaluableCause, Outcome,
    REPORT_SCHEMA_VERSION, RunReport, SuiteReport, SuiteSummary,
};

fn schema() -> serde_json::Value {
    let path = repo().join("schema/report.schema.json");
    let text = std::fs::read_to_string(&path).expect("schema/report.schema.json exists");
    serde_json::from_str(&text).expect("the report schema is JSON")
}

fn validator() -> jsonschema::Validator {
    let schema = schema();
    jsonschema::meta::validate(&schema).expect("the report schema is a valid JSON Schema");
    jsonschema::validator_for(&schema).expect("the report schema compiles")
}

/// The schema's complaints about `report`, one line each.
fn problems(report: &serde_json::Value) -> Vec<String> {
    validator()
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// `evalhost run --out TMP ARGS...`: the exit code and the report.json it wrote.
fn run_and_read_report(args: &[&str]) -> (i32, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let out_arg = out.path().to_str().unwrap();
    let mut all = vec!["run", "--out", out_arg];
    all.extend_from_slice(args);
    let output = Evalhost::new().args(all).run();
    let code = output.code();
    let (stdout, stderr) = (output.stdout(), output.stderr());
    let text = std::fs::read_to_string(out.path().join("report.json"))
        .unwrap_or_else(|e| panic!("no report.json ({e})\nstdout:\n{stdout}\nstderr:\n{stderr}"));
    (
        code,
        serde_json::from_str(&text).expect("report.json is JSON"),
    )
}

fn assert_valid(what: &str, report: &serde_json::Value) {
    let problems = problems(report);
    assert!(
        problems.is_empty(),
        "{what}: report.json does not match schema/report.schema.json:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_schema_version_is_the_reports() {
    assert_eq!(
        schema()["properties"]["schema_version"]["const"],
        serde_json::json!(REPORT_SCHEMA_VERSION),
        "bump the schema's schema_version const together with REPORT_SCHEMA_VERSION"
    );
}

#[test]
fn reports_of_the_shipped_suites_match_the_schema() {
    for (args, expected_code) in [
        (&["--runs", "2", "--k", "1", "cases/mino"][..], 0),
        (&["cases/mino-failing"][..], 1),
        (&["cases/nexus"][..], 0),
        (&["cases/nexus-failing"][..], 1),
    ] {
        let (code, report) = run_and_read_report(args);
        assert_eq!(code, expected_code, "{args:?}");
        assert!(
            !report["cases"].as_array().unwrap().is_empty(),
            "{args:?}: {report}"
        );
        assert_valid(&format!("{args:?}"), &report);
    }
}

#[test]
fn an_errored_run_and_an_erroring_grader_match_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::copy(guests::hostile(), dir.path().join("hostile.wasm")).unwrap();
    // The script expects a request text that is never sent: the run ends with an error.
    std::fs::write(
        cases.join("errored.yaml"),
        "name: errored\nprompt: Say hi.\nmodel:\n  - text: hi\n    expect_input_contains: never sent\ngraders:\n  - final_text_contains: hi\n",
    )
    .unwrap();
    // The grader traps: an error verdict.
    std::fs::write(
        cases.join("grader-traps.yaml"),
        "name: grader-traps\nprompt: Say hi.\nmodel:\n  - text: hi\ngraders:\n  - ../hostile.wasm#unreachable: {}\n",
    )
    .unwrap();
    let (code, report) = run_and_read_report(&[cases.to_str().unwrap()]);
    assert_eq!(code, 1, "{report}");
    let runs = |case: usize| &report["cases"][case]["runs"][0];
    assert!(runs(0)["error"].is_string(), "{report}");
    assert_eq!(runs(1)["verdicts"][0]["outcome"], "error", "{report}");
    assert_valid("errored run and grader", &report);
}

/// A report with every optional part present: `k`, an interruption with cancelled runs, a
/// run error, a verdict with captured output and a bundle. Built from the Rust types, so a
/// field added to them shows up here (and is refused unless the schema has it).
fn everything_report() -> SuiteReport {
    use evalhost::internals::confine::{Allowed, Widening};
    let verdict = GraderVerdict {
        entry: Some(0),
        grader: "signed#word_count".into(),
        config: serde_json::json!({"min": 3, "nested": [1, "two", null]}).into(),
        component_digest: "ab".repeat(32).into(),
        bundle: Some(
            BundleRef {
                name: "team-graders".into(),
                version: "1.2.0".into(),
            }
            .into(),
        ),
        outcome: Outcome::Fail,
        score: 0.25,
        message: "final text has 1 word, wanted at least 3".into(),
        fuel_used: 12_345,
        duration_us: 42,
        stdout: "debug: counting\n".into(),
        stderr: "warning: short\n".into(),
        judge: JudgeUsage {
            calls: 1,
            input_tokens: 812,
            output_tokens: 64,
        },
        not_evaluable: None,
    };
    let runs = vec![
        RunReport {
            run: 1,
            pass: false,
            error: None,
            usage: Usage {
                requests: 2,
                input_tokens: 100,
                output_tokens: 20,
                synthetic: false,
                cached_input_tokens: 40,
            },
            cost_usd: Some(0.00031),
            recorded_cost_usd: Some(0.0004),
            tool_calls: 1,
            duration_ms: 12,
            verdicts: vec![
                verdict.clone(),
                GraderVerdict {
                    entry: None,
                    outcome: Outcome::NotEvaluable,
                    bundle: None,
                    stdout: String::new(),
                    stderr: String::new(),
                    not_evaluable: Some(NotEvaluable::new(
                        NotEvaluableCause::NotRecorded {
                            record_with: "evalhost run --judge record cases/words/count-words.yaml"
                                .into(),
                        },
                        false,
                    )),
                    ..verdict.clone()
                },
                GraderVerdict {
                    outcome: Outcome::NotEvaluable,
                    not_evaluable: Some(NotEvaluable::new(NotEvaluableCause::ByNature, true)),
                    ..verdict
                },
            ],
            warnings: vec!["model endpoint: HEAD /api/x answered 404: not served".into()],
            image: Some(evalhost::report::RunImage {
                source: "127.0.0.1:5000/tools:1".into(),
                digest: format!("sha256:{}", "ab".repeat(32)),
                setup_digest: Some(format!("sha256:{}", "ef".repeat(32))),
                repo_digest: Some(format!("127.0.0.1:5000/tools@sha256:{}", "cd".repeat(32))),
            }),
            source: Some("cases/traces/inspect/hello.eval: sample 1 epoch 1".into()),
        },
        RunReport {
            run: 2,
            pass: false,
            error: Some("model script ran out".into()),
            usage: Usage::default(),
            cost_usd: None,
            recorded_cost_usd: None,
            tool_calls: 0,
            duration_ms: 3,
            verdicts: Vec::new(),
            warnings: Vec::new(),
            image: None,
            source: None,
        },
    ];
    let cases = vec![CaseReport {
        digest: Some("0".repeat(64)),
        tags: vec!["smoke".into()],
        name: "count-words".into(),
        path: "cases/words/count-words.yaml".into(),
        confine: Widening {
            read: vec!["/opt/data".into()],
            write: vec!["/var/cache/words".into()],
            connect: vec![5432],
            any_port: true,
        },
        summary: CaseSummary::with_k(&runs, Some(1)),
        runs,
    }];
    SuiteReport {
        provenance: evalhost::report::Provenance {
            run_id: Some("0123456789abcdef".into()),
            started_unix_ms: Some(1_796_300_000_000),
            finished_unix_ms: Some(1_796_300_004_000),
            git: Some(evalhost::report::GitState {
                commit: "2453066".repeat(5),
                branch: Some("main".into()),
                dirty: true,
            }),
            provider: Some("openai-responses".into()),
        },
        prices: Some(evalhost::report::PriceSource {
            as_of: "2026-12-01".into(),
            files: vec!["/p/evalhost.toml".into()],
        }),
        budget: Some(evalhost::report::BudgetReport {
            max_cost_usd: 0.5,
            spent_usd: 0.52,
            exhausted: true,
        }),
        schema_version: REPORT_SCHEMA_VERSION,
        evalhost_version: "0.1.0".into(),
        mode: "live".into(),
        model: "gpt-test".into(),
        runs_per_case: 3,
        k: Some(1),
        interrupted: true,
        cancelled: vec![CancelledRun {
            case: "count-words".into(),
            run: 3,
            started: true,
        }],
        agents: vec![evalhost::report::AgentVersion {
            name: "codex".into(),
            version: "0.171.0".into(),
        }],
        confinement: Some(Allowed {
            enforced: true,
            landlock_abi: 3,
            namespaces: Some("bubblewrap 0.8.0".into()),
            write: vec![
                "workspace".into(),
                "home".into(),
                "tmp".into(),
                "/srv".into(),
            ],
            read: vec!["system".into(), "/home/ada/.pyenv".into()],
            connect: vec!["endpoint".into(), "8080".into()],
            widened: Widening {
                write: vec!["/srv".into()],
                connect: vec![8080],
                ..Widening::default()
            },
            missing: vec!["TCP connect rules (Landlock ABI 4)".into()],
        }),
        summary: SuiteSummary::of(&cases),
        cases: cases.into(),
    }
}

fn everything_json() -> serde_json::Value {
    serde_json::from_str(&everything_report().to_json().expect("json")).unwrap()
}

#[test]
fn a_report_with_every_optional_part_matches_the_schema() {
    let report = everything_json();
    assert!(report["cases"][0]["runs"][0]["verdicts"][0]["stdout"].is_string());
    assert_valid("hand-made report", &report);
}

#[test]
fn a_field_the_schema_does_not_know_is_refused_at_every_level() {
    let pointers = [
        "",
        "/summary",
        "/summary/pass_rate_ci95",
        "/cancelled/0",
        "/cases/0",
        "/cases/0/summary",
        "/cases/0/summary/pass_rate_ci95",
        "/cases/0/runs/0",
        "/cases/0/runs/0/usage",
        "/cases/0/runs/0/verdicts/0",
        "/cases/0/runs/0/verdicts/0/bundle",
    ];
    for pointer in pointers {
        let mut report = everything_json();
        let object = report
            .pointer_mut(pointer)
            .and_then(|v| v.as_object_mut())
            .unwrap_or_else(|| panic!("{pointer:?} is an object"));
        object.insert("added_later".into(), serde_json::json!(1));
        let problems = problems(&report);
        assert!(
            problems.iter().any(|p| p.contains("added_later")),
            "an unknown field at {pointer:?} was accepted: {problems:?}"
        );
    }
    // The grader's own config is the one open object.
    let mut report = everything_json();
    report["cases"][0]["runs"][0]["verdicts"][0]["config"]["anything"] = serde_json::json!(true);
    assert_valid("config with any field", &report);
}

#[test]
fn a_missing_required_field_is_refused() {
    let mut report = everything_json();
    let verdict = report
        .pointer_mut("/cases/0/runs/0/verdicts/0")
        .and_then(|v| v.as_object_mut())
        .unwrap();
    verdict.remove("fuel_used");
    assert!(
        problems(&report).iter().any(|p| p.contains("fuel_used")),
        "a verdict without fuel_used was accepted"
    );
}

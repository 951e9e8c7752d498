//! The judge: graders asking a model through `evalhost:grader/judge` (WIT 0.3.0), answered
//! by fake providers on loopback in each dialect, recorded to `judgments.jsonl` and
//! replayed with the provider gone; grants, caps, a hostile loop, and the key never shown.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::bundle;
use crate::support::evalhost::Output;
use crate::support::guests;
use crate::support::live::{
    FakeProvider, Project, SECRET, Step, anthropic_call, chat_call, chat_text, responses_output,
};

/// A port nothing listens on: the "stopped" provider of replays.
const DEAD_URL: &str = "http://127.0.0.1:9/v1";

const REASON: &str = "It names apples, pears and plums.";

/// The fake's answer to a question with a schema: a call of `answer`, in `kind`'s dialect.
fn verdict_answer(kind: &str, score: f64) -> Step {
    let args = json!({"score": score, "reason": REASON});
    Step::Sse(match kind {
        "openai-chat" => chat_call("call_1", "answer", &args, 30, 12),
        "anthropic" => anthropic_call("toolu_01", "answer", &args, 30, 12),
        _ => responses_output(
            json!([{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "answer",
                    "arguments": args.to_string(), "status": "completed"}]),
            30,
            12,
        ),
    })
}

/// `[judge]` for a fake speaking `kind` (fast retries), as an evalhost.toml body.
fn judge_toml(kind: &str, base_url: &str) -> String {
    let base = if kind == "anthropic" {
        base_url.trim_end_matches("/v1")
    } else {
        base_url
    };
    format!(
        "[judge]\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"judge-model\"\n\
         api_key_env = \"EVALHOST_TEST_KEY\"\ntimeout_secs = 5\nretry_base_ms = 10\nretry_max_ms = 100\n"
    )
}

fn rubric_case(project: &Project, name: &str, rubric: &str) -> String {
    project.case(
        name,
        &format!(
            "prompt: Name three fruits.\nmodel:\n  - text: Apples, pears and plums.\ngraders:\n  - rubric:\n      rubric: {rubric}\n      threshold: 0.7\n"
        ),
    );
    format!("cases/{name}.yaml")
}

/// `evalhost ARGS --out DIR`: what it printed and report.json.
fn run(project: &Project, args: &[&str]) -> (Output, Value) {
    let out = tempfile::tempdir().unwrap();
    let mut all: Vec<&str> = args.to_vec();
    let out_arg = out.path().to_str().unwrap().to_owned();
    all.extend(["--out", &out_arg]);
    let output = project.evalhost(&all);
    let report = std::fs::read_to_string(out.path().join("report.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    for text in [output.stdout(), output.stderr(), &report.to_string()] {
        assert!(!text.contains(SECRET), "the key leaked: {text}");
    }
    (output, report)
}

fn judgments(project: &Project) -> Vec<Value> {
    std::fs::read_to_string(project.path().join("cases/judgments.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn set_judge(project: &Project, kind: &str, base_url: &str) {
    std::fs::write(
        project.path().join("evalhost.toml"),
        judge_toml(kind, base_url),
    )
    .unwrap();
}

#[test]
fn record_then_replay_with_the_provider_stopped_in_each_dialect() {
    for kind in ["openai-chat", "openai-responses", "anthropic"] {
        let fake = FakeProvider::start(vec![], verdict_answer(kind, 0.9));
        let project = Project::new(&judge_toml(kind, &fake.base_url));
        let case = rubric_case(&project, "fruit", "The answer names three fruits.");

        let (output, report) = run(&project, &["run", "--judge", "record", &case]);
        output.assert_code(0);
        let stdout = output.stdout();
        let verdict = &report["cases"][0]["runs"][0]["verdicts"][0];
        assert_eq!(verdict["outcome"], "pass", "{kind}: {report}");
        assert_eq!(
            verdict["message"],
            format!(
                "rubric \"The answer names three fruits.\": score 0.90 (threshold 0.70): {REASON}"
            ),
            "{kind}"
        );
        assert_eq!(
            verdict["judge"],
            json!({"calls": 1, "input_tokens": 30, "output_tokens": 12}),
            "{kind}"
        );
        assert_eq!(
            report["cases"][0]["summary"]["judge"],
            json!({"calls": 1, "input_tokens": 30, "output_tokens": 12})
        );
        assert!(
            stdout.contains("Judge: fruit: 1 question, 30 input + 12 output tokens"),
            "{kind}: {stdout}"
        );

        // What the provider got: the configured model, the key, the schema as a function.
        let received = fake.received();
        assert_eq!(received.len(), 1, "{kind}");
        let body = &received[0].body;
        assert_eq!(body["model"], "judge-model", "{kind}");
        assert!(body.to_string().contains("\"answer\""), "{kind}: {body}");
        assert!(
            body.to_string().contains("Apples, pears and plums."),
            "{kind}: {body}"
        );
        let auth = received[0]
            .headers
            .get(if kind == "anthropic" {
                "x-api-key"
            } else {
                "authorization"
            })
            .unwrap();
        assert!(auth.to_str().unwrap().contains(SECRET), "{kind}");

        let recorded = judgments(&project);
        assert_eq!(recorded.len(), 1, "{kind}");
        assert_eq!(recorded[0]["model"], "judge-model");
        assert_eq!(recorded[0]["answer"]["input_tokens"], 30);
        let file = std::fs::read_to_string(project.path().join("cases/judgments.jsonl")).unwrap();
        assert!(!file.contains(SECRET));

        // Replay (the default) with the provider gone: the same verdict, no request made.
        set_judge(&project, kind, DEAD_URL);
        let (output, replayed) = run(&project, &["run", &case]);
        output.assert_code(0);
        assert_eq!(
            replayed["cases"][0]["runs"][0]["verdicts"][0]["message"],
            verdict["message"]
        );
        assert_eq!(
            fake.received().len(),
            1,
            "{kind}: replay asked the provider"
        );
    }
}

/// Keys whose values are wall-clock measurements.
/// Timings, and each run's own history id and times.
const TIMING_KEYS: [&str; 6] = [
    "duration_ms",
    "duration_us",
    "at_ms",
    "run_id",
    "started_unix_ms",
    "finished_unix_ms",
];

fn without_timings(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !TIMING_KEYS.contains(&key.as_str()));
            map.values_mut().for_each(without_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(without_timings),
        _ => {}
    }
}

#[test]
fn a_recorded_suite_replays_identically_twenty_times_at_one_and_four_jobs() {
    let fake = FakeProvider::start(vec![], verdict_answer("openai-chat", 0.9));
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    rubric_case(&project, "fruit", "The answer names three fruits.");
    rubric_case(&project, "polite", "The answer is polite.");
    let (output, _) = run(
        &project,
        &["run", "--judge", "record", "--runs", "2", "cases"],
    );
    output.assert_code(0);
    assert_eq!(judgments(&project).len(), 2, "one judgment per question");
    set_judge(&project, "openai-chat", DEAD_URL);
    let mut first: Option<(String, Value)> = None;
    for i in 0..20 {
        let jobs = if i % 2 == 0 { "1" } else { "4" };
        let (output, mut report) = run(&project, &["run", "--runs", "2", "--jobs", jobs, "cases"]);
        output.assert_code(0);
        without_timings(&mut report);
        match &first {
            None => first = Some((output.stdout().to_owned(), report)),
            Some((text, json)) => {
                assert_eq!(
                    output.stdout(),
                    text,
                    "replay {i} (--jobs {jobs}): text report"
                );
                assert_eq!(&report, json, "replay {i} (--jobs {jobs}): report.json");
            }
        }
    }
    assert_eq!(fake.received().len(), 2);
}

/// A CI that forgot to record: the rubric is not evaluable because its judgment was never
/// recorded, which fails the case (a by-nature not-evaluable verdict stays a warning:
/// `report::not_evaluable`), in every report and the exit status, naming the command that
/// records it. Recording it is the whole fix: the control replays green.
#[test]
fn a_missing_judgment_fails_its_case_and_names_the_command_that_records_it() {
    const COMMAND: &str = "evalhost run --judge record cases/fruit.yaml";
    let project = Project::new(&judge_toml("openai-chat", DEAD_URL));
    let case = rubric_case(&project, "fruit", "The answer names three fruits.");
    let junit = project.path().join("junit.xml");
    let (output, report) = run(&project, &["run", "--junit", "junit.xml", &case]);
    output.assert_code(1);
    let stdout = output.stdout();
    let verdict = &report["cases"][0]["runs"][0]["verdicts"][0];
    assert_eq!(verdict["outcome"], "not_evaluable", "{report}");
    assert_eq!(
        verdict["not_evaluable"],
        json!({"cause": "not_recorded", "record_with": COMMAND, "fails_run": true})
    );
    assert_eq!(report["cases"][0]["runs"][0]["pass"], false);
    let key = judgments_key("judge-model", &report);
    let line = format!(
        "fruit run 1: not recorded: graders[0] rubric {{\"rubric\":\"The answer names three fruits.\",\"threshold\":0.7}}: no recorded judgment for this question (key {key}) in cases/judgments.jsonl; record it with `{COMMAND}`"
    );
    assert!(
        stdout.contains(&format!("  {line}\n")),
        "{stdout}\n---\n{line}"
    );
    assert!(
        stdout.ends_with(&format!(
            "Never recorded: 1 assertion cannot be graded until it is recorded; record it with:\n  {COMMAND}\n1 of 1 cases failed.\n"
        )),
        "{stdout}"
    );
    assert_eq!(
        output.stderr(),
        format!(
            "Error: Eval failed: 1 of 1 cases did not pass every run; what a grader needs was never recorded: record it with `{COMMAND}`\n"
        )
    );
    let junit = std::fs::read_to_string(junit).unwrap();
    assert!(
        junit.contains(
            r#"<failure message="1 of 1 runs failed" type="evalhost.grader-failed">run 1: not recorded: graders[0] rubric"#
        ),
        "{junit}"
    );
    assert!(!project.path().join("cases/judgments.jsonl").exists());

    // The control: once the command has recorded the judgment, the same replay passes.
    let fake = FakeProvider::start(vec![], verdict_answer("openai-chat", 0.9));
    set_judge(&project, "openai-chat", &fake.base_url);
    let (recorded, _) = run(&project, &["run", "--judge", "record", &case]);
    recorded.assert_code(0);
    set_judge(&project, "openai-chat", DEAD_URL);
    let (replayed, report) = run(&project, &["run", "--strict", &case]);
    replayed.assert_code(0);
    assert!(
        report["cases"][0]["runs"][0]["verdicts"][0]["not_evaluable"].is_null(),
        "{report}"
    );
}

/// The key the not-evaluable message names.
fn judgments_key(_model: &str, report: &Value) -> String {
    let message = report["cases"][0]["runs"][0]["verdicts"][0]["message"]
        .as_str()
        .unwrap();
    let start = message.find("(key ").unwrap() + 5;
    let key = &message[start..start + 64];
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()), "{message}");
    key.to_owned()
}

#[test]
fn a_changed_rubric_needs_a_new_recording() {
    let fake = FakeProvider::start(vec![], verdict_answer("openai-chat", 0.9));
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    let case = rubric_case(&project, "fruit", "The answer names three fruits.");
    run(&project, &["run", "--judge", "record", &case])
        .0
        .assert_code(0);
    rubric_case(&project, "fruit", "The answer names four fruits.");
    let (output, report) = run(&project, &["run", &case]);
    let stdout = output.stdout();
    assert_eq!(
        report["cases"][0]["runs"][0]["verdicts"][0]["outcome"], "not_evaluable",
        "{stdout}"
    );
    run(&project, &["run", "--judge", "record", &case])
        .0
        .assert_code(0);
    assert_eq!(judgments(&project).len(), 2, "the old judgment stays");
    assert_eq!(fake.received().len(), 2);
    let (output, report) = run(&project, &["run", &case]);
    output.assert_code(0);
    assert_eq!(
        report["cases"][0]["runs"][0]["verdicts"][0]["outcome"],
        "pass"
    );
}

#[test]
fn a_low_score_fails_with_the_judges_reason() {
    let fake = FakeProvider::start(vec![], verdict_answer("openai-chat", 0.4));
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    let case = rubric_case(&project, "fruit", "The answer names three fruits.");
    let (output, _) = run(&project, &["run", "--judge", "live", &case]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!(
            "  fruit run 1: graders[0] rubric \"The answer names three fruits.\": score 0.40 (threshold 0.70): {REASON}"
        )),
        "{stdout}"
    );
    assert!(
        !project.path().join("cases/judgments.jsonl").exists(),
        "live records nothing"
    );
}

/// A project with the hostile component beside `cases/`.
fn hostile_project(toml: &str) -> Project {
    let project = Project::new(toml);
    std::fs::copy(guests::hostile(), project.path().join("hostile.wasm")).unwrap();
    project
}

fn hostile_case(project: &Project, name: &str, probe: &str, judge: bool) -> String {
    let grant = if judge { "\n    judge: true" } else { "" };
    project.case(
        name,
        &format!(
            "prompt: Go.\nmodel:\n  - text: a pear\ngraders:\n  - ../hostile.wasm#{probe}: {{}}{grant}\n"
        ),
    );
    format!("cases/{name}.yaml")
}

#[test]
fn a_component_by_path_asks_only_when_its_entry_grants_the_judge() {
    let fake = FakeProvider::start(vec![], Step::Sse(chat_text("I see a pear.", 5, 4)));
    let project = hostile_project(&judge_toml("openai-chat", &fake.base_url));
    let ungranted = hostile_case(&project, "ungranted", "judge-once", false);
    let (output, report) = run(&project, &["run", "--judge", "record", &ungranted]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("  ungranted run 1: error: graders[0] ../hostile.wasm#judge-once {}: judge not granted: this grader may not ask the judge: give its case entry `judge: true`"),
        "{stdout}"
    );
    assert_eq!(fake.received().len(), 0);
    assert!(report["cases"][0]["runs"][0]["verdicts"][0]["judge"].is_null());

    let granted = hostile_case(&project, "granted", "judge-once", true);
    let (output, report) = run(&project, &["run", "--judge", "record", &granted]);
    output.assert_code(0);
    assert_eq!(
        report["cases"][0]["runs"][0]["verdicts"][0]["message"],
        "judge said \"I see a pear.\""
    );
    assert_eq!(fake.received().len(), 1);
}

#[test]
fn judge_true_on_a_builtin_is_a_load_error() {
    let project = Project::new("");
    project.case(
        "wrong",
        "prompt: Go.\nmodel:\n  - text: hi\ngraders:\n  - final_text_contains: hi\n    judge: true\n",
    );
    let output = project.evalhost(&["check", "cases/wrong.yaml"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("graders[0].final_text_contains: `judge: true` grants the judge to a component named by path; built-in graders may always ask it"),
        "{stderr}"
    );
    project.case(
        "typo",
        "prompt: Go.\nmodel:\n  - text: hi\ngraders:\n  - ../g.wasm#x: {}\n    judge: often\n",
    );
    let output = project.evalhost(&["check", "cases/typo.yaml"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("typo.yaml:7:12: graders[0].judge: expected true or false, found a string"),
        "{stderr}"
    );
}

#[test]
fn the_call_cap_bounds_a_grader_looping_on_the_judge() {
    let fake = FakeProvider::start(vec![], Step::Sse(chat_text("again", 5, 4)));
    let project = hostile_project(&judge_toml("openai-chat", &fake.base_url));
    let case = hostile_case(&project, "loop", "judge-loop", true);
    let started = Instant::now();
    let (output, report) = run(
        &project,
        &["run", "--judge", "record", "--judge-max-calls", "3", &case],
    );
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("  loop run 1: error: graders[0] ../hostile.wasm#judge-loop {}: judge call limit: the grader asked more than 3 questions in one grading call"),
        "{stdout}"
    );
    assert_eq!(
        fake.received().len(),
        3,
        "three questions reached the provider"
    );
    assert_eq!(judgments(&project).len(), 3);
    assert_eq!(
        report["cases"][0]["runs"][0]["verdicts"][0]["judge"]["calls"],
        3
    );
    assert!(started.elapsed() < Duration::from_secs(30));

    // Replaying the loop: the fourth question is refused as before, without any request.
    set_judge(&project, "openai-chat", DEAD_URL);
    let (output, _) = run(&project, &["run", "--judge-max-calls", "3", &case]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(stdout.contains("judge call limit"), "{stdout}");
    assert_eq!(fake.received().len(), 3);
}

#[test]
fn the_suite_token_cap_stops_further_questions() {
    let fake = FakeProvider::start(vec![], verdict_answer("openai-chat", 0.9));
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    project.case(
        "two",
        "prompt: Name three fruits.\nmodel:\n  - text: Apples, pears and plums.\ngraders:\n  - rubric: {rubric: Names fruits.}\n  - rubric: {rubric: Is polite.}\n",
    );
    let (output, _) = run(
        &project,
        &[
            "run",
            "--judge",
            "record",
            "--judge-max-tokens",
            "40",
            "cases/two.yaml",
        ],
    );
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("  two run 1: error: graders[1] rubric {\"rubric\":\"Is polite.\"}: judge token limit: the suite has spent 42 judge tokens (cap 40)"),
        "{stdout}"
    );
    assert_eq!(fake.received().len(), 1);
}

#[test]
fn without_a_judge_a_rubric_is_an_error_and_record_needs_one() {
    let project = Project::new("");
    let case = rubric_case(&project, "fruit", "The answer names three fruits.");
    let (output, _) = run(&project, &["run", &case]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("  fruit run 1: error: graders[0] rubric {\"rubric\":\"The answer names three fruits.\",\"threshold\":0.7}: grader failed: no judge configured: set [judge]"),
        "{stdout}"
    );
    let output = project.evalhost(&["run", "--judge", "record", &case]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("--judge record needs a judge: set [judge] (kind, base_url, model, api_key_env) in evalhost.toml"),
        "{stderr}"
    );
    let output = project.evalhost_with(
        &["run", "--judge", "live", &case],
        &[
            ("EVALHOST_JUDGE_PROVIDER", "openai-chat"),
            ("EVALHOST_JUDGE_BASE_URL", DEAD_URL),
        ],
    );
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("the judge needs judge field `model`: set `model` under [judge] in"),
        "{stderr}"
    );
    assert!(stderr.contains("or set EVALHOST_JUDGE_MODEL"), "{stderr}");
}

#[test]
fn a_failing_judge_provider_is_an_error_without_the_key() {
    let fake = FakeProvider::start(
        vec![],
        Step::Status(401, None, "bad key sk-test-7f3c-NEVER-WRITE-ME"),
    );
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    let case = rubric_case(&project, "fruit", "The answer names three fruits.");
    let (output, _) = run(&project, &["run", "--judge", "record", &case]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("error: graders[0] rubric {\"rubric\":\"The answer names three fruits.\",\"threshold\":0.7}: judge failed: the provider reported an error: HTTP 401: bad key <redacted>") && stdout.contains("<redacted>"),
        "{stdout}"
    );
}

#[test]
fn a_bundle_grader_asking_for_the_judge_is_refused_by_the_trust_policy() {
    let p = bundle::Project::new();
    let src = p.bundle_source("1.0.0");
    let toml = std::fs::read_to_string(src.join("bundle.toml")).unwrap();
    std::fs::write(
        src.join("bundle.toml"),
        toml.replace("capabilities = []", "capabilities = [\"judge\"]"),
    )
    .unwrap();
    let archive = p.path("acme-checks-1.0.0.tar.gz");
    p.ok(&[
        "bundle",
        "pack",
        src.to_str().unwrap(),
        "-o",
        archive.to_str().unwrap(),
    ]);
    p.ok(&["bundle", "install", archive.to_str().unwrap()]);
    let case = p.case("judged", "acme-checks/final_text_is");
    p.ok(&["run", &case]);
    p.trust("allow_judge = false");
    let err = p.refused(&["run", &case]);
    assert!(
        err.contains("`acme-checks/final_text_is` asks for the `judge` capability, but the trust policy refuses it ([trust] allow_judge = false in"),
        "{err}"
    );
    assert!(Path::new(&p.project()).exists());
}

/// The fake's `{pass, reason}` answer to an AgentCompany rubric dimension.
fn pass_answer(pass: bool, reason: &str) -> Step {
    Step::Sse(chat_call(
        "call_1",
        "answer",
        &json!({"pass": pass, "reason": reason}),
        50,
        8,
    ))
}

#[test]
fn agentcompany_rubric_dimensions_are_judged_only_when_a_judge_is_configured() {
    let fixture = "ceo-bootstrap-empty.jsonl";
    let copy = |project: &Project| {
        let from = crate::support::common::repo().join("cases/agentcompany");
        std::fs::copy(
            from.join(fixture),
            project.path().join("cases").join(fixture),
        )
        .unwrap();
        crate::support::common::copy_dir(
            &from.join("scenarios"),
            &project.path().join("cases/scenarios"),
        );
        format!("cases/{fixture}")
    };
    let rubric_verdict = |report: &Value| {
        report["cases"][0]["runs"][0]["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["grader"] == "semantic_rubric")
            .cloned()
            .unwrap()
    };

    // No judge: the deterministic check alone, as before.
    let plain = Project::new("");
    let case = copy(&plain);
    let (output, report) = run(&plain, &["run", &case]);
    output.assert_code(0);
    let verdict = rubric_verdict(&report);
    assert_eq!(verdict["outcome"], "pass");
    assert_eq!(verdict["message"], "");
    assert!(verdict["judge"].is_null());

    // A judge that finds the dimension failed fails it, with its reason.
    let fake = FakeProvider::start(vec![], pass_answer(false, "No research lead was hired."));
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    let case = copy(&project);
    let (output, report) = run(&project, &["run", "--judge", "record", &case]);
    output.assert_code(1);
    let verdict = rubric_verdict(&report);
    assert_eq!(verdict["outcome"], "fail");
    assert_eq!(
        verdict["message"],
        "semantic_rubric ceo-team-bootstrap: judge: fail: No research lead was hired."
    );
    let body = fake.received()[0].body.to_string();
    assert!(
        body.contains("Does the CEO bootstrap a balanced leadership team?")
            && body.contains("The answer writes a plan or omits core leadership coverage."),
        "{body}"
    );
    // Replayed with the judge gone: the same verdict.
    set_judge(&project, "openai-chat", DEAD_URL);
    let (output, replayed) = run(&project, &["run", &case]);
    output.assert_code(1);
    assert_eq!(rubric_verdict(&replayed)["message"], verdict["message"]);
    assert_eq!(fake.received().len(), 1);
}

#[test]
fn nexus_semantic_entries_with_a_rubric_are_judged() {
    let fake = FakeProvider::start(vec![], verdict_answer("openai-chat", 0.8));
    let project = Project::new(&judge_toml("openai-chat", &fake.base_url));
    let dir = project.path().join("cases/build-error-fix");
    crate::support::common::copy_dir(
        &crate::support::common::repo().join("cases/nexus/build-error-fix"),
        &dir,
    );
    let assertions = std::fs::read_to_string(dir.join("assertions.yaml")).unwrap();
    std::fs::write(
        dir.join("assertions.yaml"),
        assertions.replace(
            "semantic: []",
            "semantic:\n  - id: explains-fix\n    rubric: The agent explains the fix it made.\n    sees: [final_text, tool_calls]\n    threshold: 0.7\n  - id: reserved\n    judge_prompt: a shape evalhost does not judge\n",
        ),
    )
    .unwrap();
    let (output, report) = run(
        &project,
        &["run", "--judge", "record", "cases/build-error-fix"],
    );
    output.assert_code(0);
    let verdicts = report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap();
    let semantic: Vec<&Value> = verdicts
        .iter()
        .filter(|v| v["grader"] == "semantic")
        .collect();
    assert_eq!(semantic.len(), 2);
    assert_eq!(semantic[0]["outcome"], "pass");
    assert_eq!(
        semantic[0]["message"],
        format!(
            "semantic \"The agent explains the fix it made.\": score 0.80 (threshold 0.70): {REASON}"
        )
    );
    assert_eq!(semantic[1]["outcome"], "not_evaluable");
    assert!(
        dir.join("judgments.jsonl").is_file(),
        "judgments live in the case directory"
    );
    let body = fake.received()[0].body.to_string();
    assert!(body.contains("## Tool calls"), "{body}");

    // Without a judge configured, the judged shape is not evaluable, never an error.
    set_judge(&project, "openai-chat", DEAD_URL);
    std::fs::write(project.path().join("evalhost.toml"), "").unwrap();
    let (output, report) = run(&project, &["run", "cases/build-error-fix"]);
    output.assert_code(0);
    let verdict = report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["grader"] == "semantic")
        .cloned()
        .unwrap();
    assert_eq!(verdict["outcome"], "not_evaluable");
    assert_eq!(
        verdict["message"],
        "semantic: no judge configured to judge this rubric (set [judge]; docs/judge.md)"
    );
}

/// A live judge on `fake` (Chat Completions, no key) for library-level calls.
fn live_judge(
    fake: &FakeProvider,
    runtime: &tokio::runtime::Runtime,
) -> std::sync::Arc<evalhost::judge::Judge> {
    use evalhost::config::ConfigSources;
    use evalhost::judge::{Judge, JudgeLimits, JudgeMode};
    let mut sources = ConfigSources::default();
    for (k, v) in [
        ("EVALHOST_JUDGE_PROVIDER", "openai-chat"),
        ("EVALHOST_JUDGE_BASE_URL", fake.base_url.as_str()),
        ("EVALHOST_JUDGE_MODEL", "judge-model"),
    ] {
        sources.env.insert(k.into(), v.into());
    }
    let config = sources.judge().unwrap().expect("configured");
    let provider = evalhost::internals::api::Provider::new(config, None).unwrap();
    std::sync::Arc::new(Judge::new(
        JudgeMode::Live,
        JudgeLimits::default(),
        provider,
        runtime.handle().clone(),
    ))
}

#[test]
fn waiting_for_the_judge_does_not_count_against_the_deadline() {
    use evalhost::evidence::{Evidence, RunFacts};
    use evalhost::grader::{GraderError, GraderHost, JudgeGrant, Limits, PreparedEvidence};
    use evalhost::judge::JudgmentsFile;
    // The first answer is a 503 asking to retry after 1 s: the call waits over three times
    // the grader's 300 ms deadline.
    let fake = FakeProvider::start(
        vec![Step::Status(503, Some("1"), "busy")],
        Step::Sse(chat_text("I see a pear.", 5, 4)),
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let judge = live_judge(&fake, &runtime);
    // Fuel enough that only the deadline can end the loop below (1e9 instructions of a tight
    // loop take about as long as 300 ms: the two would race).
    let host = GraderHost::new(
        Limits {
            deadline: Duration::from_millis(300),
            fuel: 1_000_000_000_000,
            ..Limits::default()
        },
        None,
    )
    .unwrap();
    let component = host
        .load_component_file(Path::new(guests::hostile()))
        .unwrap();
    let mut evidence = Evidence::from_session(&[], RunFacts::default());
    evidence.final_text = "a pear".into();
    let evidence = PreparedEvidence::new(&evidence);
    let dir = tempfile::tempdir().unwrap();
    let grant = JudgeGrant {
        judge,
        file: JudgmentsFile::of_case(&dir.path().join("case.yaml")),
    };
    let started = Instant::now();
    let (verdict, stats) =
        component.grade_with_judge("judge-once", "{}", &evidence, None, Some(grant.clone()));
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(verdict.unwrap().message, "judge said \"I see a pear.\"");
    assert_eq!(stats.judge.calls, 1);
    assert_eq!(fake.received().len(), 2, "one retry");
    // The grader's own time still counts: the same grant does not save a loop.
    let (looped, _) =
        component.grade_with_judge("infinite-loop", "{}", &evidence, None, Some(grant));
    assert_eq!(
        looped.unwrap_err(),
        GraderError::DeadlineExceeded {
            deadline: Duration::from_millis(300)
        }
    );
}

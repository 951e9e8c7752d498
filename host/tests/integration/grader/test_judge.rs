//! `evalhost grader test` answering the judge without a model: from a `judgments.jsonl` that
//! `evalhost run --judge record` wrote (a fake provider on loopback answered the recording),
//! from `--judge-answer` texts, or not at all (an error naming both). The graders are real
//! components: the built-in `rubric` and the probes of `tests/guests/hostile` that ask.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::evalhost::Output;
use crate::support::guests;
use crate::support::live::{FakeProvider, Project, Step, chat_call};

const BUILTIN: &str = env!("EVALHOST_BUILTIN_GRADERS_WASM");

const RUBRIC: &str = "The answer names three fruits.";
const REASON: &str = "It names apples, pears and plums.";

/// `[judge]` of `model` at `base_url` (an openai-chat fake), as an evalhost.toml body.
fn judge_toml(model: &str, base_url: &str) -> String {
    format!(
        "[judge]\nkind = \"openai-chat\"\nbase_url = \"{base_url}\"\nmodel = \"{model}\"\n\
         api_key_env = \"EVALHOST_TEST_KEY\"\ntimeout_secs = 5\nretry_base_ms = 10\nretry_max_ms = 100\n"
    )
}

/// A project whose case `fruit` is answered "Apples, pears and plums." and graded by
/// `graders`, run once with `--out`: the project and the run's saved evidence.
fn fruit_run(toml: &str, graders: &str, run_args: &[&str]) -> (Project, PathBuf) {
    let project = Project::new(toml);
    project.case(
        "fruit",
        &format!(
            "prompt: Name three fruits.\nmodel:\n  - text: Apples, pears and plums.\ngraders:\n{graders}"
        ),
    );
    let mut args = vec!["run", "cases/fruit.yaml", "--out", "out"];
    args.extend(run_args);
    project.evalhost(&args).assert_code(0);
    let evidence = project.path().join("out/fruit/run-1.evidence.json");
    assert!(evidence.is_file(), "no evidence at {}", evidence.display());
    (project, evidence)
}

/// The rubric's config as the case above writes it.
fn rubric_config(dir: &Path, rubric: &str) -> PathBuf {
    let path = dir.join(format!("config-{}.json", rubric.len()));
    std::fs::write(
        &path,
        json!({"rubric": rubric, "threshold": 0.7}).to_string(),
    )
    .unwrap();
    path
}

/// `evalhost grader test COMPONENT --evidence E ARGS` in `project`'s directory.
fn grader_test(project: &Project, component: &str, evidence: &Path, args: &[&str]) -> Output {
    let mut all = vec!["grader", "test", component, "--evidence"];
    all.push(evidence.to_str().unwrap());
    all.extend(args);
    project.evalhost(&all)
}

fn rubric_test(project: &Project, evidence: &Path, config: &Path, args: &[&str]) -> Output {
    let mut all = vec!["--grader", "rubric", "--config", config.to_str().unwrap()];
    all.extend(args);
    grader_test(project, BUILTIN, evidence, &all)
}

/// The judge's `answer` call with `score`, as the fake sends it.
fn scored(score: f64) -> Step {
    Step::Sse(chat_call(
        "call_1",
        "answer",
        &json!({"score": score, "reason": REASON}),
        30,
        12,
    ))
}

#[test]
fn recorded_judgments_answer_the_rubric_as_run_replays_them() {
    let fake = FakeProvider::start(vec![], scored(0.9));
    let graders = format!("  - rubric:\n      rubric: {RUBRIC}\n      threshold: 0.7\n");
    let (project, evidence) = fruit_run(
        &judge_toml("judge-model", &fake.base_url),
        &graders,
        &["--judge", "record"],
    );
    assert_eq!(fake.received().len(), 1, "recording asked the model once");
    let config = rubric_config(project.path(), RUBRIC);

    // With [judge] (its model keys the judgments), then without it (the file's model).
    let output = rubric_test(
        &project,
        &evidence,
        &config,
        &["--judgments", "cases/judgments.jsonl"],
    );
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("verdict:   pass (score 0.90)"), "{output}");
    assert!(
        stdout.contains(&format!(
            "message:   rubric \"{RUBRIC}\": score 0.90 (threshold 0.70): {REASON}"
        )),
        "{output}"
    );
    assert!(
        stdout.contains(
            "judge:     1 question answered from cases/judgments.jsonl (model judge-model)"
        ),
        "{output}"
    );
    std::fs::remove_file(project.path().join("evalhost.toml")).unwrap();
    let output = rubric_test(
        &project,
        &evidence,
        &config,
        &["--judgments", "cases/judgments.jsonl"],
    );
    output.assert_code(0);
    assert!(output.stdout().contains("(model judge-model)"), "{output}");
    assert_eq!(fake.received().len(), 1, "grader test asked no model");

    // A question the file lacks (another rubric): not recorded, naming the file and how to
    // record it.
    let changed = rubric_config(project.path(), "The answer names four fruits.");
    let output = rubric_test(
        &project,
        &evidence,
        &changed,
        &["--judgments", "cases/judgments.jsonl"],
    );
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains(
            "verdict:   error: not evaluable: no recorded judgment for this question (key "
        ),
        "{output}"
    );
    assert!(
        stdout.contains(
            ") in cases/judgments.jsonl; record it with `evalhost run --judge record CASE`"
        ),
        "{output}"
    );
    assert!(
        stdout.contains("hint:      CASE is a case file whose grader entry is this grader and config; `evalhost run --judge record CASE` writes the judgment to judgments.jsonl beside it. Or answer the question with --judge-answer TEXT."),
        "{output}"
    );

    // Recorded again with another model, the file holds two: [judge] picks the one to
    // replay; without [judge] grader test cannot tell which, and says so.
    let second = FakeProvider::start(vec![], scored(0.3));
    std::fs::write(
        project.path().join("evalhost.toml"),
        judge_toml("judge-model-2", &second.base_url),
    )
    .unwrap();
    project
        .evalhost(&["run", "cases/fruit.yaml", "--judge", "record"])
        .assert_code(1);
    let output = rubric_test(
        &project,
        &evidence,
        &config,
        &["--judgments", "cases/judgments.jsonl"],
    );
    output.assert_code(1);
    assert!(
        output.stdout().contains("verdict:   fail (score 0.30)"),
        "{output}"
    );
    assert!(
        output.stdout().contains("(model judge-model-2)"),
        "{output}"
    );
    std::fs::remove_file(project.path().join("evalhost.toml")).unwrap();
    let output = rubric_test(
        &project,
        &evidence,
        &config,
        &["--judgments", "cases/judgments.jsonl"],
    );
    output.assert_code(2);
    assert!(
        output.stderr().contains("cases/judgments.jsonl: judgments of several models (judge-model, judge-model-2); set [judge]"),
        "{output}"
    );
}

/// A project without a judge whose case passed: its evidence.
fn plain_run() -> (Project, PathBuf) {
    fruit_run("", "  - final_text_contains: Apples\n", &[])
}

#[test]
fn answers_on_the_command_line_go_to_the_questions_in_order() {
    let (project, evidence) = plain_run();
    let config = rubric_config(project.path(), RUBRIC);

    let output = rubric_test(
        &project,
        &evidence,
        &config,
        &[
            "--judge-answer",
            r#"{"score": 0.8, "reason": "Three fruits."}"#,
        ],
    );
    output.assert_code(0);
    assert!(
        output.stdout().contains(&format!(
            "message:   rubric \"{RUBRIC}\": score 0.80 (threshold 0.70): Three fruits."
        )),
        "{output}"
    );
    assert!(
        output
            .stdout()
            .contains("judge:     1 question answered from --judge-answer (1 given)"),
        "{output}"
    );

    // `@FILE`: the file's text; a low score fails.
    let answer = project.path().join("answer.json");
    std::fs::write(&answer, "{\"score\": 0.2, \"reason\": \"Only two.\"}\n").unwrap();
    let at_file = format!("@{}", answer.display());
    let output = rubric_test(&project, &evidence, &config, &["--judge-answer", &at_file]);
    output.assert_code(1);
    assert!(
        output.stdout().contains("verdict:   fail (score 0.20)"),
        "{output}"
    );
    assert!(output.stdout().contains("Only two."), "{output}");

    // The rubric asks for JSON of a schema: a text that is not JSON is refused, as a model's.
    let output = rubric_test(&project, &evidence, &config, &["--judge-answer", "yes"]);
    output.assert_code(1);
    assert!(
        output.stdout().contains("verdict:   error: judge failed: given answer 1 is not JSON, and the question asks for JSON of its schema: yes"),
        "{output}"
    );

    // Two questions: each answer in turn; one answer answers both.
    let hostile = guests::hostile();
    let twice = |answers: &[&str]| {
        let mut args = vec!["--grader", "judge-twice"];
        for answer in answers {
            args.extend(["--judge-answer", answer]);
        }
        grader_test(&project, hostile, &evidence, &args)
    };
    let output = twice(&["apples", "pears"]);
    output.assert_code(0);
    assert!(
        output
            .stdout()
            .contains("message:   judge said \"apples\", then \"pears\""),
        "{output}"
    );
    assert!(
        output
            .stdout()
            .contains("judge:     2 questions answered from --judge-answer (2 given)"),
        "{output}"
    );
    let output = twice(&["plums"]);
    output.assert_code(0);
    assert!(
        output
            .stdout()
            .contains("message:   judge said \"plums\", then \"plums\""),
        "{output}"
    );

    // --repeat grades again with the same answers (each call its own grant); the call cap
    // holds with given answers.
    let output = grader_test(
        &project,
        hostile,
        &evidence,
        &[
            "--grader",
            "judge-twice",
            "--judge-answer",
            "a",
            "--judge-answer",
            "b",
            "--repeat",
            "3",
        ],
    );
    output.assert_code(0);
    assert!(output.stdout().contains("per call:  p50 "), "{output}");
    let output = grader_test(
        &project,
        hostile,
        &evidence,
        &["--grader", "judge-loop", "--judge-answer", "again"],
    );
    output.assert_code(1);
    assert!(
        output.stdout().contains("verdict:   error: judge call limit: the grader asked more than 8 questions in one grading call"),
        "{output}"
    );
}

#[test]
fn without_answers_a_judge_question_names_both_options() {
    let (project, evidence) = plain_run();
    let config = rubric_config(project.path(), RUBRIC);
    let output = rubric_test(&project, &evidence, &config, &[]);
    output.assert_code(1);
    assert!(
        output.stdout().contains("verdict:   error: no answer for the judge's question: `evalhost grader test` answers the judge from --judgments FILE.jsonl (as `evalhost run --judge record` writes it) or --judge-answer TEXT; give one"),
        "{output}"
    );
    // A grader that ignores the judge's errors cannot pass on an unanswered question.
    let output = grader_test(
        &project,
        guests::hostile(),
        &evidence,
        &["--grader", "judge-loop"],
    );
    output.assert_code(1);
    assert!(
        output.stdout().contains("verdict:   error: no answer for the judge's question: `evalhost grader test` answers the judge from --judgments FILE.jsonl"),
        "{output}"
    );
    // A grader that does not ask needs neither, and shows no judge line.
    let output = grader_test(
        &project,
        BUILTIN,
        &evidence,
        &[
            "--grader",
            "final_text_contains",
            "--config",
            &write(&project, "c.json", "\"Apples\""),
        ],
    );
    output.assert_code(0);
    assert!(!output.stdout().contains("judge:"), "{output}");
}

fn write(project: &Project, name: &str, text: &str) -> String {
    let path = project.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_bad_judgments_file_is_refused_naming_file_and_line() {
    let (project, evidence) = plain_run();
    let config = rubric_config(project.path(), RUBRIC);
    let refused = |file: &str, expected: &str| {
        let output = rubric_test(&project, &evidence, &config, &["--judgments", file]);
        output.assert_code(2);
        assert!(output.stderr().contains(expected), "{output}");
    };

    refused(
        "no-such.jsonl",
        "--judgments no-such.jsonl: failed to read no-such.jsonl: No such file",
    );
    let broken = write(&project, "broken.jsonl", "\n{not json\n");
    refused(&broken, &format!("{broken}:2: not a judgment: "));
    // A hand-edited line: its key no longer matches its question.
    let edited = write(
        &project,
        "edited.jsonl",
        r#"{"key":"00","model":"m","question":{"messages":[{"role":"user","content":"?"}],"schema":null,"max_output_tokens":1},"answer":{"text":"x","input_tokens":0,"output_tokens":0}}"#,
    );
    refused(
        &edited,
        &format!("{edited}:1: not a judgment: key 00 does not match its model and question"),
    );

    // One source at a time.
    let output = rubric_test(
        &project,
        &evidence,
        &config,
        &["--judgments", &edited, "--judge-answer", "x"],
    );
    output.assert_code(2);
    assert!(output.stderr().contains("cannot be used with"), "{output}");
    let output = rubric_test(&project, &evidence, &config, &["--judge-answer", "@"]);
    output.assert_code(2);
    assert!(
        output
            .stderr()
            .contains("--judge-answer @: name the file after `@`"),
        "{output}"
    );
}

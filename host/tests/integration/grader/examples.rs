//! The example graders of `graders/examples/` and the `evalhost grader new` scaffolds, one
//! per language, built with the language's real toolchain and run end to end through
//! `evalhost run`.
//!
//! A test whose toolchain is missing prints why and passes, unless
//! `EVALHOST_REQUIRE_TOOLCHAINS=1` (as `.ci/run` sets it), where a missing toolchain fails.

use crate::support::evalhost::{Evalhost, Output};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn evalhost(dir: &Path, args: &[&str]) -> Output {
    Evalhost::new()
        .env(
            "XDG_CACHE_HOME",
            std::env::temp_dir().join("evalhost-test-cache"),
        )
        .args(args)
        .current_dir(dir)
        .run()
}

/// Whether `program args` runs and exits 0.
fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// PATH with the repository's npm tools (`.ci/run` installs them into `target/npm`).
fn path_with_npm_tools() -> std::ffi::OsString {
    let npm_bin = repo().join("target/npm/node_modules/.bin");
    let mut paths = vec![npm_bin];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

/// Why the toolchain of `lang` is not usable here, if it is not.
fn missing_toolchain(lang: &str) -> Option<String> {
    let missing = |what: &str| Some(format!("{what} not found"));
    match lang {
        "rust" => None, // the host build itself needs cargo and wasm32-wasip2
        "python" => (!runs("componentize-py", &["--version"]))
            .then(|| "componentize-py not found (pip install componentize-py==0.25.1)".to_owned()),
        "js" => {
            let found = Command::new("componentize-js")
                .arg("--version")
                .env("PATH", path_with_npm_tools())
                .output()
                .is_ok_and(|o| o.status.success());
            (!found).then(|| {
                "componentize-js not found (npm install @bytecodealliance/componentize-js@0.23.0)"
                    .to_owned()
            })
        }
        "c" => {
            for (tool, args) in [
                ("clang", &["--version"][..]),
                ("wasm-ld", &["--version"][..]),
                ("wit-bindgen", &["--version"][..]),
                ("wasm-tools", &["--version"][..]),
            ] {
                if !runs(tool, args) {
                    return missing(tool);
                }
            }
            if !Path::new("/usr/include/wasm32-wasi/stdlib.h").is_file() {
                return missing("wasi-libc (/usr/include/wasm32-wasi)");
            }
            None
        }
        other => missing(other),
    }
}

/// `Some(())` when the toolchain is there; otherwise prints why (or fails under
/// `EVALHOST_REQUIRE_TOOLCHAINS=1`) and returns `None`.
fn toolchain(lang: &str) -> Option<()> {
    let Some(reason) = missing_toolchain(lang) else {
        return Some(());
    };
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!("{lang} toolchain required (EVALHOST_REQUIRE_TOOLCHAINS=1): {reason}");
    }
    eprintln!("skipped: the {lang} toolchain is not installed: {reason}");
    None
}

/// Run `dir/build.sh` with the test toolchains on PATH; panics with its output on failure.
fn build(dir: &Path) {
    let output = Command::new("bash")
        .arg(dir.join("build.sh"))
        .env("PATH", path_with_npm_tools())
        .env("CARGO_TARGET_DIR", repo().join("target/examples"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("run build.sh");
    assert!(
        output.status.success(),
        "{} failed:\n{}{}",
        dir.join("build.sh").display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        dir.join("grader.wasm").is_file(),
        "no grader.wasm in {}",
        dir.display()
    );
}

/// The world every example and scaffold targets: the newest.
const NEWEST_WORLD: &str = "evalhost:grader@0.5.0";

/// `evalhost grader check grader.wasm` in `dir`: the component targets the newest world and
/// lists `grader` at `version`.
fn check_targets_the_newest_world(dir: &Path, grader: &str, version: &str) {
    let output = evalhost(dir, &["grader", "check", "grader.wasm"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!("  world:   {NEWEST_WORLD}")),
        "{}: {stdout}",
        dir.display()
    );
    assert!(
        stdout.contains(&format!("    {grader} {version}: ")),
        "{stdout}"
    );
}

/// `evalhost grader test` in `dir` on the evidence of `case` (`out/<case>/run-1.evidence.json`)
/// with `config` and `more` arguments: its output, which names what `describe` says under
/// `checks:`.
fn grader_test(dir: &Path, case: &str, config: &str, more: &[&str]) -> Output {
    std::fs::write(dir.join("config.json"), config).unwrap();
    let evidence = format!("out/{case}/run-1.evidence.json");
    let mut args = vec![
        "grader",
        "test",
        "grader.wasm",
        "--evidence",
        &evidence,
        "--config",
        "config.json",
    ];
    args.extend_from_slice(more);
    evalhost(dir, &args)
}

/// One example of `graders/examples/`.
struct Example {
    lang: &'static str,
    dir: &'static str,
    grader: &'static str,
    /// The case that passes, and the line its report shows after `<case> run 1: pass: ` (the
    /// pass message), if the example gives one.
    passes: (&'static str, Option<&'static str>),
    /// The case that fails on purpose, and its failure line after `<case> run 1: `.
    fails: (&'static str, &'static str),
    /// A config, and what `describe` says of it.
    describes: (&'static str, &'static str),
}

/// Build an example, check it targets the newest world, run its cases (the passing one
/// exits 0 with its pass message, the failing one 1 with its failure), and ask `grader
/// test` what it checks. Returns the example's directory, `None` when its toolchain is
/// missing.
fn example(example: Example) -> Option<PathBuf> {
    let Example {
        lang,
        grader,
        passes: (passes, pass_message),
        fails: (fails, failure),
        describes: (config, description),
        ..
    } = example;
    toolchain(lang)?;
    let dir = repo().join("graders/examples").join(lang).join(example.dir);
    build(&dir);
    check_targets_the_newest_world(&dir, grader, "1.0.0");
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join("out");
    let output = evalhost(
        &dir,
        &[
            "run",
            "--out",
            out_dir.to_str().unwrap(),
            &format!("cases/{passes}.yaml"),
        ],
    );
    output.assert_code(0);
    if let Some(message) = pass_message {
        let stdout = output.stdout();
        assert!(
            stdout.contains(&format!("{passes} run 1: pass: {message}")),
            "{lang}: {stdout}"
        );
    }
    let output = evalhost(&dir, &["run", &format!("cases/{fails}.yaml")]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!("{fails} run 1: {failure}")),
        "{lang}: {stdout}"
    );
    // `grader test` in a copy, so the example's directory gets no config.json.
    let copy = out.path();
    std::fs::copy(dir.join("grader.wasm"), copy.join("grader.wasm")).unwrap();
    let output = grader_test(copy, passes, config, &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!("checks:    {description}\n")),
        "{lang}: {stdout}"
    );
    Some(dir)
}

const TODO_LEFT: &str = r##"graders[0] ../grader.wasm#no_todo_comments: 1 found: calc.py:2 "# FIXME: handle overflow""##;
const CURT: &str = r#"graders[0] ../grader.wasm#polite_refusal: a refusal without an apology in final text "I won't do that.""#;
const POLITE: &str = r#"graders[0] ../grader.wasm#polite_refusal: a refusal with an apology in final text "Sorry, I can't share private keys.""#;

#[test]
fn rust_example_no_todo_comments() {
    example(Example {
        lang: "rust",
        dir: "no-todo-comments",
        grader: "no_todo_comments",
        passes: ("todo-removed", None),
        fails: ("todo-left", TODO_LEFT),
        describes: (
            r#"{"markers": ["TODO", "XXX"]}"#,
            "no comment in the workspace files mentions TODO or XXX",
        ),
    });
}

#[test]
fn python_example_no_todo_comments() {
    let built = example(Example {
        lang: "python",
        dir: "no-todo-comments",
        grader: "no_todo_comments",
        passes: (
            "todo-removed",
            Some("graders[0] ../grader.wasm#no_todo_comments: 0 found in 1 file"),
        ),
        fails: ("todo-left", TODO_LEFT),
        describes: (
            r#"{"markers": ["TODO", "XXX"]}"#,
            "no comment in the workspace files mentions TODO or XXX",
        ),
    });
    // A run without a workspace (read from a trace): what `begin_run` kept says so, and the
    // grader is not evaluable rather than passing on no files.
    let Some(dir) = built else { return };
    let copy = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("grader.wasm"), copy.path().join("grader.wasm")).unwrap();
    let out = copy.path().join("out");
    let case = dir.join("cases/todo-removed.yaml");
    let output = evalhost(
        copy.path(),
        &[
            "run",
            "--out",
            out.to_str().unwrap(),
            case.to_str().unwrap(),
        ],
    );
    output.assert_code(0);
    let evidence_file = out.join("todo-removed/run-1.evidence.json");
    let mut evidence: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&evidence_file).unwrap()).unwrap();
    assert_eq!(evidence["workspace"], "/workspace");
    evidence["workspace"] = "".into();
    std::fs::write(&evidence_file, evidence.to_string()).unwrap();
    let output = grader_test(copy.path(), "todo-removed", "null", &[]);
    output.assert_code(1);
    output.assert_stdout_contains(
        "verdict:   error: not evaluable: no_todo_comments: the run has no workspace\n",
    );
}

#[test]
fn js_example_polite_refusal() {
    example(Example {
        lang: "js",
        dir: "polite-refusal",
        grader: "polite_refusal",
        passes: ("refuses-politely", Some(POLITE)),
        fails: ("refuses-curtly", CURT),
        describes: (
            r#"{"require_apology": false}"#,
            "the final text declines the request",
        ),
    });
}

#[test]
fn c_example_polite_refusal() {
    example(Example {
        lang: "c",
        dir: "polite-refusal",
        grader: "polite_refusal",
        passes: ("refuses-politely", Some(POLITE)),
        fails: ("refuses-curtly", CURT),
        describes: (
            r#"{"require_apology": false}"#,
            "the final text declines the request",
        ),
    });
}

/// `evalhost grader new NAME --lang LANG`, built as it stands: it targets the newest world;
/// its case passes with the pass message in the report; a case of three entries, graded in
/// one instance from the evidence handed over once, reports each entry's own verdict; `grader
/// test` shows what `describe` says.
fn scaffold(lang: &str) {
    if toolchain(lang).is_none() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let name = format!("fresh-{lang}");
    let grader = format!("fresh_{lang}");
    let output = evalhost(parent.path(), &["grader", "new", &name, "--lang", lang]);
    output.assert_code(0);
    let dir = parent.path().join(&name);
    build(&dir);
    check_targets_the_newest_world(&dir, &grader, "0.1.0");
    let output = evalhost(&dir, &["run", "--out", "out", "cases/example.yaml"]);
    output.assert_code(0);
    let stdout = output.stdout();
    let reference = format!("../grader.wasm#{grader}");
    assert!(
        stdout.contains(&format!(
            "example run 1: pass: graders[0] {reference} \"hello\": found in final text \"hello from the agent\"\n"
        )),
        "{lang}: {stdout}"
    );

    std::fs::write(
        dir.join("cases/three.yaml"),
        format!(
            "name: three\nprompt: Say hello.\nmodel:\n  - text: \"h\\u00e9llo \\\"agent\\\"\"\ngraders:\n  \
             - {reference}: {{word: agent}}\n  \
             - {reference}: {{word: absent}}\n  \
             - {reference}: {{word: \"h\\u00e9llo\"}}\n"
        ),
    )
    .unwrap();
    let output = evalhost(&dir, &["run", "cases/three.yaml"]);
    output.assert_code(1);
    let lines: Vec<&str> = output
        .stdout()
        .lines()
        .filter(|l| l.starts_with("  three run 1: "))
        .collect();
    let text = r#""héllo \"agent\"""#;
    assert_eq!(
        lines,
        [
            format!("  three run 1: graders[1] {reference} \"absent\": final text {text}"),
            format!(
                "  three run 1: pass: graders[0] {reference} \"agent\": found in final text {text}"
            ),
            format!(
                "  three run 1: pass: graders[2] {reference} \"héllo\": found in final text {text}"
            ),
        ],
        "{lang}: {}",
        output.stdout()
    );

    let output = grader_test(&dir, "example", r#"{"word": "agent"}"#, &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains("checks:    final text contains \"agent\"\n")
            && stdout.contains(&format!(
                "message:   {grader} \"agent\": found in final text \"hello from the agent\"\n"
            )),
        "{lang}: {stdout}"
    );
    let output = grader_test(&dir, "example", r#"{"word": "hello", "extra": 1}"#, &[]);
    output.assert_code(2);
    output.assert_stderr_contains("invalid config: ");
}

#[test]
fn rust_scaffold_builds_and_passes_its_case() {
    scaffold("rust");
}

#[test]
fn python_scaffold_builds_and_passes_its_case() {
    scaffold("python");
}

#[test]
fn js_scaffold_builds_and_passes_its_case() {
    scaffold("js");
}

#[test]
fn c_scaffold_builds_and_passes_its_case() {
    scaffold("c");
}

/// Every copy of the grader WIT in the examples and the scaffolds is the newest released
/// WIT, 0.5.0.
#[test]
fn example_wit_copies_are_the_newest_released_wit() {
    let newest = std::fs::read_to_string(repo().join("wit/since_v0.5.0/grader.wit")).unwrap();
    assert!(newest.contains("package evalhost:grader@0.5.0;"));
    for dir in [
        "python/no-todo-comments",
        "js/polite-refusal",
        "c/polite-refusal",
    ] {
        let copy = repo()
            .join("graders/examples")
            .join(dir)
            .join("wit/grader.wit");
        let text = std::fs::read_to_string(&copy).unwrap();
        assert_eq!(
            text,
            newest,
            "{} differs from the released WIT 0.5.0",
            copy.display()
        );
    }
}

/// `grader new --judge` in `lang`: the grader builds for the newest WIT and says what it
/// checks (`describe`); its example case records a judgment from a fake judge on loopback
/// and replays it with the judge gone, the judge's reason as the pass message; a replay
/// without the judgment fails, naming the command that records it; `grader test` grades it
/// from the recorded judgment and from an answer given on the command line.
fn judge_scaffold(lang: &str) {
    use crate::support::live::{FakeProvider, Step, chat_call};
    if toolchain(lang).is_none() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let name = format!("tone-{lang}");
    let evalhost_output = evalhost(
        parent.path(),
        &["grader", "new", &name, "--lang", lang, "--judge"],
    );
    evalhost_output.assert_code(0);
    let dir = parent.path().join(&name);
    build(&dir);
    let grader = format!("tone_{lang}");
    check_targets_the_newest_world(&dir, &grader, "0.1.0");

    let reason = "It greets and thanks the user.";
    let fake = FakeProvider::start(
        vec![],
        Step::Sse(chat_call(
            "call_1",
            "answer",
            &serde_json::json!({"score": 0.9, "reason": reason}),
            40,
            10,
        )),
    );
    let toml = |base: &str| {
        format!(
            "[judge]\nkind = \"openai-chat\"\nbase_url = \"{base}\"\nmodel = \"judge-model\"\nretry_base_ms = 10\n"
        )
    };
    std::fs::write(dir.join("evalhost.toml"), toml(&fake.base_url)).unwrap();
    let expected = format!("{grader}: score 0.90: {reason}");
    // Never recorded: the case fails, naming the command that records it.
    let evalhost_output = evalhost(&dir, &["run", "cases/example.yaml"]);
    evalhost_output.assert_code(1);
    let stdout = evalhost_output.stdout();
    assert!(
        stdout.contains("not recorded: ")
            && stdout.contains("evalhost run --judge record cases/example.yaml"),
        "{lang}: {stdout}"
    );
    let evalhost_output = evalhost(
        &dir,
        &[
            "run",
            "--judge",
            "record",
            "--html",
            "report.html",
            "cases/example.yaml",
        ],
    );
    evalhost_output.assert_code(0);
    let stdout = evalhost_output.stdout();
    assert!(
        stdout.contains("Judge: example: 1 question, 40 input + 10 output tokens."),
        "{lang}: {stdout}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains(reason),
        "{lang}: the HTML report shows the judge's reason"
    );
    assert_eq!(fake.received().len(), 1);
    std::fs::write(dir.join("evalhost.toml"), toml("http://127.0.0.1:9/v1")).unwrap();
    let output = evalhost(&dir, &["run", "--out", "out", "cases/example.yaml"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!(
            "example run 1: pass: graders[0] ../grader.wasm#{expected}\n"
        )),
        "{lang}: {stdout}"
    );
    let report = std::fs::read_to_string(dir.join("out/report.json")).unwrap();
    assert!(report.contains(&expected), "{lang}: {report}");
    assert_eq!(fake.received().len(), 1, "replay asked the judge");

    // `grader test` answers the judge: from the recorded judgment (the case's config asks
    // the same question), or with an answer given on the command line; either way it says
    // what the grader checks.
    let config = r#"{"rubric": "The answer is a polite greeting.", "threshold": 0.7}"#;
    let checks = "checks:    the judge scores the final text against \"The answer is a polite greeting.\" at 0.70 or more\n";
    let output = grader_test(
        &dir,
        "example",
        config,
        &["--judgments", "cases/judgments.jsonl"],
    );
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(checks) && stdout.contains(&format!("message:   {expected}\n")),
        "{lang}: {stdout}"
    );
    let output = grader_test(
        &dir,
        "example",
        config,
        &["--judge-answer", r#"{"score": 0.2, "reason": "Curt."}"#],
    );
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains(checks)
            && stdout.contains("verdict:   fail (score 0.20)\n")
            && stdout.contains(&format!("message:   {grader}: score 0.20: Curt.\n")),
        "{lang}: {stdout}"
    );
    assert_eq!(fake.received().len(), 1, "grader test asked the judge");
}

#[test]
fn rust_judge_scaffold_records_and_replays() {
    judge_scaffold("rust");
}

#[test]
fn python_judge_scaffold_records_and_replays() {
    judge_scaffold("python");
}

#[test]
fn js_judge_scaffold_records_and_replays() {
    judge_scaffold("js");
}

#[test]
fn c_judge_scaffold_records_and_replays() {
    judge_scaffold("c");
}

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

/// Build an example, check it, and run its cases: `passes` exits 0, `fails` exits 1 with
/// `expected` in the report.
fn example(lang: &str, name: &str, grader: &str, passes: &str, fails: &str, expected: &str) {
    if toolchain(lang).is_none() {
        return;
    }
    let dir = repo().join("graders/examples").join(lang).join(name);
    build(&dir);
    let output = evalhost(&dir, &["grader", "check", "grader.wasm"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!("    {grader} 1.0.0: ")),
        "{stdout}"
    );
    let output = evalhost(&dir, &["run", &format!("cases/{passes}.yaml")]);
    output.assert_code(0);
    let output = evalhost(&dir, &["run", &format!("cases/{fails}.yaml")]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!("{fails} run 1: {expected}")),
        "{lang}: {stdout}"
    );
}

const TODO_LEFT: &str = r##"graders[0] ../grader.wasm#no_todo_comments: 1 found: calc.py:2 "# FIXME: handle overflow""##;
const CURT: &str = r#"graders[0] ../grader.wasm#polite_refusal: a refusal without an apology in final text "I won't do that.""#;

#[test]
fn rust_example_no_todo_comments() {
    example(
        "rust",
        "no-todo-comments",
        "no_todo_comments",
        "todo-removed",
        "todo-left",
        TODO_LEFT,
    );
}

#[test]
fn python_example_no_todo_comments() {
    example(
        "python",
        "no-todo-comments",
        "no_todo_comments",
        "todo-removed",
        "todo-left",
        TODO_LEFT,
    );
}

#[test]
fn js_example_polite_refusal() {
    example(
        "js",
        "polite-refusal",
        "polite_refusal",
        "refuses-politely",
        "refuses-curtly",
        CURT,
    );
}

#[test]
fn c_example_polite_refusal() {
    example(
        "c",
        "polite-refusal",
        "polite_refusal",
        "refuses-politely",
        "refuses-curtly",
        CURT,
    );
}

/// `evalhost grader new NAME --lang LANG`, built as it stands, checked, its case run.
fn scaffold(lang: &str) {
    if toolchain(lang).is_none() {
        return;
    }
    let parent = tempfile::tempdir().unwrap();
    let name = format!("fresh-{lang}");
    let output = evalhost(parent.path(), &["grader", "new", &name, "--lang", lang]);
    output.assert_code(0);
    let dir = parent.path().join(&name);
    build(&dir);
    let output = evalhost(&dir, &["grader", "check", "grader.wasm"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!("    fresh_{lang} 0.1.0: ")),
        "{stdout}"
    );
    let output = evalhost(&dir, &["run", "cases/example.yaml"]);
    output.assert_code(0);
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

/// Every copy of the grader WIT in the examples is a frozen released WIT: the Python
/// example's 0.5.0 (`begin-run`, `grade-in-run`), the others' 0.1.0.
#[test]
fn example_wit_copies_are_the_released_wit() {
    for (dir, version) in [
        ("python/no-todo-comments", "0.5.0"),
        ("js/polite-refusal", "0.1.0"),
        ("c/polite-refusal", "0.1.0"),
    ] {
        let released =
            std::fs::read_to_string(repo().join(format!("wit/since_v{version}/grader.wit")))
                .unwrap();
        let copy = repo()
            .join("graders/examples")
            .join(dir)
            .join("wit/grader.wit");
        let text = std::fs::read_to_string(&copy).unwrap();
        assert_eq!(
            text,
            released,
            "{} differs from the released WIT {version}",
            copy.display()
        );
    }
}

/// `grader new --judge` in `lang`: the grader builds for WIT 0.4.0 (Rust: the SDK's 0.5.0),
/// its example case records a judgment from a fake judge on loopback and replays it with
/// the judge gone, and a replay without the judgment fails, naming the command that records it.
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
    let evalhost_output = evalhost(&dir, &["grader", "check", "grader.wasm"]);
    evalhost_output.assert_code(0);
    let stdout = evalhost_output.stdout();
    let world = if lang == "rust" { "0.5.0" } else { "0.4.0" };
    assert!(
        stdout.contains(&format!("world:   evalhost:grader@{world}")),
        "{stdout}"
    );

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
    let grader = format!("tone_{lang}");
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
    let report = std::fs::read_to_string(dir.join("out/report.json")).unwrap();
    assert!(report.contains(&expected), "{lang}: {report}");
    assert_eq!(fake.received().len(), 1, "replay asked the judge");
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
fn c_has_no_judge_scaffold() {
    let parent = tempfile::tempdir().unwrap();
    let output = evalhost(
        parent.path(),
        &["grader", "new", "tone", "--lang", "c", "--judge"],
    );
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("--judge scaffolds a grader in rust, python or js"),
        "{stderr}"
    );
}

//! Cases naming a grader component by path (`path/to/grader.wasm#NAME`), end to end through
//! `evalhost run`: resolved relative to the case file, checked, config validated at load.

use crate::support::evalhost::{Evalhost, Output};
use std::path::Path;

const BUILTIN: &str = env!("EVALHOST_BUILTIN_GRADERS_WASM");
/// Any file that is not WebAssembly.
const CORRUPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");

fn evalhost(args: &[&str]) -> Output {
    Evalhost::new()
        .args(args)
        .env(
            "XDG_CACHE_HOME",
            std::env::temp_dir().join("evalhost-test-cache"),
        )
        .run()
}

/// `dir/graders/<file>` copied from `from`, and a case `dir/cases/<name>.yaml` with `graders`.
fn suite(dir: &Path, from: &str, file: &str, name: &str, graders: &str) -> String {
    std::fs::create_dir_all(dir.join("graders")).unwrap();
    std::fs::create_dir_all(dir.join("cases")).unwrap();
    std::fs::copy(from, dir.join("graders").join(file)).unwrap();
    let case = dir.join("cases").join(format!("{name}.yaml"));
    std::fs::write(
        &case,
        format!(
            "name: {name}\nprompt: Say hello.\nmodel:\n  - text: Hello there!\ngraders:\n{graders}"
        ),
    )
    .unwrap();
    case.to_str().unwrap().to_owned()
}

#[test]
fn a_component_named_by_path_relative_to_the_case_grades_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let case = suite(
        dir.path(),
        BUILTIN,
        "mine.wasm",
        "by-path",
        "  - ../graders/mine.wasm#final_text_contains: Hello\n  - ../graders/mine.wasm#final_text_not_contains: Goodbye\n  - max_requests: 1\n",
    );
    let out = dir.path().join("out");
    let output = evalhost(&["run", "--out", out.to_str().unwrap(), &case]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.contains("All cases passed."), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let verdicts = &report["cases"][0]["runs"][0]["verdicts"];
    assert_eq!(
        verdicts[0]["grader"], "../graders/mine.wasm#final_text_contains",
        "{verdicts}"
    );

    // The same component, a failing config: the verdict comes from the path-named grader.
    let case = suite(
        dir.path(),
        BUILTIN,
        "mine.wasm",
        "by-path-fails",
        "  - ../graders/mine.wasm#final_text_contains: Goodbye\n",
    );
    let output = evalhost(&["run", &case]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains(
            r#"by-path-fails run 1: graders[0] ../graders/mine.wasm#final_text_contains "Goodbye": final text "Hello there!""#
        ),
        "{stdout}"
    );
}

#[test]
fn a_bad_config_for_a_path_named_grader_is_a_located_error_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let case = suite(
        dir.path(),
        BUILTIN,
        "mine.wasm",
        "bad-config",
        "  - ../graders/mine.wasm#final_text_matches: \"(unclosed\"\n",
    );
    let output = evalhost(&["run", &case]);
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(
        stderr.contains(
            "bad-config.yaml:6:5: graders[0].\"../graders/mine.wasm#final_text_matches\": invalid config:"
        ),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "nothing runs: {stdout}");
}

#[test]
fn path_reference_errors_are_located_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 5] = [
        (
            "missing",
            "  - ../graders/nope.wasm#x: 1\n",
            "failed to read `",
        ),
        (
            "no-name",
            "  - ../graders/mine.wasm: Hello\n",
            "name one as `../graders/mine.wasm#NAME`",
        ),
        (
            "wrong-name",
            "  - ../graders/mine.wasm#nope: Hello\n",
            "`../graders/mine.wasm` provides no grader `nope`",
        ),
        (
            "corrupt",
            "  - ../graders/corrupt.wasm#ok: null\n",
            "is not a WebAssembly file",
        ),
        (
            "bundle",
            "  - acme/no_todo: {}\n",
            "bundle `acme` is not installed",
        ),
    ];
    for (name, graders, expected) in cases {
        let (from, file) = if name == "corrupt" {
            (CORRUPT, "corrupt.wasm")
        } else {
            (BUILTIN, "mine.wasm")
        };
        let case = suite(dir.path(), from, file, name, graders);
        let output = evalhost(&["run", &case]);
        output.assert_code(2);
        let stderr = output.stderr();
        assert!(
            stderr.contains(&format!("{name}.yaml:6:5: graders[0]")),
            "{stderr}"
        );
        assert!(stderr.contains(expected), "{name}: {stderr}");
    }
}

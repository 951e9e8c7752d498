//! Case names that are not one plain path component (`..`, `.`, a separator, a control
//! character) are refused at load, located at the `name` field, and nothing is written
//! outside `--out`; the control is the same case under a plain name, which runs and writes
//! beneath `--out`.

use std::path::Path;

use crate::support::evalhost::Evalhost;

fn case(name: &str) -> String {
    format!(
        "name: {}\nprompt: Go.\nmodel:\n  - text: done\ngraders:\n  - final_text_contains: done\n",
        // JSON's quoted string is YAML's double-quoted one.
        serde_json::Value::from(name)
    )
}

/// Run `evalhost run --out DIR/out FILE` for a case file named `FILE_NAME` whose `name:` is
/// `name`: the output and the entries of DIR besides the case file and `out`.
fn run(file_name: &str, name: &str) -> (crate::support::evalhost::Output, Vec<String>, bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(file_name);
    std::fs::write(&file, case(name)).unwrap();
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&file)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-cache"),
        )
        .run();
    let beside: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != file_name && n != "out")
        .collect();
    let run_log = out.join(name).join("run-1.jsonl");
    let kept =
        Path::new(name).components().count() == 1 && !name.starts_with('.') && run_log.is_file();
    (output, beside, kept)
}

#[test]
fn a_case_named_dot_dot_is_refused_at_its_name_and_nothing_is_written_beside_out() {
    let (output, beside, _) = run("...yaml", "..");
    output.assert_code(2);
    output.assert_stderr_contains("...yaml:1:7");
    output.assert_stderr_contains(
        "name: \"..\": a case name must not be \".\" or \"..\" (it names the case's directory under --out)",
    );
    assert_eq!(beside, Vec::<String>::new(), "written beside --out");
}

#[test]
fn separators_and_control_characters_in_a_case_name_are_refused() {
    for (file_name, name, says) in [
        ("a\\b.yaml", "a\\b", "must not contain \"/\" or \"\\\""),
        (
            "tab\there.yaml",
            "tab\there",
            "must not contain control characters",
        ),
        (
            "bell\u{7}.yaml",
            "bell\u{7}",
            "must not contain control characters",
        ),
    ] {
        let (output, beside, _) = run(file_name, name);
        output.assert_code(2);
        output.assert_stderr_contains(says);
        assert_eq!(beside, Vec::<String>::new());
    }
}

#[test]
fn control_a_plain_name_runs_and_writes_beneath_out() {
    let (output, beside, kept) = run("dots.yaml", "dots");
    output.assert_code(0);
    assert!(kept, "the run's log is under --out/dots");
    assert_eq!(beside, Vec::<String>::new());
}

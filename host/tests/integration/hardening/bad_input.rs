//! Bad input through the real binary: one test per class of hostile or broken case input.
//! Each must end with exit code 2 and an `Error:` naming the file (and line:column where
//! the input has one), and never a panic. `case/parse.rs` and `case/load.rs` pin the exact
//! library messages; this file checks what a user of `evalhost run` sees.

use crate::support::common;
use crate::support::evalhost::Evalhost;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::support::common::copy_dir;

/// `evalhost run PATH`, asserting the bad-input contract: exit 2, no panic, and a first
/// problem that starts by naming `located` (a path, or `path:line:col`): the `Error:` line
/// itself, or the first of several problems listed above the `Error:` line. Returns stderr.
fn refused(path: &Path, located: &str) -> String {
    let started = Instant::now();
    let output = Evalhost::new().args(["run", path.to_str().unwrap()]).run();
    let code = output.code();
    let (stdout, stderr) = (output.stdout(), output.stderr());
    let elapsed = started.elapsed();
    assert_eq!(code, 2, "exit code; stdout: {stdout}\nstderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr
            .strip_prefix("Error: ")
            .unwrap_or(stderr)
            .starts_with(located),
        "expected the error to start with {located:?}:\n{stderr}"
    );
    assert!(
        stderr
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("Error: ")),
        "{stderr}"
    );
    // Loading is bounded: no input may make it crawl (a generous bound, not a benchmark).
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
    stderr.to_owned()
}

/// A fresh directory with `name` holding `text`.
fn case_file(name: &str, text: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_non_utf8_file() {
    let (_dir, path) = case_file(
        "latin1.yaml",
        b"name: latin1\nprompt: caf\xe9\ngraders:\n  - final_text_contains: hello\n",
    );
    let stderr = refused(&path, &format!("{}:2:12: ", display(&path)));
    assert!(stderr.contains("not valid UTF-8"), "{stderr}");
}

#[test]
fn an_empty_file() {
    let (_dir, path) = case_file("empty.yaml", "");
    let stderr = refused(&path, &format!("{}:1:1: ", display(&path)));
    assert!(stderr.contains("the case file is empty"), "{stderr}");
}

#[test]
fn a_ten_mb_prompt() {
    let text = format!(
        "name: big\nprompt: {}\ngraders:\n  - final_text_contains: hello\n",
        "x".repeat(10_000_000)
    );
    let (_dir, path) = case_file("big.yaml", text);
    let stderr = refused(&path, &format!("{}: ", display(&path)));
    assert!(stderr.contains("larger than 8 MiB"), "{stderr}");
}

#[test]
fn a_yaml_alias_bomb() {
    let mut text = String::from(
        "name: bomb\nprompt: Say hello.\ngraders:\n  - final_text_contains: hello\ntags: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for level in 1..9 {
        let items = vec![format!("*a{}", level - 1); 9].join(", ");
        text.push_str(&format!("x{level}: &a{level} [{items}]\n"));
    }
    let (_dir, path) = case_file("bomb.yaml", text);
    let stderr = refused(&path, &format!("{}:", display(&path)));
    assert!(stderr.contains("YAML aliases expand"), "{stderr}");
}

#[test]
fn deeply_nested_yaml() {
    let depth = 100_000;
    let text = format!(
        "name: deep\nprompt: Say hello.\ngraders:\n  - final_text_contains: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let (_dir, path) = case_file("deep.yaml", text);
    let stderr = refused(&path, &format!("{}:", display(&path)));
    // The parser's own recursion limit stops it first, at the line and column it reached.
    assert!(
        stderr.contains("4:") && stderr.contains("recursion limit exceeded"),
        "{stderr}"
    );
}

#[test]
fn deeply_nested_json_in_a_fixture() {
    let depth = 100_000;
    let line = format!("{}{}\n", "[".repeat(depth), "]".repeat(depth));
    let (_dir, path) = case_file("deep.jsonl", line);
    refused(&path, &format!("{}:1", display(&path)));
}

#[test]
fn deeply_nested_json_in_a_nexus_journal() {
    let repo = common::repo();
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("build-error-fix");
    copy_dir(&repo.join("cases/nexus/build-error-fix"), &case);
    let journal = std::fs::read_dir(case.join("journal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_file())
        .expect("a journal file");
    let depth = 100_000;
    std::fs::write(
        &journal,
        format!("{}{}\n", "[".repeat(depth), "]".repeat(depth)),
    )
    .unwrap();
    refused(&case, &display(&journal));
}

#[test]
fn duplicate_keys() {
    let (_dir, path) = case_file(
        "dup.yaml",
        "name: dup\nprompt: Say hello.\ngraders:\n  - final_text_contains: hello\nprompt: Say goodbye.\n",
    );
    let stderr = refused(&path, &format!("{}:5:1: prompt: ", display(&path)));
    assert!(stderr.contains("duplicate key"), "{stderr}");
}

#[test]
fn a_case_directory_with_ten_thousand_files() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..10_000 {
        std::fs::write(
            dir.path().join(format!("case-{i:05}.yaml")),
            format!(
                "name: case-{i:05}\nprompt: Say hello.\ngraders:\n  - final_text_contains: hello\n"
            ),
        )
        .unwrap();
    }
    let stderr = refused(dir.path(), &format!("{}: ", display(dir.path())));
    assert!(
        stderr.contains("too many cases: 10000 (at most 256 a directory)"),
        "{stderr}"
    );
}

#[test]
fn a_symlink_loop_in_the_cases_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fine.yaml"),
        "name: fine\nprompt: Say hello.\nmodel:\n  - text: hello\ngraders:\n  - final_text_contains: hello\n",
    )
    .unwrap();
    use std::os::unix::fs::symlink as link;
    link("loop-b.yaml", dir.path().join("loop-a.yaml")).unwrap();
    link("loop-a.yaml", dir.path().join("loop-b.yaml")).unwrap();
    // A directory link to its own parent must not send the loader round in circles.
    link(".", dir.path().join("again")).unwrap();
    // Either link of the loop may be met first (directory order). Each is a problem, and so
    // is the directory link: it is not searched again.
    let stderr = refused(dir.path(), &format!("{}/loop-", display(dir.path())));
    let d = display(dir.path());
    let mut lines: Vec<&str> = stderr.lines().collect();
    lines[..2].sort_unstable();
    assert_eq!(
        lines,
        [
            format!(
                "{d}/loop-a.yaml: failed to read case file: Too many levels of symbolic links (os error 40)"
            ),
            format!(
                "{d}/loop-b.yaml: failed to read case file: Too many levels of symbolic links (os error 40)"
            ),
            format!(
                "{d}/again: a symlink loop: this directory is {}, which is being searched already",
                dir.path().canonicalize().unwrap().display()
            ),
            "Error: 3 problems in the cases (each shown above with its file, line and field)"
                .to_owned(),
        ]
    );
}

#[test]
fn workspace_paths_escaping_the_workspace() {
    for (file, line_col) in [
        ("../outside.txt", "7:5"),
        ("/etc/evil", "7:5"),
        ("sub/../../outside.txt", "7:5"),
    ] {
        let (_dir, path) = case_file(
            "escape.yaml",
            format!(
                "name: escape\nprompt: Say hello.\ngraders:\n  - final_text_contains: hello\nworkspace:\n  files:\n    {file}: pwned\n"
            ),
        );
        let stderr = refused(
            &path,
            &format!("{}:{line_col}: workspace.files", display(&path)),
        );
        assert!(
            !path.parent().unwrap().join("outside.txt").exists(),
            "{file}: {stderr}"
        );
    }
}

#[test]
fn a_model_script_step_of_an_unknown_kind() {
    let (_dir, path) = case_file(
        "shout.yaml",
        "name: shout\nprompt: Say hello.\nmodel:\n  - shout: hello\ngraders:\n  - final_text_contains: hello\n",
    );
    let stderr = refused(&path, &format!("{}:4:5: model[0].shout: ", display(&path)));
    assert!(stderr.contains("unknown field"), "{stderr}");
}

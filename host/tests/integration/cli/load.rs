//! Loading a suite from the command line: every problem at once (`run`, `check`, `list`,
//! `grade`), directories searched recursively, the shipped suites loaded together, field
//! paths of graders named by path, OS errors shown once.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::support::common::{copy_dir, repo};
use crate::support::evalhost::Evalhost;

/// A suite in `dir` with two broken AgentCompany fixtures: `type-error-fix` whose scenario
/// drifted (its system.txt was edited after recording) and `ceo-bootstrap-empty` with a
/// `turnIndex` gap on line 4. Returns the drifted system.txt's sha256.
fn broken_fixtures(dir: &Path) -> String {
    let shipped = repo().join("cases/agentcompany");
    for id in ["type-error-fix", "ceo-bootstrap-empty"] {
        std::fs::copy(
            shipped.join(format!("{id}.jsonl")),
            dir.join(format!("{id}.jsonl")),
        )
        .unwrap();
        copy_dir(
            &shipped.join("scenarios").join(id),
            &dir.join("scenarios").join(id),
        );
    }
    let system = dir.join("scenarios/type-error-fix/system.txt");
    let mut text = std::fs::read_to_string(&system).unwrap();
    text.push_str("Also refactor anything you like.\n");
    std::fs::write(&system, &text).unwrap();
    let fixture = dir.join("ceo-bootstrap-empty.jsonl");
    let lines = std::fs::read_to_string(&fixture).unwrap();
    let mut lines: Vec<String> = lines.lines().map(str::to_owned).collect();
    lines[3] = lines[3].replace(r#""turnIndex":2,"#, r#""turnIndex":3,"#);
    std::fs::write(&fixture, lines.join("\n") + "\n").unwrap();
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The problem lines of [`broken_fixtures`] in `dir`, in load order.
fn fixture_problems(dir: &str, drifted: &str) -> Vec<String> {
    vec![
        format!(
            "{dir}/ceo-bootstrap-empty.jsonl:4: turn.turnIndex: 3 is a gap; expected 2 (strictly increasing from 0)"
        ),
        format!(
            "{dir}/type-error-fix.jsonl:1: meta.systemPromptHash: scenario drift: {dir}/scenarios/type-error-fix/system.txt hashes to sha256:{drifted}; the fixture was recorded with sha256:5c3d3f2199408b1052a50975442c80889a76800b9ccc9b14b27a8c94f847a6f1; re-record it"
        ),
    ]
}

#[test]
fn run_list_and_check_report_every_broken_fixture_not_only_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let drifted = broken_fixtures(tmp.path());
    let dir = tmp.path().to_str().unwrap();
    let problems = fixture_problems(dir, &drifted);
    let summary = "Error: 2 problems in the cases (each shown above with its file, line and field)";

    for command in ["run", "list"] {
        let output = Evalhost::new().args([command, dir]).run();
        output.assert_code(2);
        let (stdout, stderr) = (output.stdout(), output.stderr());
        assert_eq!(stdout, "", "{command}");
        let mut expected = problems.clone();
        expected.push(summary.to_owned());
        assert_eq!(stderr.lines().collect::<Vec<_>>(), expected, "{command}");
    }

    let output = Evalhost::new().args(["check", dir]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    let mut expected = problems.clone();
    expected.push(
        "Error: check failed: 2 problems (each shown above with its file, line and field)"
            .to_owned(),
    );
    assert_eq!(stderr.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn one_problem_is_the_error_line_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let drifted = broken_fixtures(tmp.path());
    let dir = tmp.path().to_str().unwrap();
    let fixture = format!("{dir}/ceo-bootstrap-empty.jsonl");
    let output = Evalhost::new().args(["run", &fixture]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        format!("Error: {}\n", fixture_problems(dir, &drifted)[0])
    );
}

#[test]
fn run_lists_load_and_grader_problems_together_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("a-typo.yaml"),
        "name: a-typo\nprompt: Hi.\nmodel:\n  - text: hi\ngraderz: []\nruns: 0\n",
    )
    .unwrap();
    // Valid as a file; its graders are wrong, and it would create `ran` if it ran.
    let marker = dir.join("ran");
    std::fs::write(
        dir.join("b-graders.yaml"),
        format!(
            "name: b-graders\nprompt: Hi.\nmodel:\n  - call: {{tool: bash, arguments: {{command: touch {}}}}}\n  - text: hi\napprove: all\ngraders:\n  - final_text_matches: \"(\"\n  - final_text_contains: hi\n  - final_text_containz: hi\n",
            marker.display()
        ),
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let output = Evalhost::new().args(["run", d]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 5, "{stderr}");
    assert!(
        lines[0].starts_with(&format!(
            "{d}/a-typo.yaml:5:1: graderz: unknown field, expected one of: "
        )),
        "{stderr}"
    );
    assert_eq!(
        lines[1],
        format!("{d}/a-typo.yaml:6:7: runs: must be from 1 to 32, found 0")
    );
    assert_eq!(
        lines[2],
        format!(
            "{d}/b-graders.yaml:8:5: graders[0].final_text_matches: invalid config: invalid regular expression \"(\": found open group without closing ')'"
        )
    );
    assert!(
        lines[3].starts_with(&format!(
            "{d}/b-graders.yaml:10:5: graders[2].final_text_containz: unknown grader `final_text_containz`"
        )),
        "{stderr}"
    );
    assert_eq!(
        lines[4],
        "Error: 4 problems in the cases (each shown above with its file, line and field)"
    );
    assert!(
        !marker.exists(),
        "nothing may run when a case has a problem"
    );
}

#[test]
fn check_reports_every_bad_field_of_one_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("many.yaml");
    std::fs::write(
        &path,
        "name: other\nprompt: \"\"\nmodel:\n  - txt: hi\ngraders:\n  - final_text_contains: hi\ntags: [x, []]\nlive: maybe\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let output = Evalhost::new().args(["check", p]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            format!("{p}:1:7: name: \"other\" does not match the file stem \"many\""),
            format!("{p}:2:9: prompt: must not be empty"),
            format!(
                "{p}:4:5: model[0].txt: unknown field, expected one of: text, call, calls, expect_input_contains, usage; did you mean `text`?"
            ),
            format!("{p}:7:11: tags[1]: expected a string, found a list"),
            format!("{p}:8:7: live: expected true or false, found a string"),
            "Error: check failed: 5 problems (each shown above with its file, line and field)"
                .to_owned(),
        ]
    );
}

#[test]
fn a_yaml_syntax_error_stops_its_file_at_the_first_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("broken.yaml");
    std::fs::write(&path, "name: other\nprompt: [unclosed\nruns: 0\n").unwrap();
    let p = path.to_str().unwrap();
    let output = Evalhost::new().args(["check", p]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with(&format!("{p}:")) && lines[0].contains("invalid YAML"),
        "{stderr}"
    );
}

#[test]
fn a_grader_named_by_path_is_quoted_in_the_field_path_and_the_os_error_shown_once() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("by-path.yaml");
    std::fs::write(
        &path,
        "name: by-path\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n  - ../missing.wasm#probe: {}\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let missing = tmp.path().join("../missing.wasm");
    let output = Evalhost::new().args(["run", p]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        format!(
            "Error: {p}:6:5: graders[0].\"../missing.wasm#probe\": failed to read `{}`: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[test]
fn os_errors_are_printed_once() {
    let output = Evalhost::new().args(["run", "cases/no-such-suite"]).run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        "Error: cases/no-such-suite: failed to read case file: No such file or directory (os error 2)\n"
    );
    let output = Evalhost::new()
        .args(["report", "merge", "no-such-report.json"])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr.matches("(os error 2)").count(),
        1,
        "the OS error once: {stderr}"
    );
}

#[test]
fn the_shipped_suites_load_together() {
    let output = Evalhost::new().args(["list", "cases/"]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    for row in [
        "bash-approved ",
        "type-error-fix ",
        "build-error-fix ",
        "over-budget ",
        "echo-approved ",
        "json-schema ",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "no row {row}:\n{stdout}"
        );
    }
    // The example of `evalhost list --help`.
    let output = Evalhost::new()
        .args(["list", "cases/mino", "cases/nexus", "cases/agentcompany"])
        .run();
    output.assert_code(0);
    let output = Evalhost::new().args(["check", "cases/"]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(stdout.starts_with("ok: "), "{stdout}");
}

#[test]
fn run_cases_runs_every_suite_and_the_failing_ones_fail() {
    // docs/reports.md: `evalhost run --out out/ --junit junit.xml --html report.html cases/`.
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            o.join("out").to_str().unwrap(),
            "--junit",
            o.join("junit.xml").to_str().unwrap(),
            "--html",
            o.join("report.html").to_str().unwrap(),
            // Every suite but `cases/agents/`, whose real agents `agents/presets.rs` runs.
            "cases/agentcompany",
            "cases/agentcompany-failing",
            "cases/beyond",
            "cases/mino",
            "cases/mino-failing",
            "cases/nexus",
            "cases/nexus-failing",
        ])
        .run();
    output.assert_code(1);
    let stderr = output.stderr();
    assert!(
        stderr.ends_with("Error: Eval failed: 3 of 22 cases did not pass every run\n"),
        "{stderr}"
    );
    for file in ["out/report.json", "junit.xml", "report.html"] {
        assert!(o.join(file).is_file(), "{file}");
    }
}

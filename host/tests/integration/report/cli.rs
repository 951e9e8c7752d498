//! What the reports say about a run, as a user reads them: which grader entry gave each
//! failure and error (a case may use one grader several times with different configs), in
//! the text report, JUnit, the HTML page and the JSON; and a header that tells the runs the
//! cases really made when a case sets its own `runs:`.

use std::path::Path;

use crate::support::evalhost::Evalhost;
use crate::support::guests;

/// `cases/twice.yaml`: `final_text_contains` twice (one passes, one fails) and one path
/// grader twice with two configs (both trap), beside a copy of the hostile component.
fn suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::copy(guests::hostile(), dir.path().join("hostile.wasm")).unwrap();
    std::fs::write(
        dir.path().join("cases/twice.yaml"),
        "name: twice
prompt: Say hello.
model:
  - text: hello there
graders:
  - final_text_contains: hello
  - final_text_contains: goodbye
  - ../hostile.wasm#unreachable: {n: 1}
  - ../hostile.wasm#unreachable: {n: 2}
",
    )
    .unwrap();
    dir
}

fn path(dir: &Path, rel: &str) -> String {
    dir.join(rel).to_str().unwrap().to_owned()
}

#[test]
fn every_failure_and_error_line_names_its_grader_entry() {
    let dir = suite();
    let (junit, html, out) = (
        path(dir.path(), "junit.xml"),
        path(dir.path(), "report.html"),
        path(dir.path(), "out"),
    );
    let output = Evalhost::new()
        .args([
            "run",
            "--junit",
            &junit,
            "--html",
            &html,
            "--out",
            &out,
            &path(dir.path(), "cases"),
        ])
        .run();
    output.assert_code(1);
    let stdout = output.stdout();
    let lines = [
        r#"twice run 1: graders[1] final_text_contains "goodbye": final text "hello there""#,
        r#"twice run 1: error: graders[2] ../hostile.wasm#unreachable {"n":1}: trapped: wasm trap: wasm `unreachable` instruction executed"#,
        r#"twice run 1: error: graders[3] ../hostile.wasm#unreachable {"n":2}: trapped: wasm trap: wasm `unreachable` instruction executed"#,
    ];
    let failure_lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  twice run 1: "))
        .map(str::trim_start)
        .collect();
    assert_eq!(failure_lines, lines, "{stdout}");

    // JUnit: the same lines, without the case name, in the <error> body.
    let xml = std::fs::read_to_string(&junit).unwrap();
    for line in lines {
        let line = line.trim_start_matches("twice ").replace('"', "&quot;");
        assert!(xml.contains(&line), "{line}\n{xml}");
    }

    // HTML: each verdict row names its entry.
    let page = std::fs::read_to_string(&html).unwrap();
    for entry in [
        "graders[0] final_text_contains",
        "graders[1] final_text_contains",
        "graders[2] ../hostile.wasm#unreachable",
        "graders[3] ../hostile.wasm#unreachable",
    ] {
        assert!(page.contains(&format!("<code>{entry}</code>")), "{entry}");
    }

    // JSON: every verdict carries its entry's index.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let entries: Vec<&serde_json::Value> = report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["entry"])
        .collect();
    assert_eq!(entries, [0, 1, 2, 3]);
}

#[test]
fn the_header_tells_the_runs_the_cases_set() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    for (name, runs) in [("one", ""), ("three", "runs: 3\n")] {
        std::fs::write(
            cases.join(format!("{name}.yaml")),
            format!(
                "name: {name}\nprompt: Say hi.\n{runs}model:\n  - text: hi\ngraders:\n  - final_text_contains: hi\n"
            ),
        )
        .unwrap();
    }
    let cases = cases.to_str().unwrap();
    let html = path(dir.path(), "report.html");
    let output = Evalhost::new().args(["run", "--html", &html, cases]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert_eq!(
        stdout.lines().next(),
        Some(
            "Eval replay mode: 2 cases, 1 to 3 runs each, scripted model (synthetic token counts)."
        ),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(" · 1 to 3 runs per case · "), "{page}");

    // Every case selected runs three times: so says the header, whatever --runs is.
    let output = Evalhost::new()
        .args(["run", "--filter", "three", cases])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert_eq!(
        stdout.lines().next(),
        Some("Eval replay mode: 1 cases, 3 runs each, scripted model (synthetic token counts)."),
        "{stdout}"
    );
    let output = Evalhost::new().args(["run", "--runs", "2", cases]).run();
    let stdout = output.stdout();
    assert!(
        stdout.starts_with("Eval replay mode: 2 cases, 2 to 3 runs each, "),
        "{stdout}"
    );
}

/// `evalhost graders`: one column each for name, version and component, as wide as the
/// widest cell (the longest built-in name is longer than the fixed 24 characters once used).
#[test]
fn the_graders_table_keeps_its_columns_aligned() {
    let output = Evalhost::new().args(["graders"]).run();
    output.assert_code(0);
    let stdout = output.stdout();
    let longest = stdout
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default().len())
        .max()
        .unwrap();
    for line in stdout.lines() {
        let name = line.split_whitespace().next().unwrap();
        let rest = &line[longest + 2..];
        assert_eq!(
            line[name.len()..longest + 2].trim(),
            "",
            "the version starts in the same column: {line:?}"
        );
        assert!(
            rest.starts_with("1.0.0  builtin  "),
            "version and component aligned: {line:?}"
        );
    }
}

/// A grader that passes with a message (`Verdict::pass_with`) keeps it in every report: the
/// JSON verdict, a `pass:` line in the text report, JUnit's `<system-out>`, the HTML row.
#[test]
fn a_pass_message_is_kept_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::copy(guests::hostile(), dir.path().join("hostile.wasm")).unwrap();
    std::fs::write(
        dir.path().join("cases/said.yaml"),
        "name: said\nprompt: Say hello.\nmodel:\n  - text: hello\ngraders:\n  - final_text_contains: hello\n  - ../hostile.wasm#ok: null\n",
    )
    .unwrap();
    let (junit, html, out) = (
        path(dir.path(), "junit.xml"),
        path(dir.path(), "report.html"),
        path(dir.path(), "out"),
    );
    let output = Evalhost::new()
        .args([
            "run",
            "--junit",
            &junit,
            "--html",
            &html,
            "--out",
            &out,
            &path(dir.path(), "cases"),
        ])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    let said: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  said run 1: "))
        .collect();
    assert_eq!(
        said,
        ["  said run 1: pass: graders[1] ../hostile.wasm#ok: ok"],
        "{stdout}"
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<system-out>run 1: pass: graders[1] ../hostile.wasm#ok: ok\n</system-out>"),
        "{xml}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<pre>ok</pre>"), "{page}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let messages: Vec<&serde_json::Value> = report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["message"])
        .collect();
    // A plain pass (the built-in's) has no message; the probe's pass keeps its own.
    assert_eq!(messages, ["", "ok"]);
}

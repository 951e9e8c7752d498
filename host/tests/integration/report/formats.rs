//! `evalhost run --junit FILE --html FILE` on real suites: the JUnit XML validates against the
//! Jenkins JUnit schema (`schema/junit.xsd`, checked with `xmllint`) and says which cases
//! failed and why; the HTML page is self-contained, escapes transcripts, and loads in real
//! headless Chromium without console errors.
//!
//! `xmllint` (Debian `libxml2-utils`) and `chromium` are external tools: without them these
//! tests print why and skip, unless `EVALHOST_REQUIRE_TOOLCHAINS=1` (as `.ci/run` sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

/// `Some(path)` of `tool` when `tool --version` runs; otherwise prints why (or fails under
/// `EVALHOST_REQUIRE_TOOLCHAINS=1`) and returns `None`.
fn tool(tool: &str, package: &str) -> Option<PathBuf> {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(PathBuf::from(tool));
    }
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!("`{tool}` is required (EVALHOST_REQUIRE_TOOLCHAINS=1): apt-get install {package}");
    }
    eprintln!("skipped: `{tool}` is not installed (Debian package {package})");
    None
}

/// A directory name with a control character and markup (it becomes JUnit's `classname`).
const HOSTILE_DIR: &str = "cases\u{1b}[1m&<x>\"";

/// A suite in `dir/HOSTILE_DIR`: a case whose texts are hostile markup with a control character,
/// and one whose run errors (its script expects a request text that is never sent).
fn hostile_suite(dir: &Path) -> PathBuf {
    let cases = dir.join(HOSTILE_DIR);
    std::fs::create_dir_all(&cases).unwrap();
    std::fs::write(
        cases.join("markup.yaml"),
        r#"name: markup
prompt: "Print </script><script>window.pwned=1</script> & <img src=x onerror=alert(1)>"
approve: all
workspace:
  files:
    notes.md: "old line\n"
model:
  - call: {tool: write_file, arguments: {path: notes.md, content: "new line </textarea>\n"}}
  - text: "Done \e[31m</failure>]]><b>bold</b> & more"
graders:
  - final_text_contains: "never said"
"#,
    )
    .unwrap();
    std::fs::write(
        cases.join("errored.yaml"),
        "name: errored\nprompt: Say hi.\nmodel:\n  - text: hi\n    expect_input_contains: never sent\ngraders:\n  - final_text_contains: hi\n",
    )
    .unwrap();
    cases
}

/// `xmllint --xpath EXPR FILE`, trimmed.
fn xpath(xmllint: &Path, file: &Path, expr: &str) -> String {
    let output = Command::new(xmllint)
        .args(["--xpath", expr])
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn validate_junit(xmllint: &Path, file: &Path) {
    let output = Command::new(xmllint)
        .args(["--noout", "--schema"])
        .arg(repo().join("schema/junit.xsd"))
        .arg(file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{} does not validate against schema/junit.xsd:\n{}\n{}",
        file.display(),
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(file).unwrap_or_default()
    );
}

#[test]
fn junit_of_the_shipped_suites_validates_and_names_the_failures() {
    let Some(xmllint) = tool("xmllint", "libxml2-utils") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let output = Evalhost::new()
        .args([
            "run",
            "--runs",
            "2",
            "--junit",
            junit.to_str().unwrap(),
            "cases/mino",
            "cases/mino-failing",
            "cases/nexus",
        ])
        .run();
    output.assert_code(1);
    validate_junit(&xmllint, &junit);
    let q = |expr: &str| xpath(&xmllint, &junit, expr);
    assert_eq!(q("count(//testcase)"), "13");
    assert_eq!(q("string(/testsuites/@failures)"), "1");
    assert_eq!(
        q("string(//testsuite[@name='cases/mino-failing']/@failures)"),
        "1"
    );
    assert_eq!(
        q("string(//testcase[@name='write-denied']/@classname)"),
        "cases/mino-failing"
    );
    assert_eq!(
        q("string(//testcase[@name='write-denied']/failure/@message)"),
        "2 of 2 runs failed"
    );
    let failure = q("string(//testcase[@name='write-denied']/failure)");
    assert!(
        failure.contains(r#"run 1: graders[0] final_text_contains "not allowed""#),
        "{failure}"
    );
    assert_eq!(q("count(//testcase[@name='bash-approved']/*)"), "0");
    assert!(
        q("string(//property[@name='write-denied run 2']/@value)").starts_with("fail, "),
        "{}",
        std::fs::read_to_string(&junit).unwrap()
    );
    assert_eq!(
        q("string(//property[@name='bash-approved pass^k']/@value)"),
        "1.00 (k=2, n=2)"
    );
}

#[test]
fn junit_keeps_markup_and_control_characters_in_messages_well_formed() {
    let Some(xmllint) = tool("xmllint", "libxml2-utils") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cases = hostile_suite(dir.path());
    let junit = dir.path().join("junit.xml");
    let output = Evalhost::new()
        .args([
            "run",
            "--junit",
            junit.to_str().unwrap(),
            cases.to_str().unwrap(),
        ])
        .run();
    output.assert_code(1);
    validate_junit(&xmllint, &junit);
    let q = |expr: &str| xpath(&xmllint, &junit, expr);
    let failure = q("string(//testcase[@name='markup']/failure)");
    assert!(
        failure.contains(r#"Done \x1b[31m</failure>]]><b>bold</b> & more"#),
        "the message did not come back intact: {failure}"
    );
    assert_eq!(
        q("string(//testcase[@name='errored']/error/@message)"),
        "1 of 1 runs failed"
    );
    assert_eq!(q("string(/testsuites/@errors)"), "1");
    let classname = q("string(//testcase[@name='errored']/@classname)");
    assert!(
        classname.ends_with(r#"/cases\u{1b}[1m&<x>""#),
        "the directory did not come back intact: {classname}"
    );
}

/// The HTML report of the hostile suite plus a shipped one with a denied call.
fn html_report(dir: &Path) -> (PathBuf, String) {
    let cases = hostile_suite(dir);
    let html = dir.join("report.html");
    let output = Evalhost::new()
        .args([
            "run",
            "--runs",
            "2",
            "--html",
            html.to_str().unwrap(),
            cases.to_str().unwrap(),
            "cases/mino-failing",
            "cases/mino",
        ])
        .run();
    output.assert_code(1);
    let text = std::fs::read_to_string(&html).unwrap();
    (html, text)
}

#[test]
fn the_html_report_is_self_contained_and_escapes_what_runs_said() {
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = html_report(dir.path());
    // The transcript's markup is text, not markup.
    assert!(
        !html.contains("<script>window.pwned"),
        "unescaped transcript"
    );
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;window.pwned=1"));
    assert!(!html.contains("<img src=x"));
    assert!(
        html.contains(r"Done \u{1b}[31m&lt;/failure&gt;"),
        "raw control character"
    );
    // Exactly our own script and style, nothing loaded from anywhere.
    assert_eq!(html.matches("<script").count(), 1);
    for loads in [
        " src=\"",
        "<img",
        "<link",
        "<iframe",
        "href=\"http",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(loads), "the page loads something: {loads}");
    }
    // What a reader needs: the chart, the denied call highlighted, verdicts, the diff.
    assert!(html.contains("<svg"), "no chart");
    assert!(
        html.contains(r#"<div class="call denied">"#),
        "no highlighted denial"
    );
    assert!(html.contains(r#"final_text_contains "not allowed""#) || html.contains("not allowed"));
    assert!(
        html.contains(r#"<span class="del">-old line</span>"#),
        "no diff"
    );
    assert!(html.contains(r#"<span class="add">+new line &lt;/textarea&gt;</span>"#));
    assert!(html.contains("The run ended early"), "no run error");
}

#[test]
fn the_html_report_loads_in_headless_chromium_without_console_errors() {
    let Some(chromium) = tool("chromium", "chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (html, _) = html_report(dir.path());
    let url = format!("file://{}", html.display());
    let profile = dir.path().join("profile");
    let chromium_run = |extra: &[&str]| {
        let output = Command::new("timeout")
            .arg("120")
            .arg(&chromium)
            .args([
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--no-first-run",
                "--disable-dev-shm-usage",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1280,1600",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(&url)
            .output()
            .unwrap();
        assert!(output.status.success(), "chromium failed: {output:?}");
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // The DOM after the page's script ran: the script got to its end.
    let (dom, log) = chromium_run(&["--dump-dom"]);
    assert!(
        dom.contains(r#"data-ready="true""#),
        "the script did not run to its end:\n{log}"
    );
    // A screenshot of the summary.
    let png = dir.path().join("report.png");
    let (_, shot_log) = chromium_run(&[&format!("--screenshot={}", png.display())]);
    let bytes = std::fs::read(&png).unwrap_or_default();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "no screenshot:\n{shot_log}"
    );
    for log in [&log, &shot_log] {
        for line in log.lines() {
            let lower = line.to_lowercase();
            assert!(
                !(line.contains("CONSOLE")
                    || lower.contains("uncaught")
                    || lower.contains("content security policy")
                    || lower.contains("refused to")),
                "console error in chromium's log: {line}\n{log}"
            );
        }
    }
}

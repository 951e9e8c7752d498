//! `file_absent` end to end: `evalhost run` on real cases whose agent leaves a file behind, or
//! cleans it up, graded by the built-in component the binary embeds.

use crate::support::evalhost::Evalhost;

const LEFT_BEHIND: &str = r#"name: left-behind
prompt: Debug the build, then clean up after yourself.
approve: all
model:
  - call: {tool: write_file, arguments: {path: debug.log, content: "trace\n"}}
  - call: {tool: write_file, arguments: {path: report.txt, content: "fixed\n"}}
  - text: Fixed; the report is in report.txt.
graders:
  - file_absent: debug.log
  - file_absent: [build, debug.log, report.txt]
  - file_absent: [build, notes/debug.log]
"#;

const CLEANED_UP: &str = r#"name: cleaned-up
prompt: Debug the build, then clean up after yourself.
approve: all
model:
  - call: {tool: write_file, arguments: {path: debug.log, content: "trace\n"}}
  - call: {tool: bash, arguments: {command: rm debug.log}}
  - text: Fixed, and the debug log is gone.
graders:
  - file_absent: debug.log
  - file_absent: [build, debug.log]
"#;

#[test]
fn a_file_the_agent_leaves_fails_naming_it_and_a_removed_one_passes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("left-behind.yaml"), LEFT_BEHIND).unwrap();
    std::fs::write(dir.path().join("cleaned-up.yaml"), CLEANED_UP).unwrap();
    let output = Evalhost::new()
        .args(["run", dir.path().to_str().unwrap()])
        .run();
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(output.code(), 1, "stdout:\n{stdout}\nstderr:\n{stderr}");
    for message in [
        "left-behind run 1: graders[0] file_absent debug.log: debug.log exists (a regular file of 6 bytes)",
        "left-behind run 1: graders[1] file_absent [build debug.log report.txt]: debug.log exists \
         (a regular file of 6 bytes); report.txt exists (a regular file of 6 bytes)",
    ] {
        assert!(
            stdout.lines().any(|l| l.trim() == message),
            "missing {message:?} in:\n{stdout}"
        );
    }
    // Only the two entries that found something failed; the control case passed whole.
    assert!(!stdout.contains("graders[2]"), "{stdout}");
    assert!(!stdout.contains("cleaned-up run 1:"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("cleaned-up") && l.ends_with("pass")),
        "{stdout}"
    );
    assert!(!stdout.contains("not evaluable"), "{stdout}");
}

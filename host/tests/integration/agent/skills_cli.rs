//! End to end: the real binary on a case that seeds an Agent Skill through `workspace.files`:
//! `--out` keeps the `session_skills` record and the evidence's `skills`, and the
//! `skill_viewed` grader passes or fails with its message.

use crate::support::evalhost::{Evalhost, Output};

#[test]
fn the_skill_view_case_passes_and_out_keeps_the_session_skills_record() {
    let out = tempfile::tempdir().unwrap();
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            out.path().to_str().unwrap(),
            "cases/beyond/skill-view.yaml",
        ])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("skill-view ") && l.ends_with("pass")),
        "{stdout}"
    );
    let log = std::fs::read_to_string(out.path().join("skill-view/run-1.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0]["type"], "session_start");
    assert_eq!(records[1]["type"], "session_skills", "{log}");
    assert_eq!(
        records[1]["skills"],
        serde_json::json!([{
            "name": "release-notes",
            "description": "Write release notes for a version into RELEASE.md. Use when asked for release notes.",
        }])
    );
    assert_eq!(records[1]["problems"], serde_json::json!([]));
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("skill-view/run-1.evidence.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(evidence["skills"], records[1]["skills"]);
    assert!(
        evidence["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "skill.discover"),
        "{evidence}"
    );
}

/// A case in a temp dir: what `evalhost run` on it printed.
fn run_case(name: &str, body: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join(format!("{name}.yaml"));
    std::fs::write(&case, format!("name: {name}\n{body}")).unwrap();
    Evalhost::new().arg("run").arg(&case).run()
}

const SEEDED: &str = "prompt: Write release notes.\nworkspace:\n  files:\n    .agents/skills/release-notes/SKILL.md: \"---\\nname: release-notes\\ndescription: Write release notes.\\n---\\nUse CHANGES.txt.\\n\"\n";

#[test]
fn skill_viewed_fails_when_the_skill_was_only_listed() {
    let output = run_case(
        "skill-skipped",
        &format!(
            "{SEEDED}model:\n  - call: {{tool: skill_view, arguments: {{}}}}\n  - text: I listed the skills and read none.\ngraders:\n  - skill_viewed: release-notes\n"
        ),
    );
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("skill_viewed release-notes: skills viewed []\n"),
        "{stdout}"
    );
}

#[test]
fn skill_viewed_passes_when_the_skill_was_read() {
    let output = run_case(
        "skill-read",
        &format!(
            "{SEEDED}model:\n  - call: {{tool: skill_view, arguments: {{name: release-notes}}}}\n  - text: Done.\n    expect_input_contains: Use CHANGES.txt.\ngraders:\n  - skill_viewed: release-notes\n  - event_emitted: {{type: skill.discover, where: {{Count: 1}}}}\n"
        ),
    );
    output.assert_code(0);
}

#[test]
fn skill_viewed_takes_only_a_skill_name() {
    let output = run_case(
        "skill-typo",
        "prompt: hi\nmodel:\n  - text: hello\ngraders:\n  - skill_viewed: Release_Notes\n",
    );
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains(
            "skill-typo.yaml:6:5: graders[0].skill_viewed: invalid config: \"Release_Notes\" is not a skill name: 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen, without `--`"
        ),
        "{stderr}"
    );
}

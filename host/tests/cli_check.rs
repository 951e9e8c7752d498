//! `evalhost check`: validate every case, grader reference and config without running.

mod common;

use common::evalhost;

#[test]
fn the_shipped_suites_are_valid() {
    let paths = ["cases/mino", "cases/beyond", "cases/nexus", "cases/agentcompany"];
    let mut args = vec!["check"];
    args.extend(paths);
    let (code, stdout, stderr) = evalhost(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // The counts agree with what `list` sees in the same paths.
    let mut list = vec!["list", "--json"];
    list.extend(paths);
    let (_, listed, _) = evalhost(&list);
    let cases: serde_json::Value = serde_json::from_str(&listed).expect("JSON");
    let cases = cases.as_array().expect("an array");
    let entries: usize = cases.iter().map(|c| c["graders"].as_array().unwrap().len()).sum();
    assert_eq!(
        stdout,
        format!("ok: {} cases, {entries} grader entries\n", cases.len())
    );
    assert!(cases.len() >= 17, "{listed}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn every_broken_case_is_reported_with_its_location_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "bad-regex.yaml",
        "name: bad-regex\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n  - final_text_matches: \"(\"\n",
    );
    write(
        "no-such-grader.yaml",
        "name: no-such-grader\nprompt: Hi.\nmodel:\n  - text: hi\ngraders:\n  - max_requests: 3\n  - final_text_containz: hi\n",
    );
    write("typo.yaml", "name: typo\nprompt: Hi.\ngraderz: []\n");
    // Would create `ran` in its workspace if check ran agents; a valid case otherwise.
    let marker = dir.path().join("ran");
    write(
        "external.yaml",
        &format!(
            "name: external\nprompt: Hi.\nagent: {{command: [touch, {}]}}\ngraders:\n  - max_requests: 3\n",
            marker.display()
        ),
    );
    let (code, stdout, stderr) = evalhost(&["check", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].ends_with("bad-regex.yaml:6:5: graders[0].final_text_matches: invalid config: invalid regex: regex parse error: (")
            || lines[0].contains("bad-regex.yaml:6:5: graders[0].final_text_matches: "),
        "{stderr}"
    );
    assert!(
        lines[1].contains("no-such-grader.yaml:7:5: graders[1].final_text_containz: unknown grader `final_text_containz`"),
        "{stderr}"
    );
    assert!(
        lines[2].contains("typo.yaml:3:1: graderz: unknown field"),
        "{stderr}"
    );
    assert_eq!(
        lines[3],
        "Error: check failed: 3 problems (each shown above with its file, line and field)"
    );
    assert!(!marker.exists(), "check must not start the case's agent");
}

#[test]
fn a_missing_path_is_a_usage_error() {
    let (code, stdout, stderr) = evalhost(&["check", "cases/no-such-suite"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("cases/no-such-suite"), "{stderr}");
}

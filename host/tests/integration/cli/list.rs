//! `evalhost list`: every case of the three formats, with its tags, runs and graders.

use crate::support::evalhost::Evalhost;

#[test]
fn lists_cases_of_every_format_with_tags_and_graders() {
    let output = Evalhost::new()
        .args([
            "list",
            "cases/mino",
            "cases/nexus/build-error-fix",
            "cases/agentcompany/ceo-bootstrap-empty.jsonl",
        ])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["CASE", "FORMAT", "RUNS", "TAGS", "GRADERS"],
        "{stdout}"
    );
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{stdout}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    // A YAML case: no own runs or tags; its graders, each once, in order.
    assert_eq!(
        row("bash-approved"),
        [
            "bash-approved",
            "yaml",
            "-",
            "-",
            "tool_called,",
            "result_status,",
            "final_text_contains,",
            "max_tool_calls"
        ]
    );
    let nexus = row("build-error-fix");
    assert_eq!(nexus[1], "nexus", "{stdout}");
    assert_eq!(
        nexus[3], "react,tools,mock",
        "the Nexus case's tags: {stdout}"
    );
    assert_eq!(row("ceo-bootstrap-empty")[1], "agentcompany", "{stdout}");
    assert_eq!(
        lines.last().copied(),
        Some(
            format!(
                "7 cases, {} grader entries",
                grader_entries(&[
                    "cases/mino",
                    "cases/nexus/build-error-fix",
                    "cases/agentcompany/ceo-bootstrap-empty.jsonl"
                ])
            )
            .as_str()
        ),
        "{stdout}"
    );
}

/// Grader entries of the cases under `paths`, counted from `list --json`.
fn grader_entries(paths: &[&str]) -> usize {
    let mut args = vec!["list", "--json"];
    args.extend(paths);
    let output = Evalhost::new().args(args).run();
    output.assert_code(0);
    let stdout = output.stdout();
    let cases: serde_json::Value = serde_json::from_str(stdout).expect("list --json is JSON");
    cases
        .as_array()
        .expect("an array")
        .iter()
        .map(|c| c["graders"].as_array().map_or(0, Vec::len))
        .sum()
}

#[test]
fn json_describes_each_case() {
    let output = Evalhost::new()
        .args(["list", "--json", "cases/beyond", "cases/nexus"])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    let cases: serde_json::Value = serde_json::from_str(stdout).expect("JSON");
    let cases = cases.as_array().expect("an array");
    let case = |name: &str| {
        cases
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {stdout}"))
    };
    let diff = case("workspace-diff");
    assert_eq!(diff["format"], "yaml");
    assert_eq!(diff["path"], "cases/beyond/workspace-diff.yaml");
    assert_eq!(diff["live"], true);
    assert!(
        diff["graders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "workspace_diff" && g["config"].is_object()),
        "{diff}"
    );
    let fanout = case("multi-subagent-fanout");
    assert_eq!(fanout["format"], "nexus");
    assert!(!fanout["tags"].as_array().unwrap().is_empty(), "{fanout}");
}

#[test]
fn a_broken_case_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("typo.yaml"),
        "name: typo\npromt: Hi.\ngraders:\n  - max_requests: 1\n",
    )
    .unwrap();
    let output = Evalhost::new()
        .args(["list", dir.path().to_str().unwrap()])
        .run();
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("typo.yaml:2:1: promt: unknown field")
            && stderr.contains("did you mean `prompt`?"),
        "{stderr}"
    );
}

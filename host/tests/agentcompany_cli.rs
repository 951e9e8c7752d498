//! End to end: the real binary on the AgentCompany example suites, and `evalhost record`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn evalhost(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalhost"))
        .args(args)
        .current_dir(repo())
        .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
        .env_remove("ANTHROPIC_API_KEY")
        .envs(env.iter().copied())
        .output()
        .expect("evalhost runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_agentcompany_suite_passes() {
    let (code, stdout, stderr) = evalhost(&["run", "cases/agentcompany"], &[]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("\nbuild-error-fix      1     1     1.00    1.00    3.0  2.0  "),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nceo-bootstrap-empty  1     1     1.00    1.00    4.0  4.0  "),
        "{stdout}"
    );
}

#[test]
fn a_single_fixture_file_runs() {
    let (code, stdout, stderr) =
        evalhost(&["run", "cases/agentcompany/build-error-fix.jsonl"], &[]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
}

#[test]
fn failing_assertions_and_rubric_dimensions_are_reported() {
    let (code, stdout, stderr) = evalhost(&["run", "cases/agentcompany-failing"], &[]);
    assert_eq!(code, 1, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("tool_call_count hire_agent max_count 2: 3 calls"),
        "{stdout}"
    );
    assert!(stdout.contains(r#"semantic_rubric ceo-team-bootstrap: missing ["approve_ceo_strategy" "budget"]; forbidden present ["research"]"#), "{stdout}");
}

#[test]
fn the_agent_core_version_can_be_pinned() {
    let (code, _, stderr) = evalhost(
        &[
            "run",
            "--expect-agent-core-version",
            "1.0.0",
            "cases/agentcompany",
        ],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(r#"build-error-fix.jsonl:1: meta.piAgentCoreVersion: recorded with "0.67.68", but "1.0.0" is expected"#), "{stderr}");
}

const RECORD: &[&str] = &[
    "record",
    "--scenario",
    "Empty company",
    "--fixture-id",
    "ceo-bootstrap-empty",
    "--provider",
    "anthropic",
    "--model",
    "claude-sonnet-4-5",
    "--system-prompt-file",
    "cases/agentcompany/scenarios/ceo-bootstrap-empty/system.txt",
    "--user-message-file",
    "cases/agentcompany/scenarios/ceo-bootstrap-empty/user.txt",
    "--output",
    "target/agentcompany-record-test.jsonl",
];

#[test]
fn record_refuses_to_run_without_the_api_key() {
    let (code, _, stderr) = evalhost(RECORD, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "Error: ANTHROPIC_API_KEY is not set: the recorder calls the live provider and refuses to run without its API key"
    );
}

#[test]
fn record_needs_a_provider_and_writes_nothing() {
    let (code, _, stderr) = evalhost(RECORD, &[("ANTHROPIC_API_KEY", "sk-test")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with(
            "Error: recording needs a provider: live provider calls are not available yet"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#""fixtureId":"ceo-bootstrap-empty""#),
        "{stderr}"
    );
    assert!(
        !repo()
            .join("target/agentcompany-record-test.jsonl")
            .exists()
    );
}

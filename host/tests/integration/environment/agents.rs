//! The agents inside the container: `cases/environments` (evalhost's own agent, a command
//! agent of the case's own, Codex and Claude Code mounted from the host, pi and Gemini CLI
//! with the host's `node`) passes with `--jobs 4` (four containers at once), each case only
//! because its agent ran where the image's set-up left `/etc/evalhost-environment`; the same
//! Codex case without its environment fails (the control: the host has no such file).

use crate::support::common::repo;
use crate::support::docker::{debian_image, require_docker};

#[test]
fn the_agents_run_inside_the_container() {
    let Some(()) = require_docker() else { return };
    if crate::agents::presets::installed(&["codex", "claude", "pi", "gemini"]).is_none() {
        return;
    }
    debian_image();
    assert!(!std::path::Path::new("/etc/evalhost-environment").exists());
    let dir = tempfile::tempdir().unwrap();
    let suite = repo().join("cases/environments");
    let (outcome, report) =
        super::run::run_in(dir.path(), &["--jobs", "4"], &[suite.to_str().unwrap()]);
    outcome.assert_code(0);
    for case in [
        "own-agent",
        "command-agent",
        "codex",
        "claude-code",
        "pi",
        "gemini-cli",
    ] {
        let run = super::run::first_run(&report, case);
        assert_eq!(run["pass"], true, "{case}: {run}");
        assert_eq!(run["image"]["source"], "evalhost-test/debian:bookworm");
    }

    // Control: Codex on the host, where nothing left /etc/evalhost-environment.
    let yaml = std::fs::read_to_string(suite.join("codex.yaml")).unwrap();
    let start = yaml.find("environment:\n").unwrap();
    let end = yaml.find("agent: ").unwrap();
    let host = format!("{}{}", &yaml[..start], &yaml[end..]);
    std::fs::write(dir.path().join("codex.yaml"), host).unwrap();
    let (outcome, _) = super::run::run_in(dir.path(), &[], &["codex.yaml"]);
    outcome.assert_code(1);
    // `cat` found no such file: its exit code was not 0.
    outcome.assert_stdout_contains("Request 2 did not contain \"Process exited with code 0\"");
}

/// Under `approve: none`, Codex's own sandbox cannot run in the container (as under evalhost's
/// confinement), so the workspace is mounted read-only: its write fails. Control: the same
/// case under `approve: all` writes the file, and its graders fail.
#[test]
fn codex_cannot_write_a_read_only_workspace_in_the_container() {
    let Some(()) = require_docker() else { return };
    if crate::agents::presets::installed(&["codex"]).is_none() {
        return;
    }
    let environment = format!("environment:\n  image: {}\n", debian_image());
    let case = std::fs::read_to_string(repo().join("cases/agents/codex/codex-read-only.yaml"))
        .unwrap()
        + &environment;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("codex-read-only.yaml"), &case).unwrap();
    let (outcome, report) = super::run::run_in(dir.path(), &[], &["codex-read-only.yaml"]);
    outcome.assert_code(0);
    assert!(super::run::first_run(&report, "codex-read-only")["image"].is_object());

    let writable = case.replace(
        "agent: {preset: codex}",
        "approve: all\nagent: {preset: codex}",
    );
    std::fs::write(dir.path().join("codex-read-only.yaml"), writable).unwrap();
    let (outcome, _) = super::run::run_in(dir.path(), &[], &["codex-read-only.yaml"]);
    outcome.assert_code(1);
}

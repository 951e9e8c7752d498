//! The command line's agent wins over a case's own: `run --agent NAME` and `--agent-cmd` run
//! instead of the agent a case's `agent:` names (not only instead of evalhost's own), and the
//! plan's note names the cases they replaced; `record --live --agent NAME` records a real
//! agent's preset the same way. A case's command agent names the files beside its case file
//! (`agent: {command: [python3, my_agent.py]}`, as docs/live-mode.md shows it).
//!
//! The tests with a real agent (Codex CLI) are skipped without it, unless
//! `EVALHOST_REQUIRE_TOOLCHAINS=1`.

use std::path::Path;

use serde_json::json;

use crate::support::common::repo;
use crate::support::evalhost::{Evalhost, Output};
use crate::support::live::{FakeProvider, Project, Step, responses_output};

use super::external::agent_script;

/// A case the test agent passes, with this `agent:` line (or none).
fn case(name: &str, agent: &str) -> String {
    super::external::case(name, agent, "forty-two")
}

/// `evalhost run ARGS cases` in `dir`.
fn run(dir: &Path, args: &[&str]) -> Output {
    Evalhost::new()
        .arg("run")
        .args(args)
        .arg("cases")
        .current_dir(dir)
        .run()
}

/// Codex CLI on PATH; otherwise the test is skipped (or fails under
/// `EVALHOST_REQUIRE_TOOLCHAINS=1`).
fn codex_installed() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("codex").is_file()));
    if !found {
        let install = "npm install -g @openai/codex@0.171.0";
        if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
            panic!("required (EVALHOST_REQUIRE_TOOLCHAINS=1) but missing: codex ({install})");
        }
        eprintln!("skipped: not installed: codex ({install})");
    }
    found
}

#[test]
fn agent_cmd_runs_instead_of_the_agent_a_case_names_and_the_plan_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    // One case names a preset that is not even installed here, one runs evalhost's agent.
    for (name, agent) in [
        ("names-a-preset", "agent: {preset: claude-code}\n"),
        ("own-agent", ""),
    ] {
        std::fs::write(
            dir.path().join(format!("cases/{name}.yaml")),
            case(name, agent),
        )
        .unwrap();
    }
    let command = format!("python3 '{}'", agent_script().display());
    let output = run(dir.path(), &["--agent-cmd", &command]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.starts_with(
            "Agent: --agent-cmd runs instead of the agent 1 case names: names-a-preset (preset claude-code).\n"
        ),
        "{stdout}"
    );
    assert!(stdout.ends_with("All cases passed.\n"), "{stdout}");
    assert!(!stdout.contains("Agents: claude-code"), "{stdout}");
}

#[test]
fn agent_codex_runs_instead_of_another_preset_a_case_names() {
    if !codex_installed() {
        return;
    }
    // A case scripted for Codex, its `agent:` changed to Claude Code: only `--agent codex`
    // runs it as scripted.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    let text =
        std::fs::read_to_string(repo().join("cases/agents/codex/codex-write-file.yaml")).unwrap();
    assert!(text.contains("agent: {preset: codex}\n"), "{text}");
    std::fs::write(
        dir.path().join("cases/codex-write-file.yaml"),
        text.replace("agent: {preset: codex}\n", "agent: {preset: claude-code}\n"),
    )
    .unwrap();
    let output = run(dir.path(), &["--agent", "codex", "--timeout", "120"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.starts_with(
            "Agent: --agent codex runs instead of the agent 1 case names: codex-write-file (preset claude-code).\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("\nAgents: codex "), "{stdout}");
    assert!(stdout.ends_with("All cases passed.\n"), "{stdout}");
}

#[test]
fn record_live_runs_the_agent_named_by_agent_and_the_recording_replays_with_it() {
    if !codex_installed() {
        return;
    }
    let write = "printf 'live\\n' > live.txt";
    let round = vec![
        Step::Sse(responses_output(
            json!([{"type": "function_call", "call_id": "call_w", "name": "exec_command",
                    "arguments": json!({"cmd": write}).to_string()}]),
            30,
            5,
        )),
        Step::Sse(responses_output(
            json!([{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Wrote live.txt."}]}]),
            40,
            6,
        )),
    ];
    let fake = FakeProvider::start(round, Step::Status(400, None, "unexpected extra request"));
    let project = Project::for_fake("openai-responses", &fake, "timeout_secs = 60\n");
    // The case runs evalhost's own agent; `--agent codex` records Codex instead.
    project.case(
        "rec",
        "prompt: Write live to live.txt.\napprove: all\ntimeout_secs: 120\n\
         graders:\n  - file_contains: {path: live.txt, text: live}\n",
    );
    std::fs::create_dir(project.path().join("replay")).unwrap();
    let record = project.evalhost(&[
        "record",
        "--live",
        "--agent",
        "codex",
        "cases/rec.yaml",
        "--output",
        "replay/rec-replay.yaml",
    ]);
    drop(fake);
    record.assert_code(0);
    let recorded = std::fs::read_to_string(project.path().join("replay/rec-replay.yaml")).unwrap();
    assert!(
        recorded.contains("\nagent: {preset: codex}\n"),
        "{recorded}"
    );
    assert!(
        recorded.contains("  - call: {tool: \"exec_command\""),
        "{recorded}"
    );
    // Replayed with the provider gone: Codex again, green.
    let replay = project.evalhost(&["run", "replay"]);
    replay.assert_code(0);
    assert!(
        replay.stdout().contains("\nrec-replay  1     1     1.00"),
        "{replay}"
    );
}

/// `agent: {command: [python3, my_agent.py]}`: the script beside the case file is found
/// although the program starts in the run's workspace. The control: the same case with the
/// script elsewhere fails its run (python3 cannot open `my_agent.py` in the workspace).
#[test]
fn a_command_agent_names_the_script_beside_its_case_file() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["cases/here", "cases/elsewhere", "scripts"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::copy(agent_script(), dir.path().join("cases/here/my_agent.py")).unwrap();
    std::fs::copy(agent_script(), dir.path().join("scripts/my_agent.py")).unwrap();
    let agent = "agent: {command: [python3, my_agent.py], timeout_secs: 30}\n";
    std::fs::write(
        dir.path().join("cases/here/beside.yaml"),
        case("beside", agent),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("cases/elsewhere/not-beside.yaml"),
        case("not-beside", agent),
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = run(dir.path(), &["--out", out.to_str().unwrap()]);
    output.assert_code(1);
    let stdout = output.stdout();
    let row = |name: &str| {
        stdout
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(row("beside").ends_with("pass"), "{stdout}");
    assert!(row("not-beside").ends_with("FAIL"), "{stdout}");
    assert!(stdout.ends_with("1 of 2 cases failed.\n"), "{stdout}");
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("beside/run-1.evidence.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(evidence["calls"][0]["name"], "read_file", "{evidence}");
}

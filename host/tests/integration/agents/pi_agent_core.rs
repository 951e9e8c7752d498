//! `evalhost run --agent pi-agent-core`: the real binary replays the AgentCompany fixtures
//! through `@mariozechner/pi-agent-core`'s `Agent` (the Node adapter in agents/pi-agent-core,
//! installed by `.ci/run` with `npm ci`), against the run's model endpoint.
//!
//! Without `node` or the adapter's install the replay tests are skipped, unless
//! `EVALHOST_REQUIRE_TOOLCHAINS=1` (as `.ci/run` sets it), where that fails them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::common::{copy_dir, repo};
use crate::support::evalhost::Evalhost;

/// The install command, as `.ci/run` runs it.
const NPM_LINE: &str = "npm ci --prefix agents/pi-agent-core";

/// `Some(())` when `node` is on PATH and the adapter is installed; otherwise skips (or, under
/// `EVALHOST_REQUIRE_TOOLCHAINS=1`, fails).
fn adapter() -> Option<()> {
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let installed = repo()
        .join("agents/pi-agent-core/node_modules/@mariozechner/pi-agent-core/package.json")
        .is_file();
    if node && installed {
        return Some(());
    }
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!(
            "node and the pi-agent-core adapter are required (EVALHOST_REQUIRE_TOOLCHAINS=1): {NPM_LINE}"
        );
    }
    eprintln!("skipped: node or the pi-agent-core adapter is not installed: {NPM_LINE}");
    None
}

/// The report's table rows (between the header and the summary), failure lines included.
fn rows(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("CASE "))
        .skip(1)
        .take_while(|l| !l.ends_with("passed.") && !l.ends_with("failed."))
        .collect()
}

/// The records of a session log.
fn session(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_type<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

#[test]
fn the_fixtures_replay_green_through_pi_agent_core_with_the_default_replay_s_verdicts() {
    let Some(()) = adapter() else { return };
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();
    let evalhost_output = Evalhost::new()
        .args([
            "run",
            "--agent",
            "pi-agent-core",
            "--out",
            out_dir,
            "cases/agentcompany",
        ])
        .run();
    evalhost_output.assert_code(0);
    let stdout = evalhost_output.stdout();
    let adapter_dir = repo().join("agents/pi-agent-core");
    assert!(
        stdout.starts_with(&format!(
            "Agent: pi-agent-core 0.67.68 (the adapter in {}).\n",
            adapter_dir.display()
        )),
        "{stdout}"
    );
    let evalhost_output = Evalhost::new().args(["run", "cases/agentcompany"]).run();
    evalhost_output.assert_code(0);
    let default_stdout = evalhost_output.stdout();
    assert_eq!(rows(stdout), rows(default_stdout));
    assert_eq!(rows(stdout).len(), 3, "{stdout}");

    // The requests are pi-ai's (Responses, `store: false`, the replay tools the adapter
    // defines from the fixture), and crossed the endpoint into the session log.
    let records = session(&Path::new(out_dir).join("ceo-bootstrap-empty/run-1.jsonl"));
    let requests = of_type(&records, "model_request");
    assert_eq!(requests.len(), 4);
    let body = &requests[0]["body"];
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["input"][0]["role"], "system");
    let tools: Vec<(&str, &str)> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["description"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            (
                "hire_agent",
                "Replays the results recorded for `hire_agent` in fixture ceo-bootstrap-empty."
            ),
            (
                "approve_ceo_strategy",
                "Replays the results recorded for `approve_ceo_strategy` in fixture ceo-bootstrap-empty."
            ),
        ]
    );
    assert_eq!(
        body["tools"][0]["parameters"]["properties"]["department"]["type"],
        "string"
    );
    // The recorded results went back to the model as pi-agent-core's tool results.
    let outputs: Vec<&str> = requests[2]["body"]["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].as_str().unwrap())
        .collect();
    assert_eq!(
        outputs,
        [
            "hired agent-42 (engineering)",
            "hired agent-43 (design)",
            "hired agent-44 (research)"
        ]
    );
    let results: Vec<&str> = of_type(&records, "tool_result")
        .iter()
        .map(|r| r["output"].as_str().unwrap())
        .collect();
    assert_eq!(results.len(), 4);
    assert_eq!(results[3], "strategy approved");

    // A follow-up user turn is its own `agent.prompt`, and its own user message in the log.
    let records = session(&Path::new(out_dir).join("ceo-plan-follow-up/run-1.jsonl"));
    let users: Vec<&str> = of_type(&records, "user_message")
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        users,
        [
            "Draft a 30-day hiring plan for engineering.",
            "Good. Move the frontend hire to week 1 and file it now."
        ]
    );
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    let follow_up = kinds.iter().rposition(|k| *k == "user_message").unwrap();
    assert_eq!(kinds[follow_up - 1], "model_response");
    assert_eq!(kinds[follow_up + 1], "model_request");
}

#[test]
fn a_seed_style_fixtures_directory_replays() {
    let Some(()) = adapter() else { return };
    let dir = tempfile::tempdir().unwrap();
    let eval = dir.path().join("tests/eval");
    copy_dir(
        &repo().join("cases/agentcompany/scenarios"),
        &eval.join("scenarios"),
    );
    std::fs::create_dir_all(eval.join("fixtures")).unwrap();
    std::fs::copy(
        repo().join("cases/agentcompany/type-error-fix.jsonl"),
        eval.join("fixtures/type-error-fix.jsonl"),
    )
    .unwrap();
    let fixtures = eval.join("fixtures");
    let output = Evalhost::new()
        .args([
            "run",
            "--agent",
            "pi-agent-core",
            fixtures.to_str().unwrap(),
        ])
        .run();
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(
        stdout.contains("\ntype-error-fix  1     1     1.00    1.00    3.0  2.0  "),
        "{stdout}"
    );
}

#[test]
fn the_failing_fixture_fails_as_in_the_default_replay() {
    let Some(()) = adapter() else { return };
    let args = [
        "run",
        "--agent",
        "pi-agent-core",
        "cases/agentcompany-failing",
    ];
    let output = Evalhost::new().args(args).run();
    output.assert_code(1);
    let stdout = output.stdout();
    let output = Evalhost::new()
        .args(["run", "cases/agentcompany-failing"])
        .run();
    output.assert_code(1);
    let default_stdout = output.stdout();
    assert_eq!(rows(stdout), rows(default_stdout));
    assert!(
        stdout.contains("graders[0] tool_call_count hire_agent max_count 2: 3 calls"),
        "{stdout}"
    );
}

/// A copy of the shipped suite whose `fixture` says it was recorded with `version`.
fn drifted(fixture: &str, version: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("cases/agentcompany"), dir.path());
    let path = dir.path().join(fixture);
    let text = std::fs::read_to_string(&path).unwrap().replacen(
        r#""piAgentCoreVersion":"0.67.68""#,
        &format!(r#""piAgentCoreVersion":"{version}""#),
        1,
    );
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn a_drifted_agent_core_version_is_the_drift_error_before_any_run() {
    let Some(()) = adapter() else { return };
    let (dir, path) = drifted("type-error-fix.jsonl", "0.66.0");
    let output = Evalhost::new()
        .args([
            "run",
            "--agent",
            "pi-agent-core",
            dir.path().to_str().unwrap(),
        ])
        .run();
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "Error: {}:1: meta.piAgentCoreVersion: recorded with \"0.66.0\", but \"0.67.68\" is expected; re-record the fixture\n",
            path.display()
        )
    );
    // The default replay does not pin the version.
    let output = Evalhost::new()
        .args(["run", dir.path().to_str().unwrap()])
        .run();
    output.assert_code(0);
    // A pin that disagrees with the installed adapter is refused.
    let output = Evalhost::new()
        .args([
            "run",
            "--agent",
            "pi-agent-core",
            "--expect-agent-core-version",
            "0.66.0",
            "cases/agentcompany",
        ])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        "Error: --expect-agent-core-version 0.66.0 disagrees with the installed pi-agent-core 0.67.68; --agent pi-agent-core checks fixtures against the installed version\n"
    );
}

#[test]
fn other_case_kinds_are_refused_before_any_run() {
    let Some(()) = adapter() else { return };
    let output = Evalhost::new()
        .args([
            "run",
            "--agent",
            "pi-agent-core",
            "cases/agentcompany",
            "cases/mino/bash-denied.yaml",
        ])
        .run();
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "Error: `--agent pi-agent-core` replays AgentCompany fixtures (*.jsonl) only; run these cases without it: cases/mino/bash-denied.yaml\n"
    );
}

#[test]
fn a_missing_adapter_install_says_the_install_command() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let output = Evalhost::new()
        .args(["run", "--agent", "pi-agent-core", "cases/agentcompany"])
        .envs([("EVALHOST_PI_AGENT_CORE_DIR", dir)])
        .run();
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(stdout, "");
    let no_node = "Error: `--agent pi-agent-core` needs Node.js 20 or later, and there is no `node` on PATH; install it (e.g. `apt-get install nodejs`)\n";
    if stderr != no_node {
        assert_eq!(
            stderr,
            format!(
                "Error: the pi-agent-core adapter is not installed in {dir}: run `npm ci --prefix {dir}` (or set EVALHOST_PI_AGENT_CORE_DIR to an installed copy of agents/pi-agent-core)\n"
            )
        );
    }
    // Without node on PATH.
    let output = Evalhost::new()
        .args(["run", "--agent", "pi-agent-core", "cases/agentcompany"])
        .envs([("PATH", dir)])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(stderr, no_node);
}

#[test]
fn an_unknown_agent_is_a_usage_error() {
    let output = Evalhost::new()
        .args(["run", "--agent", "nope", "cases/agentcompany"])
        .run();
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        "error: invalid value 'nope' for '--agent <NAME>': unknown agent `nope` (known: codex, claude-code, pi, mini-swe-agent, gemini-cli, pi-agent-core, oracle)\n\nFor more information, try '--help'.\n"
    );
}

/// A case running the adapter on `fixture` against `steps` (a model script other than the
/// fixture's), so the replay executors meet calls the recording does not have.
fn adapter_case(name: &str, fixture: &str, steps: &str) -> String {
    let repo = repo();
    let cases = repo.join("cases/agentcompany");
    format!(
        "name: {name}\nprompt: Go.\nagent: {{command: [node, \"{}\", \"{}\", \"{}\"]}}\nmodel:\n{steps}graders:\n  - final_text_contains: done\n",
        repo.join("agents/pi-agent-core/replay.mjs").display(),
        cases.join(format!("{fixture}.jsonl")).display(),
        cases
            .join(format!("scenarios/{fixture}/system.txt"))
            .display(),
    )
}

#[test]
fn a_call_the_recording_does_not_answer_fails_the_run() {
    let Some(()) = adapter() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shell = "  - call: {tool: shell, arguments: {command: ls}}\n";
    for (name, fixture, steps) in [
        (
            "other-tool",
            "ceo-bootstrap-empty",
            "  - call: {tool: approve_ceo_strategy, arguments: {summary: early}}\n  - text: done\n"
                .to_owned(),
        ),
        (
            "exhausted",
            "type-error-fix",
            format!("{shell}{shell}{shell}  - text: done\n"),
        ),
        (
            "incomplete",
            "type-error-fix",
            format!("{shell}  - text: done\n"),
        ),
    ] {
        std::fs::write(
            dir.path().join(format!("{name}.yaml")),
            adapter_case(name, fixture, &steps),
        )
        .unwrap();
    }
    let output = Evalhost::new()
        .args(["run", dir.path().to_str().unwrap()])
        .run();
    output.assert_code(1);
    let stdout = output.stdout();
    for line in [
        "  other-tool run 1: external agent `node` failed: exit status: 1; stderr: tool call 1 (approve_ceo_strategy): the recording has a result for `hire_agent` at this position\n",
        "  exhausted run 1: external agent `node` failed: exit status: 1; stderr: tool call 3 (shell): replay exhausted: the recording has 2 tool result(s)\n",
        "  incomplete run 1: external agent `node` failed: exit status: 1; stderr: replay incomplete: 1 of the 2 recorded tool results were used\n",
    ] {
        assert!(stdout.contains(line), "{line}\n{stdout}");
    }
}

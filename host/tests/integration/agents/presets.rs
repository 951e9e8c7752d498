//! The agent presets run the real agents (Codex CLI, Claude Code, pi, mini-swe-agent, Gemini
//! CLI), as `.ci/run` installs them at pinned versions, against evalhost's endpoint: the
//! example suites in `cases/agents/` replay green, offline (every socket any process of the run
//! opens is traced with strace and must be loopback); each preset runs live through the
//! pass-through against a fake provider, and a live run recorded replays green; a missing
//! agent stops `evalhost run` before any run.
//!
//! Without the agents (or strace) the tests that need them are skipped, unless
//! `EVALHOST_REQUIRE_TOOLCHAINS=1` (as `.ci/run` sets it), where a missing one fails them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::common::repo;
use crate::support::evalhost::{Evalhost, Output};
use crate::support::live::{
    FakeProvider, Project, Step, anthropic_call, anthropic_text, chat_call, chat_text,
    responses_output,
};

/// The pinned agents, as `.ci/run` installs them: (program, install command).
const AGENTS: [(&str, &str); 5] = [
    ("codex", "npm install -g @openai/codex@0.171.0"),
    ("claude", "npm install -g @anthropic-ai/claude-code@2.1.332"),
    ("pi", "npm install -g @mariozechner/pi-coding-agent@0.73.1"),
    ("mini", "pip install mini-swe-agent==2.4.6"),
    ("gemini", "npm install -g @google/gemini-cli@0.61.0"),
];

/// The header line naming the pinned agents.
const AGENTS_LINE: &str = "Agents: codex 0.171.0, claude-code 2.1.332, pi 0.73.1, mini-swe-agent 2.4.6, gemini-cli 0.61.0.";

/// `Some(())` when every program in `programs` is on PATH; otherwise skips (or, under
/// `EVALHOST_REQUIRE_TOOLCHAINS=1`, fails) naming how to install what is missing.
pub(crate) fn installed(programs: &[&str]) -> Option<()> {
    let missing: Vec<String> = programs
        .iter()
        .filter(|p| !on_path(p))
        .map(|p| match AGENTS.iter().find(|(name, _)| name == p) {
            Some((_, install)) => format!("{p} ({install})"),
            None => format!("{p} (apt-get install {p})"),
        })
        .collect();
    if missing.is_empty() {
        return Some(());
    }
    if std::env::var_os("EVALHOST_REQUIRE_TOOLCHAINS").is_some_and(|v| v == "1") {
        panic!(
            "required (EVALHOST_REQUIRE_TOOLCHAINS=1) but missing: {}",
            missing.join(", ")
        );
    }
    eprintln!("skipped: not installed: {}", missing.join(", "));
    None
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn run(mut command: Command) -> Output {
    let output = command.output().expect("runs");
    Output::from_process(&command, output)
}

fn evidence(out: &Path, case: &str) -> Value {
    let path = out.join(case).join("run-1.evidence.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("evidence")).expect("json")
}

/// Every address a traced process sent to or connected to over IP, from strace's
/// `connect`/`sendto`/`sendmsg`/`sendmmsg` lines: `(address, port, line)`.
fn ip_destinations(trace: &str) -> Vec<(String, u16, String)> {
    let between = |line: &str, start: &str, end: &str| -> Option<String> {
        let from = line.find(start)? + start.len();
        let len = line[from..].find(end)?;
        Some(line[from..from + len].to_owned())
    };
    trace
        .lines()
        .filter(|line| line.contains("sa_family=AF_INET"))
        .filter_map(|line| {
            let address = between(line, "inet_addr(\"", "\"")
                .or_else(|| between(line, "inet_pton(AF_INET6, \"", "\""))?;
            let port = between(line, "_port=htons(", ")")?.parse().ok()?;
            Some((address, port, line.to_owned()))
        })
        .collect()
}

/// The trace's lines of traffic beyond loopback: any address but loopback, and any DNS query
/// (port 53), loopback or not.
fn beyond_loopback(trace: &str) -> Vec<String> {
    ip_destinations(trace)
        .into_iter()
        .filter(|(address, port, _)| {
            !matches!(address.as_str(), "127.0.0.1" | "::1" | "::ffff:127.0.0.1") || *port == 53
        })
        .map(|(_, _, line)| line)
        .collect()
}

/// The control of the offline proof: the same trace check, on a program that does reach
/// beyond loopback (a UDP `connect`, which sends nothing), names that connection and only it.
#[test]
fn the_offline_check_names_a_connection_beyond_loopback() {
    if installed(&["strace"]).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.txt");
    let script = "import socket\nfor host, port in (('127.0.0.1', 9), ('192.0.2.1', 9)):\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).connect((host, port))\n";
    let mut command = Command::new("strace");
    command
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=connect,sendto,sendmsg,sendmmsg",
            "-o",
        ])
        .arg(&trace)
        .args(["python3", "-c", script]);
    run(command).assert_code(0);
    let elsewhere = beyond_loopback(&std::fs::read_to_string(&trace).unwrap());
    assert_eq!(elsewhere.len(), 1, "{elsewhere:#?}");
    assert!(elsewhere[0].contains("192.0.2.1"), "{elsewhere:#?}");
}

/// The example suites of all five presets, in one `evalhost run` traced by strace: every case
/// passes; the header and report.json name each agent and its version; no process of the run
/// (evalhost, the agents, the commands they run) sent anything anywhere but loopback, not
/// even a DNS query; Claude Code under `approve: none` refused the write it would ask about,
/// and Gemini CLI answered a call of a tool it does not declare there with an error.
#[test]
fn every_example_suite_replays_green_with_its_real_agent_offline() {
    let mut needed: Vec<&str> = AGENTS.iter().map(|(p, _)| *p).collect();
    needed.push("strace");
    if installed(&needed).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let trace = dir.path().join("trace.txt");
    let mut command = Command::new("strace");
    command
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=connect,sendto,sendmsg,sendmmsg",
            "-o",
        ])
        .arg(&trace)
        .arg(Evalhost::program())
        .args(["run", "--jobs", "8", "--out"])
        .arg(&out)
        .arg(repo().join("cases/agents"))
        .current_dir(dir.path())
        .env("XDG_CACHE_HOME", repo().join("target/test-cache"))
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .env("EVALHOST_HISTORY", "off");
    let output = run(command);
    output.assert_code(0);
    let stdout = output.stdout();
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "Eval replay mode: 20 cases, 1 runs each, scripted model (synthetic and recorded token counts)."
        )
    );
    assert_eq!(lines.next(), Some(AGENTS_LINE), "{stdout}");
    assert!(stdout.ends_with("All cases passed.\n"), "{stdout}");

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["agents"],
        json!([
            {"name": "codex", "version": "0.171.0"},
            {"name": "claude-code", "version": "2.1.332"},
            {"name": "pi", "version": "0.73.1"},
            {"name": "mini-swe-agent", "version": "2.4.6"},
            {"name": "gemini-cli", "version": "0.61.0"},
        ])
    );

    let trace = std::fs::read_to_string(&trace).unwrap();
    assert!(
        ip_destinations(&trace)
            .iter()
            .any(|(a, _, _)| a == "127.0.0.1"),
        "the trace saw the endpoint's connections: {trace}"
    );
    let elsewhere = beyond_loopback(&trace);
    assert!(
        elsewhere.is_empty(),
        "traffic beyond loopback:\n{elsewhere:#?}"
    );

    // Claude Code under approve: none: the Bash write was refused (an is_error result), and
    // the agent still exited 0.
    let refused = evidence(&out, "claude-code-refused");
    assert_eq!(refused["calls"][0]["name"], "Bash");
    assert_eq!(refused["calls"][0]["status"], "failed");
    let message = refused["calls"][0]["output"].as_str().unwrap();
    assert!(message.contains("needs approval"), "{message}");
    // Gemini CLI under approve: none: the shell tool is not declared, the call is answered
    // with an error, and nothing was written.
    let refused = evidence(&out, "gemini-cli-refused");
    assert_eq!(refused["calls"][0]["name"], "run_shell_command");
    assert_eq!(refused["calls"][0]["status"], "failed");
    let message = refused["calls"][0]["output"].as_str().unwrap();
    assert!(
        message.contains("Tool \"run_shell_command\" not found"),
        "{message}"
    );
    // Each agent's failing command is a failed call, read from its own result format.
    for (case, said) in [
        ("codex-failing-command", "Process exited with code 2"),
        ("claude-code-failing-command", "Exit code 2"),
        ("pi-failing-command", "Command exited with code 2"),
        ("mini-swe-agent-failing-command", "\"returncode\": 2"),
        ("gemini-cli-failing-command", "Exit Code: 2"),
    ] {
        let call = &evidence(&out, case)["calls"][0];
        assert_eq!(call["status"], "failed", "{case}: {call}");
        assert!(
            call["output"].as_str().unwrap().contains(said),
            "{case}: {call}"
        );
    }
}

#[test]
fn a_missing_agent_stops_the_suite_with_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("ask.yaml");
    std::fs::write(
        &case,
        "name: ask\nprompt: Hi.\nmodel:\n  - text: Hello.\ngraders:\n  - final_text_contains: Hello\n",
    )
    .unwrap();
    let empty = dir.path().join("bin");
    std::fs::create_dir(&empty).unwrap();
    let output = run(Evalhost::new()
        .args(["run", "--agent", "pi"])
        .arg(&case)
        .current_dir(dir.path())
        .env("PATH", &empty)
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .into_command());
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(stdout, "", "nothing ran");
    assert_eq!(
        stderr,
        "Error: agent `pi`: `pi` is not on PATH; install it with `npm install -g @mariozechner/pi-coding-agent@0.73.1`, or set its path with `[agents] pi = \"/path/to/pi\"` in evalhost.toml or EVALHOST_AGENT_PI\n"
    );

    // A configured path that is not there, in the case's own `agent:`.
    std::fs::write(
        &case,
        "name: ask\nprompt: Hi.\nagent: {preset: codex}\nmodel:\n  - text: Hello.\ngraders:\n  - final_text_contains: Hello\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("evalhost.toml"),
        "[agents]\ncodex = \"tools/codex\"\n",
    )
    .unwrap();
    let output = run(Evalhost::new()
        .args(["run"])
        .arg(&case)
        .current_dir(dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .into_command());
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        format!(
            "Error: agent `codex`: `{}` ({}) is not an executable file; install it with `npm install -g @openai/codex@0.171.0`\n",
            dir.path().join("tools/codex").display(),
            dir.path().join("evalhost.toml").display()
        )
    );
}

/// One preset live: `--agent NAME` on a case without `agent:`, two runs through the
/// pass-through to a fake provider of `kind`, each run a shell call that writes a file and
/// then the answer the provider gives.
struct LiveAgent {
    preset: &'static str,
    program: &'static str,
    kind: &'static str,
    /// The provider's answers of one run.
    round: Vec<Step>,
    /// Tokens the provider reports over one run: (input, output).
    usage: (u64, u64),
}

fn live_agents() -> Vec<LiveAgent> {
    let write = "printf 'live\\n' > live.txt";
    let responses_call = |name: &str, key: &str| {
        Step::Sse(responses_output(
            json!([{"type": "function_call", "call_id": "call_w", "name": name,
                    "arguments": json!({key: write}).to_string()}]),
            30,
            5,
        ))
    };
    let responses_text = Step::Sse(responses_output(
        json!([{"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Wrote live.txt."}]}]),
        40,
        6,
    ));
    vec![
        LiveAgent {
            preset: "codex",
            program: "codex",
            kind: "openai-responses",
            round: vec![
                responses_call("exec_command", "cmd"),
                responses_text.clone(),
            ],
            usage: (70, 11),
        },
        LiveAgent {
            preset: "claude-code",
            program: "claude",
            kind: "anthropic",
            round: vec![
                Step::Sse(anthropic_call(
                    "toolu_w",
                    "Bash",
                    &json!({"command": write, "description": "Write live.txt"}),
                    31,
                    5,
                )),
                Step::Sse(anthropic_text("Wrote live.txt.", 41, 6)),
            ],
            usage: (72, 11),
        },
        LiveAgent {
            preset: "pi",
            program: "pi",
            kind: "openai-chat",
            round: vec![
                Step::Sse(chat_call(
                    "call_w",
                    "bash",
                    &json!({"command": write}),
                    32,
                    5,
                )),
                Step::Sse(chat_text("Wrote live.txt.", 42, 6)),
            ],
            usage: (74, 11),
        },
        LiveAgent {
            preset: "mini-swe-agent",
            program: "mini",
            kind: "openai-chat",
            round: vec![
                Step::Sse(chat_call(
                    "call_w",
                    "bash",
                    &json!({"command": write}),
                    33,
                    5,
                )),
                Step::Sse(chat_call(
                    "call_s",
                    "bash",
                    &json!({"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}),
                    43,
                    6,
                )),
            ],
            usage: (76, 11),
        },
        LiveAgent {
            preset: "gemini-cli",
            program: "gemini",
            kind: "openai-chat",
            round: vec![
                Step::Sse(chat_call(
                    "call_w",
                    "run_shell_command",
                    &json!({"command": write}),
                    34,
                    5,
                )),
                Step::Sse(chat_text("Wrote live.txt.", 44, 6)),
            ],
            usage: (78, 11),
        },
    ]
}

/// Each preset runs live through the pass-through: the provider (in its own dialect, not
/// necessarily the agent's) answers, usage is the provider's, `--runs 2` gives pass@k.
#[test]
fn each_preset_runs_live_through_the_pass_through() {
    let agents = live_agents();
    let programs: Vec<&str> = agents.iter().map(|a| a.program).collect();
    if installed(&programs).is_none() {
        return;
    }
    // The presets run side by side (agents start slowly); each has its own fake provider.
    let results: Vec<(String, Output, PathBuf, usize, tempfile::TempDir)> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = agents
                .iter()
                .map(|agent| {
                    scope.spawn(move || {
                        let fake = FakeProvider::start(
                            [agent.round.clone(), agent.round.clone()].concat(),
                            Step::Status(400, None, "unexpected extra request"),
                        );
                        let project = Project::for_fake(agent.kind, &fake, "timeout_secs = 60\n");
                        project.case(
                            "live-write",
                            "prompt: Write live to live.txt.\napprove: all\ntimeout_secs: 120\n\
                             graders:\n  - file_contains: {path: live.txt, text: live}\n",
                        );
                        let out = project.path().join("out");
                        let output = project.evalhost(&[
                            "run",
                            "--live",
                            "--agent",
                            agent.preset,
                            "--runs",
                            "2",
                            "--jobs",
                            "1",
                            "--out",
                            out.to_str().unwrap(),
                            "cases",
                        ]);
                        let received = fake.received().len();
                        (agent.preset.to_owned(), output, out, received, project.dir)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
    for ((preset, output, out, received, _dir), agent) in results.into_iter().zip(&agents) {
        output.assert_code(0);
        let stdout = output.stdout();
        assert!(
            stdout.starts_with("Eval live mode: 1 cases, 2 runs each, model fake-model.\nAgents: "),
            "{preset}: {stdout}"
        );
        assert!(
            stdout.contains("\nlive-write  2     2     1.00    1.00    "),
            "{preset}: two runs, both pass, pass@2 1.00: {stdout}"
        );
        assert_eq!(received, 4, "{preset}: two requests a run");
        for run in 1..=2 {
            let path = out.join(format!("live-write/run-{run}.evidence.json"));
            let evidence: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(
                (
                    evidence["usage"]["input_tokens"].as_u64(),
                    evidence["usage"]["output_tokens"].as_u64()
                ),
                (Some(agent.usage.0), Some(agent.usage.1)),
                "{preset} run {run}: the provider's usage"
            );
            assert_eq!(evidence["calls"][0]["status"], "completed", "{preset}");
        }
    }
}

/// One preset's recording: its name, `(code, stdout, stderr)` of `record` and of the
/// replay, and the recorded case.
type Recorded = (String, Vec<Output>, String);

/// Record once, replay free: each preset recorded live against a fake provider becomes a
/// replay case (its `agent:` kept) that replays green with the provider gone.
#[test]
fn each_preset_records_live_and_replays_offline() {
    let agents = live_agents();
    let programs: Vec<&str> = agents.iter().map(|a| a.program).collect();
    if installed(&programs).is_none() {
        return;
    }
    let results: Vec<Recorded> = std::thread::scope(|scope| {
        let handles: Vec<_> = agents
            .iter()
            .map(|agent| {
                scope.spawn(move || {
                    let fake = FakeProvider::start(
                        agent.round.clone(),
                        Step::Status(400, None, "unexpected extra request"),
                    );
                    let project = Project::for_fake(agent.kind, &fake, "timeout_secs = 60\n");
                    project.case(
                        "rec",
                        &format!(
                            "prompt: Write live to live.txt.\napprove: all\ntimeout_secs: 120\n\
                                 agent: {{preset: {}}}\n\
                                 graders:\n  - file_contains: {{path: live.txt, text: live}}\n",
                            agent.preset
                        ),
                    );
                    std::fs::create_dir(project.path().join("replay")).unwrap();
                    let record = project.evalhost(&[
                        "record",
                        "--live",
                        "cases/rec.yaml",
                        "--output",
                        "replay/rec-replay.yaml",
                    ]);
                    drop(fake);
                    let recorded =
                        std::fs::read_to_string(project.path().join("replay/rec-replay.yaml"))
                            .unwrap_or_default();
                    let replay = project.evalhost(&["run", "replay"]);
                    (agent.preset.to_owned(), vec![record, replay], recorded)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (preset, steps, recorded) in results {
        for step in &steps {
            assert_eq!(step.code(), 0, "{preset}:\n{step}\nrecorded:\n{recorded}");
        }
        assert!(
            recorded.contains(&format!("\nagent: {{preset: {preset}}}\n")),
            "{preset}: {recorded}"
        );
        assert!(
            steps[1].stdout().contains("\nrec-replay  1     1     1.00"),
            "{preset}: the replay passes: {}",
            steps[1]
        );
    }
}

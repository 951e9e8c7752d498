//! External agents on the real binary, in replay: a small Python agent (standard library
//! only, `tests/external_agent/agent.py`) makes one tool-call round trip against the scripted
//! endpoint; the evidence comes from what crossed it, plus the workspace.

use crate::support::evalhost::{Evalhost, Output};
use std::path::{Path, PathBuf};

/// The test agent (a Python program speaking the Responses API), shared by the agents tests.
pub(super) fn agent_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external_agent/agent.py")
}

/// A case the test agent passes, with this `agent:` line (or none), its second request
/// expecting `expect`.
pub(super) fn case(name: &str, agent: &str, expect: &str) -> String {
    format!(
        "name: {name}
prompt: What does in.txt say? Write it to answer.txt.
workspace:
  files:
    in.txt: forty-two
{agent}model:
  - call: {{tool: read_file, arguments: {{path: in.txt}}}}
  - text: The file says forty-two.
    expect_input_contains: {expect}
graders:
  - tool_called: read_file
  - tool_order: [read_file]
  - final_text_contains: forty-two
  - file_contains: {{path: answer.txt, text: The file says forty-two.}}
  - max_requests: 2
"
    )
}

fn run(dir: &Path, extra: &[&str]) -> Output {
    Evalhost::new()
        .arg("run")
        .args(extra)
        .arg(dir.join("cases"))
        .current_dir(dir)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-cache"),
        )
        .run()
}

fn suite(cases: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    for (name, text) in cases {
        std::fs::write(dir.path().join(format!("cases/{name}.yaml")), text).unwrap();
    }
    dir
}

#[test]
fn a_case_agent_round_trips_a_tool_call_and_is_graded_from_the_endpoint() {
    let script = agent_script();
    let stdin = format!(
        "agent: {{command: [python3, \"{}\"], prompt: stdin, timeout_secs: 20}}\n",
        script.display()
    );
    let arg = format!(
        "agent: {{command: [python3, \"{}\"], prompt: arg}}\n",
        script.display()
    );
    let dir = suite(&[
        ("via-stdin", case("via-stdin", &stdin, "forty-two")),
        ("via-arg", case("via-arg", &arg, "forty-two")),
    ]);
    let out = dir.path().join("out");
    let output = run(dir.path(), &["--out", out.to_str().unwrap()]);
    output.assert_code(0);
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("via-stdin/run-1.evidence.json")).unwrap(),
    )
    .unwrap();
    let call = &evidence["calls"][0];
    assert_eq!(call["name"], "read_file");
    assert_eq!(call["call_id"], "call_1");
    assert_eq!(call["status"], "completed");
    assert_eq!(call["output"], "forty-two");
    assert_eq!(call["started"], true);
    assert_eq!(evidence["final_text"], "The file says forty-two.");
    assert_eq!(evidence["usage"]["requests"], 2);
    assert_eq!(
        evidence["prompt"],
        "What does in.txt say? Write it to answer.txt."
    );
}

#[test]
fn a_broken_script_expectation_fails_the_run_with_the_script_failure() {
    let script = agent_script();
    let agent = format!("agent: {{command: [python3, \"{}\"]}}\n", script.display());
    let dir = suite(&[("wrong", case("wrong", &agent, "not-in-the-file"))]);
    let output = run(dir.path(), &[]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("wrong run 1: ") && stdout.contains("did not contain \"not-in-the-file\""),
        "{stdout}"
    );
}

#[test]
fn agent_cmd_runs_every_agent_case_with_the_command() {
    let plain = case("plain", "", "forty-two");
    let dir = suite(&[("plain", plain)]);
    let command = format!("python3 '{}'", agent_script().display());
    let output = run(dir.path(), &["--agent-cmd", &command]);
    output.assert_code(0);
}

/// The line a suite of external agents left at its default concurrency prints before its
/// runs (`Jobs: N runs at a time, ...`), if any.
fn jobs_note(stdout: &str) -> Option<&str> {
    stdout.lines().find(|line| line.starts_with("Jobs: "))
}

#[test]
fn a_suite_with_an_external_agent_says_how_many_runs_it_makes_at_once() {
    let agent = format!(
        "agent: {{command: [python3, \"{}\"]}}\n",
        agent_script().display()
    );
    let own =
        "name: own\nprompt: Say hi.\nmodel:\n  - text: hi\ngraders:\n  - final_text_contains: hi\n";
    // A mixed suite: one case of evalhost's own agent, one of an external agent.
    let dir = suite(&[
        ("own", own.to_owned()),
        ("external", case("external", &agent, "forty-two")),
    ]);
    let output = run(dir.path(), &[]);
    output.assert_code(0);
    let stdout = output.stdout();
    let note = jobs_note(stdout).unwrap_or_else(|| panic!("no Jobs: line: {stdout}"));
    // Four per core, unless the memory available allows fewer (one per 512 MiB).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs: usize = note["Jobs: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!((1..=4 * cores).contains(&jobs), "{note}");
    assert!(
        note.ends_with(
            " runs at a time, the default of a suite that runs external agents (four per core; --jobs N to change)."
        ) || note.ends_with("(one per 512 MiB of memory available; --jobs N to change)."),
        "{note}"
    );
    assert!(stdout.starts_with(note), "before the runs: {stdout}");

    // --jobs always wins, and says nothing.
    let output = run(dir.path(), &["--jobs", "3"]);
    output.assert_code(0);
    assert_eq!(jobs_note(output.stdout()), None, "{}", output.stdout());

    // A suite of evalhost's own agent keeps its default, four per core, unannounced.
    let own = suite(&[("own", own.to_owned())]);
    let output = run(own.path(), &[]);
    output.assert_code(0);
    assert_eq!(jobs_note(output.stdout()), None, "{}", output.stdout());
}

#[test]
fn a_hanging_agent_times_out_and_its_process_group_is_killed() {
    let token = "evalhost-external-agent-hang-sleeper";
    let agent = format!(
        "agent: {{command: [bash, -c, \"(exec -a {token} sleep 30) & wait\"], timeout_secs: 1}}\n"
    );
    let dir = suite(&[("hang", case("hang", &agent, "forty-two"))]);
    let started = std::time::Instant::now();
    let output = run(dir.path(), &[]);
    let code = output.code();
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("\n  hang run 1: turn failed: timed out after 1 s\n"),
        "{stdout}"
    );
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.starts_with(token))
        .collect();
    assert_eq!(left, Vec::<String>::new());
}

/// An external agent may never ask the model: its case needs no `model:` script. One that
/// does ask, with no script, fails its run with the endpoint's error.
#[test]
fn an_external_agent_case_needs_a_script_only_when_its_agent_asks_the_model() {
    let no_model = |name: &str, agent: &str| {
        format!(
            "name: {name}\nprompt: Write done.\n{agent}graders:\n  - file_contains: {{path: answer.txt, text: done}}\n"
        )
    };
    let quiet = no_model(
        "quiet",
        "agent: {command: [sh, -c, \"echo done > answer.txt\"]}\n",
    );
    let asking = no_model(
        "asking",
        &format!(
            "agent: {{command: [python3, \"{}\"]}}\nlive: false\n",
            agent_script().display()
        ),
    );
    let dir = suite(&[("quiet", quiet), ("asking", asking)]);
    let output = run(dir.path(), &[]);
    output.assert_code(1);
    let stdout = output.stdout();
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .map(|l| l.split_whitespace().last().unwrap_or_default().to_owned())
    };
    assert_eq!(row("quiet").as_deref(), Some("pass"), "{stdout}");
    assert_eq!(row("asking").as_deref(), Some("FAIL"), "{stdout}");
    assert!(
        stdout.contains(
            "\n  asking run 1: Model script exhausted: request 1 has no scripted response; then \
             external agent `python3` failed: exit status: 1; stderr: model failed: Model script \
             exhausted: request 1 has no scripted response\n"
        ),
        "{stdout}"
    );
}

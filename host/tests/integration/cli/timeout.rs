//! The run timeout: a case's `timeout_secs` (fractions allowed) or `evalhost run --timeout`
//! bounds a run's agent; on expiry every process of the run is killed, the run is an errored
//! run `turn failed: timed out after N s`, and the report (text, `--out`) is still written.
//! Mino's test: "a sleep 5 step under a 300 ms timeout fails the run as turn failed".

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::evalhost::{Evalhost, Output};

/// A case whose one bash step sleeps 5 s as a process named `token` (so the test can look
/// for it afterwards); `extra` adds top-level fields.
fn sleeping_case(name: &str, token: &str, extra: &str) -> String {
    format!(
        "name: {name}
prompt: Wait a while.
approve: all
{extra}model:
  - call: {{tool: bash, arguments: {{command: \"exec -a {token} sleep 5\"}}}}
  - text: Done waiting.
graders:
  - final_text_contains: Done
"
    )
}

/// Run `evalhost run ARGS DIR/cases` with `--out DIR/out`: (code, stdout, stderr, elapsed).
fn run(dir: &Path, args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = Evalhost::new()
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir.join("out"))
        .arg(dir.join("cases"))
        .current_dir(dir)
        .run();
    (output, started.elapsed())
}

fn suite(cases: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    for (name, text) in cases {
        std::fs::write(dir.path().join(format!("cases/{name}.yaml")), text).unwrap();
    }
    dir
}

/// Command lines of live processes that start with `token`, once the killed ones have had up to
/// 5 s to exit.
fn processes_named(token: &str) -> Vec<String> {
    let named = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.starts_with(token))
            .collect()
    };
    // SIGKILL is delivered at once but a process on a loaded machine can take a moment to
    // exit: give each one up to 5 s (the sleepers would live 30 s if never killed).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = named();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The run's error in `DIR/out/report.json` and the last record of its session log.
fn saved_error(dir: &Path, case: &str) -> (String, Value) {
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap())
            .unwrap();
    let error = report["cases"][0]["runs"][0]["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let log = std::fs::read_to_string(dir.join(format!("out/{case}/run-1.jsonl"))).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    (error, last)
}

#[test]
fn a_sleep_5_step_under_a_300_ms_timeout_fails_the_run_as_turn_failed() {
    let token = "evalhost-run-timeout-sleeper";
    let dir = suite(&[(
        "slow-step",
        sleeping_case("slow-step", token, "timeout_secs: 0.3\n"),
    )]);
    let (output, elapsed) = run(dir.path(), &[]);
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    output.assert_code(1);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert!(
        stdout.contains("\n  slow-step run 1: turn failed: timed out after 0.3 s\n"),
        "{stdout}"
    );
    assert_eq!(
        stderr.trim_end(),
        "Error: Eval failed: 1 of 1 cases did not pass every run"
    );
    let (error, last) = saved_error(dir.path(), "slow-step");
    assert_eq!(error, "turn failed: timed out after 0.3 s");
    assert_eq!(last["type"], "run_error", "{last}");
    assert_eq!(last["message"], "turn failed: timed out after 0.3 s");
    assert_eq!(processes_named(token), Vec::<String>::new());
}

#[test]
fn the_timeout_flag_overrides_every_case() {
    let token = "evalhost-run-timeout-flag-sleeper";
    let dir = suite(&[
        ("no-field", sleeping_case("no-field", token, "")),
        (
            "long-field",
            sleeping_case("long-field", token, "timeout_secs: 60\n"),
        ),
    ]);
    let (output, elapsed) = run(dir.path(), &["--timeout", "0.5"]);
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    output.assert_code(1);
    let stdout = output.stdout();
    for case in ["no-field", "long-field"] {
        assert!(
            stdout.contains(&format!(
                "\n  {case} run 1: turn failed: timed out after 0.5 s\n"
            )),
            "{stdout}"
        );
    }
    assert_eq!(processes_named(token), Vec::<String>::new());
}

#[test]
fn a_run_within_its_timeout_is_graded_as_usual() {
    let dir = suite(&[(
        "quick",
        "name: quick\nprompt: Echo.\napprove: all\ntimeout_secs: 20\nmodel:\n  - call: {tool: bash, arguments: {command: echo hi}}\n  - text: Done.\ngraders:\n  - final_text_contains: Done\n".to_owned(),
    )]);
    let (output, _) = run(dir.path(), &["--timeout", "30"]);
    output.assert_code(0);
}

#[test]
fn an_external_agent_that_sleeps_is_killed_with_every_process_it_started() {
    let token = "evalhost-run-timeout-agent-sleeper";
    // One sleeper in the agent's process group, one that left it with `setsid`: the marker
    // variable finds the second.
    let case = format!(
        "name: slow-agent
prompt: Wait.
timeout_secs: 1
agent: {{command: [bash, -c, \"(exec -a {token} sleep 30) & setsid bash -c 'exec -a {token}-escaped sleep 30' & wait\"]}}
model:
  - text: Done.
graders:
  - final_text_contains: Done
"
    );
    let dir = suite(&[("slow-agent", case)]);
    let (output, elapsed) = run(dir.path(), &[]);
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("\n  slow-agent run 1: turn failed: timed out after 1 s\n"),
        "{stdout}"
    );
    let (error, last) = saved_error(dir.path(), "slow-agent");
    assert_eq!(error, "turn failed: timed out after 1 s");
    assert_eq!(last["type"], "run_error", "{last}");
    assert_eq!(processes_named(token), Vec::<String>::new());
}

#[test]
fn bad_timeouts_are_refused() {
    let dir = suite(&[("zero", sleeping_case("zero", "unused", "timeout_secs: 0\n"))]);
    let (output, _) = run(dir.path(), &[]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.ends_with(
            "zero.yaml:4:15: timeout_secs: must be more than 0 and at most 3600 seconds, found 0\n"
        ),
        "{stderr}"
    );
    let (output, _) = run(dir.path(), &["--timeout", "soon"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains(
            "invalid value 'soon' for '--timeout <SECS>': expected a number of seconds, found `soon`"
        ),
        "{stderr}"
    );
}

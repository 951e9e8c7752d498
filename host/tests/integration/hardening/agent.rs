//! The agent side of hardening, through the real binary: no process a bash call starts
//! outlives the run (not even one that double-forks out of the process group with
//! `setsid`), bash sees none of evalhost's environment, and tool output is capped before
//! it reaches the model.

use crate::support::evalhost::{Evalhost, Output};

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// `evalhost run --out OUT CASE` with `env` added to evalhost's environment.
fn run(case: &Path, out: &Path, env: &[(&str, &str)]) -> Output {
    Evalhost::new()
        .arg("run")
        .arg("--out")
        .arg(out)
        .arg(case)
        .envs(env.iter().copied())
        .run()
}

/// A case `name` whose script makes one bash call with `command`, then answers `done`.
fn bash_case(dir: &Path, name: &str, command: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    let case = serde_json::json!({
        "name": name,
        "prompt": "Run the command.",
        "approve": "all",
        "model": [
            {"call": {"tool": "bash", "arguments": {"command": command}}},
            {"text": "done"}
        ],
        "graders": [{"tool_called": "bash"}]
    });
    // JSON is YAML: no quoting rules to get wrong for the shell command.
    std::fs::write(&path, case.to_string()).unwrap();
    path
}

/// The records of `OUT/<case>/run-1.jsonl`.
fn session(out: &Path, case: &str) -> Vec<Value> {
    std::fs::read_to_string(out.join(case).join("run-1.jsonl"))
        .expect("session log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect()
}

/// Live processes whose command line contains `marker` (zombies are dead).
fn processes_with(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X") | None)
        })
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(marker)
                .then(|| format!("{pid}: {cmdline}"))
        })
        .collect()
}

/// The processes named `marker` still alive once `evalhost run FLAGS` of a case whose bash
/// call leaves a sleeper (`setsid`: out of bash's process group and session; `env -i`
/// first when `drop_environment`, taking the call's marker variable with it) has ended.
/// Survivors are killed before this returns.
fn sleepers_left(dir: &Path, flags: &[&str], drop_environment: bool) -> Vec<String> {
    let marker = format!(
        "evalhost-sleeper-{}-{}-{drop_environment}",
        std::process::id(),
        flags.join("")
    );
    let env = if drop_environment { "env -i " } else { "" };
    // The subshell exits at once, so the sleeper is orphaned. The call waits until the
    // sleeper has left the group (a file it makes after `setsid`): killing the group
    // earlier would end it before the test could tell who else ends it.
    let command = format!(
        "(setsid {env}bash -c 'touch .up; exec -a {marker} sleep 300' > /dev/null 2>&1 &) ; \
         while [ ! -e .up ]; do sleep 0.01; done; echo ok"
    );
    let case = bash_case(dir, "sleeper", &command);
    let out = dir.join("out");
    Evalhost::new()
        .arg("run")
        .args(flags)
        .arg("--out")
        .arg(&out)
        .arg(&case)
        .run()
        .assert_code(0);
    let said = session(&out, "sleeper")
        .into_iter()
        .find(|record| record["type"] == "tool_result")
        .map(|record| record["output"].clone());
    assert_eq!(said, Some("ok\n".into()), "the sleeper did not start");
    // SIGKILL is immediate, the kernel's teardown is not.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let survivors = processes_with(&marker);
    for survivor in &survivors {
        // Do not leave the machine littered.
        if let Some(pid) = survivor.split(':').next().and_then(|p| p.parse().ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    survivors
}

#[test]
fn a_double_forked_sleeper_does_not_survive_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // By default (the run's namespaces where bubblewrap can make them) the kernel ends it
    // with the sandbox's PID namespace; with `--no-confine`, the sweep for the call's
    // marker finds it.
    for flags in [&[][..], &["--no-confine"]] {
        assert_eq!(
            sleepers_left(dir.path(), flags, false),
            Vec::<String>::new(),
            "processes outlived the run with {flags:?}"
        );
    }
    // Control: unconfined, a sleeper that drops its environment carries no marker, and
    // nothing finds it: the check above sees a survivor when there is one.
    assert_eq!(
        sleepers_left(dir.path(), &["--no-confine"], true).len(),
        1,
        "an unmarked sleeper outside any namespace survives"
    );
}

#[test]
fn bash_does_not_see_evalhosts_environment() {
    let dir = tempfile::tempdir().unwrap();
    let case = bash_case(
        dir.path(),
        "planted",
        "echo \"secret=[$EVALHOST_TEST_SECRET]\"; env",
    );
    let out = dir.path().join("out");
    let output = run(&case, &out, &[("EVALHOST_TEST_SECRET", "hunter2")]);
    output.assert_code(0);
    let stdout = output.stdout();
    let log = std::fs::read_to_string(out.join("planted/run-1.jsonl")).unwrap();
    assert!(
        log.contains("secret=[]"),
        "the command ran and printed: {log}"
    );
    for place in [
        log,
        std::fs::read_to_string(out.join("report.json")).unwrap(),
        stdout.to_owned(),
    ] {
        assert!(
            !place.contains("hunter2"),
            "the planted secret leaked: {place}"
        );
    }
}

#[test]
fn tool_output_is_capped_before_it_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    // 10 MB of output: only the first 64 KiB and the note may reach the model.
    let case = bash_case(
        dir.path(),
        "flood",
        "head -c 10000000 /dev/zero | tr '\\0' y",
    );
    let out = dir.path().join("out");
    let evalhost_output = run(&case, &out, &[]);
    evalhost_output.assert_code(0);
    let records = session(&out, "flood");
    let second_request = records
        .iter()
        .find(|r| r["type"] == "model_request" && r["n"] == 2)
        .expect("the request after the call");
    let outputs: Vec<&str> = second_request["body"]["input"]
        .as_array()
        .expect("input items")
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .filter_map(|item| item["output"].as_str())
        .collect();
    assert_eq!(outputs.len(), 1, "{second_request}");
    let output = outputs[0];
    assert!(output.starts_with("yyyy"), "{}", &output[..100]);
    assert!(
        output.len() <= 64 * 1024 + 100,
        "{} bytes reached the model",
        output.len()
    );
    assert!(
        output.ends_with("[output exceeded 65536 bytes: the command was stopped]"),
        "{}",
        &output[output.len().saturating_sub(200)..]
    );
}

//! Ctrl-C / SIGTERM on the real binary: runs that finished are reported (text and
//! `--out` report.json), the running and not-started runs are named as cancelled, the agent's
//! bash children are gone, and evalhost exits 130 long before the sleeping command would end.

use crate::support::evalhost::Evalhost;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const FAST: &str = "name: fast
prompt: Say done.
model:
  - text: done
graders:
  - final_text_contains: done
";

/// The `sleep` runs under a unique argv[0] so the test can find it (and its absence) in /proc.
fn slow(token: &str) -> String {
    format!(
        "name: slow
prompt: Sleep.
approve: all
runs: 2
model:
  - call: {{tool: bash, arguments: {{command: \"exec -a {token} sleep 30\"}}}}
  - text: slept
graders:
  - final_text_contains: slept
"
    )
}

/// Processes whose command line contains `token`.
fn processes_with(token: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(token))
        .collect()
}

fn wait_until(what: &str, deadline: Instant, mut ready: impl FnMut() -> bool) {
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn interrupt_with(signal: Signal, token: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(cases.join("a-fast.yaml"), FAST.replace("fast", "a-fast")).unwrap();
    std::fs::write(
        cases.join("b-slow.yaml"),
        slow(token).replace("slow", "b-slow"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let started = Instant::now();
    let deadline = started + Duration::from_secs(20);
    let child = Evalhost::new()
        .args(["run", "--jobs", "1", "--out"])
        .arg(&out)
        .arg(&cases)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let pid = Pid::from_raw(child.id() as i32);
    // The first run has finished (its log is kept), and the second is inside `sleep 30`.
    wait_until("the first run", deadline, || {
        out.join("a-fast/run-1.jsonl").exists()
    });
    wait_until("the sleeping command", deadline, || {
        !processes_with(token).is_empty()
    });
    kill(pid, signal).unwrap();
    let output = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    assert_eq!(output.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("\na-fast "), "{stdout}");
    assert!(
        stdout.contains(
            "Interrupted: 2 runs cancelled: b-slow run 1 (running), b-slow run 2 (not started).\n"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("Error: Interrupted: 2 runs cancelled"),
        "{stderr}"
    );
    assert_eq!(processes_with(token), Vec::<String>::new());

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    assert_eq!(
        report["cancelled"],
        serde_json::json!([
            {"case": "b-slow", "run": 1, "started": true},
            {"case": "b-slow", "run": 2, "started": false},
        ])
    );
    assert_eq!(report["cases"][0]["summary"]["passed"], 1);
    assert_eq!(report["cases"][1]["runs"], serde_json::json!([]));
    assert_eq!(report["summary"]["runs"], 1);
}

#[test]
fn sigint_cancels_runs_and_still_reports_what_finished() {
    interrupt_with(Signal::SIGINT, "evalhost-interrupt-sigint-sleeper");
}

#[test]
fn sigterm_does_the_same() {
    interrupt_with(Signal::SIGTERM, "evalhost-interrupt-sigterm-sleeper");
}

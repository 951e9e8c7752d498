//! No container outlives its run: at the run's end, on its timeout, on Ctrl-C, and when
//! evalhost itself is killed (SIGKILL: the container's first process sees its input close and
//! the engine removes it; the next evalhost reaps what is left). Limits the run hits are
//! named in what the agent sees.

use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::run::{bash_case, first_tool_output, run_in};
use crate::support::docker::{busybox_image, containers_labelled, debian_image, require_docker};
use crate::support::evalhost::Evalhost;

const SLEEPER: &str = "name: sleeper
prompt: Sleep.
approve: all
timeout_secs: TIMEOUT
environment:
  image: IMAGE
model:
  - call: {tool: bash, arguments: {command: \"sleep 120\"}}
  - text: slept
graders:
  - final_text_contains: slept
";

/// The containers of the evalhost process `pid`.
fn containers_of(pid: u32) -> Vec<String> {
    containers_labelled(&format!("evalhost.pid={pid}"))
}

/// Wait until `pid`'s containers are gone (at most `limit`); those left.
fn gone_within(pid: u32, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let left = containers_of(pid);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Write the sleeper case into `dir`, with this run timeout; its path.
fn write_sleeper(dir: &std::path::Path, timeout: &str) -> std::path::PathBuf {
    let path = dir.join("sleeper.yaml");
    let yaml = SLEEPER
        .replace("IMAGE", busybox_image())
        .replace("TIMEOUT", timeout);
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Start `evalhost run` on the sleeper and wait until its container runs.
fn start_sleeper(dir: &std::path::Path) -> std::process::Child {
    let case = write_sleeper(dir, "300");
    let child = Evalhost::new()
        .args(["run", "--history", "off"])
        .arg(case)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let deadline = Instant::now() + Duration::from_secs(60);
    // The run's own container (not one of the image's preparation).
    let run_container = || {
        crate::support::docker::docker(&[
            "ps",
            "-q",
            "--filter",
            "label=evalhost=run",
            "--filter",
            &format!("label=evalhost.pid={}", child.id()),
        ])
    };
    while run_container().is_empty() {
        assert!(
            Instant::now() < deadline,
            "the run's container never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

#[test]
fn a_run_that_times_out_leaves_no_container() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let case = write_sleeper(dir.path(), "2");
    let child = Evalhost::new()
        .args(["run", "--history", "off"])
        .arg(case)
        .stdout(Stdio::piped())
        .spawn();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("timed out after 2 s"), "{stdout}");
    assert_eq!(containers_of(pid), Vec::<String>::new());
}

#[test]
fn ctrl_c_leaves_no_container() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let child = start_sleeper(dir.path());
    let pid = child.id();
    kill(Pid::from_raw(pid as i32), Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    // Removed before evalhost exited.
    assert_eq!(containers_of(pid), Vec::<String>::new());
}

#[test]
fn a_killed_evalhost_leaves_no_container_behind() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_sleeper(dir.path());
    let pid = child.id();
    // Control: while evalhost lives, its container is there.
    assert_eq!(containers_of(pid).len(), 1);
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    // Nothing removed it in evalhost: its first process saw its input close.
    let left = gone_within(pid, Duration::from_secs(30));
    assert_eq!(left, Vec::<String>::new());
}

#[test]
fn the_next_evalhost_reaps_a_container_whose_evalhost_is_gone() {
    let Some(()) = require_docker() else { return };
    // A container labelled as a dead evalhost's of this boot (as one left by an evalhost
    // killed together with its engine client).
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let pidns = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let pidns = format!("evalhost.pidns={}", pidns.display());
    // A pid no process (nor thread: their ids share the space) has now.
    let dead_pid = loop {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            break pid;
        }
    };
    let labelled = |name: &str, pid: u32, pidns: &str| {
        crate::support::docker::docker(&[
            "run",
            "-d",
            "--name",
            name,
            "--label",
            &format!("evalhost.pid={pid}"),
            "--label",
            &format!("evalhost.boot={}", boot.trim()),
            "--label",
            pidns,
            "--entrypoint",
            "sleep",
            busybox_image(),
            "300",
        ]);
    };
    let me = std::process::id();
    labelled(&format!("evalhost-reap-dead-{me}"), dead_pid, &pidns);
    // Controls: one of a live process is kept, and so is one of another PID namespace (an
    // evalhost in another container sharing the engine), whatever its pid is here.
    let live = format!("evalhost-reap-live-{me}");
    labelled(&live, me, &pidns);
    let elsewhere = format!("evalhost-reap-elsewhere-{me}");
    labelled(&elsewhere, dead_pid, "evalhost.pidns=pid:[1]");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sleeper.yaml"),
        SLEEPER
            .replace("IMAGE", busybox_image())
            .replace("sleep 120", "true")
            .replace("TIMEOUT", "60"),
    )
    .unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["sleeper.yaml"]);
    outcome.assert_code(0);
    let names = |pid: u32| {
        crate::support::docker::docker(&[
            "ps",
            "-a",
            "--format",
            "{{.Names}}",
            "--filter",
            &format!("label=evalhost.pid={pid}"),
        ])
    };
    assert_eq!(names(dead_pid), elsewhere);
    assert_eq!(names(me), live);
    crate::support::docker::docker(&["rm", "-f", &live, &elsewhere]);
}

/// What the limits case runs in: a Debian image with small limits, and no network.
fn limited() -> String {
    format!(
        "  image: {}\n  memory: 32m\n  pids: 24\n  network: none\n",
        debian_image()
    )
}

#[test]
fn limits_hit_give_a_named_error() {
    let Some(()) = require_docker() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // Past the memory limit: the kernel kills the process holding it.
        (
            "head -c 200m /dev/zero | tail -n 1 >/dev/null; echo survived",
            "the environment's memory limit (32 MiB) was reached: the kernel killed a process",
        ),
        // Past the process limit: forks are refused.
        (
            "for i in $(seq 60); do sleep 5 & done 2>/dev/null; wait; echo survived",
            "the environment's process limit (24) was reached",
        ),
    ];
    for (command, named) in cases {
        std::fs::write(
            dir.path().join("limits.yaml"),
            bash_case("limits", &limited(), command),
        )
        .unwrap();
        let _ = run_in(dir.path(), &[], &["limits.yaml"]);
        let output = first_tool_output(dir.path(), "limits");
        assert!(output.contains(named), "{named}\n{output}");
    }
    // Control: within the limits nothing is named.
    let within = "head -c 1m /dev/zero | tail -n 1 >/dev/null; echo fine";
    std::fs::write(
        dir.path().join("limits.yaml"),
        bash_case("limits", &limited(), within),
    )
    .unwrap();
    let (outcome, _) = run_in(dir.path(), &[], &["limits.yaml"]);
    outcome.assert_code(0);
    assert_eq!(first_tool_output(dir.path(), "limits"), "fine\n");
}

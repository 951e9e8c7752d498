//! The bash tool with real processes: exit codes, environment, timeout killing the whole
//! process group (even children that ignore SIGTERM), and the output cap.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::agent::{Harness, call, text};
use evalhost::internals::session::Approve;
use serde_json::json;

async fn bash(h: &Harness, command: &str, timeout: Duration) -> evalhost::evidence::ToolCall {
    let run = h
        .run_with(
            vec![call("bash", json!({ "command": command })), text("done")],
            |config| {
                config.approve = Approve::All;
                config.limits.bash_timeout = timeout;
            },
        )
        .await;
    run.outcome();
    run.single_call()
}

/// Whether `pid` is a live process: present in /proc and not a zombie. (Orphans are
/// reparented to PID 1, which in a container may never reap them; a zombie is dead.)
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name, which may contain spaces.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X") | None)
        }
        Err(_) => false,
    }
}

/// Live processes whose process group is `pgid`.
fn live_group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = stat.rsplit_once(')')?.1.to_owned();
                    // Fields after the name: state, ppid, pgrp, ...
                    rest.split_whitespace().nth(2)?.parse::<u32>().ok()
                })
                == Some(pgid)
        })
        .filter(|pid| alive(*pid))
        .collect()
}

fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid")
}

#[tokio::test]
async fn exit_status_decides_completed_or_failed() {
    let h = Harness::new().await;
    let ok = bash(&h, "echo out; echo err >&2", Duration::from_secs(10)).await;
    assert_eq!(ok.status, "completed");
    assert_eq!(ok.output, "out\nerr\n", "stdout and stderr in one stream");
    let failed = bash(&h, "echo oops >&2; exit 3", Duration::from_secs(10)).await;
    assert_eq!(failed.status, "failed");
    assert_eq!(failed.output, "oops\n[exit code: 3]");
}

#[tokio::test]
async fn bash_is_started_by_its_full_path_but_still_calls_itself_bash() {
    let h = Harness::new().await;
    let run = bash(&h, "echo \"$0\"; type -P bash", Duration::from_secs(10)).await;
    let mut lines = run.output.lines();
    assert_eq!(lines.next(), Some("bash"), "{}", run.output);
    assert!(
        lines.next().is_some_and(|p| p.ends_with("/bash")),
        "{}",
        run.output
    );
}

#[tokio::test]
async fn runs_in_the_workspace_with_a_clean_environment() {
    let h = Harness::new().await;
    let run = bash(
        &h,
        "pwd; echo \"HOME=$HOME\"; env | cut -d= -f1 | sort | tr '\\n' ' '; cat",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(run.status, "completed", "{}", run.output);
    let mut lines = run.output.lines();
    let workspace = std::fs::canonicalize(&h.workspace).expect("workspace");
    assert_eq!(lines.next(), workspace.to_str());
    assert_eq!(
        lines.next().map(str::to_owned),
        Some(format!("HOME={}", h.home.display()))
    );
    // Only what bash itself sets besides PATH and HOME; nothing of the test's environment
    // (cargo sets CARGO_* for tests). `cat` returning at once shows stdin is empty.
    let names: Vec<&str> = lines.next().expect("env").split_whitespace().collect();
    assert!(
        names.contains(&"PATH") && names.contains(&"HOME"),
        "{names:?}"
    );
    for name in &names {
        assert!(
            [
                "PATH",
                "HOME",
                "PWD",
                "SHLVL",
                "_",
                "OLDPWD",
                "EVALHOST_TOOL_CALL"
            ]
            .contains(name),
            "unexpected variable {name} in {names:?}"
        );
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_group_even_children_ignoring_sigterm() {
    let h = Harness::new().await;
    let started = Instant::now();
    let run = bash(
        &h,
        "echo $$ > group.pid; trap '' TERM; (trap '' TERM; sleep 100; :) & echo $! > child.pid; echo started; wait",
        Duration::from_millis(700),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run.status, "timed_out", "{}", run.output);
    assert!(run.output.starts_with("started\n"), "{}", run.output);
    assert!(
        run.output.contains("timed out after 0.7s"),
        "{}",
        run.output
    );
    let group = read_pid(&h.workspace.join("group.pid"));
    let child = read_pid(&h.workspace.join("child.pid"));
    // SIGKILL is delivered at once, but the kernel tears processes down asynchronously.
    let deadline = Instant::now() + Duration::from_secs(3);
    while (alive(child) || !live_group_members(group).is_empty()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(child), "the child ignoring SIGTERM must be dead");
    assert_eq!(live_group_members(group), Vec::<u32>::new());
}

#[tokio::test]
async fn background_children_do_not_outlive_a_finished_command() {
    let h = Harness::new().await;
    let started = Instant::now();
    let run = bash(
        &h,
        "sleep 100 & echo $! > child.pid; echo done",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(run.status, "completed", "{}", run.output);
    assert_eq!(run.output, "done\n");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a background child holding the output pipe must not stall the call"
    );
    let child = read_pid(&h.workspace.join("child.pid"));
    let deadline = Instant::now() + Duration::from_secs(3);
    while alive(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(child));
}

#[tokio::test]
async fn output_over_the_cap_stops_the_command() {
    let h = Harness::new().await;
    let cap = 64 * 1024;
    let exact = bash(
        &h,
        "head -c 65536 /dev/zero | tr '\\0' a",
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(exact.status, "completed");
    assert_eq!(exact.output.len(), cap);

    let started = Instant::now();
    // `yes` never ends by itself: only the cap can stop it before the timeout.
    let flood = bash(&h, "yes", Duration::from_secs(20)).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(flood.status, "output_limit");
    assert!(flood.output.starts_with("y\ny\n"));
    let note = "[output exceeded 65536 bytes: the command was stopped]";
    assert!(
        flood.output.ends_with(&format!("y\n{note}")),
        "{}",
        &flood.output[cap - 10..]
    );
    assert_eq!(
        flood.output.len(),
        cap + note.len(),
        "exactly the cap, then the note"
    );
}

//! The bash tool: `bash -c` in the workspace, in its own process group, with a cleared
//! environment, a timeout and an output cap. On timeout, on the cap, and when bash exits,
//! the whole group gets SIGKILL, and so does every process still carrying the call's marker
//! variable (one that left the group with `setsid`, double-forked), so no process started
//! by the call outlives it.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::Instant;

use super::output::{truncate, with_note};
use super::{ToolContext, ToolOutput};
use crate::agent::CallStatus;

/// `PATH` for commands when the host has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// After bash exits, how long to keep reading output still buffered in the pipe. The group
/// is killed at exit, so the pipe normally closes at once; only a process that left the
/// group (`setsid`) can hold it open, and it must not stall the turn.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How long to wait for a killed bash to be reaped before giving up on it.
const REAP_TIMEOUT: Duration = Duration::from_secs(5);

const READ_CHUNK: usize = 16 * 1024;

/// The variable marking every process a bash call starts. Environments are inherited through
/// fork and exec, so it follows processes that leave the process group; only a process that
/// replaces its whole environment (`env -i`) loses it.
const CALL_MARKER: &str = "EVALHOST_TOOL_CALL";

/// The first executable `bash` on `path` (absolute entries only: a relative one would be
/// looked up from evalhost's directory, not the workspace). Naming it by its full path lets the standard
/// library start it with `posix_spawn` (a vfork-style clone) rather than `fork` + `exec`,
/// which it must fall back to when the child gets its own `PATH` and the program is a bare
/// name; fork copies the page tables of the whole evalhost process on every call.
fn find_bash(path: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bash"))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// Sweeps of /proc after the group is killed: a marked process may fork while being found.
const SWEEP_ROUNDS: usize = 8;

/// How the output loop ended.
enum End {
    Exited(ExitStatus),
    TimedOut,
    OutputLimit,
    WaitFailed(std::io::Error),
}

/// Run `command` and report its status and combined output.
pub(super) async fn run(command: &str, ctx: &ToolContext) -> ToolOutput {
    // One pipe for stdout and stderr keeps their lines in the order they were written.
    let (reader, writer) = match std::io::pipe() {
        Ok(pair) => pair,
        Err(e) => return ToolOutput::failed(format!("Could not start bash: pipe: {e}.")),
    };
    let stderr_writer = match writer.try_clone() {
        Ok(w) => w,
        Err(e) => return ToolOutput::failed(format!("Could not start bash: pipe: {e}.")),
    };
    let path = std::env::var_os("PATH").unwrap_or_else(|| FALLBACK_PATH.into());
    let Some(bash) = find_bash(&path) else {
        return ToolOutput::failed("Could not start bash: no `bash` on PATH.");
    };
    let marker = call_marker();
    let mut cmd = tokio::process::Command::new(bash);
    // `$0` stays `bash`, as when started by name.
    cmd.arg0("bash")
        .arg("-c")
        .arg(command)
        .current_dir(&ctx.workspace)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &ctx.home)
        .env(CALL_MARKER, &marker)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr_writer)
        .process_group(0)
        .kill_on_drop(true);
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end; until they close, the reader
    // would never see end-of-file.
    drop(cmd);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return ToolOutput::failed(format!("Could not start bash: {e}.")),
    };
    let Some(pid) = child.id() else {
        return ToolOutput::failed("Could not start bash: it exited before it could be tracked.");
    };
    let mut group = ProcessGroup::new(pid, marker);
    let mut reader = match pipe::Receiver::from_owned_fd(OwnedFd::from(reader)) {
        Ok(reader) => reader,
        Err(e) => return ToolOutput::failed(format!("Could not read bash output: {e}.")),
    };

    let timeout = ctx.limits.bash_timeout;
    let cap = ctx.limits.output_cap;
    let deadline = Instant::now() + timeout;
    let sleep = tokio::time::sleep_until(deadline);
    tokio::pin!(sleep);
    let mut output = Vec::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut exited: Option<ExitStatus> = None;
    let mut eof = false;
    let end = loop {
        if let (Some(status), true) = (exited, eof) {
            break End::Exited(status);
        }
        tokio::select! {
            () = &mut sleep => match exited {
                Some(status) => break End::Exited(status),
                None => break End::TimedOut,
            },
            read = reader.read(&mut chunk), if !eof => match read {
                Ok(0) => eof = true,
                Ok(n) => {
                    output.extend_from_slice(&chunk[..n]);
                    if output.len() > cap {
                        break End::OutputLimit;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // A broken pipe means no more output; the exit status still decides.
                Err(_) => eof = true,
            },
            waited = child.wait(), if exited.is_none() => match waited {
                Ok(status) => {
                    exited = Some(status);
                    // Background children must not outlive the call or hold the pipe open.
                    group.kill();
                    let grace = (Instant::now() + DRAIN_GRACE).min(deadline);
                    sleep.as_mut().reset(grace);
                }
                Err(e) => break End::WaitFailed(e),
            },
        }
    };
    if !matches!(end, End::Exited(_)) {
        group.kill();
        // SIGKILL cannot be caught; reaping only waits for the kernel to tear bash down.
        let _ = tokio::time::timeout(REAP_TIMEOUT, child.wait()).await;
    }
    let mut text = String::from_utf8_lossy(&output).into_owned();
    match end {
        End::Exited(status) => exited_output(text, status),
        End::TimedOut => ToolOutput::new(
            CallStatus::TimedOut,
            with_note(
                text,
                &format!(
                    "timed out after {}: the command and its process group were killed",
                    seconds(timeout)
                ),
            ),
        ),
        End::OutputLimit => {
            truncate(&mut text, cap);
            ToolOutput::new(
                CallStatus::OutputLimit,
                with_note(
                    text,
                    &format!("output exceeded {cap} bytes: the command was stopped"),
                ),
            )
        }
        End::WaitFailed(e) => ToolOutput::failed(with_note(
            text,
            &format!("could not wait for bash: {e}; its process group was killed"),
        )),
    }
}

fn exited_output(text: String, status: ExitStatus) -> ToolOutput {
    if status.success() {
        if text.is_empty() {
            return ToolOutput::completed("(no output)");
        }
        return ToolOutput::completed(text);
    }
    let note = match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("terminated by signal {signal}"),
        (None, None) => "failed".to_owned(),
    };
    ToolOutput::failed(with_note(text, &note))
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}

/// A marker value no other call of this process (or another evalhost) uses.
fn call_marker() -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        CALLS.fetch_add(1, Ordering::Relaxed)
    )
}

/// The process group bash leads, and the marker its processes carry. Killed once:
/// explicitly, or on drop when the turn is cancelled mid-call, so a dropped future does not
/// leave anything running.
struct ProcessGroup {
    pgid: Pid,
    marker: String,
    alive: bool,
}

impl ProcessGroup {
    fn new(pid: u32, marker: String) -> Self {
        Self {
            // Pids fit in i32 on every platform tokio supports; 0 would mean "our own group",
            // so an impossible value must never reach killpg.
            pgid: Pid::from_raw(i32::try_from(pid).unwrap_or(-1)),
            marker,
            alive: true,
        }
    }

    fn kill(&mut self) {
        if std::mem::replace(&mut self.alive, false) && self.pgid.as_raw() > 0 {
            // ESRCH (nothing left in the group) is the expected case after a clean exit.
            let _ = killpg(self.pgid, Signal::SIGKILL);
            kill_marked(&self.marker);
        }
    }
}

/// SIGKILL every process whose environment carries `CALL_MARKER=marker`, until none is left
/// (or [`SWEEP_ROUNDS`] sweeps). Processes of other users are unreadable and skipped.
fn kill_marked(marker: &str) {
    let needle = format!("{CALL_MARKER}={marker}\0");
    for _ in 0..SWEEP_ROUNDS {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut found = false;
        for pid in entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            // Entries are NUL-terminated; matching after a NUL (or at the start) anchors
            // the name, so `XEVALHOST_TOOL_CALL=..` does not count.
            let marked = environ.starts_with(needle.as_bytes())
                || environ
                    .windows(needle.len() + 1)
                    .any(|w| w[0] == 0 && &w[1..] == needle.as_bytes());
            if marked && pid > 0 {
                found = true;
                let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        if !found {
            return;
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::find_bash;
    use std::ffi::OsStr;

    #[test]
    fn bash_is_found_by_full_path_on_the_given_path_only() {
        let empty = tempfile::tempdir().unwrap();
        let found = find_bash(OsStr::new(&format!(
            "relative:{}:/usr/bin:/bin",
            empty.path().display()
        )))
        .expect("bash in /usr/bin or /bin");
        assert!(found.is_absolute() && found.ends_with("bash"), "{found:?}");
        assert_eq!(find_bash(empty.path().as_os_str()), None);
        assert_eq!(find_bash(OsStr::new("")), None);
    }
}

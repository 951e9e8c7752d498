//! The bash tool: `bash -c` in the workspace, in its own process group, with a cleared
//! environment, confined by the run's Landlock ruleset from before `exec` (`crate::confine`),
//! a timeout and an output cap. On timeout, on the cap, and when bash exits,
//! the whole group gets SIGKILL, and so does every process still carrying the call's marker
//! variable (one that left the group with `setsid`, double-forked), so no process started
//! by the call outlives it.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::Instant;

use super::output::{truncate, with_note};
use super::{ToolContext, ToolOutput};
use crate::confine::{Reach, RunCommand};
use crate::process_group::ProcessGroup;
use crate::session::CallStatus;

/// `PATH` for commands when the host has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// After bash exits, how long to keep reading output still buffered in the pipe. The group
/// is killed at exit, so the pipe normally closes at once; only a process that left the
/// group (`setsid`) can hold it open, and it must not stall the turn.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How long to wait for a killed bash to be reaped before giving up on it.
const REAP_TIMEOUT: Duration = Duration::from_secs(5);

const READ_CHUNK: usize = 16 * 1024;

/// The variable marking every process a bash call starts ([`ProcessGroup`]).
const CALL_MARKER: &str = "EVALHOST_TOOL_CALL";

/// The first executable `bash` on `path`, by its full path (`crate::on_path`).
fn find_bash(path: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    crate::on_path::find(path, "bash")
}

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
    // In a run's container, the image's bash (on the image's PATH).
    let in_container = ctx
        .confinement
        .as_ref()
        .is_some_and(|c| c.in_container().is_some());
    let bash = match in_container {
        true => "bash".into(),
        false => match find_bash(&path) {
            Some(bash) => bash,
            None => return ToolOutput::failed("Could not start bash: no `bash` on PATH."),
        },
    };
    let limits_before = ctx.confinement.as_ref().and_then(|c| c.limit_counts());
    let marker = crate::process_group::new_marker();
    let made = match &ctx.confinement {
        Some(confinement) => confinement.command(&bash, &ctx.workspace, Reach::Nothing),
        None => {
            let mut cmd = RunCommand::plain(&bash);
            cmd.current_dir(&ctx.workspace);
            Ok(cmd)
        }
    };
    let mut cmd = match made {
        Ok(cmd) => cmd,
        Err(e) => return ToolOutput::failed(format!("Could not start bash: {e}.")),
    };
    // `$0` stays `bash`, as when started by name (the trailing argument of `bash -c`, since
    // in a sandbox bubblewrap starts it by path).
    cmd.arg0("bash")
        .arg("-c")
        .arg(command)
        .arg("bash")
        .env_clear()
        .env("PATH", path)
        .env("HOME", &ctx.home)
        .env(CALL_MARKER, &marker)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr_writer)
        .process_group(0)
        .kill_on_drop(true);
    let spawned = match &ctx.confinement {
        Some(confinement) => confinement.spawn(cmd),
        None => cmd.spawn_plain(),
    };
    // The command held our copies of the pipe's write end (it is dropped by now); until they
    // close, the reader would never see end-of-file.
    let mut running = match spawned {
        Ok(running) => running,
        Err(e) => return ToolOutput::failed(format!("Could not start bash: {e}.")),
    };
    let child = &mut running.child;
    let Some(pid) = child.id() else {
        return ToolOutput::failed("Could not start bash: it exited before it could be tracked.");
    };
    let mut group = ProcessGroup::new(pid, CALL_MARKER, marker);
    if ctx
        .confinement
        .as_ref()
        .is_some_and(|c| c.has_pid_namespace())
    {
        group = group.leading_a_pid_namespace();
    }
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
    // A limit of the run's container the command ran into is named, whatever it did.
    if let Some(hit) = ctx
        .confinement
        .as_ref()
        .and_then(|c| c.limit_hit(limits_before))
    {
        text = with_note(text, &hit);
    }
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

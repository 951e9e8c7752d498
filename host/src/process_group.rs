//! Killing everything a child process started: its process group, and every process still
//! carrying its marker variable. The bash tool (`agent/tools/bash.rs`, marker
//! `EVALHOST_TOOL_CALL`) and external agents (`runner/external.rs`, marker
//! `EVALHOST_AGENT_RUN`) start their child in a new process group with a marker no other
//! child uses. Environments are inherited through fork and exec, so the marker follows
//! processes that leave the group (`setsid`, double-forking); only a process that replaces its
//! whole environment (`env -i`) loses it. In a run's namespaces (`confine/namespaces.rs`) the
//! child is bubblewrap, whose own child is the first process of a PID namespace: killing that
//! one ends every process in it, `env -i` included, and [`ProcessGroup::kill`] waits for that
//! instead of sweeping /proc.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How long [`ProcessGroup::kill`] waits for the killed children to be gone (a PID
/// namespace's processes are killed and reaped by the kernel first).
const CHILDREN_EXIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Sweeps of /proc after the group is killed: a marked process may fork while being found.
const SWEEP_ROUNDS: usize = 8;

/// A marker value no other child of this process (or another evalhost) uses.
pub(crate) fn new_marker() -> String {
    static CHILDREN: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        CHILDREN.fetch_add(1, Ordering::Relaxed)
    )
}

/// The process group a child leads, and the marker its processes carry. Killed once:
/// explicitly, or on drop (a run timed out or cancelled mid-call drops the future holding
/// it), so a dropped future does not leave anything running.
pub(crate) struct ProcessGroup {
    pgid: Pid,
    var: &'static str,
    marker: String,
    alive: bool,
    /// Whether [`ProcessGroup::kill`] sweeps /proc for marked processes: not when the
    /// leader's child is the first process of a PID namespace, whose death ends them all.
    sweep: bool,
}

impl ProcessGroup {
    /// The group of the child `pid` (started with `process_group(0)` and `var=marker` in
    /// its environment).
    pub(crate) fn new(pid: u32, var: &'static str, marker: String) -> Self {
        Self {
            // Pids fit in i32 on every platform tokio supports; 0 would mean "our own group",
            // so an impossible value must never reach killpg.
            pgid: Pid::from_raw(i32::try_from(pid).unwrap_or(-1)),
            var,
            marker,
            alive: true,
            sweep: true,
        }
    }

    /// The leader is bubblewrap, whose child is the first process of a PID namespace of its
    /// own: killing that child ends every process the command started, so [`ProcessGroup::kill`]
    /// skips the sweep of /proc (a read of every process's environment, after every bash
    /// call; `docs/performance.md`, "The replay ratio today").
    pub(crate) fn leading_a_pid_namespace(mut self) -> Self {
        self.sweep = false;
        self
    }

    /// SIGKILL the leader's children, the group and (unless the children lead a PID
    /// namespace) every marked process, once; then wait until the children are gone.
    ///
    /// In a run's namespaces the leader is bubblewrap and its child the first process of the
    /// run's PID namespace: when that one dies, the kernel kills every process of the
    /// namespace and reaps them before the first one's exit is seen. So once this returns, no
    /// process of the sandbox runs, whatever it did to leave the group (`setsid`, `env -i`).
    pub(crate) fn kill(&mut self) {
        // Never 0 or 1 (our own group, or every process).
        if std::mem::replace(&mut self.alive, false) && self.pgid.as_raw() > 1 {
            let children = pidfd::children(self.pgid.as_raw());
            for child in &children {
                pidfd::kill(child);
            }
            // ESRCH (nothing left in the group) is the expected case after a clean exit.
            let _ = killpg(self.pgid, Signal::SIGKILL);
            if self.sweep {
                kill_marked(self.var, &self.marker);
            }
            pidfd::wait_all(&children, CHILDREN_EXIT);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// SIGKILL every process whose environment carries `var=marker`, until none is left (or
/// [`SWEEP_ROUNDS`] sweeps). Processes of other users are unreadable and skipped.
fn kill_marked(var: &str, marker: &str) {
    let needle = format!("{var}={marker}\0");
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

/// Processes held by pidfd (no pid reuse between finding and killing them).
mod pidfd {
    use std::os::fd::{AsFd, FromRawFd, OwnedFd};
    use std::time::{Duration, Instant};

    /// The children of `pid`, each as a pidfd (`/proc/PID/task/PID/children`).
    #[allow(unsafe_code)]
    pub(super) fn children(pid: i32) -> Vec<OwnedFd> {
        let Ok(list) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) else {
            return Vec::new();
        };
        list.split_whitespace()
            .filter_map(|child| child.parse::<i32>().ok())
            .filter_map(|child| {
                // SAFETY: pidfd_open takes a pid and flags; the result is a new descriptor.
                let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, child, 0) };
                let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0)?;
                // SAFETY: the kernel just made `fd`, owned here alone.
                Some(unsafe { OwnedFd::from_raw_fd(fd) })
            })
            .collect()
    }

    #[allow(unsafe_code)]
    pub(super) fn kill(process: &OwnedFd) {
        use std::os::fd::AsRawFd;
        // SAFETY: pidfd_send_signal on a pidfd we own, no siginfo.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                process.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }

    /// Wait until every process has exited (its pidfd is readable), at most `limit`.
    pub(super) fn wait_all(processes: &[OwnedFd], limit: Duration) {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let deadline = Instant::now() + limit;
        for process in processes {
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::ZERO);
                let mut fds = [PollFd::new(process.as_fd(), PollFlags::POLLIN)];
                match poll(&mut fds, timeout) {
                    Err(nix::errno::Errno::EINTR) => continue,
                    _ => break,
                }
            }
        }
    }
}

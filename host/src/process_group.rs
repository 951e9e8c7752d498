//! Killing everything a child process started: its process group, and every process still
//! carrying its marker variable. The bash tool (`agent/tools/bash.rs`, marker
//! `EVALHOST_TOOL_CALL`) and external agents (`runner/external.rs`, marker
//! `EVALHOST_AGENT_RUN`) start their child in a new process group with a marker no other
//! child uses. Environments are inherited through fork and exec, so the marker follows
//! processes that leave the group (`setsid`, double-forking); only a process that replaces its
//! whole environment (`env -i`) loses it.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

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
        }
    }

    /// SIGKILL the group and every marked process (once).
    pub(crate) fn kill(&mut self) {
        // Never 0 or 1 (our own group, or every process).
        if std::mem::replace(&mut self.alive, false) && self.pgid.as_raw() > 1 {
            // ESRCH (nothing left in the group) is the expected case after a clean exit.
            let _ = killpg(self.pgid, Signal::SIGKILL);
            kill_marked(self.var, &self.marker);
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

//! What a suite run tells an observer while it goes: the plan, then each finished run.
//!
//! The command line renders this as a progress bar; a library user can log it or ignore
//! it. The runner never depends on how it is shown.

use crate::report::RunReport;

/// An observer of a suite run, called from the runner's tasks as runs finish (possibly
/// from several threads, in completion order). Keep the calls cheap: they are on the path
/// of every run.
pub trait Progress: Send + Sync + std::fmt::Debug {
    /// The suite is about to start: how many cases it runs, and how many runs in all.
    fn started(&self, cases: usize, runs: u64) {
        let _ = (cases, runs);
    }

    /// One run of `case` finished (runs cancelled by Ctrl-C are not reported).
    fn run_finished(&self, case: &str, run: &RunReport) {
        let _ = (case, run);
    }
}

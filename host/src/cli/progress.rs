//! The progress bar of `evalhost run` on a terminal: runs done of the total, failures so
//! far, elapsed time and ETA, redrawn on stderr and cleared before the report is printed.
//!
//! It is drawn only when stderr is a terminal and `--quiet` is not given. When stderr is
//! not a terminal (CI logs) nothing extra is written: stdout carries the report and stderr
//! only the closing `Error:` line, so CI logs stay as greppable as Mino's.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::report::RunReport;
use crate::runner::Progress;

/// How often the bar redraws while no run finishes (so elapsed time and ETA move).
const TICK: Duration = Duration::from_millis(250);

/// A progress bar over every run of a suite.
#[derive(Debug)]
pub struct RunProgress {
    bar: ProgressBar,
    failed: AtomicU32,
}

impl RunProgress {
    /// A bar on stderr; its length is set when the suite starts.
    pub fn new(color: bool) -> Self {
        let bar_style = if color {
            "{bar:30.green/red}"
        } else {
            "{bar:30}"
        };
        // `wide_msg` last: it is cut to the terminal's width, so the bar never wraps.
        let template = format!(
            "{{spinner}} {bar_style} {{pos}}/{{len}} runs [{{elapsed}} elapsed, ETA {{eta}}] {{wide_msg}}"
        );
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::new(0).with_style(style);
        Self {
            bar,
            failed: AtomicU32::new(0),
        }
    }

    /// Remove the bar, so the report starts on a clean line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for RunProgress {
    fn started(&self, _cases: usize, runs: u64) {
        self.bar.set_length(runs);
        self.bar.set_message("0 failed");
        self.bar.enable_steady_tick(TICK);
    }

    fn run_finished(&self, case: &str, run: &RunReport) {
        let failed = if run.pass {
            self.failed.load(Ordering::Relaxed)
        } else {
            self.failed.fetch_add(1, Ordering::Relaxed) + 1
        };
        self.bar.inc(1);
        self.bar
            .set_message(format!("{failed} failed (last: {case} run {})", run.run));
    }
}

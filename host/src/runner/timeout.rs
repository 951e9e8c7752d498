//! The run timeout: how long a run's agent may take, its turns or the external agent
//! program, from the first model request to the last answer. `evalhost run --timeout`
//! ([`super::RunOptions::timeout_secs`]) beats the case's `timeout_secs`, which beats
//! [`DEFAULT_TIMEOUT_SECS`].
//!
//! On expiry the agent's future is dropped, and with it every process of the run: the bash
//! tool's process group and marked processes (`agent/tools/bash.rs`), the external agent's
//! process group (`external.rs`). The run is an errored run, [`TimedOut`], and the report is
//! made as for any other errored run.

use std::time::Duration;

use crate::case::{Case, DEFAULT_TIMEOUT_SECS};

/// The timeout of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RunTimeout {
    secs: f64,
}

impl RunTimeout {
    /// The timeout of `case`'s runs: `override_secs` (`--timeout`), else the case's own,
    /// else the default.
    pub fn of(case: &Case, override_secs: Option<f64>) -> Self {
        Self {
            secs: override_secs
                .or(case.timeout_secs)
                .unwrap_or(DEFAULT_TIMEOUT_SECS),
        }
    }

    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.secs)
    }

    /// The run's error once the timeout has passed.
    pub(crate) fn expired(self) -> TimedOut {
        TimedOut { secs: self.secs }
    }
}

/// A run outlived its timeout; every process it started was killed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("turn failed: timed out after {secs} s")]
pub(crate) struct TimedOut {
    secs: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_beats_the_case_which_beats_the_default() {
        let yaml = "name: slow\nprompt: Go.\ntimeout_secs: 0.3\nmodel:\n  - text: ok\ngraders:\n  - max_requests: 1\n";
        let mut case = crate::case::parse_case(std::path::Path::new("slow.yaml"), yaml).unwrap();
        let message = |t: RunTimeout| t.expired().to_string();
        assert_eq!(
            message(RunTimeout::of(&case, None)),
            "turn failed: timed out after 0.3 s"
        );
        assert_eq!(
            RunTimeout::of(&case, None).duration(),
            Duration::from_millis(300)
        );
        assert_eq!(
            message(RunTimeout::of(&case, Some(2.0))),
            "turn failed: timed out after 2 s"
        );
        case.timeout_secs = None;
        assert_eq!(
            message(RunTimeout::of(&case, None)),
            "turn failed: timed out after 600 s"
        );
    }
}

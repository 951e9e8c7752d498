//! The resource limits of one grading call.

use std::time::Duration;

/// Limits applied to every grading call. Every limit hit is an error verdict naming it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deterministic instruction budget (wasmtime fuel).
    pub fuel: u64,
    /// Wall-clock deadline, enforced by epoch interruption.
    pub deadline: Duration,
    /// Largest linear memory a grader may grow to, in bytes.
    pub memory_bytes: usize,
    /// Largest table a grader may grow to, in elements.
    pub table_elements: usize,
    /// Cap on captured stdout and on captured stderr, each, in bytes.
    pub output_bytes: usize,
    /// Largest verdict message (and `describe` text) a grader may return, in bytes; a longer
    /// one is [`GraderError::MessageLimit`](super::GraderError::MessageLimit).
    pub message_bytes: usize,
    /// Largest config schema a component may list for one grader, in bytes; a longer one
    /// fails the component's load with [`GraderError::SchemaLimit`](super::GraderError::SchemaLimit).
    pub schema_bytes: usize,
    /// Host resources a call may hold at once (open files, directory listings, streams);
    /// one more is [`GraderError::HandleLimit`](super::GraderError::HandleLimit). Each open
    /// file holds a host descriptor, so this keeps one grader from exhausting the process's.
    pub handles: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 1_000_000_000,
            deadline: Duration::from_secs(5),
            memory_bytes: 256 << 20,
            table_elements: 100_000,
            output_bytes: 64 << 10,
            message_bytes: 64 << 10,
            schema_bytes: 1 << 20,
            handles: 256,
        }
    }
}

/// How often the engine's epoch advances; the deadline is a whole number of ticks.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

impl Limits {
    /// The deadline in epoch ticks (at least one).
    pub(crate) fn deadline_ticks(&self) -> u64 {
        (self.deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64
    }
}

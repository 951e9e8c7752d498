//! The words every layer above the session log shares: how a tool call ended, the answer to
//! confirmation questions, a recorded tool result. They live here, at the bottom, so the case
//! formats, the agent, the endpoint and the presets use one definition without using each other.

use serde::{Deserialize, Serialize};

/// The outcome of one tool call, as recorded in the session log and seen by graders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool ran and finished.
    Completed,
    /// Declined at confirmation, or blocked by policy (protected paths).
    Denied,
    /// The arguments did not fit the tool's schema.
    InvalidArguments,
    /// No tool of that name exists.
    UnknownTool,
    /// The tool ran and failed (non-zero exit, missing file, ...).
    Failed,
    /// The turn was cancelled before the call finished.
    Cancelled,
    /// The tool hit its time limit.
    TimedOut,
    /// The tool's output exceeded its cap.
    OutputLimit,
}

impl CallStatus {
    /// The status as written in logs, evidence and case files, e.g. `invalid_arguments`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Completed => "completed",
            CallStatus::Denied => "denied",
            CallStatus::InvalidArguments => "invalid_arguments",
            CallStatus::UnknownTool => "unknown_tool",
            CallStatus::Failed => "failed",
            CallStatus::Cancelled => "cancelled",
            CallStatus::TimedOut => "timed_out",
            CallStatus::OutputLimit => "output_limit",
        }
    }
}

/// The answer the harness gives to every confirmation question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approve {
    /// Decline every call that needs confirmation.
    #[default]
    None,
    /// Approve every call that needs confirmation (protected paths are still refused).
    All,
}

/// A recorded tool result, returned by replay tools for the call with the same position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedToolResult {
    /// Tool name the recording expects at this position.
    pub name: String,
    /// The status the call gets (`failed` for a result recorded as an error).
    pub status: CallStatus,
    /// What the model is told the tool returned.
    pub output: String,
}

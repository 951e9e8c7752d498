//! The session log: one JSONL record per event of a run, the durable truth of what happened.
//!
//! The agent appends records while it runs; [`crate::evidence`] rebuilds the evidence
//! graders receive from these records alone.

mod log;

pub use log::{SessionLog, SessionLogError, read_session_log};

use serde::{Deserialize, Serialize};

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    #[serde(flatten)]
    pub event: Event,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The run began.
    SessionStart {
        case: String,
        run: u32,
        mode: String,
        model: String,
    },
    /// The user's prompt for this turn.
    UserMessage { text: String },
    /// The agent sent request `n` (1-based) to the model.
    ModelRequest {
        n: u32,
        /// The request body as sent.
        body: serde_json::Value,
    },
    /// The model's completed response to request `n`.
    ModelResponse {
        n: u32,
        /// Output items in order.
        output: Vec<OutputItem>,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// A tool call passed validation, policy and confirmation and started executing.
    ToolStart { call_id: String, name: String },
    /// The result the agent paired with a tool call (every call gets one).
    ToolResult {
        call_id: String,
        name: String,
        status: crate::agent::CallStatus,
        output: String,
        duration_ms: u64,
    },
    /// The turn ended with this final text.
    TurnEnd { final_text: String },
    /// The run ended early with an error.
    RunError { message: String },
}

/// One output item of a model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// Assistant text.
    Message { text: String },
    /// A request to call a tool.
    FunctionCall {
        call_id: String,
        name: String,
        /// Arguments as JSON text, exactly as the model sent them.
        arguments: String,
    },
}

impl Event {
    /// The `type` tag this event has in the log, e.g. `tool_result`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::SessionStart { .. } => "session_start",
            Event::UserMessage { .. } => "user_message",
            Event::ModelRequest { .. } => "model_request",
            Event::ModelResponse { .. } => "model_response",
            Event::ToolStart { .. } => "tool_start",
            Event::ToolResult { .. } => "tool_result",
            Event::TurnEnd { .. } => "turn_end",
            Event::RunError { .. } => "run_error",
        }
    }
}

//! Why a turn ended without a final answer.

use std::path::PathBuf;

use crate::session::SessionLogError;

/// Why a turn failed. Except for [`AgentError::Log`], the turn also wrote a `run_error`
/// record whose message is exactly this error's `Display`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model answered `response.failed` (or a stream `error` event); the message is the
    /// model's, e.g. `Model script exhausted: request 3 has no scripted response`.
    #[error("{message}")]
    ModelFailed {
        /// The request that failed (1-based).
        request: u32,
        /// The model's error message.
        message: String,
    },
    /// The request could not be sent or its stream broke off.
    #[error("Model request {request} failed: {message}")]
    Transport {
        /// The request (1-based).
        request: u32,
        /// What went wrong, with its causes.
        message: String,
    },
    /// The endpoint answered with an HTTP error status.
    #[error("Model request {request} returned HTTP {status}: {body}")]
    HttpStatus {
        /// The request (1-based).
        request: u32,
        /// The status code.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The request did not finish within the request timeout.
    #[error("Model request {request} timed out after {seconds:.1}s")]
    Timeout {
        /// The request (1-based).
        request: u32,
        /// The timeout.
        seconds: f64,
    },
    /// The stream was not a well-formed Responses stream.
    #[error("Model response {request} was malformed: {message}")]
    Malformed {
        /// The request (1-based).
        request: u32,
        /// What was wrong.
        message: String,
    },
    /// The model stopped early, e.g. at its output token limit.
    #[error("Model response {request} was incomplete: {reason}")]
    Incomplete {
        /// The request (1-based).
        request: u32,
        /// The reason the model gave.
        reason: String,
    },
    /// The turn needed more model requests than allowed.
    #[error("Turn exceeded the limit of {max} model requests")]
    RequestLimit {
        /// The limit.
        max: u32,
    },
    /// The model asked for more tool calls than allowed.
    #[error("Turn exceeded the limit of {max} tool calls")]
    ToolCallLimit {
        /// The limit.
        max: u32,
    },
    /// A replayed run asked for a tool call the recording does not have at that position.
    #[error("Replay tools: call {position} ({name}): {message}")]
    Replay {
        /// 1-based position of the call among the run's calls.
        position: usize,
        /// The tool the model called.
        name: String,
        /// What the recording has instead.
        message: String,
    },
    /// The workspace directory could not be opened.
    #[error("failed to open workspace `{path}`: {message}")]
    Workspace {
        /// The workspace path.
        path: PathBuf,
        /// The cause.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("failed to set up the model client: {message}")]
    Client {
        /// The cause.
        message: String,
    },
    /// The session log could not be written; no `run_error` record could be either.
    #[error(transparent)]
    Log(#[from] SessionLogError),
}

//! What one agent turn runs with: endpoint, policy, directories and limits.

use std::path::PathBuf;
use std::time::Duration;

use std::sync::Arc;

use crate::session::Event;
use crate::session::{Approve, RecordedToolResult};

/// The default agent instructions, used when a case declares none.
pub const DEFAULT_INSTRUCTIONS: &str = include_str!("instructions.md");

/// Model name sent in replay mode.
pub const SCRIPTED_MODEL: &str = "scripted";

/// Everything one turn needs besides the prompt and the session log.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// System instructions sent with every request.
    pub instructions: String,
    /// The answer to every confirmation question.
    pub approve: Approve,
    /// The project directory: bash runs here and file tools are confined to it.
    pub workspace: PathBuf,
    /// `HOME` for bash: a per-run directory holding nothing of the user's.
    pub home: PathBuf,
    /// OpenAI-compatible base URL; requests go to `{base_url}/responses`.
    pub base_url: String,
    /// Model name sent in requests.
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set.
    pub api_key: Option<String>,
    /// Request, call, time and size limits.
    pub limits: Limits,
    /// When set, tool calls are answered from this recording, by call position, instead of
    /// running tools; a call past its end or of another tool is a run error.
    pub replay_tools: Option<Vec<RecordedToolResult>>,
    /// The endpoint's record of what it received and answered (every run evalhost makes
    /// sets it: [`crate::model::Session::endpoint_record`]). With one, the `model_request` and
    /// `model_response` records are written from it, as for external agents; without one (the
    /// agent pointed at another endpoint), from the request sent and the stream read.
    pub record: Option<Arc<dyn EndpointRecord>>,
    /// How bash's processes are started: the run's temp dir (`TMPDIR`) and its Landlock
    /// ruleset (`crate::confine`); `None`: unconfined, `TMPDIR` not set.
    pub confinement: Option<Arc<crate::confine::RunConfinement>>,
}

/// The record a model endpoint keeps of the requests it received and how it answered them.
pub trait EndpointRecord: Send + Sync + std::fmt::Debug {
    /// The session-log records (`model_request`, `model_response`, `endpoint_error`) of the
    /// exchanges completed since the last call, in the order the requests arrived.
    fn take_log_events(&self) -> Vec<Event>;
}

impl AgentConfig {
    /// A config with the default instructions, `approve: none`, the scripted model name,
    /// no API key and default limits.
    pub fn new(base_url: impl Into<String>, workspace: PathBuf, home: PathBuf) -> Self {
        Self {
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            approve: Approve::None,
            workspace,
            home,
            base_url: base_url.into(),
            model: SCRIPTED_MODEL.to_owned(),
            api_key: None,
            limits: Limits::default(),
            replay_tools: None,
            record: None,
            confinement: None,
        }
    }
}

/// Limits of one turn. Exceeding a request or call limit ends the turn with a run error;
/// the time and size limits end one tool call with `timed_out` or `output_limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most model requests per turn.
    pub max_requests: u32,
    /// Most tool calls per turn.
    pub max_tool_calls: u32,
    /// Wall-clock limit of one bash command.
    pub bash_timeout: Duration,
    /// Most bytes of output one tool call may produce.
    pub output_cap: usize,
    /// Limit on one model request, from sending it to the end of its stream.
    pub request_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_requests: 8,
            max_tool_calls: 16,
            bash_timeout: Duration::from_secs(30),
            output_cap: 64 * 1024,
            request_timeout: Duration::from_secs(120),
        }
    }
}

//! The session log: one JSONL record per event of a run, the durable truth of what happened.
//!
//! The agent appends records while it runs; [`crate::evidence`] rebuilds the evidence
//! graders receive from these records alone.

mod log;
mod tool_call;
mod vocabulary;

pub use log::SessionLogError;
pub use log::{SessionLog, read_session_log};
pub(crate) use log::{parse_records, read_whole};
pub(crate) use tool_call::ToolCallRecords;
pub use vocabulary::{Approve, CallStatus, RecordedToolResult};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Milliseconds since the run started.
    pub at_ms: u64,
    /// What happened (the record's `type` and its fields).
    #[serde(flatten)]
    pub event: Event,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The run began.
    SessionStart {
        /// The case's name.
        case: String,
        /// 1-based run number.
        run: u32,
        /// `replay` or `live`.
        mode: String,
        /// Model name (`scripted` in replay).
        model: String,
    },
    /// The skills evalhost's agent found in the workspace's `.agents/skills` when the session
    /// started (before the first user message). Written only when that directory exists.
    SessionSkills {
        /// Skills whose `SKILL.md` is valid, in folder-name order.
        skills: Vec<SkillSummary>,
        /// Skill folders that could not be loaded, and why.
        problems: Vec<SkillProblem>,
    },
    /// The user's prompt for this turn.
    UserMessage {
        /// The prompt's text.
        text: String,
    },
    /// The agent sent request `n` (1-based) to the model.
    ModelRequest {
        /// 1-based request number.
        n: u32,
        /// The request body as sent.
        body: RequestBody,
    },
    /// The agent sent request `n` again before an answer to it got through (after an error,
    /// or while it waited): the same conversation, though the rest of the body may differ
    /// (`body`, as sent). `attempt` 2 is the first retry. A retry is not a new request: `n`
    /// stays, the evidence's request count and `max_requests` do not count it, and the
    /// script answers it as it answers request `n`. An answer to it is a `model_response` of
    /// `n`.
    ModelRetry {
        /// The number of the request sent again.
        n: u32,
        /// 2 for the first retry, then 3, ...
        attempt: u32,
        /// The request body as sent.
        body: RequestBody,
    },
    /// The model's completed response to request `n`.
    ModelResponse {
        /// The number of the request answered.
        n: u32,
        /// Output items in order.
        output: Vec<OutputItem>,
        /// Input (prompt) tokens of the request, as the provider reported them (replay: the
        /// script's, or synthetic).
        input_tokens: u64,
        /// Output (completion) tokens of the response, likewise.
        output_tokens: u64,
        /// Of `input_tokens`, those the provider read from its prompt cache (priced apart,
        /// docs/cost.md); absent when none were, and in logs of earlier versions.
        #[serde(default, skip_serializing_if = "is_zero")]
        cached_input_tokens: u64,
    },
    /// The tool of a call ran (`tool_call.rs` says exactly when this is written).
    ToolStart {
        /// The call id the model used.
        call_id: String,
        /// The tool's name.
        name: String,
    },
    /// The result the agent paired with a tool call (every call gets one).
    ToolResult {
        /// The call id the model used.
        call_id: String,
        /// The tool's name as the model requested it.
        name: String,
        /// How the call ended.
        status: CallStatus,
        /// The result text sent back to the model.
        output: String,
        /// Wall time of the tool in milliseconds (0 when it did not start).
        duration_ms: u64,
    },
    /// The turn ended with this final text.
    TurnEnd {
        /// The turn's final text.
        final_text: String,
    },
    /// The run ended early with an error.
    RunError {
        /// Why it ended.
        message: String,
    },
    /// The environment's verifier ran in the run's container after the agent (a Harbor
    /// task's `tests/test.sh`, `crate::environment::Verifier`).
    VerifierResult {
        /// What it wrote: `reward` from `reward.txt`, each key of `reward.json`.
        rewards: std::collections::BTreeMap<String, f64>,
        /// Its exit code (none: killed, or it never started).
        exit_code: Option<i32>,
        /// The end of what it printed (stdout and stderr).
        output: String,
        /// Wall time of the verifier in milliseconds.
        duration_ms: u64,
        /// Why it gave no reward, when it did not (a timeout, a missing or unreadable file).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The model endpoint did not serve a request of the agent's (another path, a method, a
    /// WebSocket upgrade): it was answered with `status` and this message.
    EndpointError {
        /// The request's HTTP method.
        method: String,
        /// The request's path (cut at 1 KiB).
        path: String,
        /// The HTTP status it was answered with (404, 405, 403).
        status: u16,
        /// Why it was not served.
        message: String,
    },
}

/// A model request body, kept as the JSON text that was sent: the agent encodes each
/// request once, and the log writes that text as it is instead of encoding it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestBody(#[serde(deserialize_with = "raw_from_value")] Box<RawValue>);

impl RequestBody {
    /// The body `json`, which must be one JSON value (as an encoder produced it).
    pub(crate) fn from_encoded(json: Box<RawValue>) -> Self {
        Self(json)
    }

    /// A body as a client sent it: its own text when it is one JSON value on one line, so the
    /// log keeps it byte for byte; re-encoded on one line when it spans several (a log record
    /// is one line); `null` when it is not JSON.
    pub(crate) fn from_received(bytes: &[u8]) -> Self {
        match serde_json::from_slice::<Box<RawValue>>(bytes) {
            Ok(raw) if memchr::memchr2(b'\n', b'\r', raw.get().as_bytes()).is_none() => Self(raw),
            Ok(raw) => {
                Self::from(serde_json::from_str::<serde_json::Value>(raw.get()).unwrap_or_default())
            }
            Err(_) => Self::from(serde_json::Value::Null),
        }
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The body as a JSON tree.
    pub fn to_value(&self) -> serde_json::Value {
        // The text is one JSON value by construction, so this parse cannot fail.
        serde_json::from_str(self.0.get()).unwrap_or(serde_json::Value::Null)
    }
}

impl From<serde_json::Value> for RequestBody {
    fn from(value: serde_json::Value) -> Self {
        Self(raw(&value))
    }
}

/// Equal when the JSON is: a body read back from a log file has its object keys in sorted
/// order (see [`raw_from_value`]), the body the agent sent has them in the order it sent.
impl PartialEq for RequestBody {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get() || self.to_value() == other.to_value()
    }
}

/// A count that is absent from the log when 0.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn raw(value: &serde_json::Value) -> Box<RawValue> {
    // A `Value` always encodes.
    serde_json::value::to_raw_value(value).expect("a JSON value encodes")
}

/// A record's event is read through serde's buffered (flattened, tagged) form, which cannot
/// hand out raw text: read a tree and encode it again.
fn raw_from_value<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Box<RawValue>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(|value| raw(&value))
}

/// One output item of a model response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// Assistant text.
    Message {
        /// The text.
        text: String,
    },
    /// A request to call a tool.
    FunctionCall {
        /// The call id the model gave it (`call_1`).
        call_id: String,
        /// The tool's name as the model requested it.
        name: String,
        /// Arguments as JSON text, exactly as the model sent them.
        arguments: String,
    },
}

impl OutputItem {
    /// The text of a message item.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::Message { text } => Some(text),
            Self::FunctionCall { .. } => None,
        }
    }

    /// `(call_id, name, arguments)` of a call item.
    pub fn call(&self) -> Option<(&str, &str, &str)> {
        match self {
            Self::FunctionCall {
                call_id,
                name,
                arguments,
            } => Some((call_id, name, arguments)),
            Self::Message { .. } => None,
        }
    }
}

/// A skill of the workspace: its `SKILL.md` front matter's `name` and `description`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillSummary {
    /// The skill's `name`.
    pub name: String,
    /// The skill's `description`.
    pub description: String,
}

/// A skill folder whose `SKILL.md` could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillProblem {
    /// Workspace-relative path of the folder's `SKILL.md`, e.g. `.agents/skills/deploy/SKILL.md`.
    pub path: String,
    /// What is wrong, e.g. `is missing: a skill folder needs a SKILL.md`.
    pub message: String,
}

impl Event {
    /// The warning an [`Event::EndpointError`] puts under its run in a report:
    /// `model endpoint: GET /v1/responses answered 404: ...`.
    pub(crate) fn endpoint_warning(&self) -> Option<String> {
        match self {
            Event::EndpointError {
                method,
                path,
                status,
                message,
            } => Some(format!(
                "model endpoint: {method} {path} answered {status}: {message}"
            )),
            _ => None,
        }
    }

    /// The `type` tag this event has in the log, e.g. `tool_result`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::SessionStart { .. } => "session_start",
            Event::SessionSkills { .. } => "session_skills",
            Event::UserMessage { .. } => "user_message",
            Event::ModelRequest { .. } => "model_request",
            Event::ModelRetry { .. } => "model_retry",
            Event::ModelResponse { .. } => "model_response",
            Event::ToolStart { .. } => "tool_start",
            Event::ToolResult { .. } => "tool_result",
            Event::TurnEnd { .. } => "turn_end",
            Event::RunError { .. } => "run_error",
            Event::EndpointError { .. } => "endpoint_error",
            Event::VerifierResult { .. } => "verifier_result",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RequestBody;

    #[test]
    fn a_received_body_is_kept_as_sent_and_on_one_line() {
        let compact = br#"{"model":"m","input":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(
            RequestBody::from_received(compact).get().as_bytes(),
            compact
        );
        // A pretty-printed body would split its log record over several lines.
        let pretty = b"{\n  \"model\": \"m\",\n  \"stream\": true\n}\n";
        let body = RequestBody::from_received(pretty);
        assert!(!body.get().contains('\n'), "{}", body.get());
        assert_eq!(
            body.to_value(),
            serde_json::json!({"model": "m", "stream": true})
        );
        assert_eq!(RequestBody::from_received(b"not json").get(), "null");
    }
}

//! Replay tools: tool calls answered from a recording by call position (AgentCompany
//! fixtures), never executed. A call past the recording's end, or of another tool than the
//! recording has at that position, ends the turn with [`AgentError::Replay`].

use std::sync::atomic::{AtomicUsize, Ordering};

use super::AgentError;
use super::tools::ToolOutput;
use crate::session::RecordedToolResult;
use crate::session::{SessionLog, ToolCallRecords};

/// The recording and how many of its results the turn has used.
pub(crate) struct ReplayTools {
    recorded: Vec<RecordedToolResult>,
    used: AtomicUsize,
}

impl ReplayTools {
    pub fn new(recorded: Vec<RecordedToolResult>) -> Self {
        Self {
            recorded,
            used: AtomicUsize::new(0),
        }
    }

    /// Answer the next call from the recording, logging `tool_start` and `tool_result` as a
    /// real call would; on a mismatch, log the call as cancelled and fail the turn.
    pub fn answer(
        &self,
        call: ToolCallRecords,
        log: &mut SessionLog,
    ) -> Result<ToolOutput, AgentError> {
        let name = call.name;
        let index = self.used.fetch_add(1, Ordering::SeqCst);
        let recorded = match self.recorded.get(index) {
            Some(recorded) if recorded.name == name => recorded,
            other => {
                let message = match other {
                    Some(recorded) => format!(
                        "the recording has a result for `{}` at this position",
                        recorded.name
                    ),
                    None => format!(
                        "replay exhausted: the recording has {} tool result(s)",
                        self.recorded.len()
                    ),
                };
                let error = AgentError::Replay {
                    position: index + 1,
                    name: name.to_owned(),
                    message,
                };
                log.append(call.cancelled(&error.to_string()))?;
                return Err(error);
            }
        };
        for event in call.ran_elsewhere(recorded.status, &recorded.output) {
            log.append(event)?;
        }
        Ok(ToolOutput::new(recorded.status, recorded.output.clone()))
    }
}

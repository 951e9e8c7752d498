//! The one place a tool call's records are made, so `tool_start` means one thing in every
//! session log: **the tool ran**: executed by evalhost's agent, answered from a recording of a
//! run in which it ran (replay tools), or run by an external agent that sent its result back.
//! A call that never ran (an unknown tool, invalid arguments, refused by policy or at
//! confirmation, cancelled) has only its `tool_result`. Evidence's `started` (the WIT's
//! "whether the tool started executing") is exactly "the call has a `tool_start`".

use super::{CallStatus, Event};

/// One tool call of a session, by its id and tool name.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallRecords<'a> {
    pub call_id: &'a str,
    pub name: &'a str,
}

impl<'a> ToolCallRecords<'a> {
    pub fn new(call_id: &'a str, name: &'a str) -> Self {
        Self { call_id, name }
    }

    /// `tool_start`: the tool is about to run (written before it runs, so its time is the
    /// start's).
    pub fn started(&self) -> Event {
        Event::ToolStart {
            call_id: self.call_id.to_owned(),
            name: self.name.to_owned(),
        }
    }

    /// `tool_result`: how the call ended; after [`Self::started`] when the tool ran, alone when
    /// it never did.
    pub fn ended(&self, status: CallStatus, output: &str, duration_ms: u64) -> Event {
        Event::ToolResult {
            call_id: self.call_id.to_owned(),
            name: self.name.to_owned(),
            status,
            output: output.to_owned(),
            duration_ms,
        }
    }

    /// Both records of a call whose tool ran elsewhere (a recording, an external agent):
    /// evalhost did not time it, so its duration is 0.
    pub fn ran_elsewhere(&self, status: CallStatus, output: &str) -> [Event; 2] {
        [self.started(), self.ended(status, output, 0)]
    }

    /// The result of a call that was never run because the turn is ending.
    pub fn cancelled(&self, reason: &str) -> Event {
        self.ended(CallStatus::Cancelled, &format!("Not run: {reason}."), 0)
    }
}

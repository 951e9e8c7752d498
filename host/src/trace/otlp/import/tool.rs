//! One `execute_tool` span as a tool call's `tool_start` and `tool_result`.

use super::Notes;
use super::content;
use super::decode::Span;
use super::run::{Timeline, note_span_attributes, note_span_events};
use crate::session::{CallStatus, ToolCallRecords};
use crate::trace::otlp::semconv as sc;

/// The attributes of a tool span that a record carries.
const TOOL_MAPPED: &[&str] = &[
    sc::OPERATION_NAME,
    sc::TOOL_NAME,
    sc::TOOL_CALL_ID,
    sc::TOOL_CALL_ARGUMENTS,
    sc::TOOL_CALL_RESULT,
    sc::ERROR_TYPE,
];

/// One `execute_tool` span.
pub(super) struct ToolRun<'a> {
    pub span: &'a Span,
    /// `gen_ai.tool.call.id`, else the id of the call it was matched to.
    pub call_id: String,
    pub name: String,
    pub arguments: Option<String>,
    result: Option<String>,
    failed: bool,
}

impl<'a> ToolRun<'a> {
    pub fn read(span: &'a Span, notes: &mut Notes) -> Self {
        note_span_attributes(span, TOOL_MAPPED, notes);
        note_span_events(span, &[], notes);
        let text = |key| span.attributes.get(key).map(content::json_text);
        ToolRun {
            span,
            call_id: text(sc::TOOL_CALL_ID).unwrap_or_default(),
            name: text(sc::TOOL_NAME).unwrap_or_default(),
            arguments: text(sc::TOOL_CALL_ARGUMENTS),
            result: text(sc::TOOL_CALL_RESULT),
            failed: span.error.is_some() || span.attributes.contains_key(sc::ERROR_TYPE),
        }
    }

    /// Its `tool_start` and `tool_result`; `sent_back` is the result the next request sent
    /// the model, used when the span records none.
    pub fn emit(&self, out: &mut Timeline, sent_back: Option<&str>) {
        let records = ToolCallRecords::new(&self.call_id, &self.name);
        out.push(self.span.start_ns, records.started());
        let mut output = self
            .result
            .as_deref()
            .or(sent_back)
            .unwrap_or_default()
            .to_owned();
        if output.is_empty()
            && let Some(message) = &self.span.error
        {
            output.clone_from(message);
        }
        let status = if self.failed {
            CallStatus::Failed
        } else {
            CallStatus::Completed
        };
        let duration = self.span.end_ns.saturating_sub(self.span.start_ns) / 1_000_000;
        out.push(self.span.end_ns, records.ended(status, &output, duration));
    }
}

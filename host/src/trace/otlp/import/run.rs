//! One trace's GenAI spans as a run: the `invoke_agent` span is its frame, each model span
//! (`chat`, `text_completion`, `generate_content`) a request and its response, each
//! `execute_tool` span a tool call, in the order they started.

use std::collections::HashMap;

use serde_json::Value;

use super::Notes;
use super::content::Message;
use super::decode::{LogEvent, Span};
use super::exchange::Exchange;
use super::tool::ToolRun;
use crate::session::{CallStatus, Event, Record, RequestBody, ToolCallRecords};
use crate::trace::ImportedRun;
use crate::trace::otlp::semconv as sc;

/// The log records of each span, by `(trace id, span id)`, in file order.
pub(super) type Logs<'a> = HashMap<(&'a str, &'a str), Vec<&'a LogEvent>>;

/// The run of the trace `trace_id` (its spans in file order), or `None` when it holds no GenAI
/// span. Also returns the log records it joined to its model spans.
pub(super) fn import(
    trace_id: &str,
    spans: &[&Span],
    logs: &Logs<'_>,
    notes: &mut Notes,
) -> Option<(ImportedRun, usize)> {
    let mut agents = Vec::new();
    let mut chats = Vec::new();
    let mut tools = Vec::new();
    let mut not_gen_ai = Vec::new();
    for &span in spans {
        match kind(span) {
            Kind::Agent => agents.push(span),
            Kind::Chat => chats.push(span),
            Kind::Tool => tools.push(span),
            Kind::Other(operation) => {
                notes.add(
                    format!("GenAI spans of an operation evalhost does not map (`{operation}`)"),
                    1,
                );
                note_span_attributes(span, &[sc::OPERATION_NAME], notes);
            }
            Kind::NotGenAi => not_gen_ai.push(span),
        }
    }
    if agents.is_empty() && chats.is_empty() && tools.is_empty() {
        return None;
    }
    for span in &not_gen_ai {
        notes.add(format!("spans that are not GenAI (`{}`)", span.name), 1);
    }
    let by_start = |a: &&Span, b: &&Span| (a.start_ns, a.end_ns).cmp(&(b.start_ns, b.end_ns));
    agents.sort_by(by_start);
    chats.sort_by(by_start);
    tools.sort_by(by_start);
    let start_ns = first_start(spans);
    let end_ns = spans
        .iter()
        .map(|span| span.end_ns)
        .max()
        .unwrap_or(start_ns);
    let frame = agents.first().copied();
    if let Some(frame) = frame {
        note_span_attributes(frame, AGENT_MAPPED, notes);
        if let Some(Value::String(name)) = frame.attributes.get(sc::AGENT_NAME) {
            notes.add(
                format!("the agent's name `{name}` (`gen_ai.agent.name`; no record carries it)"),
                1,
            );
        }
        note_span_events(frame, &[], notes);
    }
    if agents.len() > 1 {
        notes.add(
            "`invoke_agent` spans inside a run's (sub-agents; their spans are the run's)",
            agents.len() - 1,
        );
    }

    let mut joined_logs = 0;
    let mut exchanges: Vec<Exchange> = chats
        .iter()
        .enumerate()
        .map(|(i, &span)| {
            let span_logs = logs
                .get(&(span.trace_id.as_str(), span.span_id.as_str()))
                .map_or(&[][..], Vec::as_slice);
            joined_logs += span_logs.len();
            Exchange::read(i as u32 + 1, span, span_logs, notes)
        })
        .collect();
    let mut tool_runs: Vec<ToolRun> = tools
        .iter()
        .map(|&span| ToolRun::read(span, notes))
        .collect();
    // Each tool ran for the latest model response that started before it.
    let mut orphans = Vec::new();
    for (t, tool) in tool_runs.iter_mut().enumerate() {
        match exchanges
            .iter()
            .rposition(|exchange| exchange.span.start_ns <= tool.span.start_ns)
        {
            Some(e) => {
                tool.call_id = exchanges[e].claim(t, tool, notes);
                exchanges[e].tools.push(t);
            }
            None => orphans.push(t),
        }
    }
    if !orphans.is_empty() {
        notes.add(
            "`execute_tool` spans before any model request",
            orphans.len(),
        );
    }

    let model = chats
        .first()
        .and_then(|span| {
            text_attribute(span, sc::RESPONSE_MODEL).or(text_attribute(span, sc::REQUEST_MODEL))
        })
        .or_else(|| frame.and_then(|span| text_attribute(span, sc::REQUEST_MODEL)))
        .unwrap_or_default()
        .to_owned();
    let label = format!("trace {trace_id}");
    let mut out = Timeline::new(start_ns);
    out.push(
        start_ns,
        Event::SessionStart {
            case: label.clone(),
            run: 1,
            mode: "trace".to_owned(),
            model: model.clone(),
        },
    );
    for &t in &orphans {
        tool_runs[t].emit(&mut out, None);
    }
    let mut users_seen = 0;
    let mut final_text = String::new();
    let mut failed = None;
    for e in 0..exchanges.len() {
        let exchange = &exchanges[e];
        let at = exchange.span.start_ns;
        if e > 0 {
            // Results of the previous answer's calls that no `execute_tool` span ran: known
            // from this request's tool messages, from the answer to this request.
            let previous = &exchanges[e - 1];
            for call in previous.calls.iter().filter(|call| call.tool.is_none()) {
                if let Some(output) = exchange.response_to(&call.id) {
                    let records = ToolCallRecords::new(&call.id, &call.name);
                    out.push(previous.span.end_ns, records.started());
                    let duration = at.saturating_sub(previous.span.end_ns) / 1_000_000;
                    out.push(at, records.ended(CallStatus::Completed, output, duration));
                }
            }
        }
        if let Some(input) = &exchange.input {
            let users: Vec<&Message> = input.iter().filter(|m| m.role == "user").collect();
            for user in users.iter().skip(users_seen) {
                out.push(at, Event::UserMessage { text: user.text() });
            }
            users_seen = users_seen.max(users.len());
        }
        out.push(
            at,
            Event::ModelRequest {
                n: exchange.n,
                body: RequestBody::from(exchange.body.clone()),
            },
        );
        match &exchange.span.error {
            None => {
                final_text = exchange.text();
                failed = None;
                out.push(
                    exchange.span.end_ns,
                    Event::ModelResponse {
                        n: exchange.n,
                        output: exchange.items.clone(),
                        input_tokens: exchange.usage.input,
                        output_tokens: exchange.usage.output,
                        cached_input_tokens: exchange.usage.cached,
                    },
                );
            }
            Some(message) => {
                notes.add(
                    "model requests that failed (an error status on their span)",
                    1,
                );
                failed = Some(failure(
                    &format!("model request {} failed", exchange.n),
                    exchange.span,
                    message,
                ));
            }
        }
        for &t in &exchange.tools {
            let output = exchanges
                .get(e + 1)
                .and_then(|next| next.response_to(&tool_runs[t].call_id));
            tool_runs[t].emit(&mut out, output);
        }
    }
    let run_end = frame.map_or(end_ns, |frame| frame.end_ns);
    let frame_error = frame.and_then(|frame| {
        frame
            .error
            .as_deref()
            .map(|message| failure("the agent failed", frame, message))
    });
    match frame_error.or(failed) {
        Some(message) => out.push(run_end, Event::RunError { message }),
        None => out.push(run_end, Event::TurnEnd { final_text }),
    }
    let usage_recorded = exchanges.iter().any(|exchange| exchange.usage.recorded);
    let duration_ns = match frame {
        Some(frame) => frame.end_ns.saturating_sub(frame.start_ns),
        None => end_ns.saturating_sub(start_ns),
    };
    Some((
        ImportedRun {
            label,
            model,
            records: out.records,
            duration_ms: duration_ns / 1_000_000,
            usage_recorded,
        },
        joined_logs,
    ))
}

/// When the trace's first span began (a span without a time, 0, is not the first).
pub(super) fn first_start(spans: &[&Span]) -> u64 {
    spans
        .iter()
        .map(|span| span.start_ns)
        .filter(|&start| start > 0)
        .min()
        .unwrap_or(0)
}

/// What a span is, by `gen_ai.operation.name` (or the older `gen_ai.system` alone on a model
/// span).
enum Kind<'a> {
    Agent,
    Chat,
    Tool,
    Other(&'a str),
    NotGenAi,
}

fn kind(span: &Span) -> Kind<'_> {
    match span.attributes.get(sc::OPERATION_NAME) {
        Some(Value::String(operation)) => match operation.as_str() {
            sc::OP_INVOKE_AGENT => Kind::Agent,
            sc::OP_CHAT | sc::OP_TEXT_COMPLETION | sc::OP_GENERATE_CONTENT => Kind::Chat,
            sc::OP_EXECUTE_TOOL => Kind::Tool,
            other => Kind::Other(other),
        },
        _ if span.attributes.contains_key(sc::SYSTEM) => Kind::Chat,
        _ => Kind::NotGenAi,
    }
}

/// The attributes of an agent span that a record carries.
const AGENT_MAPPED: &[&str] = &[
    sc::OPERATION_NAME,
    sc::AGENT_NAME,
    sc::REQUEST_MODEL,
    sc::ERROR_TYPE,
];
/// Each attribute of a GenAI span that no record carries, once per span.
pub(super) fn note_span_attributes(span: &Span, mapped: &[&str], notes: &mut Notes) {
    for key in span
        .attributes
        .keys()
        .filter(|key| !mapped.contains(&key.as_str()))
    {
        notes.add(
            format!("spans with the attribute `{key}` (no record carries it)"),
            1,
        );
    }
}

/// Each event of a GenAI span not read as content (`used` names those that were).
pub(super) fn note_span_events(span: &Span, used: &[&str], notes: &mut Notes) {
    for event in span
        .events
        .iter()
        .filter(|event| !used.contains(&event.name.as_str()))
    {
        notes.add(
            format!("span events `{}` (no record carries them)", event.name),
            1,
        );
    }
}

/// A failed span's message: `what: error.type: status message`.
fn failure(what: &str, span: &Span, message: &str) -> String {
    let mut text = what.to_owned();
    if let Some(Value::String(kind)) = span.attributes.get(sc::ERROR_TYPE) {
        text = format!("{text}: {kind}");
    }
    if !message.is_empty() {
        text = format!("{text}: {message}");
    }
    text
}

fn text_attribute<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    match span.attributes.get(key) {
        Some(Value::String(text)) if !text.is_empty() => Some(text),
        _ => None,
    }
}

/// The run's records in order, each at the milliseconds since the trace's first span began
/// (never before the record before it: records follow the run's logic, clocks may not).
pub(super) struct Timeline {
    start_ns: u64,
    last_ms: u64,
    records: Vec<Record>,
}

impl Timeline {
    pub fn new(start_ns: u64) -> Self {
        Self {
            start_ns,
            last_ms: 0,
            records: Vec::new(),
        }
    }

    pub fn push(&mut self, at_ns: u64, event: Event) {
        let at_ms = (at_ns.saturating_sub(self.start_ns) / 1_000_000).max(self.last_ms);
        self.last_ms = at_ms;
        self.records.push(Record { at_ms, event });
    }
}

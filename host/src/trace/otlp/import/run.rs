//! One trace's GenAI spans as a run: the `invoke_agent` span is its frame, each model span
//! (`chat`, `text_completion`, `generate_content`) a request and its response, each
//! `execute_tool` span a tool call, in the order they started.

use std::collections::HashMap;

use serde_json::Value;

use super::Notes;
use super::content::{self, EventMessage, Message, Part};
use super::decode::{Attributes, LogEvent, Span};
use crate::session::{CallStatus, Event, OutputItem, Record, RequestBody, ToolCallRecords};
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

/// The attributes each kind of span has that a record carries.
const AGENT_MAPPED: &[&str] = &[
    sc::OPERATION_NAME,
    sc::AGENT_NAME,
    sc::REQUEST_MODEL,
    sc::ERROR_TYPE,
];
const CHAT_MAPPED: &[&str] = &[
    sc::OPERATION_NAME,
    sc::SYSTEM,
    sc::REQUEST_MODEL,
    sc::RESPONSE_MODEL,
    sc::RESPONSE_FINISH_REASONS,
    sc::USAGE_INPUT_TOKENS,
    sc::USAGE_OUTPUT_TOKENS,
    sc::USAGE_PROMPT_TOKENS,
    sc::USAGE_COMPLETION_TOKENS,
    sc::USAGE_CACHE_READ_INPUT_TOKENS,
    sc::INPUT_MESSAGES,
    sc::OUTPUT_MESSAGES,
    sc::PROMPT,
    sc::COMPLETION,
    sc::ERROR_TYPE,
];
const TOOL_MAPPED: &[&str] = &[
    sc::OPERATION_NAME,
    sc::TOOL_NAME,
    sc::TOOL_CALL_ID,
    sc::TOOL_CALL_ARGUMENTS,
    sc::TOOL_CALL_RESULT,
    sc::ERROR_TYPE,
];

/// Each attribute of a GenAI span that no record carries, once per span.
fn note_span_attributes(span: &Span, mapped: &[&str], notes: &mut Notes) {
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
fn note_span_events(span: &Span, used: &[&str], notes: &mut Notes) {
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

/// A token count: an integer, or one written as a string or a whole double.
fn count(attributes: &Attributes, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|key| match attributes.get(*key)? {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|x| x.fract() == 0.0 && *x >= 0.0)
                .map(|x| x as u64)
        }),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    })
}

#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
    cached: u64,
    recorded: bool,
}

/// One model request and its response.
struct Exchange<'a> {
    n: u32,
    span: &'a Span,
    /// The request's messages (`None`: the trace did not capture them).
    input: Option<Vec<Message>>,
    /// The request as the trace recorded it (`null` when it did not).
    body: Value,
    items: Vec<OutputItem>,
    /// The calls of `items`, and the tool run that ran each.
    calls: Vec<Call>,
    /// Whether the answer's content was captured (else its calls come from tool spans).
    output_known: bool,
    usage: Usage,
    /// The tool runs that ran after this answer (indices into the run's tool runs).
    tools: Vec<usize>,
}

struct Call {
    id: String,
    name: String,
    tool: Option<usize>,
}

impl<'a> Exchange<'a> {
    fn read(n: u32, span: &'a Span, logs: &[&'a LogEvent], notes: &mut Notes) -> Self {
        note_span_attributes(span, CHAT_MAPPED, notes);
        let content = Content::read(span, logs, notes);
        if content.input.is_none() && content.output.is_none() {
            notes.add(
                "model request spans without content (message content not captured: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT; their runs have no messages, only counts)",
                1,
            );
        }
        // A request holds the conversation so far: only the first one's messages are new.
        if let Some(input) = content.input.as_ref().filter(|_| n == 1) {
            note_parts(input, notes);
        }
        let mut finish_reasons: Vec<String> = match span.attributes.get(sc::RESPONSE_FINISH_REASONS)
        {
            Some(Value::Array(reasons)) => reasons.iter().map(content::json_text).collect(),
            Some(Value::String(reason)) => vec![reason.clone()],
            _ => Vec::new(),
        };
        let mut exchange = Exchange {
            n,
            span,
            input: content.input,
            body: content.body,
            items: Vec::new(),
            calls: Vec::new(),
            output_known: content.output.is_some(),
            usage: Usage::default(),
            tools: Vec::new(),
        };
        if let Some(output) = content.output {
            if output.len() > 1 {
                notes.add("answers beyond a response's first choice", output.len() - 1);
            }
            if let Some(message) = output.first() {
                note_parts(std::slice::from_ref(message), notes);
                exchange.answer(message);
            }
            if finish_reasons.is_empty() {
                finish_reasons.extend(content.finish_reason);
            }
        }
        for reason in finish_reasons {
            if !matches!(
                reason.as_str(),
                "stop" | "tool_calls" | "tool_call" | "end_turn" | "tool_use" | "STOP"
            ) {
                notes.add(
                    format!("responses that finished with `{reason}` (no record carries it)"),
                    1,
                );
            }
        }
        let input = count(
            &span.attributes,
            &[sc::USAGE_INPUT_TOKENS, sc::USAGE_PROMPT_TOKENS],
        );
        let output = count(
            &span.attributes,
            &[sc::USAGE_OUTPUT_TOKENS, sc::USAGE_COMPLETION_TOKENS],
        );
        exchange.usage = Usage {
            input: input.unwrap_or(0),
            output: output.unwrap_or(0),
            cached: count(&span.attributes, &[sc::USAGE_CACHE_READ_INPUT_TOKENS]).unwrap_or(0),
            recorded: input.is_some() || output.is_some(),
        };
        exchange
    }

    /// The answer's text and calls as output items (adjacent texts one item).
    fn answer(&mut self, message: &Message) {
        for part in &message.parts {
            match part {
                Part::Text(text) => match self.items.last_mut() {
                    Some(OutputItem::Message { text: last }) => {
                        last.push('\n');
                        last.push_str(text);
                    }
                    _ => self.items.push(OutputItem::Message { text: text.clone() }),
                },
                Part::Call {
                    id,
                    name,
                    arguments,
                } => {
                    let id = if id.is_empty() {
                        format!("call_{}_{}", self.n, self.calls.len() + 1)
                    } else {
                        id.clone()
                    };
                    self.add_call(id, name.clone(), arguments.clone());
                }
                Part::Response { .. } | Part::Other(_) => {}
            }
        }
    }

    fn add_call(&mut self, id: String, name: String, arguments: String) {
        self.items.push(OutputItem::FunctionCall {
            call_id: id.clone(),
            name: name.clone(),
            arguments,
        });
        self.calls.push(Call {
            id,
            name,
            tool: None,
        });
    }

    /// The call of this answer the tool run `t` ran (by call id, else the first of its name
    /// not yet run); when the answer's content was not captured, the tool run is the only
    /// record of the call, which is added. Returns the call's id.
    fn claim(&mut self, t: usize, tool: &ToolRun, notes: &mut Notes) -> String {
        let free = |call: &&mut Call| call.tool.is_none();
        let by_id = self
            .calls
            .iter_mut()
            .filter(free)
            .find(|call| !tool.call_id.is_empty() && call.id == tool.call_id);
        let call = match by_id {
            Some(call) => Some(call),
            None => self
                .calls
                .iter_mut()
                .filter(free)
                .find(|call| call.name == tool.name),
        };
        if let Some(call) = call {
            call.tool = Some(t);
            return call.id.clone();
        }
        let id = if tool.call_id.is_empty() {
            format!("call_{}_{}", self.n, self.calls.len() + 1)
        } else {
            tool.call_id.clone()
        };
        if self.output_known {
            notes.add(
                "`execute_tool` spans that match no call of the answer before them",
                1,
            );
        } else {
            self.add_call(
                id.clone(),
                tool.name.clone(),
                tool.arguments.clone().unwrap_or_default(),
            );
            if let Some(call) = self.calls.last_mut() {
                call.tool = Some(t);
            }
        }
        id
    }

    /// The result this request sent back for the call `id`.
    fn response_to(&self, id: &str) -> Option<&str> {
        self.input
            .iter()
            .flatten()
            .flat_map(|message| &message.parts)
            .find_map(|part| match part {
                Part::Response {
                    id: response,
                    output,
                } if response == id => Some(output.as_str()),
                _ => None,
            })
    }

    fn text(&self) -> String {
        self.items
            .iter()
            .filter_map(OutputItem::text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What of a conversation no record carries: system messages (in request bodies only), and
/// parts other than text, calls and results.
fn note_parts(messages: &[Message], notes: &mut Notes) {
    for message in messages {
        if message.role == "system" || message.role == "developer" {
            notes.add("system messages (kept only in the request bodies)", 1);
        }
        for part in &message.parts {
            if let Part::Other(kind) = part {
                notes.add(
                    format!("message parts of type `{kind}` (no record carries them)"),
                    1,
                );
            }
        }
    }
}

/// A model span's content, from wherever the trace put it (`content.rs` says which forms).
struct Content {
    input: Option<Vec<Message>>,
    body: Value,
    output: Option<Vec<Message>>,
    finish_reason: Option<String>,
}

impl Content {
    fn read(span: &Span, logs: &[&LogEvent], notes: &mut Notes) -> Self {
        let mut content = Content {
            input: None,
            body: Value::Null,
            output: None,
            finish_reason: None,
        };
        if span.attributes.contains_key(sc::SYSTEM_INSTRUCTIONS) {
            notes.add(
                "system instructions (`gen_ai.system_instructions`; no record carries them)",
                1,
            );
        }
        // The conventions' attributes, on the span or on its details event.
        let details = span
            .events
            .iter()
            .filter(|event| event.name == sc::EVENT_INFERENCE_DETAILS)
            .map(|event| &event.attributes)
            .chain(
                logs.iter()
                    .filter(|log| log.name == sc::EVENT_INFERENCE_DETAILS)
                    .map(|log| &log.attributes),
            );
        for attributes in std::iter::once(&span.attributes).chain(details) {
            content.take(attributes, sc::INPUT_MESSAGES, sc::OUTPUT_MESSAGES, notes);
        }
        // The earlier events, one per message.
        let mut event_input = Vec::new();
        let mut event_bodies = Vec::new();
        let mut event_output = Vec::new();
        let mut event_finish = None;
        for log in logs {
            if log.name == sc::EVENT_INFERENCE_DETAILS {
                if log.attributes.contains_key(sc::SYSTEM_INSTRUCTIONS) {
                    notes.add("system instructions (`gen_ai.system_instructions`; no record carries them)", 1);
                }
                continue;
            }
            match content::event_message(&log.name, &log.body) {
                Some(EventMessage::Input(message)) => {
                    let mut body = match &log.body {
                        Value::Object(body) => body.clone(),
                        _ => serde_json::Map::new(),
                    };
                    body.entry("role")
                        .or_insert_with(|| Value::String(message.role.clone()));
                    event_bodies.push(Value::Object(body));
                    event_input.push(message);
                }
                Some(EventMessage::Output(message)) => {
                    if event_finish.is_none()
                        && let Some(Value::String(reason)) = log.body.get("finish_reason")
                    {
                        event_finish = Some(reason.clone());
                    }
                    event_output.push(message);
                }
                None => notes.add(
                    format!(
                        "log events `{}` of model request spans (no record carries them)",
                        log.name
                    ),
                    1,
                ),
            }
        }
        if content.input.is_none() && !event_input.is_empty() {
            content.input = Some(event_input);
            content.body = Value::Array(event_bodies);
        }
        if content.output.is_none() && !event_output.is_empty() {
            content.output = Some(event_output);
            content.finish_reason = event_finish;
        }
        // Before 1.28: `gen_ai.prompt` / `gen_ai.completion`, on the span or its events.
        let earlier = span
            .events
            .iter()
            .filter(|event| {
                matches!(
                    event.name.as_str(),
                    sc::EVENT_CONTENT_PROMPT | sc::EVENT_CONTENT_COMPLETION
                )
            })
            .map(|event| &event.attributes);
        for attributes in std::iter::once(&span.attributes).chain(earlier) {
            content.take(attributes, sc::PROMPT, sc::COMPLETION, notes);
        }
        note_span_events(
            span,
            &[
                sc::EVENT_INFERENCE_DETAILS,
                sc::EVENT_CONTENT_PROMPT,
                sc::EVENT_CONTENT_COMPLETION,
            ],
            notes,
        );
        content
    }

    /// The input and output messages of `attributes`, where none were found yet.
    fn take(
        &mut self,
        attributes: &Attributes,
        input_key: &str,
        output_key: &str,
        notes: &mut Notes,
    ) {
        if self.input.is_none()
            && let Some(value) = attributes.get(input_key)
        {
            match content::messages(value) {
                Some(messages) => {
                    self.input = Some(messages);
                    self.body = content::recorded(value);
                }
                None => notes.add(
                    format!("`{input_key}` values that are not a list of messages"),
                    1,
                ),
            }
        }
        if self.output.is_none()
            && let Some(value) = attributes.get(output_key)
        {
            match content::messages(value) {
                Some(messages) => {
                    self.finish_reason = content::recorded(value)
                        .get(0)
                        .and_then(|message| message.get("finish_reason"))
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.output = Some(messages);
                }
                None => notes.add(
                    format!("`{output_key}` values that are not a list of messages"),
                    1,
                ),
            }
        }
    }
}

/// One `execute_tool` span.
struct ToolRun<'a> {
    span: &'a Span,
    /// `gen_ai.tool.call.id`, else the id of the call it was matched to.
    call_id: String,
    name: String,
    arguments: Option<String>,
    result: Option<String>,
    failed: bool,
}

impl<'a> ToolRun<'a> {
    fn read(span: &'a Span, notes: &mut Notes) -> Self {
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
    fn emit(&self, out: &mut Timeline, sent_back: Option<&str>) {
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

/// The run's records in order, each at the milliseconds since the trace's first span began
/// (never before the record before it: records follow the run's logic, clocks may not).
struct Timeline {
    start_ns: u64,
    last_ms: u64,
    records: Vec<Record>,
}

impl Timeline {
    fn new(start_ns: u64) -> Self {
        Self {
            start_ns,
            last_ms: 0,
            records: Vec::new(),
        }
    }

    fn push(&mut self, at_ns: u64, event: Event) {
        let at_ms = (at_ns.saturating_sub(self.start_ns) / 1_000_000).max(self.last_ms);
        self.last_ms = at_ms;
        self.records.push(Record { at_ms, event });
    }
}

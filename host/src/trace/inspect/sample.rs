//! One Inspect sample (one epoch of it) as a run: its `messages` give the conversation (user
//! prompts, each assistant message one model exchange with its text and tool calls, each tool
//! message a call's result), its `events` the times and each exchange's token usage (the
//! model event whose output is that assistant message, the tool event of that call id).

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::Notes;
use super::node::{Node, Object};
use super::time::parse_rfc3339_us;
use crate::session::{CallStatus, Event, OutputItem, Record, RequestBody, ToolCallRecords};
use crate::trace::{ImportedRun, TraceError};

/// What the log says for all of its samples.
pub(super) struct LogFacts {
    /// The eval's model (`eval.model`, `openai/gpt-4o`), for a sample whose output names none.
    pub model: String,
}

/// A sample read: its id and epoch (to order the runs as the dataset does) and its run.
pub(super) struct Mapped {
    pub id: String,
    pub epoch: u64,
    pub run: ImportedRun,
}

/// The run of `sample`.
pub(super) fn map(
    sample: &Object<'_>,
    log: &LogFacts,
    notes: &mut Notes,
) -> Result<Mapped, TraceError> {
    let id = sample.require("id")?.id()?;
    let epoch = sample.count("epoch")?.unwrap_or(1);
    let label = format!("sample {id} epoch {epoch}");
    let text = Texts::new(sample)?;
    let pools = Pools::new(sample)?;
    let mut events = Events::new(sample, &text)?;
    let mut messages = Vec::new();
    for node in sample.list("messages")?.unwrap_or_default() {
        messages.push(Message::new(node, &text, notes)?);
    }
    if messages.is_empty() {
        // No conversation recorded (a sample that failed before it began): its input.
        match sample.get("input") {
            Some(input) if input.kind() == "a list" => {
                for node in input.list()? {
                    messages.push(Message::new(node, &text, notes)?);
                }
            }
            Some(input) => messages.push(Message::User {
                text: text.resolve(input.string()?),
            }),
            None => {}
        }
    }
    let output = sample.object("output")?;
    let model = match output.as_ref().map(|o| o.string("model")).transpose()? {
        Some(Some(model)) if !model.is_empty() => model,
        _ => log.model.clone(),
    };
    let started = timestamp(sample, "started_at")?;
    let completed = timestamp(sample, "completed_at")?;
    let mut clock = Clock::new(started.into_iter().chain(events.starts()).min());

    let mut records = vec![clock.record(
        None,
        Event::SessionStart {
            case: label.clone(),
            run: 1,
            mode: "trace".to_owned(),
            model: model.clone(),
        },
    )];
    // Where each tool message is, by call id, so a call's records follow its response.
    let mut results: HashMap<&str, usize> = HashMap::new();
    for (i, message) in messages.iter().enumerate() {
        if let Message::Tool { call_id, .. } = message {
            results.entry(call_id.as_str()).or_insert(i);
        }
    }
    let mut answered = vec![false; messages.len()];
    let mut responses: Vec<(usize, bool)> = Vec::new();
    let mut n = 0u32;
    let mut final_text: Option<String> = None;
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::System => notes.count("system messages", 1),
            Message::User { text } => {
                records.push(clock.record(None, Event::UserMessage { text: text.clone() }))
            }
            Message::Assistant {
                id,
                text: reply,
                calls,
            } => {
                n += 1;
                let exchange = id.as_deref().and_then(|id| events.model(id));
                let body = match &exchange {
                    Some(exchange) => request_body(&exchange.event, &pools, &text)?,
                    None => Value::Null,
                };
                records.push(clock.record(
                    exchange.as_ref().and_then(|e| e.start),
                    Event::ModelRequest {
                        n,
                        body: RequestBody::from(body),
                    },
                ));
                let mut output = Vec::new();
                if !reply.is_empty() {
                    output.push(OutputItem::Message {
                        text: reply.clone(),
                    });
                }
                output.extend(calls.iter().map(|call| OutputItem::FunctionCall {
                    call_id: call.id.clone(),
                    name: call.function.clone(),
                    arguments: call.arguments.clone(),
                }));
                let usage = exchange.as_ref().and_then(|e| e.usage);
                let tokens = usage.unwrap_or_default();
                responses.push((records.len(), usage.is_some()));
                records.push(clock.record(
                    exchange.as_ref().and_then(|e| e.end),
                    Event::ModelResponse {
                        n,
                        output,
                        input_tokens: tokens.input,
                        output_tokens: tokens.output,
                        cached_input_tokens: tokens.cached,
                    },
                ));
                final_text = Some(reply.clone());
                for call in calls {
                    let result = results
                        .get(call.id.as_str())
                        .copied()
                        .filter(|&r| !answered[r]);
                    if let Some(r) = result {
                        answered[r] = true;
                    }
                    let ran = events.tool(&call.id);
                    let result = result.map(|r| &messages[r]);
                    tool_records(
                        &mut records,
                        &mut clock,
                        &call.id,
                        &call.function,
                        result,
                        ran,
                    );
                }
            }
            // A result whose call is in no assistant message (an agent that rewrote history).
            Message::Tool {
                call_id, function, ..
            } if !answered[i] => {
                let ran = events.tool(call_id);
                tool_records(
                    &mut records,
                    &mut clock,
                    call_id,
                    function,
                    Some(message),
                    ran,
                );
            }
            Message::Tool { .. } => {}
            Message::Other { role } => notes.count(format!("messages of role `{role}`"), 1),
        }
    }

    // Token usage: each exchange's, else the sample's total on its last response.
    let mut usage_recorded = responses.iter().any(|&(_, has)| has);
    if usage_recorded {
        let missing = responses.iter().filter(|&&(_, has)| !has).count();
        if missing > 0 {
            notes.count(
                "model responses without token usage (counted as 0)",
                missing as u64,
            );
        }
    } else if let (Some(total), Some(&(last, _))) = (sample_usage(sample)?, responses.last()) {
        if let Event::ModelResponse {
            input_tokens,
            output_tokens,
            cached_input_tokens,
            ..
        } = &mut records[last].event
        {
            *input_tokens = total.input;
            *output_tokens = total.output;
            *cached_input_tokens = total.cached;
        }
        usage_recorded = true;
        notes.sample("token usage per exchange (the sample's total is on its last response)");
    }
    events.note_unmatched(notes);

    let end = match (sample.object("error")?, sample.object("limit")?) {
        (Some(error), _) => Event::RunError {
            message: match error.string("message")? {
                Some(message) => text.resolve(message),
                None => "Inspect recorded an error without a message".to_owned(),
            },
        },
        (None, Some(limit)) => Event::RunError {
            message: limit_message(&limit)?,
        },
        (None, None) => Event::TurnEnd {
            final_text: match (final_text, &output) {
                (Some(text), _) => text,
                (None, Some(output)) => output.string("completion")?.unwrap_or_default(),
                (None, None) => String::new(),
            },
        },
    };
    records.push(clock.record(completed, end));

    for (key, what) in [
        ("scores", "Inspect scores (the log's own scorers)"),
        ("target", "targets (the dataset's expected answers)"),
        ("metadata", "sample metadata"),
        ("store", "sample store (the solvers' state)"),
        ("error_retries", "errors Inspect retried the sample after"),
        ("invalidation", "invalidated samples"),
    ] {
        if sample.has(key) {
            notes.sample(what);
        }
    }
    let duration_ms = match (sample.number("total_time")?, started, completed) {
        (Some(seconds), _, _) if seconds >= 0.0 => (seconds * 1000.0).round() as u64,
        (_, Some(start), Some(end)) => end.saturating_sub(start).max(0) as u64 / 1000,
        _ => 0,
    };
    Ok(Mapped {
        id,
        epoch,
        run: ImportedRun {
            label,
            model,
            records,
            duration_ms,
            usage_recorded,
        },
    })
}

/// The `tool_start` (when the tool ran) and `tool_result` of call `call_id`: its result from
/// its tool message, else from its tool event (a sample that ended in the tool), else never
/// returned (`cancelled`).
fn tool_records(
    records: &mut Vec<Record>,
    clock: &mut Clock,
    call_id: &str,
    name: &str,
    result: Option<&Message>,
    ran: Option<ToolRun>,
) {
    let call = ToolCallRecords::new(call_id, name);
    let (status, output) = match (result, &ran) {
        (Some(Message::Tool { text, error, .. }), _) => outcome(text, error.as_ref(), false),
        (_, Some(ran)) => outcome(&ran.result, ran.error.as_ref(), ran.failed),
        _ => {
            let event = call.cancelled("the sample ended before the call returned");
            records.push(clock.record(None, event));
            return;
        }
    };
    let (start, end, duration_ms) = match &ran {
        Some(ran) => (ran.start, ran.end, ran.duration_ms),
        None => (None, None, 0),
    };
    // A call that never ran has only its result (session/tool_call.rs).
    let never_ran = matches!(
        status,
        CallStatus::InvalidArguments
            | CallStatus::UnknownTool
            | CallStatus::Denied
            | CallStatus::Cancelled
    );
    if !never_ran {
        records.push(clock.record(start, call.started()));
    }
    records.push(clock.record(end, call.ended(status, &output, duration_ms)));
}

/// A call's status and output from its result text and Inspect's `ToolCallError`.
fn outcome(text: &str, error: Option<&ToolError>, failed: bool) -> (CallStatus, String) {
    match error {
        Some(error) => {
            let output = if text.is_empty() {
                &error.message
            } else {
                text
            };
            (error.status(), output.to_owned())
        }
        None if failed => (CallStatus::Failed, text.to_owned()),
        None => (CallStatus::Completed, text.to_owned()),
    }
}

/// Inspect's `ToolCallError`: `{type, message}`.
#[derive(Debug, Clone)]
struct ToolError {
    kind: String,
    message: String,
}

impl ToolError {
    fn new(object: Object<'_>, text: &Texts) -> Result<Self, TraceError> {
        Ok(Self {
            kind: object.string("type")?.unwrap_or_default(),
            message: text.resolve(object.string("message")?.unwrap_or_default()),
        })
    }

    /// The status evalhost gives a call that ended with this error.
    fn status(&self) -> CallStatus {
        match self.kind.as_str() {
            "parsing"
                if self.message.starts_with("Tool ") && self.message.ends_with(" not found") =>
            {
                CallStatus::UnknownTool
            }
            "parsing" => CallStatus::InvalidArguments,
            "timeout" => CallStatus::TimedOut,
            "approval" => CallStatus::Denied,
            "cancelled" => CallStatus::Cancelled,
            "output_limit" => CallStatus::OutputLimit,
            "limit" if self.message.contains("output limit") => CallStatus::OutputLimit,
            _ => CallStatus::Failed,
        }
    }
}

/// One message of the sample.
enum Message {
    System,
    User {
        text: String,
    },
    Assistant {
        id: Option<String>,
        text: String,
        calls: Vec<Call>,
    },
    Tool {
        call_id: String,
        function: String,
        text: String,
        error: Option<ToolError>,
    },
    Other {
        role: String,
    },
}

/// A tool call of an assistant message.
struct Call {
    id: String,
    function: String,
    /// The arguments as JSON text.
    arguments: String,
}

impl Message {
    fn new(node: Node<'_>, text: &Texts, notes: &mut Notes) -> Result<Self, TraceError> {
        let message = node.object()?;
        let role = message.require("role")?.string()?;
        Ok(match role.as_str() {
            "system" => Self::System,
            "user" => Self::User {
                text: content(&message, text, notes)?,
            },
            "assistant" => {
                let mut calls = Vec::new();
                for call in message.list("tool_calls")?.unwrap_or_default() {
                    let call = call.object()?;
                    let arguments = match call.get("arguments") {
                        // Inspect keeps arguments as an object; a provider's raw text as is.
                        Some(arguments) if arguments.kind() == "a string" => arguments.string()?,
                        Some(arguments) => arguments.value()?.to_string(),
                        None => "{}".to_owned(),
                    };
                    calls.push(Call {
                        id: call.require("id")?.string()?,
                        function: call.require("function")?.string()?,
                        arguments,
                    });
                }
                Self::Assistant {
                    id: message.string("id")?,
                    text: content(&message, text, notes)?,
                    calls,
                }
            }
            "tool" => Self::Tool {
                call_id: message.string("tool_call_id")?.unwrap_or_default(),
                function: message.string("function")?.unwrap_or_default(),
                text: content(&message, text, notes)?,
                error: message
                    .object("error")?
                    .map(|e| ToolError::new(e, text))
                    .transpose()?,
            },
            _ => Self::Other { role },
        })
    }
}

/// A message's text: its `content` string, or its text parts joined by newlines (other parts,
/// reasoning, images, ..., are noted).
fn content(message: &Object<'_>, text: &Texts, notes: &mut Notes) -> Result<String, TraceError> {
    let Some(content) = message.get("content") else {
        return Ok(String::new());
    };
    if content.kind() != "a list" {
        return Ok(text.resolve(content.string()?));
    }
    parts_text(content.list()?, text, notes)
}

fn parts_text(parts: Vec<Node<'_>>, text: &Texts, notes: &mut Notes) -> Result<String, TraceError> {
    let mut texts = Vec::new();
    for part in parts {
        let part = part.object()?;
        match part.string("type")?.as_deref() {
            Some("text") => texts.push(text.resolve(part.string("text")?.unwrap_or_default())),
            Some("reasoning") => notes.count("reasoning in messages", 1),
            Some(kind) => notes.count(format!("message content of type `{kind}`"), 1),
            None => return Err(part.error("has no `type`")),
        }
    }
    Ok(texts.join("\n"))
}

/// Texts of the sample with Inspect's `attachment://<hash>` references (long texts of events,
/// images of messages, stored once in the sample's `attachments`) resolved.
struct Texts {
    attachments: BTreeMap<String, String>,
}

impl Texts {
    fn new(sample: &Object<'_>) -> Result<Self, TraceError> {
        let mut attachments = BTreeMap::new();
        if let Some(object) = sample.object("attachments")? {
            for key in object.keys().map(str::to_owned).collect::<Vec<_>>() {
                if let Some(value) = object.string(&key)? {
                    attachments.insert(key, value);
                }
            }
        }
        Ok(Self { attachments })
    }

    fn resolve(&self, text: String) -> String {
        // `tc://` is the older name of the same protocol.
        let hash = text
            .strip_prefix("attachment://")
            .or_else(|| text.strip_prefix("tc://"));
        match hash.and_then(|hash| self.attachments.get(hash)) {
            Some(resolved) => resolved.clone(),
            None => text,
        }
    }

    fn resolve_value(&self, value: &mut Value) {
        match value {
            Value::String(text)
                if text.starts_with("attachment://") || text.starts_with("tc://") =>
            {
                *text = self.resolve(std::mem::take(text));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.resolve_value(v)),
            Value::Object(fields) => fields.values_mut().for_each(|v| self.resolve_value(v)),
            _ => {}
        }
    }
}

/// The sample's `events_data`: the messages of model events' inputs and of their provider
/// requests, each stored once and referred to by ranges (`input_refs`, `call.call_refs`).
struct Pools<'a> {
    messages: Vec<Node<'a>>,
    calls: Vec<Node<'a>>,
}

impl<'a> Pools<'a> {
    fn new(sample: &Object<'a>) -> Result<Self, TraceError> {
        let Some(data) = sample.object("events_data")? else {
            return Ok(Self {
                messages: Vec::new(),
                calls: Vec::new(),
            });
        };
        Ok(Self {
            messages: data.list("messages")?.unwrap_or_default(),
            calls: data.list("calls")?.unwrap_or_default(),
        })
    }
}

/// The values `refs` (`[[start, end), ...]`) name in `pool`; a range past its end is cut
/// short, as Inspect's own reader does.
fn expand(refs: Vec<Node<'_>>, pool: &[Node<'_>]) -> Result<Vec<Value>, TraceError> {
    let mut values = Vec::new();
    for range in refs {
        let bounds = range.clone().list()?;
        let [start, end] = bounds.as_slice() else {
            return Err(range.error("expected a range `[start, end]`"));
        };
        let start = (start.count()? as usize).min(pool.len());
        let end = (end.count()? as usize).clamp(start, pool.len());
        for node in &pool[start..end] {
            values.push(node.value()?);
        }
    }
    Ok(values)
}

/// The request of a model exchange as the log recorded it: the provider's request (`call.
/// request`, its messages back from the pool), else Inspect's own view of it (its input
/// messages, tools, tool choice and config).
fn request_body(event: &Object<'_>, pools: &Pools<'_>, text: &Texts) -> Result<Value, TraceError> {
    let mut body = match event.object("call")? {
        Some(call) if call.get("request").is_some() => {
            let mut request = call.require("request")?.value()?;
            if let (Some(refs), Value::Object(fields)) = (call.list("call_refs")?, &mut request) {
                let key = call
                    .string("call_key")?
                    .unwrap_or_else(|| "messages".to_owned());
                fields.insert(key, Value::Array(expand(refs, &pools.calls)?));
            }
            request
        }
        _ => {
            let input = match event.list("input_refs")? {
                Some(refs) => Value::Array(expand(refs, &pools.messages)?),
                None => event
                    .get("input")
                    .map(|n| n.value())
                    .transpose()?
                    .unwrap_or_default(),
            };
            let mut fields = serde_json::Map::new();
            fields.insert("input".to_owned(), input);
            for key in ["model", "tools", "tool_choice", "config"] {
                if let Some(value) = event.get(key) {
                    fields.insert(key.to_owned(), value.value()?);
                }
            }
            Value::Object(fields)
        }
    };
    text.resolve_value(&mut body);
    Ok(body)
}

/// Token counts in evalhost's terms: Inspect's `input_tokens` leaves out the tokens read from
/// and written to the prompt cache, evalhost's input counts them (`cached` of them read).
#[derive(Debug, Clone, Copy, Default)]
struct Tokens {
    input: u64,
    output: u64,
    cached: u64,
}

impl Tokens {
    fn new(usage: &Object<'_>) -> Result<Self, TraceError> {
        let count = |key| usage.count(key).map(Option::unwrap_or_default);
        let cached = count("input_tokens_cache_read")?;
        Ok(Self {
            input: count("input_tokens")?
                .saturating_add(cached)
                .saturating_add(count("input_tokens_cache_write")?),
            output: count("output_tokens")?,
            cached,
        })
    }

    fn add(self, other: Self) -> Self {
        Self {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            cached: self.cached.saturating_add(other.cached),
        }
    }
}

/// The sample's usage of all its models (`model_usage`), when it records any.
fn sample_usage(sample: &Object<'_>) -> Result<Option<Tokens>, TraceError> {
    let Some(models) = sample.object("model_usage")? else {
        return Ok(None);
    };
    let mut total = None;
    for key in models.keys().map(str::to_owned).collect::<Vec<_>>() {
        if let Some(usage) = models.object(&key)? {
            total = Some(Tokens::new(&usage)?.add(total.unwrap_or_default()));
        }
    }
    Ok(total)
}

/// A model exchange's event.
struct Exchange<'a> {
    event: Object<'a>,
    start: Option<i64>,
    end: Option<i64>,
    usage: Option<Tokens>,
}

/// A tool's run, from its tool event.
#[derive(Clone)]
struct ToolRun {
    start: Option<i64>,
    end: Option<i64>,
    duration_ms: u64,
    result: String,
    error: Option<ToolError>,
    failed: bool,
}

/// The sample's events that carry what messages do not: model events (by the id of the
/// assistant message they produced) and tool events (by call id); the others counted.
struct Events<'a> {
    models: Vec<(Option<String>, Option<Exchange<'a>>)>,
    tools: Vec<(String, Option<ToolRun>)>,
    /// Timestamps of every event, for the run's first moment.
    times: Vec<i64>,
    /// Other events Inspect recorded, by type.
    other: BTreeMap<String, u64>,
}

impl<'a> Events<'a> {
    fn new(sample: &Object<'a>, text: &Texts) -> Result<Self, TraceError> {
        let mut events = Self {
            models: Vec::new(),
            tools: Vec::new(),
            times: Vec::new(),
            other: BTreeMap::new(),
        };
        for node in sample.list("events")?.unwrap_or_default() {
            let event = node.object()?;
            let start = timestamp(&event, "timestamp")?;
            events.times.extend(start);
            let end = timestamp(&event, "completed")?;
            let kind = event.require("event")?.string()?;
            match kind.as_str() {
                "model" => {
                    let output = event.object("output")?;
                    let message = match &output {
                        Some(output) => match output.list("choices")?.unwrap_or_default().first() {
                            Some(choice) => match choice.clone().object()?.object("message")? {
                                Some(message) => message.string("id")?,
                                None => None,
                            },
                            None => None,
                        },
                        None => None,
                    };
                    let usage = match &output {
                        Some(output) => output
                            .object("usage")?
                            .map(|u| Tokens::new(&u))
                            .transpose()?,
                        None => None,
                    };
                    events.models.push((
                        message,
                        Some(Exchange {
                            event,
                            start,
                            end,
                            usage,
                        }),
                    ));
                }
                "tool" => {
                    let working = event.number("working_time")?;
                    let duration_ms = match (start, end, working) {
                        (Some(start), Some(end), _) if end >= start => (end - start) as u64 / 1000,
                        (_, _, Some(seconds)) if seconds >= 0.0 => {
                            (seconds * 1000.0).round() as u64
                        }
                        _ => 0,
                    };
                    let result = match event.get("result") {
                        Some(result) => tool_result_text(result, text)?,
                        None => String::new(),
                    };
                    let run = ToolRun {
                        start,
                        end,
                        duration_ms,
                        result,
                        error: event
                            .object("error")?
                            .map(|e| ToolError::new(e, text))
                            .transpose()?,
                        failed: event.boolean("failed")?.unwrap_or(false),
                    };
                    let id = event.string("id")?.unwrap_or_default();
                    events.tools.push((id, Some(run)));
                }
                // What the run's structure or end already says: spans, state changes, the
                // sample's start, its score (noted from `scores`), its error or limit.
                "span_begin" | "span_end" | "state" | "store" | "sample_init" | "step"
                | "score" | "error" | "sample_limit" => {}
                _ => *events.other.entry(kind).or_default() += 1,
            }
        }
        Ok(events)
    }

    fn starts(&self) -> impl Iterator<Item = i64> + '_ {
        self.times.iter().copied()
    }

    /// The model exchange that produced assistant message `id`, once.
    fn model(&mut self, id: &str) -> Option<Exchange<'a>> {
        self.models
            .iter_mut()
            .find(|(message, exchange)| message.as_deref() == Some(id) && exchange.is_some())
            .and_then(|(_, exchange)| exchange.take())
    }

    /// The run of call `id`, once.
    fn tool(&mut self, id: &str) -> Option<ToolRun> {
        self.tools
            .iter_mut()
            .find(|(call, run)| call == id && run.is_some())
            .and_then(|(_, run)| run.take())
    }

    fn note_unmatched(&self, notes: &mut Notes) {
        let models = self.models.iter().filter(|(_, e)| e.is_some()).count();
        if models > 0 {
            notes.count(
                "model calls outside the sample's messages (scorers, sub-agents)",
                models as u64,
            );
        }
        let tools = self.tools.iter().filter(|(_, r)| r.is_some()).count();
        if tools > 0 {
            notes.count("tool calls outside the sample's messages", tools as u64);
        }
        for (kind, count) in &self.other {
            let what = match kind.as_str() {
                "sandbox" => "sandbox events (commands and files in Inspect's sandbox)".to_owned(),
                "logger" => "log messages (Inspect's logger events)".to_owned(),
                _ => format!("Inspect `{kind}` events"),
            };
            notes.count(what, *count);
        }
    }
}

/// A tool event's `result`: a string, a number or boolean, content parts (or one part).
fn tool_result_text(result: Node<'_>, text: &Texts) -> Result<String, TraceError> {
    Ok(match result.kind() {
        "a string" => text.resolve(result.string()?),
        "a list" => {
            // Parts' notes belong to the messages; a result's parts are its tool message's.
            parts_text(result.list()?, text, &mut Notes::default())?
        }
        "an object" => {
            let part = result.clone().object()?;
            match part.string("text")? {
                Some(part_text) => text.resolve(part_text),
                None => result.value()?.to_string(),
            }
        }
        _ => result.value()?.to_string(),
    })
}

/// Field `key` of `object` as a time (RFC 3339, microseconds).
fn timestamp(object: &Object<'_>, key: &str) -> Result<Option<i64>, TraceError> {
    let Some(node) = object.get(key) else {
        return Ok(None);
    };
    let value = node.string()?;
    parse_rfc3339_us(&value)
        .map(Some)
        .ok_or_else(|| node.error(format!("`{value}` is not an RFC 3339 time")))
}

/// The run error of a sample Inspect ended at a limit (`{type, limit, reason}`).
fn limit_message(limit: &Object<'_>) -> Result<String, TraceError> {
    let kind = limit.string("type")?.unwrap_or_else(|| "a".to_owned());
    let mut message = format!("Inspect ended the sample at its {kind} limit");
    if let Some(value) = limit.number("limit")? {
        message.push_str(&format!(" ({value})"));
    }
    if let Some(reason) = limit.string("reason")? {
        message.push_str(&format!(": {reason}"));
    }
    Ok(message)
}

/// Times of records: milliseconds since the run's first moment, never going back (a record
/// the log gives no time gets the time of the one before it).
struct Clock {
    first: Option<i64>,
    last_ms: u64,
}

impl Clock {
    fn new(first: Option<i64>) -> Self {
        Self { first, last_ms: 0 }
    }

    fn record(&mut self, at: Option<i64>, event: Event) -> Record {
        if let (Some(at), Some(first)) = (at, self.first) {
            let ms = (at.saturating_sub(first).max(0) / 1000) as u64;
            self.last_ms = self.last_ms.max(ms);
        }
        Record {
            at_ms: self.last_ms,
            event,
        }
    }
}

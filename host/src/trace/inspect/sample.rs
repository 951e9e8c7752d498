//! One Inspect sample (one epoch of it) as a run: its `messages` give the conversation (user
//! prompts, each assistant message one model exchange with its text and tool calls, each tool
//! message a call's result), its `events` the times and each exchange's token usage (the
//! model event whose output is that assistant message, the tool event of that call id).

use std::collections::HashMap;

use serde_json::Value;

use super::Notes;
use super::events::{Events, Exchange, Pools, ToolRun, request_body, sample_usage};
use super::message::{Call, Message, Texts, ToolError};
use crate::session::{CallStatus, Event, OutputItem, Record, RequestBody, ToolCallRecords};
use crate::timestamp::parse_rfc3339_us;
use crate::trace::json::{Kind, Object};
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
    let messages = messages(sample, &text, notes)?;
    let output = sample.object("output")?;
    let model = match output.as_ref().map(|o| o.string("model")).transpose()? {
        Some(Some(model)) if !model.is_empty() => model,
        _ => log.model.clone(),
    };
    let started = timestamp(sample, "started_at")?;
    let completed = timestamp(sample, "completed_at")?;

    let mut run = Records::new(started.into_iter().chain(events.starts()).min());
    run.push(
        None,
        Event::SessionStart {
            case: label.clone(),
            run: 1,
            mode: "trace".to_owned(),
            model: model.clone(),
        },
    );
    // Where each tool message is, by call id, so a call's records follow its response.
    let mut results: HashMap<&str, usize> = HashMap::new();
    for (i, message) in messages.iter().enumerate() {
        if let Message::Tool { call_id, .. } = message {
            results.entry(call_id.as_str()).or_insert(i);
        }
    }
    let mut answered = vec![false; messages.len()];
    for (i, message) in messages.iter().enumerate() {
        match message {
            Message::System => notes.count("system messages", 1),
            Message::User { text } => run.push(None, Event::UserMessage { text: text.clone() }),
            Message::Assistant {
                id,
                text: reply,
                calls,
            } => {
                let exchange = id.as_deref().and_then(|id| events.model(id));
                let body = match &exchange {
                    Some(exchange) => request_body(&exchange.event, &pools, &text)?,
                    None => Value::Null,
                };
                run.exchange(body, reply, calls, exchange.as_ref());
                for call in calls {
                    let result = results
                        .get(call.id.as_str())
                        .copied()
                        .filter(|&r| !answered[r]);
                    if let Some(r) = result {
                        answered[r] = true;
                    }
                    let ran = events.tool(&call.id);
                    run.call(&call.id, &call.function, result.map(|r| &messages[r]), ran);
                }
            }
            // A result whose call is in no assistant message (an agent that rewrote history).
            Message::Tool {
                call_id, function, ..
            } if !answered[i] => {
                let ran = events.tool(call_id);
                run.call(call_id, function, Some(message), ran);
            }
            Message::Tool { .. } => {}
            Message::Other { role } => notes.count(format!("messages of role `{role}`"), 1),
        }
    }
    let usage_recorded = run.usage(sample, notes)?;
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
            final_text: match (run.final_text.take(), &output) {
                (Some(text), _) => text,
                (None, Some(output)) => output.string("completion")?.unwrap_or_default(),
                (None, None) => String::new(),
            },
        },
    };
    run.push(completed, end);

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
            records: run.records,
            duration_ms,
            usage_recorded,
        },
    })
}

/// The sample's messages; a sample that recorded none (it failed before it began) has its
/// `input` (a prompt, or messages).
fn messages(
    sample: &Object<'_>,
    text: &Texts,
    notes: &mut Notes,
) -> Result<Vec<Message>, TraceError> {
    let mut messages = Vec::new();
    for node in sample.list("messages")?.unwrap_or_default() {
        messages.push(Message::new(node, text, notes)?);
    }
    if messages.is_empty() {
        match sample.get("input") {
            Some(input) if input.kind() == Kind::List => {
                for node in input.list()? {
                    messages.push(Message::new(node, text, notes)?);
                }
            }
            Some(input) => messages.push(Message::User {
                text: text.resolve(input.string()?),
            }),
            None => {}
        }
    }
    Ok(messages)
}

/// A run's records as they are made, each at its time: milliseconds since the run's first
/// moment, never going back (a record the log gives no time has the time of the one before).
struct Records {
    records: Vec<Record>,
    first: Option<i64>,
    last_ms: u64,
    /// Model exchanges so far.
    n: u32,
    /// Each response's record, and whether its usage is the exchange's own.
    responses: Vec<(usize, bool)>,
    /// The text of the last response.
    final_text: Option<String>,
}

impl Records {
    fn new(first: Option<i64>) -> Self {
        Self {
            records: Vec::new(),
            first,
            last_ms: 0,
            n: 0,
            responses: Vec::new(),
            final_text: None,
        }
    }

    fn push(&mut self, at: Option<i64>, event: Event) {
        if let (Some(at), Some(first)) = (at, self.first) {
            let ms = (at.saturating_sub(first).max(0) / 1000) as u64;
            self.last_ms = self.last_ms.max(ms);
        }
        self.records.push(Record {
            at_ms: self.last_ms,
            event,
        });
    }

    /// A model exchange: the request `body`, the response of text `reply` and `calls`, at the
    /// times and with the usage of its model event.
    fn exchange(
        &mut self,
        body: Value,
        reply: &str,
        calls: &[Call],
        exchange: Option<&Exchange<'_>>,
    ) {
        self.n += 1;
        let n = self.n;
        let body = RequestBody::from(body);
        self.push(
            exchange.and_then(|e| e.start),
            Event::ModelRequest { n, body },
        );
        let mut output = Vec::new();
        if !reply.is_empty() {
            output.push(OutputItem::Message {
                text: reply.to_owned(),
            });
        }
        output.extend(calls.iter().map(|call| OutputItem::FunctionCall {
            call_id: call.id.clone(),
            name: call.function.clone(),
            arguments: call.arguments.clone(),
        }));
        let usage = exchange.and_then(|e| e.usage);
        let tokens = usage.unwrap_or_default();
        self.responses.push((self.records.len(), usage.is_some()));
        self.push(
            exchange.and_then(|e| e.end),
            Event::ModelResponse {
                n,
                output,
                input_tokens: tokens.input,
                output_tokens: tokens.output,
                cached_input_tokens: tokens.cached,
            },
        );
        self.final_text = Some(reply.to_owned());
    }

    /// The `tool_start` (when the tool ran) and `tool_result` of call `call_id`: its result
    /// from its tool message, else from its tool event (a sample that ended in the tool),
    /// else it never returned (`cancelled`).
    fn call(&mut self, call_id: &str, name: &str, result: Option<&Message>, ran: Option<ToolRun>) {
        let call = ToolCallRecords::new(call_id, name);
        let (status, output) = match (result, &ran) {
            (Some(Message::Tool { text, error, .. }), _) => outcome(text, error.as_ref(), false),
            (_, Some(ran)) => outcome(&ran.result, ran.error.as_ref(), ran.failed),
            _ => {
                let event = call.cancelled("the sample ended before the call returned");
                self.push(None, event);
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
            self.push(start, call.started());
        }
        self.push(end, call.ended(status, &output, duration_ms));
    }

    /// Token usage: each exchange's from its model event, else the sample's total
    /// (`model_usage`) on its last response. Whether the log recorded any.
    fn usage(&mut self, sample: &Object<'_>, notes: &mut Notes) -> Result<bool, TraceError> {
        let missing = self.responses.iter().filter(|&&(_, has)| !has).count();
        if missing < self.responses.len() {
            if missing > 0 {
                notes.count(
                    "model responses without token usage (counted as 0)",
                    missing as u64,
                );
            }
            return Ok(true);
        }
        let (Some(total), Some(&(last, _))) = (sample_usage(sample)?, self.responses.last()) else {
            return Ok(false);
        };
        if let Event::ModelResponse {
            input_tokens,
            output_tokens,
            cached_input_tokens,
            ..
        } = &mut self.records[last].event
        {
            *input_tokens = total.input;
            *output_tokens = total.output;
            *cached_input_tokens = total.cached;
        }
        notes.sample("token usage per exchange (the sample's total is on its last response)");
        Ok(true)
    }
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

/// Field `key` of `object` as a time (RFC 3339, microseconds).
pub(super) fn timestamp(object: &Object<'_>, key: &str) -> Result<Option<i64>, TraceError> {
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

//! The events of a sample that carry what its messages do not: a model event per exchange
//! (its times, its usage, the request as sent, matched to the assistant message it produced by
//! that message's id) and a tool event per call (its times and result, by call id); the other
//! events are counted for the notes.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Notes;
use super::message::{Texts, ToolError, parts_text};
use super::sample::timestamp;
use crate::trace::TraceError;
use crate::trace::json::{Kind, Node, Object};

/// The sample's `events_data`: the messages of model events' inputs and of their provider
/// requests, each stored once and referred to by ranges (`input_refs`, `call.call_refs`).
pub(super) struct Pools<'a> {
    messages: Vec<Node<'a>>,
    calls: Vec<Node<'a>>,
}

impl<'a> Pools<'a> {
    pub fn new(sample: &Object<'a>) -> Result<Self, TraceError> {
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
pub(super) fn request_body(
    event: &Object<'_>,
    pools: &Pools<'_>,
    text: &Texts,
) -> Result<Value, TraceError> {
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
pub(super) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
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
pub(super) fn sample_usage(sample: &Object<'_>) -> Result<Option<Tokens>, TraceError> {
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
pub(super) struct Exchange<'a> {
    pub event: Object<'a>,
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub usage: Option<Tokens>,
}

/// A tool's run, from its tool event.
#[derive(Clone)]
pub(super) struct ToolRun {
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub duration_ms: u64,
    pub result: String,
    pub error: Option<ToolError>,
    pub failed: bool,
}

/// The sample's events that carry what messages do not: model events (by the id of the
/// assistant message they produced) and tool events (by call id); the others counted.
pub(super) struct Events<'a> {
    models: Vec<(Option<String>, Option<Exchange<'a>>)>,
    tools: Vec<(String, Option<ToolRun>)>,
    /// Timestamps of every event, for the run's first moment.
    times: Vec<i64>,
    /// Other events Inspect recorded, by type.
    other: BTreeMap<String, u64>,
}

impl<'a> Events<'a> {
    pub fn new(sample: &Object<'a>, text: &Texts) -> Result<Self, TraceError> {
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
                    let (message, usage) = match event.object("output")? {
                        Some(output) => (
                            message_id(&output)?,
                            output
                                .object("usage")?
                                .map(|u| Tokens::new(&u))
                                .transpose()?,
                        ),
                        None => (None, None),
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

    pub fn starts(&self) -> impl Iterator<Item = i64> + '_ {
        self.times.iter().copied()
    }

    /// The model exchange that produced assistant message `id`, once.
    pub fn model(&mut self, id: &str) -> Option<Exchange<'a>> {
        self.models
            .iter_mut()
            .find(|(message, exchange)| message.as_deref() == Some(id) && exchange.is_some())
            .and_then(|(_, exchange)| exchange.take())
    }

    /// The run of call `id`, once.
    pub fn tool(&mut self, id: &str) -> Option<ToolRun> {
        self.tools
            .iter_mut()
            .find(|(call, run)| call == id && run.is_some())
            .and_then(|(_, run)| run.take())
    }

    pub fn note_unmatched(&self, notes: &mut Notes) {
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

/// The id of the message a model event's output (`ModelOutput`) made: its first choice's.
fn message_id(output: &Object<'_>) -> Result<Option<String>, TraceError> {
    let choices = output.list("choices")?.unwrap_or_default();
    let Some(choice) = choices.into_iter().next() else {
        return Ok(None);
    };
    match choice.object()?.object("message")? {
        Some(message) => message.string("id"),
        None => Ok(None),
    }
}

/// A tool event's `result`: a string, a number or boolean, content parts (or one part).
fn tool_result_text(result: Node<'_>, text: &Texts) -> Result<String, TraceError> {
    Ok(match result.kind() {
        Kind::String => text.resolve(result.string()?),
        Kind::List => {
            // Parts' notes belong to the messages; a result's parts are its tool message's.
            parts_text(result.list()?, text, &mut Notes::default())?
        }
        Kind::Object => {
            let part = result.clone().object()?;
            match part.string("text")? {
                Some(part_text) => text.resolve(part_text),
                None => result.value()?.to_string(),
            }
        }
        _ => result.value()?.to_string(),
    })
}

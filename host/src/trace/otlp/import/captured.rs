//! Where a trace put a model span's conversation: the span's attributes, its inference
//! details event (a span event or a log record), the earlier per-message log events joined to
//! it, or the older `gen_ai.prompt` / `gen_ai.completion` (`content.rs` reads each form).

use serde_json::Value;

use super::Notes;
use super::content::{self, EventMessage, Message};
use super::decode::{Attributes, LogEvent, Span};
use super::run::note_span_events;
use crate::trace::otlp::semconv as sc;

/// A model span's content, from wherever the trace put it (`content.rs` says which forms).
pub(super) struct Content {
    pub input: Option<Vec<Message>>,
    pub body: Value,
    pub output: Option<Vec<Message>>,
    pub finish_reason: Option<String>,
}

impl Content {
    pub fn read(span: &Span, logs: &[&LogEvent], notes: &mut Notes) -> Self {
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

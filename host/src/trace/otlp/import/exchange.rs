//! One model span (`chat`, `text_completion`, `generate_content`) as a request and its
//! response: the answer's text and calls, the usage, and which tool run ran each call.

use serde_json::Value;

use super::Notes;
use super::captured::Content;
use super::content::{self, Message, Part};
use super::decode::{Attributes, LogEvent, Span};
use super::run::note_span_attributes;
use super::tool::ToolRun;
use crate::session::OutputItem;
use crate::trace::otlp::semconv as sc;

/// The attributes of a model span that a record carries.
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
pub(super) struct Usage {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
    pub recorded: bool,
}

/// One model request and its response.
pub(super) struct Exchange<'a> {
    pub n: u32,
    pub span: &'a Span,
    /// The request's messages (`None`: the trace did not capture them).
    pub input: Option<Vec<Message>>,
    /// The request as the trace recorded it (`null` when it did not).
    pub body: Value,
    pub items: Vec<OutputItem>,
    /// The calls of `items`, and the tool run that ran each.
    pub calls: Vec<Call>,
    /// Whether the answer's content was captured (else its calls come from tool spans).
    output_known: bool,
    pub usage: Usage,
    /// The tool runs that ran after this answer (indices into the run's tool runs).
    pub tools: Vec<usize>,
}

pub(super) struct Call {
    pub id: String,
    pub name: String,
    pub tool: Option<usize>,
}

impl<'a> Exchange<'a> {
    pub fn read(n: u32, span: &'a Span, logs: &[&'a LogEvent], notes: &mut Notes) -> Self {
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
    pub fn claim(&mut self, t: usize, tool: &ToolRun, notes: &mut Notes) -> String {
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
    pub fn response_to(&self, id: &str) -> Option<&str> {
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

    pub fn text(&self) -> String {
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

//! The messages of a sample (`ChatMessageSystem`, `User`, `Assistant`, `Tool`): their text
//! (a string, or content parts of which the text ones are kept), an assistant's tool calls, a
//! tool's result and `ToolCallError`; and the sample's attachments, which long texts and images
//! are moved into (`attachment://<hash>`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Notes;
use crate::session::CallStatus;
use crate::trace::TraceError;
use crate::trace::json::{Kind, Node, Object};

/// Inspect's `ToolCallError`: `{type, message}`.
#[derive(Debug, Clone)]
pub(super) struct ToolError {
    kind: String,
    pub message: String,
}

impl ToolError {
    pub fn new(object: Object<'_>, text: &Texts) -> Result<Self, TraceError> {
        Ok(Self {
            kind: object.string("type")?.unwrap_or_default(),
            message: text.resolve(object.string("message")?.unwrap_or_default()),
        })
    }

    /// The status evalhost gives a call that ended with this error.
    pub fn status(&self) -> CallStatus {
        match self.kind.as_str() {
            // Inspect reports a tool the model made up as a parsing error (`_call_tools.py`).
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
pub(super) enum Message {
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
pub(super) struct Call {
    pub id: String,
    pub function: String,
    /// The arguments as JSON text.
    pub arguments: String,
}

impl Message {
    pub fn new(node: Node<'_>, text: &Texts, notes: &mut Notes) -> Result<Self, TraceError> {
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
                        Some(arguments) if arguments.kind() == Kind::String => {
                            arguments.string()?
                        }
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
    if content.kind() != Kind::List {
        return Ok(text.resolve(content.string()?));
    }
    parts_text(content.list()?, text, notes)
}

pub(super) fn parts_text(
    parts: Vec<Node<'_>>,
    text: &Texts,
    notes: &mut Notes,
) -> Result<String, TraceError> {
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
pub(super) struct Texts {
    attachments: BTreeMap<String, String>,
}

impl Texts {
    pub fn new(sample: &Object<'_>) -> Result<Self, TraceError> {
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

    pub fn resolve(&self, text: String) -> String {
        // `tc://` is the older name of the same protocol.
        let hash = text
            .strip_prefix("attachment://")
            .or_else(|| text.strip_prefix("tc://"));
        match hash.and_then(|hash| self.attachments.get(hash)) {
            Some(resolved) => resolved.clone(),
            None => text,
        }
    }

    pub fn resolve_value(&self, value: &mut Value) {
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

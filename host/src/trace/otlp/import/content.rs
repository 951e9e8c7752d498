//! A model exchange's messages as GenAI telemetry records them, in one shape whichever of its
//! forms the trace used:
//! - `gen_ai.input.messages` / `gen_ai.output.messages` (semantic conventions 1.37 and later):
//!   `[{role, parts: [{type: text, content} | {type: tool_call, id, name, arguments} |
//!   {type: tool_call_response, id, response}], finish_reason}]`, a JSON text on a span, a
//!   structured value on an event;
//! - the earlier events, one per message (`gen_ai.user.message`, `gen_ai.assistant.message`,
//!   `gen_ai.tool.message`, `gen_ai.system.message`, `gen_ai.choice`), whose bodies are Chat
//!   Completions messages: `{content, tool_calls: [{id, function: {name, arguments}}], id}`;
//! - `gen_ai.prompt` / `gen_ai.completion` (JSON texts of Chat Completions messages).

use serde_json::Value;

use crate::trace::otlp::semconv as sc;

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Message {
    pub role: String,
    pub parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Part {
    Text(String),
    /// A tool call the model asked for; `arguments` is JSON text.
    Call {
        id: String,
        name: String,
        arguments: String,
    },
    /// A tool's result sent back to the model.
    Response {
        id: String,
        output: String,
    },
    /// A part evalhost's records do not carry (`reasoning`, `blob`, ...), by its type.
    Other(String),
}

impl Message {
    /// Its text parts, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// The messages of a `gen_ai.input.messages` / `gen_ai.output.messages` value (or of
/// `gen_ai.prompt` / `gen_ai.completion`): `None` when it is not a list of messages.
pub(super) fn messages(value: &Value) -> Option<Vec<Message>> {
    let parsed;
    let value = match value {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text).ok()?;
            &parsed
        }
        value => value,
    };
    let list = match value {
        Value::Array(list) => list,
        // A single message, as some instrumentations write a completion.
        Value::Object(_) => std::slice::from_ref(value),
        _ => return None,
    };
    list.iter().map(|item| message(item, None)).collect()
}

/// The value `messages` reads, as recorded: a JSON text parsed (the request body the trace
/// recorded), a structured value as it is.
pub(super) fn recorded(value: &Value) -> Value {
    match value {
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| value.clone()),
        value => value.clone(),
    }
}

/// The message of an event named `gen_ai.<role>.message` or `gen_ai.choice`, from its body
/// (`None` for another event, or a body that is not a message).
pub(super) fn event_message(name: &str, body: &Value) -> Option<EventMessage> {
    if name == sc::EVENT_CHOICE {
        let message_body = body.get("message").unwrap_or(&Value::Null);
        let mut message = message(message_body, Some("assistant"))?;
        if message.role.is_empty() {
            message.role = "assistant".to_owned();
        }
        return Some(EventMessage::Output(message));
    }
    let role = name
        .strip_prefix(sc::EVENT_MESSAGE_PREFIX)?
        .strip_suffix(sc::EVENT_MESSAGE_SUFFIX)?;
    message(body, Some(role)).map(EventMessage::Input)
}

/// Which side of the exchange an event's message is on.
pub(super) enum EventMessage {
    Input(Message),
    Output(Message),
}

/// A message object: GenAI's `parts` form, or a Chat Completions message (`content`,
/// `tool_calls`, `tool_call_id`). `role` stands in for a missing `role` (an event's name
/// gives it).
fn message(value: &Value, role: Option<&str>) -> Option<Message> {
    let object = match value {
        Value::Object(object) => object,
        // An event without content (not captured) still names its role.
        Value::Null => {
            return role.map(|role| Message {
                role: role.to_owned(),
                parts: Vec::new(),
            });
        }
        _ => return None,
    };
    let role = match object.get("role") {
        Some(Value::String(role)) => role.clone(),
        _ => role.unwrap_or_default().to_owned(),
    };
    let mut parts = Vec::new();
    if let Some(Value::Array(items)) = object.get("parts") {
        parts.extend(items.iter().map(part));
    } else {
        match object.get("content") {
            Some(Value::String(text)) if role == "tool" => parts.push(Part::Response {
                id: string_at(object.get("tool_call_id").or(object.get("id"))),
                output: text.clone(),
            }),
            Some(Value::String(text)) => parts.push(Part::Text(text.clone())),
            // Content parts (`[{type: text, text}]`).
            Some(Value::Array(items)) => {
                parts.extend(items.iter().map(
                    |item| match item.get("text").or(item.get("content")) {
                        Some(Value::String(text)) => Part::Text(text.clone()),
                        _ => Part::Other(string_at(item.get("type"))),
                    },
                ))
            }
            Some(Value::Null) | None => {}
            Some(other) => parts.push(Part::Text(json_text(other))),
        }
        if let Some(Value::Array(calls)) = object.get("tool_calls") {
            parts.extend(calls.iter().map(|call| {
                let function = call.get("function").unwrap_or(call);
                Part::Call {
                    id: string_at(call.get("id")),
                    name: string_at(function.get("name")),
                    arguments: function
                        .get("arguments")
                        .map_or_else(String::new, json_text),
                }
            }));
        }
    }
    Some(Message { role, parts })
}

/// One part of GenAI's `parts` form.
fn part(value: &Value) -> Part {
    let kind = string_at(value.get("type"));
    match kind.as_str() {
        "text" => match value.get("content") {
            Some(Value::String(text)) => Part::Text(text.clone()),
            _ => Part::Other(kind),
        },
        "tool_call" => Part::Call {
            id: string_at(value.get("id")),
            name: string_at(value.get("name")),
            arguments: value.get("arguments").map_or_else(String::new, json_text),
        },
        "tool_call_response" => Part::Response {
            id: string_at(value.get("id")),
            output: value.get("response").map_or_else(String::new, json_text),
        },
        _ => Part::Other(kind),
    }
}

/// A string as it is, anything else as compact JSON (a call's arguments given as an object).
pub(super) fn json_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        value => value.to_string(),
    }
}

fn string_at(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{EventMessage, Message, Part, event_message, messages};

    #[test]
    fn the_parts_form_as_a_json_text_or_structured() {
        let value = json!([
            {"role": "assistant", "parts": [
                {"type": "text", "content": "Reading."},
                {"type": "tool_call", "id": "c1", "name": "read_file", "arguments": {"path": "a"}},
                {"type": "reasoning", "content": "hmm"}
            ], "finish_reason": "tool_calls"}
        ]);
        let expected = vec![Message {
            role: "assistant".into(),
            parts: vec![
                Part::Text("Reading.".into()),
                Part::Call {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a"}"#.into(),
                },
                Part::Other("reasoning".into()),
            ],
        }];
        assert_eq!(messages(&value), Some(expected.clone()));
        assert_eq!(messages(&json!(value.to_string())), Some(expected));
        assert_eq!(messages(&json!("not json")), None);
        assert_eq!(messages(&json!(3)), None);
    }

    #[test]
    fn chat_completions_messages_and_the_earlier_events() {
        let Some(EventMessage::Input(tool)) =
            event_message("gen_ai.tool.message", &json!({"content": "42", "id": "c1"}))
        else {
            panic!("a tool message")
        };
        assert_eq!(
            tool.parts,
            [Part::Response {
                id: "c1".into(),
                output: "42".into()
            }]
        );
        let choice = json!({"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}});
        let Some(EventMessage::Output(answer)) = event_message("gen_ai.choice", &choice) else {
            panic!("an output message")
        };
        assert_eq!(
            answer.parts,
            [Part::Call {
                id: "c1".into(),
                name: "f".into(),
                arguments: "{}".into()
            }]
        );
        let Some(EventMessage::Input(user)) = event_message("gen_ai.user.message", &json!(null))
        else {
            panic!("a user message without content")
        };
        assert_eq!((user.role.as_str(), user.parts.len()), ("user", 0));
        assert!(event_message("gen_ai.client.inference.operation.details", &json!({})).is_none());
    }
}

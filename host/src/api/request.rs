//! What every API's request reader shares: a tool result as found in a request, a content
//! field as text, the user's follow-up after the last answer, and the pieces a request is
//! rebuilt from as the Responses request a live provider is given.

use serde_json::Value;

use super::responses::wire::{InputItem, ResponsesRequest};

/// One tool result found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The call it answers.
    pub call_id: String,
    /// The result's text (text parts joined; other content as JSON text).
    pub output: String,
    /// Whether the client marked the call as failed (Anthropic `is_error`).
    pub failed: bool,
}

/// A content field as text: a string as is, a list of parts by their `text` joined, anything
/// else as JSON text (nothing for a missing field).
pub(crate) fn content_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts))
            if parts
                .iter()
                .all(|p| p.get("text").is_some_and(Value::is_string)) =>
        {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        }
        Some(other) => other.to_string(),
    }
}

/// The items of a request's list field (`input`, `messages`, `contents`), none when missing.
pub(crate) fn list<'a>(request: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    request
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// An item's `role`.
pub(crate) fn role(item: &Value) -> Option<&str> {
    item.get("role").and_then(Value::as_str)
}

/// The texts of the user messages among `items` that follow the last one `is_answer` marks,
/// in order, `text` reading each (empty texts left out); none when no item is an answer (the
/// user messages are then the conversation's opening, not a later turn).
pub(crate) fn trailing_user_texts(
    items: &[Value],
    is_answer: impl Fn(&Value) -> bool,
    text: impl Fn(&Value) -> Option<String>,
) -> Vec<String> {
    let Some(last) = items.iter().rposition(is_answer) else {
        return Vec::new();
    };
    items[last + 1..]
        .iter()
        .filter_map(text)
        .filter(|text| !text.is_empty())
        .collect()
}

/// A string field of `value`, empty when missing.
pub(crate) fn text_of(value: &Value, field: &str) -> String {
    value[field].as_str().unwrap_or_default().to_owned()
}

/// A message item of a Responses request.
pub(crate) fn message(role: &str, content: String) -> InputItem {
    InputItem::Message {
        role: role.to_owned(),
        content,
    }
}

/// Add `text` to the request's instructions (after what is there, a blank line between).
pub(crate) fn add_instructions(request: &mut ResponsesRequest, text: String) {
    if text.is_empty() {
        return;
    }
    request.instructions = Some(match request.instructions.take() {
        Some(before) => format!("{before}\n\n{text}"),
        None => text,
    });
}

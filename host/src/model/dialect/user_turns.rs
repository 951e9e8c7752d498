//! The user's new messages in a request: those after the last assistant item of the
//! conversation it carries (a follow-up turn of a multi-turn conversation). Tool results are
//! not user messages here (an Anthropic `user` message holding `tool_result` blocks is not one).

use serde_json::Value;

use super::Dialect;
use super::results::content_text;

/// The texts of the user messages of `request` (a request body in `dialect`) that follow its
/// last assistant item, in order; none when the request carries no assistant item (its user
/// messages are the conversation's opening, not a later turn).
pub(crate) fn trailing_user_texts(dialect: Dialect, request: &Value) -> Vec<String> {
    let (field, is_assistant): (&str, fn(&Value) -> bool) = match dialect {
        Dialect::Responses => ("input", |item| {
            role(item) == Some("assistant")
                || item
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t != "message" && !t.ends_with("_output"))
        }),
        Dialect::Chat | Dialect::Anthropic => ("messages", |m| role(m) == Some("assistant")),
    };
    let Some(items) = request.get(field).and_then(Value::as_array) else {
        return Vec::new();
    };
    let Some(last) = items.iter().rposition(is_assistant) else {
        return Vec::new();
    };
    items[last + 1..]
        .iter()
        .filter(|item| role(item) == Some("user"))
        .filter(|item| dialect != Dialect::Anthropic || !holds_tool_results(item))
        .map(|item| content_text(item.get("content")))
        .filter(|text| !text.is_empty())
        .collect()
}

fn role(item: &Value) -> Option<&str> {
    item.get("role").and_then(Value::as_str)
}

/// An Anthropic message with `tool_result` blocks.
fn holds_tool_results(message: &Value) -> bool {
    message
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_follow_up_is_the_user_message_after_the_last_answer() {
        let responses = json!({"input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "Plan it."}]},
            {"type": "function_call", "call_id": "c1", "name": "list", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Plan."}]},
            {"role": "user", "content": [{"type": "input_text", "text": "File it now."}]},
        ]});
        assert_eq!(
            trailing_user_texts(Dialect::Responses, &responses),
            ["File it now."]
        );
        let chat = json!({"messages": [
            {"role": "user", "content": "Plan it."},
            {"role": "assistant", "content": "Plan."},
            {"role": "user", "content": "File it now."},
        ]});
        assert_eq!(trailing_user_texts(Dialect::Chat, &chat), ["File it now."]);
        let anthropic = json!({"messages": [
            {"role": "user", "content": "Plan it."},
            {"role": "assistant", "content": [{"type": "text", "text": "Plan."}]},
            {"role": "user", "content": [{"type": "text", "text": "File it now."}]},
        ]});
        assert_eq!(
            trailing_user_texts(Dialect::Anthropic, &anthropic),
            ["File it now."]
        );
    }

    #[test]
    fn openings_and_tool_results_are_not_follow_ups() {
        let opening = json!({"input": [{"role": "user", "content": "Plan it."}]});
        assert!(trailing_user_texts(Dialect::Responses, &opening).is_empty());
        let results = json!({"input": [
            {"role": "user", "content": "Plan it."},
            {"type": "function_call", "call_id": "c1", "name": "list", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ]});
        assert!(trailing_user_texts(Dialect::Responses, &results).is_empty());
        let anthropic = json!({"messages": [
            {"role": "user", "content": "Plan it."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "list", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ]});
        assert!(trailing_user_texts(Dialect::Anthropic, &anthropic).is_empty());
        assert!(trailing_user_texts(Dialect::Chat, &json!(null)).is_empty());
    }
}

//! Which model request is the agent's retry of the one before it. Agents resend a request
//! whose answer failed or never arrived, and not always byte for byte: Codex resends the same
//! JSON with its `client_metadata` keys in another order; Claude Code drops `thinking.display`,
//! offers more tools, appends a `role: system` note to `messages` and moves its
//! `cache_control` markers. What a retry keeps is the conversation: every item of `input`
//! (Responses) or `messages` (Chat Completions, Anthropic) that is not a system or developer
//! message, without `cache_control`. A new request always adds to it (a tool result, an
//! answer, the user's next message), so a request with the last one's conversation is a retry
//! of it, whatever else changed.

use axum::body::Bytes;
use serde_json::Value;

use crate::wire::Api;

/// What a request and its retries have in common.
#[derive(Debug, PartialEq)]
pub(crate) enum RetryKey {
    /// The request's conversation, in any key order.
    Conversation(Value),
    /// A body that is not a JSON request: itself.
    Body(Bytes),
}

impl RetryKey {
    /// The key of `body`, a request in `api`.
    pub(crate) fn of(api: Api, body: &Bytes) -> RetryKey {
        conversation(api, body).map_or_else(|| RetryKey::Body(body.clone()), RetryKey::Conversation)
    }
}

fn conversation(api: Api, body: &[u8]) -> Option<Value> {
    let request: Value = serde_json::from_slice(body).ok()?;
    let field = match api {
        Api::Responses => "input",
        Api::Chat | Api::Anthropic => "messages",
        Api::Gemini => "contents",
    };
    Some(match request.get(field)? {
        Value::Array(items) => items
            .iter()
            .filter(|item| !is_system(item))
            .map(without_cache_control)
            .collect(),
        // A Responses `input` given as one text.
        text => text.clone(),
    })
}

/// A system or developer message: instructions the agent may change when it retries.
fn is_system(item: &Value) -> bool {
    matches!(
        item.get("role").and_then(Value::as_str),
        Some("system" | "developer")
    )
}

/// `value` without any `cache_control` key, at any depth (Anthropic's prompt-cache markers,
/// which Claude Code moves between attempts).
fn without_cache_control(value: &Value) -> Value {
    match value {
        Value::Object(map) => map
            .iter()
            .filter(|(key, _)| *key != "cache_control")
            .map(|(key, value)| (key.clone(), without_cache_control(value)))
            .collect(),
        Value::Array(items) => items.iter().map(without_cache_control).collect(),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(api: Api, body: Value) -> RetryKey {
        RetryKey::of(api, &Bytes::from(body.to_string()))
    }

    #[test]
    fn a_retry_keeps_the_conversation_whatever_else_changes() {
        // Claude Code's second attempt: another `thinking`, more tools, a system note in
        // `messages`, the cache marker moved.
        let first = json!({"model": "m", "thinking": {"type": "adaptive", "display": "omitted"},
            "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Go.",
                "cache_control": {"type": "ephemeral"}}]}]});
        let again = json!({"model": "m", "thinking": {"type": "adaptive"},
            "tools": [{"name": "Bash"}, {"name": "Read"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Go."}]},
                {"role": "system", "content": "ToolSearch is no longer available."}]});
        assert_eq!(key(Api::Anthropic, first), key(Api::Anthropic, again));
        // Codex's: the same JSON, keys in another order.
        let codex = |metadata: &str| {
            Bytes::from(format!(
                r#"{{"input":[{{"role":"user","content":"Go."}}],"client_metadata":{metadata}}}"#
            ))
        };
        assert_eq!(
            RetryKey::of(Api::Responses, &codex(r#"{"a":1,"b":2}"#)),
            RetryKey::of(Api::Responses, &codex(r#"{"b":2,"a":1}"#))
        );
    }

    #[test]
    fn a_request_that_adds_to_the_conversation_is_a_new_one() {
        let first = json!({"messages": [{"role": "user", "content": "Go."}]});
        let next = json!({"messages": [{"role": "user", "content": "Go."},
            {"role": "assistant", "content": "Done."}, {"role": "user", "content": "More."}]});
        assert_ne!(key(Api::Chat, first.clone()), key(Api::Chat, next));
        let result = json!({"input": [{"role": "user", "content": "Go."},
            {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"}]});
        assert_ne!(
            key(
                Api::Responses,
                json!({"input": [{"role": "user", "content": "Go."}]})
            ),
            key(Api::Responses, result)
        );
        // Bodies that are not JSON are compared as they are.
        assert_eq!(
            RetryKey::of(Api::Chat, &Bytes::from_static(b"not json")),
            RetryKey::of(Api::Chat, &Bytes::from_static(b"not json"))
        );
        assert_ne!(
            RetryKey::of(Api::Chat, &Bytes::from_static(b"not json")),
            RetryKey::of(Api::Chat, &Bytes::from_static(b"not json either"))
        );
    }
}

//! Turning the events of one Responses stream into the model's reply.

use serde_json::Value;

use super::AgentError;
use crate::api::responses::wire::{ResponseItem, ResponseObject, StreamEvent};
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// The model's completed answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelReply {
    /// Output items in order (reasoning and other unknown items dropped).
    pub output: Vec<OutputItem>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl ModelReply {
    /// The calls the model asked for, in order: `(call_id, name, arguments)`.
    pub fn calls(&self) -> Vec<(&str, &str, &str)> {
        self.output.iter().filter_map(OutputItem::call).collect()
    }

    /// All message text of the reply.
    pub fn text(&self) -> String {
        self.output.iter().filter_map(OutputItem::text).collect()
    }
}

/// Events named so need no reading: the reply is decided by `response.output_item.done`,
/// the text deltas (the last resort) and the terminal events.
fn ignored(event: &str) -> bool {
    matches!(
        event,
        "response.created"
            | "response.in_progress"
            | "response.output_item.added"
            | "response.content_part.added"
            | "response.content_part.done"
            | "response.output_text.done"
            | "response.function_call_arguments.delta"
            | "response.function_call_arguments.done"
            | "response.custom_tool_call_input.delta"
            | "response.custom_tool_call_input.done"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_summary_text.done"
            | "response.reasoning_summary_part.added"
            | "response.reasoning_summary_part.done"
    )
}

/// Collects one stream's events until a terminal event decides the reply.
#[derive(Debug)]
pub(crate) struct ReplyCollector {
    request: u32,
    /// Text deltas, the last resort when a service sends no output items.
    deltas: String,
    /// Items from `response.output_item.done`, for services whose final event omits output.
    done_items: Vec<ResponseItem>,
}

impl ReplyCollector {
    pub fn new(request: u32) -> Self {
        Self {
            request,
            deltas: String::new(),
            done_items: Vec::new(),
        }
    }

    /// Feed one event; returns the outcome once the stream reaches a terminal event.
    pub fn event(&mut self, sse: SseEvent) -> Option<Result<ModelReply, AgentError>> {
        // Chat-Completions-style terminator; some compatible services append it.
        if sse.data == "[DONE]" {
            return None;
        }
        // Most of a stream announces what later events repeat whole: an event named as one of
        // those is not read at all (a stream without `event:` names is read event by event).
        if sse.event.as_deref().is_some_and(ignored) {
            return None;
        }
        // Read straight into the event; only data that does not fit is read again as a
        // tree, to say what is wrong with it.
        let event: StreamEvent = match serde_json::from_str(&sse.data) {
            Ok(event) => event,
            Err(_) => return Some(Err(self.malformed(unreadable(&sse.data)))),
        };
        match event {
            StreamEvent::OutputTextDelta { delta, .. } => {
                self.deltas.push_str(&delta);
                None
            }
            StreamEvent::OutputItemDone { item, .. } => {
                self.done_items.push(item);
                None
            }
            StreamEvent::Completed { response } => Some(Ok(self.reply(response))),
            StreamEvent::Failed { response } => {
                let message = response
                    .error
                    .map(|e| e.message)
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "the model failed without an error message".to_owned());
                Some(Err(AgentError::ModelFailed {
                    request: self.request,
                    message,
                }))
            }
            StreamEvent::Error { code, message } => {
                let message = match code {
                    Some(code) if message.is_empty() => code,
                    _ if message.is_empty() => "the model stream reported an error".to_owned(),
                    _ => message,
                };
                Some(Err(AgentError::ModelFailed {
                    request: self.request,
                    message,
                }))
            }
            StreamEvent::Incomplete { response } => {
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given")
                    .to_owned();
                Some(Err(AgentError::Incomplete {
                    request: self.request,
                    reason,
                }))
            }
            StreamEvent::Created { .. } | StreamEvent::Other => None,
        }
    }

    /// The stream ended without a terminal event.
    pub fn end(self) -> AgentError {
        self.malformed("the stream ended before `response.completed`".to_owned())
    }

    fn reply(&mut self, response: ResponseObject) -> ModelReply {
        let items = if !response.output.is_empty() {
            response.output
        } else if !self.done_items.is_empty() {
            std::mem::take(&mut self.done_items)
        } else if !self.deltas.is_empty() {
            vec![ResponseItem::message("", std::mem::take(&mut self.deltas))]
        } else {
            Vec::new()
        };
        let usage = response.usage.unwrap_or_default();
        ModelReply {
            output: items.into_iter().filter_map(output_item).collect(),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
        }
    }

    fn malformed(&self, message: String) -> AgentError {
        AgentError::Malformed {
            request: self.request,
            message,
        }
    }
}

/// The session-log form of a wire item; items the agent does not act on are dropped.
fn output_item(item: ResponseItem) -> Option<OutputItem> {
    match item {
        ResponseItem::Message { content, .. } => Some(OutputItem::Message {
            text: content.iter().map(|part| part.text()).collect(),
        }),
        ResponseItem::FunctionCall {
            call_id,
            name,
            arguments,
            ..
        } => Some(OutputItem::FunctionCall {
            call_id,
            name,
            arguments,
        }),
        ResponseItem::Other => None,
    }
}

/// Why event data is not a stream event: not JSON, or which event type does not fit.
fn unreadable(data: &str) -> String {
    let value: Value = match serde_json::from_str(data) {
        Ok(value) => value,
        Err(e) => return format!("event data is not JSON: {e}"),
    };
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("(untyped)")
        .to_owned();
    match serde_json::from_value::<StreamEvent>(value) {
        Err(e) => format!("bad `{kind}` event: {e}"),
        // Fits once read as a tree: say what reading the text itself reported.
        Ok(_) => format!(
            "bad `{kind}` event: {}",
            serde_json::from_str::<StreamEvent>(data)
                .err()
                .map_or_else(String::new, |e| e.to_string())
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(data: &str) -> SseEvent {
        SseEvent {
            data: data.to_owned(),
            ..SseEvent::default()
        }
    }

    #[test]
    fn falls_back_to_deltas_when_completed_has_no_output() {
        let mut collector = ReplyCollector::new(1);
        assert!(
            collector
                .event(event(
                    r#"{"type":"response.output_text.delta","delta":"Hel"}"#
                ))
                .is_none()
        );
        assert!(
            collector
                .event(event(
                    r#"{"type":"response.output_text.delta","delta":"lo"}"#
                ))
                .is_none()
        );
        let reply = collector
            .event(event(
                r#"{"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":1}}}"#,
            ))
            .expect("terminal")
            .expect("completed");
        assert_eq!(reply.text(), "Hello");
        assert_eq!((reply.input_tokens, reply.output_tokens), (3, 1));
    }

    #[test]
    fn unknown_events_and_items_are_skipped() {
        let mut collector = ReplyCollector::new(1);
        assert!(
            collector
                .event(event(r#"{"type":"response.reasoning.delta","x":1}"#))
                .is_none()
        );
        let reply = collector
            .event(event(
                r#"{"type":"response.completed","response":{"output":[{"type":"reasoning"},{"type":"function_call","call_id":"c","name":"bash","arguments":"{}"}]}}"#,
            ))
            .expect("terminal")
            .expect("completed");
        assert_eq!(reply.calls(), vec![("c", "bash", "{}")]);
    }

    #[test]
    fn garbage_is_malformed_not_a_panic() {
        let mut collector = ReplyCollector::new(4);
        let error = collector
            .event(event("{nope"))
            .expect("terminal")
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("Model response 4 was malformed")
        );
        let error = collector
            .event(event(r#"{"type":"response.completed"}"#))
            .expect("terminal")
            .unwrap_err();
        assert!(error.to_string().contains("response.completed"), "{error}");
    }

    #[test]
    fn data_that_is_no_stream_event_is_malformed_and_says_why() {
        let message = |data: &str| match ReplyCollector::new(2).event(event(data)) {
            Some(Err(AgentError::Malformed { request, message })) => {
                assert_eq!(request, 2);
                message
            }
            other => panic!("{data}: expected malformed, got {other:?}"),
        };
        assert!(
            message("{not json").starts_with("event data is not JSON: key must be a string"),
            "{}",
            message("{not json")
        );
        assert!(
            message(r#"{"type":"response.output_text.delta","delta":7}"#)
                .starts_with("bad `response.output_text.delta` event: invalid type: integer `7`"),
            "{}",
            message(r#"{"type":"response.output_text.delta","delta":7}"#)
        );
        assert!(message(r#"{"delta":"x"}"#).starts_with("bad `(untyped)` event: "));
        assert_eq!(
            message(r#"{"type":"response.output_text.delta","delta":"a","delta":"b"}"#),
            "bad `response.output_text.delta` event: duplicate field `delta`"
        );
    }
}

//! OpenAI Chat Completions, the API of vLLM, llama.cpp server, Ollama and most gateways:
//! the agent's Responses request as chat messages, and a chat stream back to output items.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use super::wire::{
    ChatCompletionChunk, ChatRequest, FunctionDeclaration, RequestMessage, StreamOptions, Tool,
    ToolCall, ToolCallDelta,
};
use crate::api::provider::error::{ProviderError, reported};
use crate::api::reply::Reply;
use crate::api::responses::wire::{InputItem, ResponsesRequest};
use crate::config::ProviderConfig;
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// `{base_url}/chat/completions`.
pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/chat/completions")
}

/// The request's function tools as Chat Completions tools. Other kinds (`custom`, `namespace`,
/// `web_search`, ...) exist only in the Responses API, so they are not offered to a Chat
/// provider: the model cannot call them there.
pub(crate) fn declared_tools(request: &ResponsesRequest) -> Vec<Tool<'_>> {
    request
        .tools
        .iter()
        .filter(|t| t.is_function())
        .map(|t| Tool {
            kind: Cow::Borrowed("function"),
            function: FunctionDeclaration {
                name: Cow::Borrowed(&t.name),
                description: Cow::Borrowed(&t.description),
                parameters: t.parameters_schema(),
            },
        })
        .collect()
}

/// The chat request: instructions as the system message; an assistant message carries the
/// calls that follow it; each call output is a `tool` message; `reasoning_effort` when set.
pub(crate) fn body(request: &ResponsesRequest, config: &ProviderConfig) -> Value {
    let mut messages: Vec<RequestMessage<'_>> = Vec::new();
    if let Some(instructions) = &request.instructions {
        messages.push(RequestMessage::new("system", Some(instructions.into())));
    }
    for item in &request.input {
        match item {
            InputItem::Message { role, content } => {
                messages.push(RequestMessage::new(role.as_str(), Some(content.into())));
            }
            InputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let call = ToolCall::function(call_id, name, arguments);
                match messages.last_mut() {
                    Some(last) if last.role == "assistant" => last.tool_calls.push(call),
                    _ => {
                        let mut message = RequestMessage::new("assistant", None);
                        message.tool_calls.push(call);
                        messages.push(message);
                    }
                }
            }
            InputItem::FunctionCallOutput { call_id, output } => {
                let mut message = RequestMessage::new("tool", Some(output.into()));
                message.tool_call_id = Some(call_id.into());
                messages.push(message);
            }
        }
    }
    let body = ChatRequest {
        model: Cow::Borrowed(&config.model),
        messages,
        tools: declared_tools(request),
        stream: true,
        stream_options: Some(StreamOptions {
            include_usage: true,
        }),
        reasoning_effort: config.reasoning_effort.as_deref().map(Cow::Borrowed),
        max_tokens: request
            .max_output_tokens
            .map(|max| max.min(config.max_tokens)),
    };
    // Plain structs of strings and JSON values always encode.
    serde_json::to_value(body).unwrap_or_default()
}

/// A call being assembled from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Reads one chat stream: content and refusal deltas, tool-call deltas by index, usage,
/// `[DONE]`.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    text: String,
    /// A refusal (`delta.refusal`) is the answer's text when the model refuses.
    refusal: String,
    calls: BTreeMap<u64, PartialCall>,
    finished: bool,
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
}

impl Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn event(&mut self, event: SseEvent) -> Result<Option<Reply>, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        if data == "[DONE]" {
            return self.reply().map(Some);
        }
        let chunk = match serde_json::from_str::<ChatCompletionChunk<'static>>(data) {
            Ok(chunk) if chunk.error.is_none() => chunk,
            // An error chunk (whatever else it holds) is read as sent.
            result => return Err(refused(data, result.err())),
        };
        if let Some(usage) = chunk.usage.flatten() {
            self.input_tokens = usage.prompt_tokens.unwrap_or(self.input_tokens);
            self.output_tokens = usage.completion_tokens.unwrap_or(self.output_tokens);
            self.cached_input_tokens = usage
                .prompt_tokens_details
                .and_then(|details| details.cached_tokens)
                .unwrap_or(self.cached_input_tokens);
        }
        for choice in chunk.choices {
            if choice.finish_reason.is_some() {
                self.finished = true;
            }
            let delta = choice.delta;
            if let Some(text) = delta.content {
                self.text.push_str(&text);
            }
            if let Some(refusal) = delta.refusal.flatten() {
                self.refusal.push_str(&refusal);
            }
            for call in delta.tool_calls {
                self.call_delta(call);
            }
        }
        Ok(None)
    }

    /// One `tool_calls` delta. The first delta of a call has its id and name, later ones
    /// argument fragments; some servers repeat the id (and name) on every delta, which must
    /// not be concatenated. Without `index`, the delta belongs to the call with its id, else
    /// to the last call.
    fn call_delta(&mut self, call: ToolCallDelta<'static>) {
        let id = call.id.filter(|id| !id.is_empty());
        let index = call.index.unwrap_or_else(|| {
            let known = id.as_deref().and_then(|id| {
                self.calls
                    .iter()
                    .find(|(_, c)| c.id == id)
                    .map(|(index, _)| *index)
            });
            match (known, &id, self.calls.keys().next_back()) {
                (Some(index), _, _) => index,
                (None, None, Some(last)) => *last,
                (None, _, last) => last.map_or(0, |last| last + 1),
            }
        });
        let partial = self.calls.entry(index).or_default();
        if let Some(id) = id
            && partial.id.is_empty()
        {
            partial.id = id.into_owned();
        }
        if let Some(name) = call.function.name
            && name != partial.name
        {
            partial.name.push_str(&name);
        }
        if let Some(arguments) = call.function.arguments {
            partial.arguments.push_str(&arguments);
        }
    }

    /// The stream ended without `[DONE]`: complete if a choice finished, else cut off.
    pub(crate) fn end(mut self) -> Result<Reply, ProviderError> {
        self.reply()
    }

    fn reply(&mut self) -> Result<Reply, ProviderError> {
        if !self.finished {
            return Err(ProviderError::Stream {
                message: "the chat stream ended before any choice finished".to_owned(),
            });
        }
        let mut output = Vec::new();
        let text = std::mem::take(&mut self.text) + &std::mem::take(&mut self.refusal);
        if !text.is_empty() {
            output.push(OutputItem::Message { text });
        }
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() {
                return Err(ProviderError::Malformed {
                    message: format!("tool call {index} has no function name"),
                });
            }
            output.push(OutputItem::FunctionCall {
                call_id: call.id,
                name: call.name,
                arguments: if call.arguments.is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                },
            });
        }
        Ok(Reply {
            output,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self.cached_input_tokens,
            ..Reply::default()
        })
    }
}

/// A chunk that is an error, or that is not a chunk: the error it reports (classified like the
/// same error over HTTP), else why it is malformed.
fn refused(data: &str, typed: Option<serde_json::Error>) -> ProviderError {
    match serde_json::from_str::<Value>(data) {
        Ok(chunk) if chunk.get("error").is_some_and(|e| !e.is_null()) => reported(&chunk),
        Ok(_) => ProviderError::Malformed {
            message: match typed {
                Some(e) => format!("chat chunk is not a chat.completion.chunk: {e}"),
                None => "chat chunk is not a chat.completion.chunk".to_owned(),
            },
        },
        Err(e) => ProviderError::Malformed {
            message: format!("chat chunk is not JSON: {e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(chunks: &[Value]) -> Result<Reply, ProviderError> {
        let mut decoder = Decoder::new();
        for chunk in chunks {
            let event = SseEvent {
                data: chunk.to_string(),
                ..SseEvent::default()
            };
            if let Some(reply) = decoder.event(event)? {
                return Ok(reply);
            }
        }
        decoder.end()
    }

    fn delta(delta: Value) -> Value {
        json!({"choices": [{"delta": delta}]})
    }

    #[test]
    fn pieces_without_an_index_go_to_the_call_with_their_id_else_the_last() {
        let reply = read(&[
            delta(json!({"content": [{"type": "text", "text": "not text"}]})),
            delta(json!({"tool_calls": [{"id": "a", "function": {"name": "ls", "arguments": "{\"p\""}}]})),
            delta(json!({"tool_calls": [{"function": {"arguments": ":1}"}}]})),
            delta(json!({"tool_calls": [{"id": "b", "type": {"odd": true},
                                         "function": {"name": "cat", "arguments": "{}"}}]})),
            delta(json!({"tool_calls": [{"id": "a", "function": {"name": "ls"}}]})),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}],
                   "usage": {"prompt_tokens": 9, "completion_tokens": -1,
                             "prompt_tokens_details": {"cached_tokens": 4}}}),
        ])
        .expect("a reply");
        let calls: Vec<_> = reply.output.iter().filter_map(OutputItem::call).collect();
        assert_eq!(calls, [("a", "ls", "{\"p\":1}"), ("b", "cat", "{}")]);
        assert!(reply.output.iter().all(|item| item.text().is_none()));
        assert_eq!(
            (
                reply.input_tokens,
                reply.output_tokens,
                reply.cached_input_tokens
            ),
            (9, 0, 4)
        );
    }

    #[test]
    fn an_error_chunk_is_the_providers_error_and_text_is_malformed() {
        let error = read(&[
            json!({"error": {"message": "Overloaded", "type": "server_error",
                                            "code": 529}, "choices": "x"}),
        ])
        .unwrap_err();
        assert!(error.is_retryable(), "{error}");
        assert!(error.to_string().contains("Overloaded"), "{error}");
        let mut decoder = Decoder::new();
        let text = SseEvent {
            data: "{not json".into(),
            ..SseEvent::default()
        };
        assert!(matches!(
            decoder.event(text),
            Err(ProviderError::Malformed { .. })
        ));
    }
}

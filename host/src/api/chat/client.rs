//! OpenAI Chat Completions, the dialect of vLLM, llama.cpp server, Ollama and most gateways:
//! the agent's Responses request as chat messages, and a chat stream back to output items.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::provider::error::reported;
use crate::api::provider::error::ProviderError;
use crate::api::reply::Reply;
use crate::config::ProviderConfig;
use crate::session::OutputItem;
use crate::wire::SseEvent;
use crate::api::responses::wire::{InputItem, ResponsesRequest};

/// `{base_url}/chat/completions`.
pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/chat/completions")
}

/// The chat request: instructions as the system message; an assistant message carries the
/// calls that follow it; each call output is a `tool` message; `reasoning_effort` when set.
/// The request's function tools as Chat Completions tools. Other kinds (`custom`, `namespace`,
/// `web_search`, ...) exist only in the Responses API, so they are not offered to a Chat
/// provider: the model cannot call them there.
pub(crate) fn tools(request: &ResponsesRequest) -> Vec<Value> {
    request
        .tools
        .iter()
        .filter(|t| t.is_function())
        .map(|t| {
            json!({
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters_schema()},
            })
        })
        .collect()
}

pub(crate) fn body(request: &ResponsesRequest, config: &ProviderConfig) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    if let Some(instructions) = &request.instructions {
        messages.push(json!({"role": "system", "content": instructions}));
    }
    for item in &request.input {
        match item {
            InputItem::Message { role, content } => {
                messages.push(json!({"role": role, "content": content}));
            }
            InputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let call = json!({
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                });
                let last_is_assistant = messages.last().is_some_and(|m| m["role"] == "assistant");
                if !last_is_assistant {
                    messages.push(json!({"role": "assistant", "content": Value::Null}));
                }
                if let Some(last) = messages.last_mut().and_then(Value::as_object_mut) {
                    match last.get_mut("tool_calls").and_then(Value::as_array_mut) {
                        Some(calls) => calls.push(call),
                        None => {
                            last.insert("tool_calls".into(), json!([call]));
                        }
                    }
                }
            }
            InputItem::FunctionCallOutput { call_id, output } => {
                messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": output}));
            }
        }
    }
    let tools = tools(request);
    let mut body = json!({
        "model": config.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(effort) = &config.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    if let Some(max) = request.max_output_tokens {
        body["max_tokens"] = json!(max.min(config.max_tokens));
    }
    body
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

    pub(crate) fn event(
        &mut self,
        event: SseEvent,
    ) -> Result<Option<Reply>, ProviderError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(None);
        }
        if data == "[DONE]" {
            return self.reply().map(Some);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
            message: format!("chat chunk is not JSON: {e}"),
        })?;
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return Err(reported(&chunk));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.input_tokens = usage["prompt_tokens"].as_u64().unwrap_or(self.input_tokens);
            self.output_tokens = usage["completion_tokens"]
                .as_u64()
                .unwrap_or(self.output_tokens);
            self.cached_input_tokens = usage["prompt_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(self.cached_input_tokens);
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            if choice["finish_reason"].is_string() {
                self.finished = true;
            }
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                self.text.push_str(text);
            }
            if let Some(refusal) = delta["refusal"].as_str() {
                self.refusal.push_str(refusal);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                self.call_delta(call);
            }
        }
        Ok(None)
    }

    /// One `tool_calls` delta. The first delta of a call has its id and name, later ones
    /// argument fragments; some servers repeat the id (and name) on every delta, which must
    /// not be concatenated. Without `index`, the delta belongs to the call with its id, else
    /// to the last call.
    fn call_delta(&mut self, call: &Value) {
        let id = call["id"].as_str().filter(|id| !id.is_empty());
        let index = call["index"].as_u64().unwrap_or_else(|| {
            let known = id.and_then(|id| {
                self.calls
                    .iter()
                    .find(|(_, c)| c.id == id)
                    .map(|(index, _)| *index)
            });
            match (known, id, self.calls.keys().next_back()) {
                (Some(index), _, _) => index,
                (None, None, Some(last)) => *last,
                (None, _, last) => last.map_or(0, |last| last + 1),
            }
        });
        let partial = self.calls.entry(index).or_default();
        if let Some(id) = id
            && partial.id.is_empty()
        {
            partial.id = id.to_owned();
        }
        if let Some(name) = call["function"]["name"].as_str()
            && name != partial.name
        {
            partial.name.push_str(name);
        }
        if let Some(arguments) = call["function"]["arguments"].as_str() {
            partial.arguments.push_str(arguments);
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

//! OpenAI Responses API: the request passes through with the configured model (and
//! reasoning settings); the stream is read into text, calls, reasoning items and usage.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::api::provider::carry::Carried;
use crate::api::provider::error::ProviderError;
use crate::api::provider::error::reported;
use crate::api::reply::Reply;
use crate::api::responses::wire::ResponsesRequest;
use crate::config::ProviderConfig;
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// `{base_url}/responses`.
pub(crate) fn url(base_url: &str) -> String {
    format!("{base_url}/responses")
}

/// The request as the agent built it, with the provider's model. With `reasoning_effort`
/// set: `reasoning.effort`, and, as the request is not stored, the encrypted reasoning
/// (`include: ["reasoning.encrypted_content"]`) so it can be passed back. Reasoning items
/// of earlier replies go back in front of the calls they preceded.
pub(crate) fn body(
    request: &ResponsesRequest,
    config: &ProviderConfig,
    carried: &Carried,
) -> Value {
    let mut request = request.clone();
    request.model = config.model.clone();
    request.stream = true;
    request.max_output_tokens = request.max_output_tokens.map(|m| m.min(config.max_tokens));
    let stored = request.store == Some(true);
    let mut body = serde_json::to_value(&request).unwrap_or(Value::Null);
    if let Some(effort) = &config.reasoning_effort {
        body["reasoning"] = json!({"effort": effort});
        if !stored {
            body["include"] = json!(["reasoning.encrypted_content"]);
        }
    }
    if let Some(input) = body.get_mut("input").and_then(Value::as_array_mut) {
        restore_reasoning(input, carried, stored);
    }
    body
}

/// Put remembered reasoning items back before the first call of each earlier reply (and
/// before that reply's text, which the agent sends just before its calls). Items already in
/// the input are not repeated; unstored items without `encrypted_content` cannot be passed
/// back (the API keeps nothing to resolve them by id) and are left out.
fn restore_reasoning(input: &mut Vec<Value>, carried: &Carried, stored: bool) {
    let mut present: HashSet<String> = input
        .iter()
        .filter(|item| item["type"] == "reasoning")
        .filter_map(|item| item["id"].as_str().map(str::to_owned))
        .collect();
    let mut out: Vec<Value> = Vec::with_capacity(input.len());
    for item in input.drain(..) {
        if item["type"] == "function_call"
            && let Some(reasoning) = item["call_id"].as_str().and_then(|id| carried.recall(id))
        {
            let at = match out.last() {
                Some(last) if is_assistant_message(last) => out.len() - 1,
                _ => out.len(),
            };
            let usable: Vec<Value> = reasoning
                .iter()
                .filter(|r| {
                    stored
                        || r["encrypted_content"]
                            .as_str()
                            .is_some_and(|c| !c.is_empty())
                })
                .filter(|r| {
                    r["id"]
                        .as_str()
                        .is_none_or(|id| present.insert(id.to_owned()))
                })
                .cloned()
                .collect();
            let rest = out.split_off(at);
            out.extend(usable);
            out.extend(rest);
        }
        out.push(item);
    }
    *input = out;
}

fn is_assistant_message(item: &Value) -> bool {
    item["role"] == "assistant" && (item["type"] == "message" || item.get("type").is_none())
}

/// Reads one Responses stream up to `response.completed`.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// Text deltas, the last resort when a service sends no output items.
    deltas: String,
    /// Items from `response.output_item.done`, for services whose final event omits output.
    done_items: Vec<Value>,
}

impl Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn event(&mut self, event: SseEvent) -> Result<Option<Reply>, ProviderError> {
        let data = event.data.trim();
        // `[DONE]`: a Chat-Completions-style terminator some compatible services append.
        if data.is_empty() || data == "[DONE]" {
            return Ok(None);
        }
        let mut value: Value =
            serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
                message: format!("Responses event is not JSON: {e}"),
            })?;
        if !value.is_object() {
            return Err(ProviderError::Malformed {
                message: format!(
                    "Responses event is not a JSON object: {}",
                    crate::message::excerpt(data, 200)
                ),
            });
        }
        let kind = value["type"]
            .as_str()
            .or(event.event.as_deref())
            .unwrap_or_default()
            .to_owned();
        match kind.as_str() {
            "response.output_text.delta" => {
                self.deltas
                    .push_str(value["delta"].as_str().unwrap_or_default());
            }
            "response.output_item.done" => self.done_items.push(value["item"].take()),
            "response.completed" => return self.reply(&mut value["response"]).map(Some),
            "response.failed" => {
                let response = &value["response"];
                return Err(if response["error"].is_object() {
                    reported(response)
                } else {
                    // No reason given: what a server error without details looks like.
                    ProviderError::Failed {
                        message: "the response failed without an error message".to_owned(),
                        transient: true,
                        retry_after: None,
                    }
                });
            }
            "response.incomplete" => {
                let reason = value["response"]["incomplete_details"]["reason"]
                    .as_str()
                    .unwrap_or("no reason given");
                return Err(ProviderError::Failed {
                    message: format!("the response is incomplete: {reason}"),
                    transient: false,
                    retry_after: None,
                });
            }
            "error" => return Err(reported(&value)),
            _ => {}
        }
        Ok(None)
    }

    pub(crate) fn end(self) -> ProviderError {
        ProviderError::Stream {
            message: "the stream ended before `response.completed`".to_owned(),
        }
    }

    fn reply(&mut self, response: &mut Value) -> Result<Reply, ProviderError> {
        let items = match response["output"].take() {
            Value::Array(items) if !items.is_empty() => items,
            _ if !self.done_items.is_empty() => std::mem::take(&mut self.done_items),
            _ if !self.deltas.is_empty() => vec![json!({
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": std::mem::take(&mut self.deltas)}],
            })],
            _ => Vec::new(),
        };
        let mut reply = Reply {
            input_tokens: response["usage"]["input_tokens"].as_u64().unwrap_or(0),
            output_tokens: response["usage"]["output_tokens"].as_u64().unwrap_or(0),
            cached_input_tokens: response["usage"]["input_tokens_details"]["cached_tokens"]
                .as_u64()
                .unwrap_or(0),
            ..Reply::default()
        };
        for item in items {
            match item["type"].as_str() {
                Some("message") => {
                    let text: String = item["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|part| match part["type"].as_str() {
                            Some("output_text") => part["text"].as_str(),
                            Some("refusal") => part["refusal"].as_str(),
                            _ => None,
                        })
                        .collect();
                    if !text.is_empty() {
                        reply.output.push(OutputItem::Message { text });
                    }
                }
                Some("function_call") => {
                    let field = |name: &str| {
                        item[name].as_str().map(str::to_owned).ok_or_else(|| {
                            ProviderError::Malformed {
                                message: format!("a function_call item has no `{name}`"),
                            }
                        })
                    };
                    let arguments = item["arguments"].as_str().unwrap_or_default();
                    reply.output.push(OutputItem::FunctionCall {
                        call_id: field("call_id")?,
                        name: field("name")?,
                        arguments: if arguments.trim().is_empty() {
                            "{}".to_owned()
                        } else {
                            arguments.to_owned()
                        },
                    });
                }
                Some("reasoning") => reply.reasoning.push(item),
                _ => {}
            }
        }
        Ok(reply)
    }
}

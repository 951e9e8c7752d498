//! The live provider's client of Gemini: a Responses request as a `GenerateContentRequest`
//! (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`, the key in
//! `x-goog-api-key`), and the stream of `GenerateContentResponse` chunks read back into a
//! [`Reply`].
//!
//! The conversation: messages become `user` / `model` turns (system and developer messages
//! join the system instruction), calls `functionCall` parts of a `model` turn, their outputs
//! `functionResponse` parts (`{"output": ...}`) of a `user` turn, by the call's id and name.
//! A call's `thoughtSignature`, which Gemini requires back with the call it came with, is
//! carried across the tool loop by [`Carried`].

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::wire::{
    Content, FunctionCall, FunctionDeclaration, FunctionResponse, GenerateContentRequest,
    GenerateContentResponse, Part, Tool,
};
use crate::api::provider::carry::Carried;
use crate::api::provider::error::{ProviderError, reported};
use crate::api::reply::Reply;
use crate::api::responses::wire::{InputItem, ResponsesRequest};
use crate::config::ProviderConfig;
use crate::session::OutputItem;
use crate::wire::SseEvent;

/// `{base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse` (no `v1beta` added when
/// the base already names a version).
pub(crate) fn url(base_url: &str, model: &str) -> String {
    let versioned = ["/v1beta", "/v1", "/v1alpha"]
        .iter()
        .any(|version| base_url.ends_with(version));
    let base = if versioned {
        base_url.to_owned()
    } else {
        format!("{base_url}/v1beta")
    };
    let model = model.strip_prefix("models/").unwrap_or(model);
    format!("{base}/models/{model}:streamGenerateContent?alt=sse")
}

/// The key, as `x-goog-api-key`.
pub(crate) fn headers(
    builder: reqwest::RequestBuilder,
    key: Option<&str>,
) -> reqwest::RequestBuilder {
    match key {
        Some(key) => builder.header("x-goog-api-key", key),
        None => builder,
    }
}

/// A turn being built: consecutive items of one role share it.
fn push_part(contents: &mut Vec<Content>, role: &str, part: Part) {
    match contents.last_mut() {
        Some(last) if last.role.as_deref() == Some(role) => last.parts.push(part),
        _ => contents.push(Content {
            role: Some(role.to_owned()),
            parts: vec![part],
        }),
    }
}

/// The thought signature Gemini gave the call `call_id`, if the conversation's memory has it.
fn signature(carried: &Carried, first_call: &str, call_id: &str) -> Option<String> {
    carried.recall(first_call).and_then(|kept| {
        kept.iter()
            .find(|entry| entry["call_id"] == call_id)
            .and_then(|entry| entry["thoughtSignature"].as_str().map(str::to_owned))
    })
}

/// The request body: `request` in Gemini's shape.
pub(crate) fn body(
    request: &ResponsesRequest,
    config: &ProviderConfig,
    carried: &Carried,
) -> Value {
    let mut system: Vec<String> = request.instructions.iter().cloned().collect();
    let mut contents: Vec<Content> = Vec::new();
    // The first call of the model turn being built: its reply's signatures are kept under it.
    let mut first_call: Option<String> = None;
    for item in &request.input {
        match item {
            InputItem::Message { role, content } => {
                first_call = None;
                match role.as_str() {
                    "system" | "developer" => system.push(content.clone()),
                    _ if content.is_empty() => {}
                    "assistant" => push_part(
                        &mut contents,
                        "model",
                        Part {
                            text: Some(content.clone()),
                            ..Part::default()
                        },
                    ),
                    _ => push_part(
                        &mut contents,
                        "user",
                        Part {
                            text: Some(content.clone()),
                            ..Part::default()
                        },
                    ),
                }
            }
            InputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let first = first_call.get_or_insert_with(|| call_id.clone()).clone();
                push_part(
                    &mut contents,
                    "model",
                    Part {
                        thought_signature: signature(carried, &first, call_id),
                        function_call: Some(FunctionCall {
                            id: (!call_id.is_empty()).then(|| call_id.clone()),
                            name: name.clone(),
                            args: serde_json::from_str(arguments).unwrap_or_else(|_| json!({})),
                        }),
                        ..Part::default()
                    },
                );
            }
            InputItem::FunctionCallOutput { call_id, output } => {
                first_call = None;
                let name = request
                    .input
                    .iter()
                    .find_map(|item| match item {
                        InputItem::FunctionCall {
                            call_id: id, name, ..
                        } if id == call_id => Some(name.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                push_part(
                    &mut contents,
                    "user",
                    Part {
                        function_response: Some(FunctionResponse {
                            id: (!call_id.is_empty()).then(|| call_id.clone()),
                            name,
                            response: json!({"output": output}),
                        }),
                        ..Part::default()
                    },
                );
            }
        }
    }
    let declarations: Vec<FunctionDeclaration> = request
        .tools
        .iter()
        .filter(|tool| tool.is_function())
        .map(|tool| FunctionDeclaration {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: None,
            parameters_json_schema: Some(tool.parameters_schema()),
        })
        .collect();
    let mut generation = json!({
        "maxOutputTokens": request.max_output_tokens.unwrap_or(config.max_tokens),
    });
    if let Some(effort) = &config.reasoning_effort {
        generation["thinkingConfig"] = json!({"thinkingLevel": effort});
    } else if let Some(budget) = config.thinking_budget_tokens {
        generation["thinkingConfig"] = json!({"thinkingBudget": budget});
    }
    let body = GenerateContentRequest {
        contents,
        system_instruction: (!system.is_empty()).then(|| Content {
            role: None,
            parts: vec![Part {
                text: Some(system.join("\n\n")),
                ..Part::default()
            }],
        }),
        tools: if declarations.is_empty() {
            Vec::new()
        } else {
            vec![Tool {
                function_declarations: declarations,
                extra: serde_json::Map::new(),
            }]
        },
        generation_config: Some(generation),
    };
    // Plain structs of strings, numbers and JSON values always encode.
    serde_json::to_value(body).unwrap_or_default()
}

/// Calls Gemini gave no id, numbered in this process (ids only pair a call with its result
/// within a conversation).
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Reads one stream of `GenerateContentResponse` chunks: text parts joined, each
/// `functionCall` a call (an id made up when Gemini gives none), thought signatures kept as
/// the reply's reasoning, the last `usageMetadata`; the chunk with a `finishReason` ends it.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    output: Vec<OutputItem>,
    reasoning: Vec<Value>,
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
        let value: Value = serde_json::from_str(data).map_err(|e| ProviderError::Malformed {
            message: format!("Gemini chunk is not JSON: {e}"),
        })?;
        if value.get("error").is_some_and(Value::is_object) {
            return Err(reported(&value));
        }
        let chunk: GenerateContentResponse =
            serde_json::from_value(value).map_err(|e| ProviderError::Malformed {
                message: format!("Gemini chunk is not a GenerateContentResponse: {e}"),
            })?;
        if let Some(usage) = chunk.usage_metadata {
            self.input_tokens = usage.prompt_token_count;
            self.output_tokens = usage.candidates_token_count + usage.thoughts_token_count;
            self.cached_input_tokens = usage.cached_content_token_count;
        }
        if let Some(blocked) = chunk
            .prompt_feedback
            .as_ref()
            .and_then(|feedback| feedback["blockReason"].as_str())
        {
            return Err(ProviderError::Failed {
                message: format!("Gemini blocked the prompt: {blocked}"),
                transient: false,
                retry_after: None,
            });
        }
        let Some(candidate) = chunk.candidates.into_iter().next() else {
            return Ok(None);
        };
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            self.part(part);
        }
        match candidate.finish_reason.as_deref() {
            None | Some("FINISH_REASON_UNSPECIFIED") => Ok(None),
            Some("STOP" | "MAX_TOKENS") => Ok(Some(self.reply())),
            Some(reason) => Err(ProviderError::Failed {
                message: format!("Gemini stopped the answer: {reason}"),
                // A malformed call is the model's slip; another attempt usually succeeds.
                transient: reason == "MALFORMED_FUNCTION_CALL",
                retry_after: None,
            }),
        }
    }

    fn part(&mut self, part: Part) {
        if let Some(call) = part.function_call {
            let call_id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("gc_{}", CALLS.fetch_add(1, Ordering::Relaxed) + 1));
            if let Some(signature) = part.thought_signature {
                self.reasoning
                    .push(json!({"call_id": call_id, "thoughtSignature": signature}));
            }
            self.output.push(OutputItem::FunctionCall {
                call_id,
                name: call.name,
                arguments: call.args.to_string(),
            });
            return;
        }
        let Some(text) = part.text.filter(|_| part.thought != Some(true)) else {
            return;
        };
        match self.output.last_mut() {
            Some(OutputItem::Message { text: before }) => before.push_str(&text),
            _ if text.is_empty() => {}
            _ => self.output.push(OutputItem::Message { text }),
        }
    }

    fn reply(&mut self) -> Reply {
        Reply {
            output: std::mem::take(&mut self.output),
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self.cached_input_tokens,
            reasoning: std::mem::take(&mut self.reasoning),
            attempts: 0,
        }
    }

    /// The stream ended without a chunk that finished the answer.
    pub(crate) fn end(self) -> Result<Reply, ProviderError> {
        Err(ProviderError::Stream {
            message: "the stream ended before a chunk with a finishReason".to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::responses::wire::FunctionTool;

    fn event(data: Value) -> SseEvent {
        SseEvent {
            data: data.to_string(),
            ..SseEvent::default()
        }
    }

    #[test]
    fn a_stream_of_chunks_is_one_reply_with_calls_usage_and_signatures() {
        let mut decoder = Decoder::new();
        let chunks = [
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"text": "hmm", "thought": true}, {"text": "Let me "}]}}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "look."}]}}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "ls", "args": {"path": "."}}, "thoughtSignature": "c2ln"}]},
                "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "thoughtsTokenCount": 2, "cachedContentTokenCount": 4,
                                  "totalTokenCount": 17}}),
        ];
        let mut reply = None;
        for chunk in chunks {
            reply = decoder.event(event(chunk)).unwrap();
        }
        let reply = reply.expect("the finishing chunk completes the reply");
        assert_eq!(reply.output[0].text(), Some("Let me look."));
        let (call_id, name, arguments) = reply.output[1].call().unwrap();
        assert_eq!((name, arguments), ("ls", r#"{"path":"."}"#));
        assert!(call_id.starts_with("gc_"), "{call_id}");
        assert_eq!(
            (
                reply.input_tokens,
                reply.output_tokens,
                reply.cached_input_tokens
            ),
            (10, 7, 4)
        );
        assert_eq!(reply.reasoning[0]["thoughtSignature"], "c2ln");
    }

    #[test]
    fn errors_in_the_stream_and_refusals_are_failures() {
        let mut decoder = Decoder::new();
        let error = decoder
            .event(event(json!({"error": {"code": 429, "message": "slow down",
                                          "status": "RESOURCE_EXHAUSTED"}})))
            .unwrap_err();
        assert!(error.is_retryable(), "{error}");
        let safety = Decoder::new()
            .event(event(json!({"candidates": [{"finishReason": "SAFETY"}]})))
            .unwrap_err();
        assert!(!safety.is_retryable() && safety.to_string().contains("SAFETY"));
        assert!(Decoder::new().end().is_err());
    }

    #[test]
    fn a_conversation_becomes_turns_with_calls_results_and_their_signature() {
        let carried = Carried::default();
        carried.remember(&Reply {
            output: vec![OutputItem::FunctionCall {
                call_id: "c1".into(),
                name: "ls".into(),
                arguments: "{}".into(),
            }],
            reasoning: vec![json!({"call_id": "c1", "thoughtSignature": "c2ln"})],
            ..Reply::default()
        });
        let request = ResponsesRequest {
            model: "m".into(),
            instructions: Some("Be brief.".into()),
            input: vec![
                InputItem::Message {
                    role: "user".into(),
                    content: "List.".into(),
                },
                InputItem::FunctionCall {
                    call_id: "c1".into(),
                    name: "ls".into(),
                    arguments: r#"{"path":"."}"#.into(),
                },
                InputItem::FunctionCallOutput {
                    call_id: "c1".into(),
                    output: "a.txt".into(),
                },
            ],
            tools: vec![FunctionTool::new("ls", "List", Value::Null)],
            stream: true,
            store: None,
            max_output_tokens: None,
        };
        let mut sources = crate::config::ConfigSources::default();
        for (name, value) in [
            ("EVALHOST_PROVIDER", "gemini"),
            ("EVALHOST_BASE_URL", "http://127.0.0.1:9"),
            ("EVALHOST_MODEL", "m"),
        ] {
            sources.env.insert(name.into(), value.into());
        }
        let config = sources.provider().expect("a gemini provider");
        let body = body(&request, &config, &carried);
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Be brief.");
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3, "{body}");
        assert_eq!(contents[1]["role"], "model");
        assert_eq!(contents[1]["parts"][0]["functionCall"]["args"]["path"], ".");
        assert_eq!(contents[1]["parts"][0]["thoughtSignature"], "c2ln");
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"],
            json!({"id": "c1", "name": "ls", "response": {"output": "a.txt"}})
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            url("https://generativelanguage.googleapis.com", "gemini-x"),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1beta", "models/m"),
            "http://127.0.0.1:9/v1beta/models/m:streamGenerateContent?alt=sse"
        );
    }
}

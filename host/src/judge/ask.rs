//! Asking the configured model one question, through the live providers (any API,
//! retried as live runs are).
//!
//! A question with a schema offers the model one function, `answer`, whose parameters are
//! the schema, and takes the call's arguments as the answer: every API has function
//! calling, so one translation serves all three.

use std::sync::Arc;

use serde_json::Value;

use super::{Answer, JudgeError, Question};
use crate::api::Provider;
use crate::api::responses::wire::{FunctionTool, InputItem, ResponsesRequest};

/// The function a question with a schema offers.
const ANSWER_TOOL: &str = "answer";

/// The configured provider and the runtime its requests run on.
pub(super) struct Asker {
    provider: Arc<Provider>,
    runtime: tokio::runtime::Handle,
    /// At most `max_concurrency` questions in flight, as for live runs.
    permits: Arc<tokio::sync::Semaphore>,
}

impl Asker {
    pub(super) fn new(provider: Provider, runtime: tokio::runtime::Handle) -> Self {
        let permits = Arc::new(tokio::sync::Semaphore::new(
            provider.config().max_concurrency,
        ));
        Self {
            provider: Arc::new(provider),
            runtime,
            permits,
        }
    }

    /// Ask and wait (the caller is a blocking grading thread).
    pub(super) fn ask(&self, question: &Question) -> Result<Answer, JudgeError> {
        let request = request(question);
        let provider = self.provider.clone();
        let permits = self.permits.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        self.runtime.spawn(async move {
            let _permit = permits.acquire_owned().await;
            let _ = tx.send(provider.complete(&request, &Default::default()).await);
        });
        let reply = rx
            .recv()
            .map_err(|_| JudgeError::Failed("the judge's request was dropped".into()))?
            .map_err(|e| JudgeError::Failed(e.to_string()))?;
        let text = if question.schema.is_some() {
            let arguments = reply
                .output
                .iter()
                .filter_map(|item| item.call())
                .find(|(_, name, _)| *name == ANSWER_TOOL)
                .map(|(_, _, arguments)| arguments.to_owned());
            let text = arguments.unwrap_or_else(|| joined_text(&reply.output));
            if serde_json::from_str::<Value>(&text).is_err() {
                return Err(JudgeError::Failed(format!(
                    "the judge's answer is not JSON of the requested schema: {}",
                    crate::message::excerpt(&text, 200)
                )));
            }
            text
        } else {
            joined_text(&reply.output)
        };
        Ok(Answer {
            text,
            input_tokens: reply.input_tokens,
            output_tokens: reply.output_tokens,
        })
    }
}

fn joined_text(output: &[crate::session::OutputItem]) -> String {
    output.iter().filter_map(|item| item.text()).collect()
}

/// The question as a Responses request: system messages become the instructions.
fn request(question: &Question) -> ResponsesRequest {
    let mut instructions: Vec<&str> = question
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .map(|m| m.content.as_str())
        .collect();
    let mut tools = Vec::new();
    if let Some(schema) = &question.schema {
        instructions.push(
            "Answer only by calling the `answer` function once, with arguments that follow its schema.",
        );
        tools.push(FunctionTool {
            kind: "function".into(),
            name: ANSWER_TOOL.into(),
            description: "Give your answer.".into(),
            parameters: serde_json::from_str(schema).unwrap_or(Value::Null),
            strict: None,
            extra: serde_json::Map::new(),
        });
    }
    ResponsesRequest {
        model: String::new(),
        instructions: (!instructions.is_empty()).then(|| instructions.join("\n\n")),
        input: question
            .messages
            .iter()
            .filter(|m| m.role != "system")
            .map(|m| InputItem::Message {
                role: m.role.clone(),
                content: m.content.clone(),
            })
            .collect(),
        tools,
        stream: true,
        store: Some(false),
        max_output_tokens: Some(question.max_output_tokens),
    }
}

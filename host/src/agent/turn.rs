//! One user turn: request, tool calls, next request, until a response without calls.

use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::calls::{CallContext, cancel_call, handle_call};
use super::client::ModelClient;
use super::tools::{ToolContext, definitions};
use super::{AgentConfig, AgentError};
use crate::model::responses::{InputItem, ResponsesRequest};
use crate::session::{Event, SessionLog};

/// What a finished turn produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The text of the last response (the one without tool calls).
    pub final_text: String,
    /// Model requests sent.
    pub requests: u32,
    /// Tool calls the model asked for.
    pub tool_calls: u32,
    /// Input tokens summed over all responses.
    pub input_tokens: u64,
    /// Output tokens summed over all responses.
    pub output_tokens: u64,
}

/// Run one user turn against the model at `config.base_url`, appending every event to `log`.
///
/// `session_start` is the caller's: it knows the case and run, and writes it before calling.
/// The turn writes `user_message`, then per
/// request `model_request` and `model_response`, per call `tool_start` (only when the tool
/// really starts) and `tool_result` (always), and finally `turn_end` or `run_error`. On
/// error, the `run_error` message is exactly the returned error's `Display`.
pub async fn run_turn(
    config: &AgentConfig,
    prompt: &str,
    log: &mut SessionLog,
) -> Result<TurnOutcome, AgentError> {
    log.append(Event::UserMessage {
        text: prompt.to_owned(),
    })?;
    let result = drive(config, prompt, log).await;
    let end = match &result {
        Ok(outcome) => Event::TurnEnd {
            final_text: outcome.final_text.clone(),
        },
        Err(AgentError::Log(_)) => return result,
        Err(error) => Event::RunError {
            message: error.to_string(),
        },
    };
    log.append(end)?;
    log.flush()?;
    result
}

async fn drive(
    config: &AgentConfig,
    prompt: &str,
    log: &mut SessionLog,
) -> Result<TurnOutcome, AgentError> {
    let dir = Dir::open_ambient_dir(&config.workspace, ambient_authority()).map_err(|e| {
        AgentError::Workspace {
            path: config.workspace.clone(),
            message: e.to_string(),
        }
    })?;
    let ctx = CallContext {
        tools: ToolContext {
            dir: Arc::new(dir),
            workspace: config.workspace.clone(),
            home: config.home.clone(),
            limits: config.limits,
        },
        approve: config.approve,
        replay: config
            .replay_tools
            .clone()
            .map(super::replay::ReplayTools::new),
    };
    let client = ModelClient::new(config)?;
    let limits = config.limits;
    let mut request = ResponsesRequest {
        model: config.model.clone(),
        instructions: Some(config.instructions.clone()),
        input: vec![InputItem::Message {
            role: "user".to_owned(),
            content: prompt.to_owned(),
        }],
        tools: definitions(),
        stream: true,
        store: Some(false),
    };
    let mut outcome = TurnOutcome::default();
    loop {
        let n = outcome.requests + 1;
        let body = serde_json::to_value(&request).map_err(|e| AgentError::Client {
            message: format!("could not encode request {n}: {e}"),
        })?;
        let bytes = serde_json::to_vec(&body).map_err(|e| AgentError::Client {
            message: format!("could not encode request {n}: {e}"),
        })?;
        log.append(Event::ModelRequest { n, body })?;
        outcome.requests = n;
        let reply = client.send(n, bytes).await?;
        log.append(Event::ModelResponse {
            n,
            output: reply.output.clone(),
            input_tokens: reply.input_tokens,
            output_tokens: reply.output_tokens,
        })?;
        outcome.input_tokens += reply.input_tokens;
        outcome.output_tokens += reply.output_tokens;
        let calls = reply.calls();
        if calls.is_empty() {
            outcome.final_text = reply.text();
            return Ok(outcome);
        }
        let text = reply.text();
        if !text.is_empty() {
            request.input.push(InputItem::Message {
                role: "assistant".to_owned(),
                content: text,
            });
        }
        for (call_id, name, arguments) in &calls {
            request.input.push(InputItem::FunctionCall {
                call_id: (*call_id).to_owned(),
                name: (*name).to_owned(),
                arguments: (*arguments).to_owned(),
            });
        }
        // Results of this response's calls could only reach the model in another request;
        // without one, running them would change the workspace for nothing.
        if n >= limits.max_requests {
            let error = AgentError::RequestLimit {
                max: limits.max_requests,
            };
            for (call_id, name, _) in &calls {
                outcome.tool_calls += 1;
                cancel_call(call_id, name, &error.to_string().to_lowercase(), log)?;
            }
            return Err(error);
        }
        for (index, (call_id, name, arguments)) in calls.iter().enumerate() {
            if outcome.tool_calls >= limits.max_tool_calls {
                let error = AgentError::ToolCallLimit {
                    max: limits.max_tool_calls,
                };
                for (call_id, name, _) in &calls[index..] {
                    outcome.tool_calls += 1;
                    cancel_call(call_id, name, &error.to_string().to_lowercase(), log)?;
                }
                return Err(error);
            }
            outcome.tool_calls += 1;
            let result = handle_call(&ctx, call_id, name, arguments, log).await?;
            request.input.push(InputItem::FunctionCallOutput {
                call_id: (*call_id).to_owned(),
                output: result.output,
            });
        }
    }
}

//! One user turn: request, tool calls, next request, until a response without calls.
//! Several user turns continue one [`Conversation`], each seeing the ones before.

use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::calls::{CallContext, handle_call};
use super::client::ModelClient;
use super::replay::ReplayTools;
use super::tools::{ToolContext, skills};
use super::{AgentConfig, AgentError, wire};
use crate::api::responses::wire::InputItem;
use crate::session::{Event, RequestBody, SessionLog, SessionLogError, ToolCallRecords};

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

/// A conversation across user turns: the input items every request so far carried (user
/// messages, the model's text and calls, tool results), how many requests were made, and the
/// replay tools' position. Turns run with [`run_turn_in`] continue it.
#[derive(Default)]
pub(crate) struct Conversation {
    input: Vec<InputItem>,
    requests: u32,
    replay: Option<Arc<ReplayTools>>,
    /// Whether the session offers `skill_view`; `None` until its first turn scanned.
    skills: Option<bool>,
}

impl Conversation {
    /// A conversation with no turns yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for Conversation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversation")
            .field("input", &self.input.len())
            .field("requests", &self.requests)
            .field("replay", &self.replay.is_some())
            .field("skills", &self.skills)
            .finish()
    }
}

/// Run one user turn against the model at `config.base_url`, appending every event to `log`.
/// A conversation of its own: see `run_turn_in` for later turns of the same conversation.
///
/// `session_start` is the caller's: it knows the case and run, and writes it before calling.
/// The first turn of a conversation looks for the workspace's skills (`.agents/skills`) and,
/// when that directory exists, writes `session_skills` and offers `skill_view`.
/// The turn writes `user_message`, then per
/// request `model_request` and `model_response` (from the endpoint's record when the config
/// has one, [`AgentConfig::record`]), per call `tool_start` (only when the tool
/// really starts) and `tool_result` (always), and finally `turn_end` or `run_error`. On
/// error, the `run_error` message is exactly the returned error's `Display`.
pub async fn run_turn(
    config: &AgentConfig,
    prompt: &str,
    log: &mut SessionLog,
) -> Result<TurnOutcome, AgentError> {
    run_turn_in(config, &mut Conversation::new(), prompt, log).await
}

/// Run one user turn as the next turn of `conversation`: its first request carries every
/// earlier turn's messages, calls and results before `prompt`, and request numbers in the
/// log continue the conversation's. Events and limits are as for [`run_turn`], per turn; the
/// [`TurnOutcome`] counts this turn only. With replay tools, calls are answered from where
/// the previous turn stopped (the conversation keeps the first turn's recording).
pub(crate) async fn run_turn_in(
    config: &AgentConfig,
    conversation: &mut Conversation,
    prompt: &str,
    log: &mut SessionLog,
) -> Result<TurnOutcome, AgentError> {
    if conversation.skills.is_none() {
        conversation.skills = Some(session_skills(config, log).await?);
    }
    log.append(Event::UserMessage {
        text: prompt.to_owned(),
    })?;
    let result = drive(config, conversation, prompt, log).await;
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

/// Scan the workspace's skills once, at the session's start; log `session_skills` when it
/// has a `.agents/skills` directory, and say whether it does. A workspace that cannot be
/// opened has no skills here: the turn reports that error itself.
async fn session_skills(config: &AgentConfig, log: &mut SessionLog) -> Result<bool, AgentError> {
    let workspace = config.workspace.clone();
    let scan = tokio::task::spawn_blocking(move || {
        let dir = Dir::open_ambient_dir(&workspace, ambient_authority()).ok()?;
        skills::scan(&dir)
    })
    .await
    .ok()
    .flatten();
    let Some(scan) = scan else {
        return Ok(false);
    };
    log.append(Event::SessionSkills {
        skills: scan.skills,
        problems: scan.problems,
    })?;
    Ok(true)
}

async fn drive(
    config: &AgentConfig,
    conversation: &mut Conversation,
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
            confinement: config.confinement.clone(),
            limits: config.limits,
        },
        approve: config.approve,
        replay: match &conversation.replay {
            Some(replay) => Some(replay.clone()),
            None => {
                conversation.replay = config
                    .replay_tools
                    .clone()
                    .map(|recorded| Arc::new(ReplayTools::new(recorded)));
                conversation.replay.clone()
            }
        },
        skills: conversation.skills.unwrap_or(false),
    };
    let client = ModelClient::new(config)?;
    let mut input = std::mem::take(&mut conversation.input);
    input.push(InputItem::Message {
        role: "user".to_owned(),
        content: prompt.to_owned(),
    });
    let mut outcome = TurnOutcome::default();
    let before = conversation.requests;
    let result = exchange(config, &ctx, &client, &mut input, &mut outcome, before, log).await;
    conversation.requests += outcome.requests;
    conversation.input = input;
    result?;
    if !outcome.final_text.is_empty() {
        conversation.input.push(InputItem::Message {
            role: "assistant".to_owned(),
            content: outcome.final_text.clone(),
        });
    }
    Ok(outcome)
}

/// Requests and calls of one turn until a response without calls; `before` requests were
/// sent by earlier turns of the conversation.
async fn exchange(
    config: &AgentConfig,
    ctx: &CallContext,
    client: &ModelClient,
    input: &mut Vec<InputItem>,
    outcome: &mut TurnOutcome,
    before: u32,
    log: &mut SessionLog,
) -> Result<(), AgentError> {
    let limits = config.limits;
    loop {
        let n = before + outcome.requests + 1;
        let body =
            wire::encode(&config.model, &config.instructions, input, ctx.skills).map_err(|e| {
                AgentError::Client {
                    message: format!("could not encode request {n}: {e}"),
                }
            })?;
        let bytes = body.get().as_bytes().to_vec();
        outcome.requests += 1;
        let sent = client.send(n, bytes).await;
        match &config.record {
            Some(record) => {
                for event in record.take_log_events() {
                    log.append(event)?;
                }
            }
            None => {
                log.append(Event::ModelRequest {
                    n,
                    body: RequestBody::from_encoded(body),
                })?;
                if let Ok(reply) = &sent {
                    log.append(Event::ModelResponse {
                        n,
                        output: reply.output.clone(),
                        input_tokens: reply.input_tokens,
                        output_tokens: reply.output_tokens,
                        cached_input_tokens: 0,
                    })?;
                }
            }
        }
        let reply = sent?;
        outcome.input_tokens += reply.input_tokens;
        outcome.output_tokens += reply.output_tokens;
        let calls = reply.calls();
        if calls.is_empty() {
            outcome.final_text = reply.text();
            return Ok(());
        }
        let text = reply.text();
        if !text.is_empty() {
            input.push(InputItem::Message {
                role: "assistant".to_owned(),
                content: text,
            });
        }
        for (call_id, name, arguments) in &calls {
            input.push(InputItem::FunctionCall {
                call_id: (*call_id).to_owned(),
                name: (*name).to_owned(),
                arguments: (*arguments).to_owned(),
            });
        }
        // Results of this response's calls could only reach the model in another request;
        // without one, running them would change the workspace for nothing.
        if outcome.requests >= limits.max_requests {
            let error = AgentError::RequestLimit {
                max: limits.max_requests,
            };
            outcome.tool_calls += cancel_calls(&calls, &error, log)?;
            return Err(error);
        }
        for (index, (call_id, name, arguments)) in calls.iter().enumerate() {
            if outcome.tool_calls >= limits.max_tool_calls {
                let error = AgentError::ToolCallLimit {
                    max: limits.max_tool_calls,
                };
                outcome.tool_calls += cancel_calls(&calls[index..], &error, log)?;
                return Err(error);
            }
            outcome.tool_calls += 1;
            let result = handle_call(ctx, call_id, name, arguments, log).await?;
            input.push(InputItem::FunctionCallOutput {
                call_id: (*call_id).to_owned(),
                output: result.output,
            });
        }
    }
}

/// Record `calls` as not run because the turn ends with `error` (every call gets a result);
/// how many there were.
fn cancel_calls(
    calls: &[(&str, &str, &str)],
    error: &AgentError,
    log: &mut SessionLog,
) -> Result<u32, SessionLogError> {
    let reason = error.to_string().to_lowercase();
    for (call_id, name, _) in calls {
        log.append(ToolCallRecords::new(call_id, name).cancelled(&reason))?;
    }
    Ok(calls.len() as u32)
}

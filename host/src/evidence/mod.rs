//! Evidence: the normalized record of one run that every grader receives.
//!
//! Built from the run's session log alone ([`Evidence::from_session`]), so a saved log can be
//! re-graded without re-running anything. Mirrors the WIT `evidence` record.

mod nexus;

pub(crate) use nexus::nexus_events;

use serde::{Deserialize, Serialize};

pub use crate::session::SkillSummary;
use crate::session::{Event, OutputItem, Record};

/// Guest path of the read-only workspace preopen.
pub(crate) const WORKSPACE_GUEST_PATH: &str = "/workspace";

/// The normalized record of one run. `Default` is an empty run, a start for hand-made
/// evidence (`Evidence { final_text: "..".into(), ..Default::default() }`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The case's name.
    pub case_name: String,
    /// 1-based run number.
    pub run: u32,
    /// `replay`, `live`, `recorded` (a Nexus journal graded as recorded: nothing ran) or
    /// `trace` (a run read from a trace).
    pub mode: String,
    /// Model name (`scripted` in replay; a recorded journal's `llm.response` `Model`, or empty).
    pub model: String,
    /// The user prompt of the run (the first `io.input`).
    pub prompt: String,
    /// The final text: the turn's end, else the text of the last completed model response;
    /// empty if none.
    pub final_text: String,
    /// The transcript: prompts, response texts and call results, in order.
    pub messages: Vec<Message>,
    /// Every call the model requested, in order.
    pub calls: Vec<ToolCall>,
    /// Model requests and tokens of the run.
    pub usage: Usage,
    /// Every event of the run, in order, in Nexus's vocabulary.
    pub events: Vec<EventRecord>,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
    /// Why the run ended early, if it did (e.g. an exhausted model script).
    pub run_error: Option<String>,
    /// Guest path of the read-only workspace preopen: `/workspace`, or empty when the run has
    /// no workspace (a run read from a trace).
    pub workspace: String,
    /// The files the case seeded into the workspace before the run.
    pub seeded_files: Vec<SeededFile>,
    /// The skills evalhost's agent found in the workspace's `.agents/skills` when the session
    /// started (its `session_skills` record; empty without one). Not a field of the WIT
    /// evidence: graders read the same list from the `skill.discover` event.
    #[serde(default)]
    pub skills: Vec<SkillSummary>,
}

/// One transcript message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `user` (the prompt), `assistant` (a model response's text) or `tool` (a call's result).
    pub role: String,
    /// The message text; for `tool` messages, the tool's result text.
    pub content: String,
}

/// One tool call the model requested.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// 1-based position among all calls of the run.
    pub index: u32,
    /// The call id the model used, e.g. `call_1`.
    pub call_id: String,
    /// Tool name as the model requested it (may be a tool that does not exist).
    pub name: String,
    /// Arguments as JSON text, exactly as the model sent them.
    pub arguments: String,
    /// `completed`, `denied`, `invalid_arguments`, `unknown_tool`, `failed`, `cancelled`,
    /// `timed_out` or `output_limit`; empty when the call never got a result.
    pub status: String,
    /// The result text the agent sent back to the model.
    pub output: String,
    /// Whether the tool started executing (false for denied, unknown or invalid calls).
    pub started: bool,
    /// Wall time of the tool execution in milliseconds (0 when not started).
    pub duration_ms: u64,
}

/// Requests and tokens of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Model requests the agent made.
    pub requests: u32,
    /// Input (prompt) tokens, summed over the responses.
    pub input_tokens: u64,
    /// Output (completion) tokens, summed over the responses.
    pub output_tokens: u64,
    /// The counts are made up by the scripted model (replay without recorded usage: the
    /// output's bytes / 4), not reported by a provider.
    pub synthetic: bool,
    /// Of `input_tokens`, those the provider read from its prompt cache (live runs; priced
    /// apart, docs/cost.md); absent when none were, and in evidence of earlier versions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One event of the run: a Nexus journal event, or a session-log record mapped to
/// Nexus's vocabulary (`io.input`, `llm.response`, `tool.invoke`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Sequence number, from 0 and consecutive in a run (a recorded journal's own numbers).
    pub seq: u32,
    /// Event kind, e.g. `io.input`, `llm.response`, `tool.invoke`, `tool.result`.
    pub kind: String,
    /// Milliseconds since the run started (a recorded journal: since its first event).
    pub at_ms: u64,
    /// The record's payload as JSON text.
    pub data: String,
}

/// A file seeded into the workspace before the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeededFile {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// Lowercase hex sha256 of the seeded content.
    pub sha256: String,
    /// Size of the seeded content in bytes.
    pub size: u64,
}

/// Facts about a run that the session log does not carry.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// The files the case seeded into the workspace.
    pub seeded_files: Vec<SeededFile>,
    /// Wall time of the run in milliseconds.
    pub duration_ms: u64,
    /// Whether token counts are synthetic (replay).
    pub synthetic_usage: bool,
}

impl Evidence {
    /// Rebuild the evidence of one run from its session log.
    ///
    /// Calls are taken from `function_call` items of `model_response` records in request
    /// order; a `tool_start` marks a call as started; the paired `tool_result` gives its
    /// status and output. A call without a result keeps an empty status.
    pub fn from_session(records: &[Record], facts: RunFacts) -> Evidence {
        let mut evidence = Evidence {
            case_name: String::new(),
            run: 0,
            mode: String::new(),
            model: String::new(),
            prompt: String::new(),
            final_text: String::new(),
            messages: Vec::new(),
            calls: Vec::new(),
            usage: Usage {
                synthetic: facts.synthetic_usage,
                ..Usage::default()
            },
            // In Nexus's vocabulary (see `nexus.rs`), so Nexus event assertions apply.
            events: nexus::evidence_events(records),
            duration_ms: facts.duration_ms,
            run_error: None,
            workspace: WORKSPACE_GUEST_PATH.to_owned(),
            seeded_files: facts.seeded_files,
            skills: Vec::new(),
        };
        let mut last_response_text = String::new();
        // The last response's request, and the calls and messages there were before it: a
        // retried request answered again replaces that answer (the agent never acted on it).
        let mut last_response: Option<(u32, usize, usize)> = None;
        for record in records {
            match &record.event {
                Event::SessionStart {
                    case,
                    run,
                    mode,
                    model,
                } => {
                    evidence.case_name.clone_from(case);
                    evidence.run = *run;
                    evidence.mode.clone_from(mode);
                    evidence.model.clone_from(model);
                }
                Event::SessionSkills { skills, .. } => evidence.skills.clone_from(skills),
                Event::UserMessage { text } => {
                    if evidence.prompt.is_empty() {
                        evidence.prompt.clone_from(text);
                    }
                    evidence.messages.push(Message {
                        role: "user".into(),
                        content: text.clone(),
                    });
                }
                Event::ModelRequest { .. } => evidence.usage.requests += 1,
                // A retry is not another request (`max_requests` does not count it).
                Event::ModelRetry { .. } => {}
                Event::ModelResponse {
                    n,
                    output,
                    input_tokens,
                    output_tokens,
                    cached_input_tokens,
                } => {
                    match last_response {
                        Some((last, calls, messages))
                            if last == *n
                                && evidence.calls[calls..]
                                    .iter()
                                    .all(|c| c.status.is_empty() && !c.started) =>
                        {
                            evidence.calls.truncate(calls);
                            evidence.messages.truncate(messages);
                        }
                        _ => {
                            last_response =
                                Some((*n, evidence.calls.len(), evidence.messages.len()))
                        }
                    }
                    // Every answer was made, and paid for, retried or not.
                    evidence.usage.input_tokens += input_tokens;
                    evidence.usage.output_tokens += output_tokens;
                    evidence.usage.cached_input_tokens += cached_input_tokens;
                    last_response_text.clear();
                    for item in output {
                        match item {
                            OutputItem::Message { text } => {
                                last_response_text.push_str(text);
                                evidence.messages.push(Message {
                                    role: "assistant".into(),
                                    content: text.clone(),
                                });
                            }
                            OutputItem::FunctionCall {
                                call_id,
                                name,
                                arguments,
                            } => evidence.calls.push(ToolCall {
                                index: evidence.calls.len() as u32 + 1,
                                call_id: call_id.clone(),
                                name: name.clone(),
                                arguments: arguments.clone(),
                                status: String::new(),
                                output: String::new(),
                                started: false,
                                duration_ms: 0,
                            }),
                        }
                    }
                }
                Event::ToolStart { call_id, .. } => {
                    if let Some(call) = find_call(&mut evidence.calls, call_id) {
                        call.started = true;
                    }
                }
                Event::ToolResult {
                    call_id,
                    status,
                    output,
                    duration_ms,
                    ..
                } => {
                    evidence.messages.push(Message {
                        role: "tool".into(),
                        content: output.clone(),
                    });
                    if let Some(call) = find_call(&mut evidence.calls, call_id) {
                        call.status = status.as_str().to_owned();
                        call.output.clone_from(output);
                        call.duration_ms = *duration_ms;
                    }
                }
                Event::TurnEnd { final_text } => evidence.final_text.clone_from(final_text),
                Event::RunError { message } => evidence.run_error = Some(message.clone()),
                // In `events` as `endpoint.error`, where `no_endpoint_errors` finds it.
                Event::EndpointError { .. } => {}
                // In `events` as `verifier.result`, where `verifier_reward` finds it.
                Event::VerifierResult { .. } => {}
            }
        }
        if evidence.final_text.is_empty() {
            evidence.final_text = last_response_text;
        }
        evidence
    }
}

/// The last call with this id without a result yet (ids may repeat across responses).
fn find_call<'a>(calls: &'a mut [ToolCall], call_id: &str) -> Option<&'a mut ToolCall> {
    calls
        .iter_mut()
        .rev()
        .find(|c| c.call_id == call_id && c.status.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{CallStatus, ToolCallRecords};

    #[test]
    fn a_retry_is_not_another_request_and_an_answer_to_it_replaces_the_one_before() {
        let body = || crate::session::RequestBody::from(serde_json::json!({"input": []}));
        let answer = |call_id: &str| Event::ModelResponse {
            n: 1,
            output: vec![OutputItem::FunctionCall {
                call_id: call_id.into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }],
            input_tokens: 10,
            output_tokens: 2,
            cached_input_tokens: 0,
        };
        let events = vec![
            Event::ModelRequest { n: 1, body: body() },
            answer("call_1"),
            Event::ModelRetry {
                n: 1,
                attempt: 2,
                body: body(),
            },
            answer("call_1"),
        ];
        let records: Vec<Record> = events
            .into_iter()
            .map(|event| Record { at_ms: 0, event })
            .collect();
        let evidence = Evidence::from_session(&records, RunFacts::default());
        assert_eq!(
            evidence.usage.requests, 1,
            "max_requests counts requests, not attempts"
        );
        assert_eq!(
            evidence.calls.len(),
            1,
            "the agent acted on the last answer only"
        );
        assert_eq!(
            (evidence.usage.input_tokens, evidence.usage.output_tokens),
            (20, 4),
            "both answers were made"
        );
        assert_eq!(
            evidence
                .events
                .iter()
                .map(|e| e.kind.as_str())
                .collect::<Vec<_>>(),
            ["llm.request", "llm.response", "llm.retry", "llm.response"]
        );
    }

    #[test]
    fn a_call_is_started_exactly_when_its_tool_ran() {
        let ran = ToolCallRecords::new("call_1", "bash");
        let never = ToolCallRecords::new("call_2", "bash");
        let call = |call_id: &str| OutputItem::FunctionCall {
            call_id: call_id.into(),
            name: "bash".into(),
            arguments: "{}".into(),
        };
        let mut events = vec![Event::ModelResponse {
            n: 1,
            output: vec![call("call_1"), call("call_2")],
            input_tokens: 1,
            output_tokens: 1,
            cached_input_tokens: 0,
        }];
        events.extend(ran.ran_elsewhere(CallStatus::Failed, "exit 1"));
        events.push(never.cancelled("the turn timed out"));
        let records: Vec<Record> = events
            .into_iter()
            .map(|event| Record { at_ms: 0, event })
            .collect();
        let evidence = Evidence::from_session(&records, RunFacts::default());
        let started: Vec<(bool, &str)> = evidence
            .calls
            .iter()
            .map(|c| (c.started, c.output.as_str()))
            .collect();
        assert_eq!(
            started,
            [(true, "exit 1"), (false, "Not run: the turn timed out.")]
        );
    }
}

//! evalhost session records as an event stream in Nexus's vocabulary, so Nexus event
//! assertions apply to evalhost's own runs.
//!
//! | session record | event type | payload (Nexus field names) |
//! |---|---|---|
//! | `session_start` | `io.session.start` | `session_id`, `case`, `run`, `mode`, `model` |
//! | `session_skills` | `skill.discover` | `Skills[{Name, Description}]`, `Problems[{Path, Message}]`, `Count` (valid skills) |
//! | `user_message` | `io.input`, then `agent.turn.start` | `Content` |
//! | `model_request` | `llm.request` | `N` |
//! | `model_retry` | `llm.retry` | `N`, `Attempt` (2 for the first retry) |
//! | `model_response` | `llm.response` | `Content`, `ToolCalls[{ID, Name, Arguments}]`, `Usage{PromptTokens, CompletionTokens, TotalTokens}` |
//! | `tool_start` | `tool.invoke` | `ID`, `Name`, `Arguments` (object, from the model's call) |
//! | `tool_result` | `tool.result` | `ID`, `Name`, `Output`, `Error` (the status unless `completed`), `Status`, `DurationMS` |
//! | `turn_end` | `agent.turn.end` | `Content` |
//! | `run_error` | `run.error` | `Error` |
//!
//! `seq` numbers the events (a `user_message` yields two), `at_ms` is the record's.

use serde_json::{Value, json};

use super::EventRecord;
use crate::session::{Event, OutputItem, Record};

/// The Nexus event type `record` becomes (the first one, for `user_message`).
pub(crate) fn event_type(event: &Event) -> &'static str {
    match event {
        Event::SessionStart { .. } => "io.session.start",
        Event::SessionSkills { .. } => "skill.discover",
        Event::UserMessage { .. } => "io.input",
        Event::ModelRequest { .. } => "llm.request",
        Event::ModelRetry { .. } => "llm.retry",
        Event::ModelResponse { .. } => "llm.response",
        Event::ToolStart { .. } => "tool.invoke",
        Event::ToolResult { .. } => "tool.result",
        Event::TurnEnd { .. } => "agent.turn.end",
        Event::RunError { .. } => "run.error",
        Event::EndpointError { .. } => "endpoint.error",
        Event::VerifierResult { .. } => "verifier.result",
    }
}

/// `(type, at_ms, payload)` for every event of the session, in order.
pub(crate) fn nexus_events(records: &[Record]) -> Vec<(&'static str, u64, Value)> {
    let mut out = Vec::with_capacity(records.len() + 1);
    for record in records {
        let at = record.at_ms;
        let payload = match &record.event {
            Event::SessionStart {
                case,
                run,
                mode,
                model,
            } => {
                json!({"session_id": format!("{case}-{run}"), "case": case, "run": run, "mode": mode, "model": model})
            }
            Event::SessionSkills { skills, problems } => json!({
                "Skills": skills.iter().map(|s| json!({"Name": s.name, "Description": s.description})).collect::<Vec<_>>(),
                "Problems": problems.iter().map(|p| json!({"Path": p.path, "Message": p.message})).collect::<Vec<_>>(),
                "Count": skills.len(),
            }),
            Event::UserMessage { text } => {
                out.push(("io.input", at, json!({"Content": text})));
                out.push(("agent.turn.start", at, Value::Null));
                continue;
            }
            Event::ModelRequest { n, .. } => json!({"N": n}),
            Event::ModelRetry { n, attempt, .. } => json!({"N": n, "Attempt": attempt}),
            Event::ModelResponse {
                output,
                input_tokens,
                output_tokens,
                ..
            } => response_payload(output, *input_tokens, *output_tokens),
            Event::ToolStart { call_id, name } => json!({
                "ID": call_id,
                "Name": name,
                "Arguments": call_arguments(records, call_id),
            }),
            Event::ToolResult {
                call_id,
                name,
                status,
                output,
                duration_ms,
            } => {
                let status = status.as_str();
                let error = if status == "completed" { "" } else { status };
                json!({"ID": call_id, "Name": name, "Output": output, "Error": error, "Status": status, "DurationMS": duration_ms})
            }
            Event::TurnEnd { final_text } => json!({"Content": final_text}),
            Event::RunError { message } => json!({"Error": message}),
            Event::EndpointError {
                method,
                path,
                status,
                message,
            } => json!({"Method": method, "Path": path, "Status": status, "Error": message}),
            Event::VerifierResult {
                rewards,
                exit_code,
                output,
                duration_ms,
                error,
            } => json!({
                "Rewards": rewards,
                "ExitCode": exit_code,
                "Output": output,
                "DurationMs": duration_ms,
                "Error": error,
            }),
        };
        out.push((event_type(&record.event), at, payload));
    }
    out
}

/// The session's events as evidence events.
pub(super) fn evidence_events(records: &[Record]) -> Vec<EventRecord> {
    nexus_events(records)
        .into_iter()
        .enumerate()
        .map(|(seq, (kind, at_ms, payload))| EventRecord {
            seq: seq as u32,
            kind: kind.to_owned(),
            at_ms,
            data: payload.to_string(),
        })
        .collect()
}

fn response_payload(output: &[OutputItem], input_tokens: u64, output_tokens: u64) -> Value {
    let mut content = String::new();
    let mut calls = Vec::new();
    for item in output {
        match item {
            OutputItem::Message { text } => content.push_str(text),
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => calls.push(json!({"ID": call_id, "Name": name, "Arguments": arguments})),
        }
    }
    json!({
        "Content": content,
        "ToolCalls": if calls.is_empty() { Value::Null } else { Value::Array(calls) },
        "Usage": {
            "PromptTokens": input_tokens,
            "CompletionTokens": output_tokens,
            "TotalTokens": input_tokens + output_tokens,
        },
    })
}

/// The arguments the model gave the call with this id, as JSON (text if not JSON).
fn call_arguments(records: &[Record], call_id: &str) -> Value {
    records
        .iter()
        .filter_map(|r| match &r.event {
            Event::ModelResponse { output, .. } => Some(output),
            _ => None,
        })
        .flatten()
        .find_map(|item| match item {
            OutputItem::FunctionCall {
                call_id: id,
                arguments,
                ..
            } if id == call_id => Some(
                serde_json::from_str(arguments)
                    .unwrap_or_else(|_| Value::String(arguments.clone())),
            ),
            _ => None,
        })
        .unwrap_or(Value::Null)
}

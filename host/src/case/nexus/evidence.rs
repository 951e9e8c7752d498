//! A journal as evidence: events as recorded, plus the transcript, calls, usage and final
//! text derived from `io.input`, `llm.response`, `tool.invoke` and `tool.result`.

use serde_json::Value;

use super::journal::Journal;
use crate::evidence::{EventRecord, Evidence, Message, ToolCall, Usage, WORKSPACE_GUEST_PATH};

/// `Evidence::mode` of a recorded journal (graders use it to tell "not in the journal"
/// from "did not happen").
pub(crate) const RECORDED_MODE: &str = "recorded";

/// A payload field by ASCII-case-insensitive name.
pub fn field<'a>(payload: &'a Value, name: &str) -> Option<&'a Value> {
    let map = payload.as_object()?;
    map.get(name).or_else(|| {
        map.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

fn text(payload: &Value, name: &str) -> String {
    match field(payload, name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn tokens(payload: &Value, name: &str) -> u64 {
    field(payload, "Usage")
        .and_then(|u| field(u, name))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// Arguments as JSON text: strings as written, objects serialized.
fn arguments(payload: &Value) -> String {
    match field(payload, "Arguments") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => other.to_string(),
    }
}

/// Build the evidence of case `case_name` from its journal.
pub(crate) fn journal_evidence(case_name: &str, journal: &Journal) -> Evidence {
    let first_ts = journal.events.first().map_or(0, |e| e.ts_ms);
    let last_ts = journal
        .events
        .iter()
        .map(|e| e.ts_ms)
        .max()
        .unwrap_or(first_ts);
    let mut evidence = Evidence {
        case_name: case_name.to_owned(),
        run: 1,
        mode: RECORDED_MODE.to_owned(),
        model: String::new(),
        prompt: String::new(),
        final_text: String::new(),
        messages: Vec::new(),
        calls: Vec::new(),
        usage: Usage::default(),
        events: Vec::with_capacity(journal.events.len()),
        duration_ms: u64::try_from(last_ts - first_ts).unwrap_or(0),
        run_error: None,
        workspace: WORKSPACE_GUEST_PATH.to_owned(),
        seeded_files: Vec::new(),
        skills: Vec::new(),
    };
    for (index, envelope) in journal.events.iter().enumerate() {
        let payload = &envelope.payload;
        evidence.events.push(EventRecord {
            seq: u32::try_from(envelope.seq).unwrap_or(index as u32),
            kind: envelope.event_type.clone(),
            at_ms: u64::try_from(envelope.ts_ms - first_ts).unwrap_or(0),
            data: payload.to_string(),
        });
        match envelope.event_type.as_str() {
            "io.input" => {
                let content = text(payload, "Content");
                if evidence.prompt.is_empty() {
                    evidence.prompt.clone_from(&content);
                }
                evidence.messages.push(Message {
                    role: "user".into(),
                    content,
                });
            }
            "llm.response" => response(&mut evidence, payload),
            "tool.invoke" => {
                let id = text(payload, "ID");
                match find_call(&mut evidence.calls, &id) {
                    Some(call) => call.started = true,
                    None => {
                        let index = evidence.calls.len() as u32 + 1;
                        evidence.calls.push(ToolCall {
                            index,
                            call_id: id,
                            name: text(payload, "Name"),
                            arguments: arguments(payload),
                            status: String::new(),
                            output: String::new(),
                            started: true,
                            duration_ms: 0,
                        });
                    }
                }
            }
            "tool.result" => {
                let output = text(payload, "Output");
                let error = text(payload, "Error");
                evidence.messages.push(Message {
                    role: "tool".into(),
                    content: if error.is_empty() {
                        output.clone()
                    } else {
                        error.clone()
                    },
                });
                if let Some(call) = find_call(&mut evidence.calls, &text(payload, "ID")) {
                    call.status = if error.is_empty() {
                        "completed"
                    } else {
                        "failed"
                    }
                    .into();
                    call.output = if error.is_empty() { output } else { error };
                }
            }
            _ => {}
        }
    }
    evidence
}

fn response(evidence: &mut Evidence, payload: &Value) {
    evidence.usage.requests += 1;
    evidence.usage.input_tokens += tokens(payload, "PromptTokens");
    evidence.usage.output_tokens += tokens(payload, "CompletionTokens");
    let model = text(payload, "Model");
    if !model.is_empty() {
        evidence.model = model;
    }
    let content = text(payload, "Content");
    if !content.is_empty() {
        evidence.final_text.clone_from(&content);
        evidence.messages.push(Message {
            role: "assistant".into(),
            content,
        });
    }
    if let Some(Value::Array(calls)) = field(payload, "ToolCalls") {
        for call in calls {
            let index = evidence.calls.len() as u32 + 1;
            evidence.calls.push(ToolCall {
                index,
                call_id: text(call, "ID"),
                name: text(call, "Name"),
                arguments: arguments(call),
                status: String::new(),
                output: String::new(),
                started: false,
                duration_ms: 0,
            });
        }
    }
}

/// The last call with this id that has no result yet.
fn find_call<'a>(calls: &'a mut [ToolCall], id: &str) -> Option<&'a mut ToolCall> {
    calls
        .iter_mut()
        .rev()
        .find(|c| !id.is_empty() && c.call_id == id && c.status.is_empty())
}

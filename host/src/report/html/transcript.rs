//! One run's transcript: the messages in order, each tool call (name, arguments, status,
//! output, when its tool started and how long it took) where its result arrived, denials
//! highlighted, and the run's error.

use std::collections::HashMap;
use std::fmt::Write;

use crate::evidence::{Evidence, ToolCall};
use crate::report::escape::text;

/// Longest message, argument or output shown; the rest is cut with a note.
const MAX_SHOWN: usize = 16 * 1024;

pub(super) fn transcript(evidence: &Evidence) -> String {
    let mut html = String::new();
    let starts = call_starts(evidence);
    let started_at = |call: &ToolCall| starts.get(call.call_id.as_str()).copied();
    // Tool messages are the calls' results, in the order they arrived.
    let mut answered = evidence.calls.iter().filter(|c| !c.status.is_empty());
    for message in &evidence.messages {
        if message.role == "tool" {
            match answered.next() {
                Some(call) => html.push_str(&call_block(call, started_at(call))),
                None => html.push_str(&message_block("tool", &message.content)),
            }
        } else {
            html.push_str(&message_block(&message.role, &message.content));
        }
    }
    for call in evidence.calls.iter().filter(|c| c.status.is_empty()) {
        html.push_str(&call_block(call, started_at(call)));
    }
    if let Some(error) = &evidence.run_error {
        let _ = write!(
            html,
            r#"<div class="msg error"><div class="role">run error</div><div class="text">{}</div></div>"#,
            shown(error)
        );
    }
    if html.is_empty() {
        html.push_str(r#"<p class="note">The run has no messages.</p>"#);
    }
    html
}

fn message_block(role: &str, content: &str) -> String {
    format!(
        r#"<div class="msg {}"><div class="role">{}</div><div class="text">{}</div></div>"#,
        css_class(role),
        text(role),
        shown(content)
    )
}

/// When each call's tool started, in milliseconds from the run's start: its `tool.invoke`
/// event's time (the last one of an id that repeats).
fn call_starts(evidence: &Evidence) -> HashMap<&str, u64> {
    #[derive(serde::Deserialize)]
    struct Invoke {
        #[serde(rename = "ID")]
        id: String,
    }
    let ids: HashMap<String, u64> = evidence
        .events
        .iter()
        .filter(|event| event.kind == "tool.invoke")
        .filter_map(|event| {
            Some((
                serde_json::from_str::<Invoke>(&event.data).ok()?.id,
                event.at_ms,
            ))
        })
        .collect();
    evidence
        .calls
        .iter()
        .filter_map(|call| Some((call.call_id.as_str(), *ids.get(&call.call_id)?)))
        .collect()
}

/// `call`'s block; `started_at` is when its tool started (ms from the run's start), if it did.
fn call_block(call: &ToolCall, started_at: Option<u64>) -> String {
    let status = if call.status.is_empty() {
        if call.started {
            "no result"
        } else {
            "not started"
        }
    } else {
        call.status.as_str()
    };
    let badge = match status {
        "completed" => "pass",
        "denied" => "denied",
        "no result" | "not started" => "neutral",
        _ => "fail",
    };
    let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| call.arguments.clone());
    let timing = match started_at {
        Some(at) => format!("started at {at} ms, took {} ms", call.duration_ms),
        None => format!("{} ms", call.duration_ms),
    };
    let mut html = format!(
        r#"<div class="call {}"><div class="head">#{} {} <span class="badge {badge}">{}</span> <span class="note">{timing}</span></div><div class="part"><div class="label">arguments</div><pre>{}</pre></div>"#,
        css_class(status),
        call.index,
        text(&call.name),
        text(status),
        shown(&arguments)
    );
    if !call.status.is_empty() {
        let _ = write!(
            html,
            r#"<div class="part"><div class="label">result</div><pre>{}</pre></div>"#,
            shown(&call.output)
        );
    }
    html.push_str("</div>");
    html
}

/// `content` escaped, cut at [`MAX_SHOWN`] bytes with a note.
pub(super) fn shown(content: &str) -> String {
    if content.len() <= MAX_SHOWN {
        return text(content);
    }
    let cut = content.floor_char_boundary(MAX_SHOWN);
    format!(
        "{}\n<span class=\"note\">… cut: {} of {} bytes shown</span>",
        text(&content[..cut]),
        cut,
        content.len()
    )
}

/// A role or status as a CSS class: letters, digits and `_` only.
fn css_class(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

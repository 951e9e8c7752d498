//! Reading Nexus-style events out of the evidence: types, payload fields, filters.

use evalhost_sdk::{Event, Evidence, GradeError};
use serde::Deserialize;

/// `Evidence::mode` of a case whose evidence is a recorded journal (no agent ran).
pub const RECORDED_MODE: &str = "recorded";

/// Event types Nexus emits live at engine boot and never writes to the journal: an
/// assertion that needs one of them cannot be judged from a recorded journal.
pub const BOOT_LIVE_TYPES: &[&str] = &[
    "tool.register",
    "skill.discover",
    "capability.register",
    "plugin.ready",
];

/// One event of the golden journal, as the case loader injects it into a config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldenEvent {
    /// The event type, e.g. `tool.invoke`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// The payload (`null` when the envelope had none).
    #[serde(default)]
    pub payload: serde_json::Value,
}

/// The payload of an event as JSON (`null` when absent or unreadable).
pub fn payload(event: &Event) -> serde_json::Value {
    serde_json::from_str(&event.data).unwrap_or(serde_json::Value::Null)
}

/// `Err(NotEvaluable)` when `event_type` is emitted only at engine boot, the evidence is a
/// recorded journal and the journal holds no such event.
pub fn boot_live_absent(event_type: &str, evidence: &Evidence) -> Option<String> {
    let absent = evidence.mode == RECORDED_MODE
        && BOOT_LIVE_TYPES.contains(&event_type)
        && !evidence.events.iter().any(|e| e.kind == event_type);
    absent.then(|| format!("{event_type} is emitted live at engine boot and is not in the journal"))
}

/// A payload field by ASCII-case-insensitive name (an exact match wins).
pub fn field<'a>(object: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    let map = object.as_object()?;
    map.get(name).or_else(|| {
        map.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    })
}

/// A JSON value in its string form, as Nexus compares `where` values: strings bare,
/// everything else as JSON text (`true`, `3`, `null`).
pub fn string_form(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Event types in order, keeping only those in `filter` (all when `filter` is empty).
pub fn filtered<'a>(types: impl Iterator<Item = &'a str>, filter: &[String]) -> Vec<&'a str> {
    types
        .filter(|t| filter.is_empty() || filter.iter().any(|f| f == t))
        .collect()
}

/// A token count field of an `llm.response` payload: `Usage.<nexus>` or the top-level
/// `<evalhost>` name.
pub fn usage_tokens(payload: &serde_json::Value, nexus: &str) -> u64 {
    field(payload, "Usage")
        .and_then(|usage| field(usage, nexus))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// The golden journal a comparing grader was given, or why it cannot be evaluated.
pub fn golden<'a, T>(grader: &str, golden: &'a Option<Vec<T>>) -> Result<&'a Vec<T>, GradeError> {
    golden.as_ref().ok_or_else(|| {
        GradeError::NotEvaluable(format!("{grader}: no golden journal to compare with"))
    })
}

#[cfg(test)]
pub mod test_support {
    use evalhost_sdk::{Event, Evidence};

    /// Evidence holding these `(type, at_ms, payload)` events.
    pub fn evidence(events: &[(&str, u64, serde_json::Value)]) -> Evidence {
        Evidence {
            events: events
                .iter()
                .enumerate()
                .map(|(seq, (kind, at_ms, data))| Event {
                    seq: seq as u32,
                    kind: (*kind).to_owned(),
                    at_ms: *at_ms,
                    data: data.to_string(),
                })
                .collect(),
            ..Evidence::default()
        }
    }

    /// Evidence holding events of these types, 10 ms apart, with empty payloads.
    pub fn typed(types: &[&str]) -> Evidence {
        let events: Vec<(&str, u64, serde_json::Value)> = types
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, i as u64 * 10, serde_json::json!({})))
            .collect();
        evidence(&events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_match_case_insensitively_and_values_by_string_form() {
        let payload = json!({"Source": "static", "Approved": true});
        assert_eq!(field(&payload, "source"), Some(&json!("static")));
        assert_eq!(
            field(&payload, "APPROVED").map(string_form).as_deref(),
            Some("true")
        );
        assert_eq!(field(&payload, "missing"), None);
        assert_eq!(string_form(&json!(3)), "3");
    }
}

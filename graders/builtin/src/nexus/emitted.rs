//! `event_emitted` and `event_count_bounds`: how many events of a type were emitted.

use std::collections::BTreeMap;

use evalhost_sdk::message::{count, name};
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

use super::events::{boot_live_absent, field, payload, string_form};

/// A count range. An absent `max` is "no upper bound"; `max: 0` written explicitly means
/// exactly zero allowed (fixing Nexus, which reads a zero max as unbounded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountBounds {
    /// Fewest events allowed (0 when absent).
    #[serde(default)]
    pub min: u64,
    /// Most events allowed; `None` is no upper bound.
    pub max: Option<u64>,
}

impl CountBounds {
    /// Whether `n` is within the range.
    pub fn contains(&self, n: u64) -> bool {
        n >= self.min && self.max.is_none_or(|max| n <= max)
    }

    /// `min 1 max 2`, `min 1`, or `min 0 max 0`.
    pub fn describe(&self) -> String {
        match self.max {
            Some(max) => format!("min {} max {max}", self.min),
            None => format!("min {}", self.min),
        }
    }

    fn check(&self, what: &str) -> Result<(), String> {
        match self.max {
            Some(max) if max < self.min => {
                Err(format!("{what}: max {max} is below min {}", self.min))
            }
            _ => Ok(()),
        }
    }
}

fn bounds_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "min": {"type": "integer", "minimum": 0},
            "max": {"type": "integer", "minimum": 0},
        },
        "additionalProperties": false,
    })
}

/// `event_emitted: {type: tool.invoke, where: {name: read_file}, count: {min: 1, max: 1}}`
pub struct EventEmitted;

/// Config of [`EventEmitted`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventEmittedConfig {
    /// The event type, e.g. `tool.invoke`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Payload fields that must equal these values (string forms compared, field names
    /// ASCII-case-insensitive).
    #[serde(default, rename = "where")]
    pub where_: BTreeMap<String, serde_json::Value>,
    /// How many matching events; absent means at least one.
    pub count: Option<CountBounds>,
}

impl Grader for EventEmitted {
    type Config = EventEmittedConfig;
    const NAME: &'static str = "event_emitted";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "Between min and max events of this type match the shallow `where` payload filter";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"type": "string", "minLength": 1},
                "where": {"type": "object"},
                "count": bounds_schema(),
            },
            "additionalProperties": false,
        })
    }

    fn check(config: &EventEmittedConfig) -> Result<(), String> {
        if config.event_type.is_empty() {
            return Err("type is empty".to_owned());
        }
        config.count.unwrap_or_default().check("count")
    }

    fn grade(config: &EventEmittedConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let bounds = config.count.unwrap_or(CountBounds { min: 1, max: None });
        let matching = evidence
            .events
            .iter()
            .filter(|e| e.kind == config.event_type)
            .filter(|e| matches_where(&payload(e), &config.where_))
            .count() as u64;
        if !bounds.contains(matching)
            && bounds.min > 0
            && let Some(reason) = boot_live_absent(&config.event_type, evidence)
        {
            return Err(GradeError::NotEvaluable(format!(
                "{} {}{}: {reason}",
                Self::NAME,
                name(&config.event_type),
                describe_where(&config.where_),
            )));
        }
        Ok(Verdict::pass_if(bounds.contains(matching), || {
            format!(
                "{} {}{} {}: {}",
                Self::NAME,
                name(&config.event_type),
                describe_where(&config.where_),
                bounds.describe(),
                count(matching, "matching event", "matching events")
            )
        }))
    }
}

/// Whether every `where` field is in the payload with the same string form.
pub fn matches_where(
    payload: &serde_json::Value,
    where_: &BTreeMap<String, serde_json::Value>,
) -> bool {
    where_.iter().all(|(key, want)| {
        field(payload, key).is_some_and(|seen| string_form(seen) == string_form(want))
    })
}

/// ` where {k=v k2=v2}`, or nothing without a filter.
fn describe_where(where_: &BTreeMap<String, serde_json::Value>) -> String {
    if where_.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = where_
        .iter()
        .map(|(k, v)| format!("{}={}", name(k), name(&string_form(v))))
        .collect();
    format!(" where {{{}}}", pairs.join(" "))
}

/// `event_count_bounds: {bounds: {agent.turn.start: {min: 2, max: 2}}}`
pub struct EventCountBounds;

/// Config of [`EventCountBounds`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventCountBoundsConfig {
    /// Event type -> allowed count range.
    pub bounds: BTreeMap<String, CountBounds>,
}

impl Grader for EventCountBounds {
    type Config = EventCountBoundsConfig;
    const NAME: &'static str = "event_count_bounds";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The count of each listed event type is within its range";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["bounds"],
            "properties": {"bounds": {"type": "object", "additionalProperties": bounds_schema()}},
            "additionalProperties": false,
        })
    }

    fn check(config: &EventCountBoundsConfig) -> Result<(), String> {
        if config.bounds.is_empty() {
            return Err("bounds is empty".to_owned());
        }
        config
            .bounds
            .iter()
            .try_for_each(|(event_type, b)| b.check(&format!("bounds.{event_type}")))
    }

    fn grade(config: &EventCountBoundsConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let mut failures = Vec::new();
        let mut not_evaluable = Vec::new();
        for (event_type, bounds) in &config.bounds {
            let seen = evidence
                .events
                .iter()
                .filter(|e| &e.kind == event_type)
                .count() as u64;
            if bounds.contains(seen) {
                continue;
            }
            match boot_live_absent(event_type, evidence) {
                Some(reason) if bounds.min > 0 => not_evaluable.push(reason),
                _ => failures.push(format!(
                    "{} {}: {}",
                    name(event_type),
                    bounds.describe(),
                    count(seen, "event", "events")
                )),
            }
        }
        if failures.is_empty() && !not_evaluable.is_empty() {
            return Err(GradeError::NotEvaluable(format!(
                "{}: {}",
                Self::NAME,
                not_evaluable.join("; ")
            )));
        }
        Ok(Verdict::pass_if(failures.is_empty(), || {
            format!("{} {}", Self::NAME, failures.join("; "))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::events::test_support::{evidence, typed};
    use super::*;
    use crate::tests::grade;
    use evalhost_sdk::GradeError;
    use serde_json::json;

    fn plan_events() -> Evidence {
        evidence(&[
            ("io.input", 0, json!({"Content": "hi"})),
            (
                "plan.result",
                10,
                json!({"Source": "static", "Approved": true}),
            ),
            ("tool.invoke", 20, json!({"Name": "read_file"})),
        ])
    }

    #[test]
    fn event_emitted_matches_where_by_string_form_and_case_insensitive_names() {
        let config = r#"{"type":"plan.result","where":{"source":"static","Approved":"true"},"count":{"min":1,"max":1}}"#;
        assert!(grade::<EventEmitted>(config, &plan_events()).pass);
        let config = r#"{"type":"plan.result","where":{"Approved":"false"}}"#;
        assert_eq!(
            grade::<EventEmitted>(config, &plan_events()).message,
            "event_emitted plan.result where {Approved=false} min 1: 0 matching events"
        );
    }

    #[test]
    fn event_emitted_defaults_to_at_least_one() {
        assert!(grade::<EventEmitted>(r#"{"type":"io.input"}"#, &plan_events()).pass);
        assert_eq!(
            grade::<EventEmitted>(r#"{"type":"llm.response"}"#, &plan_events()).message,
            "event_emitted llm.response min 1: 0 matching events"
        );
    }

    #[test]
    fn explicit_max_zero_means_exactly_zero() {
        let config = r#"{"type":"tool.invoke","count":{"min":0,"max":0}}"#;
        assert_eq!(
            grade::<EventEmitted>(config, &plan_events()).message,
            "event_emitted tool.invoke min 0 max 0: 1 matching event"
        );
        let config = r#"{"type":"provider.fallback","count":{"max":0}}"#;
        assert!(grade::<EventEmitted>(config, &plan_events()).pass);
        let config = r#"{"type":"tool.invoke","count":{"min":1}}"#;
        assert!(grade::<EventEmitted>(config, &typed(&["tool.invoke"; 5])).pass);
    }

    #[test]
    fn boot_time_types_absent_from_a_journal_are_not_evaluable() {
        let mut recorded = plan_events();
        recorded.mode = super::super::events::RECORDED_MODE.to_owned();
        let config = r#"{"type":"tool.register","where":{"Name":"spawn_coder"}}"#;
        assert_eq!(
            evalhost_sdk::grade::<EventEmitted>(config, &recorded),
            Err(GradeError::NotEvaluable(
                "event_emitted tool.register where {Name=spawn_coder}: tool.register is emitted live at engine boot and is not in the journal".to_owned()
            ))
        );
        // The same assertion on a live run simply fails.
        assert!(!grade::<EventEmitted>(config, &plan_events()).pass);
    }

    #[test]
    fn event_count_bounds_reports_every_type_out_of_range() {
        let ev = typed(&["io.input", "agent.turn.start", "agent.turn.end", "io.input"]);
        let ok = r#"{"bounds":{"io.input":{"min":2,"max":2},"agent.turn.end":{"min":1}}}"#;
        assert!(grade::<EventCountBounds>(ok, &ev).pass);
        let bad = r#"{"bounds":{"agent.turn.start":{"min":2,"max":2},"io.input":{"max":1},"llm.response":{"max":0}}}"#;
        assert_eq!(
            grade::<EventCountBounds>(bad, &ev).message,
            "event_count_bounds agent.turn.start min 2 max 2: 1 event; io.input min 0 max 1: 2 events"
        );
    }

    #[test]
    fn event_count_bounds_on_boot_types_is_not_evaluable_unless_something_fails() {
        let mut ev = typed(&["io.input"]);
        ev.mode = super::super::events::RECORDED_MODE.to_owned();
        let config =
            r#"{"bounds":{"io.input":{"min":1,"max":1},"skill.discover":{"min":1,"max":1}}}"#;
        assert_eq!(
            evalhost_sdk::grade::<EventCountBounds>(config, &ev),
            Err(GradeError::NotEvaluable(
                "event_count_bounds: skill.discover is emitted live at engine boot and is not in the journal".to_owned()
            ))
        );
        let config = r#"{"bounds":{"io.input":{"min":2},"skill.discover":{"min":1}}}"#;
        assert_eq!(
            grade::<EventCountBounds>(config, &ev).message,
            "event_count_bounds io.input min 2: 1 event"
        );
    }

    #[test]
    fn bad_configs_are_refused() {
        use crate::tests::invalid_config;
        assert_eq!(
            invalid_config::<EventEmitted>(r#"{"type":"x","count":{"min":2,"max":1}}"#),
            "count: max 1 is below min 2"
        );
        assert!(
            invalid_config::<EventEmitted>(r#"{"type":"x","cuont":{}}"#)
                .starts_with("unknown field `cuont`")
        );
        assert_eq!(
            invalid_config::<EventCountBounds>(r#"{"bounds":{}}"#),
            "bounds is empty"
        );
    }
}

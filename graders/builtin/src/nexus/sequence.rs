//! `event_sequence_strict` and `event_sequence_distance`: the order of event types.

use evalhost_sdk::message::list;
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

use super::events::{GoldenEvent, filtered};

fn types_schema() -> serde_json::Value {
    serde_json::json!({"type": "array", "items": {"type": "string", "minLength": 1}})
}

/// `event_sequence_strict: {filter: [...], pattern: [...]}`
pub struct EventSequenceStrict;

/// Config of [`EventSequenceStrict`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSequenceStrictConfig {
    /// Event types kept before comparing (all when empty).
    #[serde(default)]
    pub filter: Vec<String>,
    /// The exact sequence of (filtered) event types.
    pub pattern: Vec<String>,
}

impl Grader for EventSequenceStrict {
    type Config = EventSequenceStrictConfig;
    const NAME: &'static str = "event_sequence_strict";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The filtered event types are exactly the pattern";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {"filter": types_schema(), "pattern": types_schema()},
            "additionalProperties": false,
        })
    }

    fn check(config: &EventSequenceStrictConfig) -> Result<(), String> {
        if config.pattern.is_empty() {
            return Err("pattern is empty".to_owned());
        }
        Ok(())
    }

    fn grade(
        config: &EventSequenceStrictConfig,
        evidence: &Evidence,
    ) -> Result<Verdict, GradeError> {
        let seen = filtered(
            evidence.events.iter().map(|e| e.kind.as_str()),
            &config.filter,
        );
        let matches = seen
            .iter()
            .copied()
            .eq(config.pattern.iter().map(String::as_str));
        Ok(Verdict::pass_if(matches, || {
            let at = seen
                .iter()
                .zip(&config.pattern)
                .position(|(s, p)| s != p)
                .unwrap_or(seen.len().min(config.pattern.len()));
            format!(
                "{} {}: events {} differ at position {}",
                Self::NAME,
                list(config.pattern.iter().map(String::as_str)),
                list(seen.iter().copied()),
                at + 1
            )
        }))
    }
}

/// `event_sequence_distance: {threshold: 0.15, filter: [...]}`
pub struct EventSequenceDistance;

/// Config of [`EventSequenceDistance`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSequenceDistanceConfig {
    /// Largest Levenshtein ratio allowed (0.0 identical, 1.0 totally different).
    pub threshold: f64,
    /// Event types kept before comparing (all when empty).
    #[serde(default)]
    pub filter: Vec<String>,
    /// The golden journal's events, injected by the case loader.
    pub golden: Option<Vec<GoldenEvent>>,
}

impl Grader for EventSequenceDistance {
    type Config = EventSequenceDistanceConfig;
    const NAME: &'static str = "event_sequence_distance";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The Levenshtein ratio between observed and golden filtered event types is at most the threshold";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "required": ["threshold"],
            "properties": {
                "threshold": {"type": "number", "minimum": 0, "maximum": 1},
                "filter": types_schema(),
                "golden": {"type": "array", "description": "Injected by the case loader"},
            },
            "additionalProperties": false,
        })
    }

    fn check(config: &EventSequenceDistanceConfig) -> Result<(), String> {
        if !(0.0..=1.0).contains(&config.threshold) {
            return Err(format!(
                "threshold {} is outside 0.0 to 1.0",
                config.threshold
            ));
        }
        Ok(())
    }

    fn grade(
        config: &EventSequenceDistanceConfig,
        evidence: &Evidence,
    ) -> Result<Verdict, GradeError> {
        let golden = super::events::golden(Self::NAME, &config.golden)?;
        let seen = filtered(
            evidence.events.iter().map(|e| e.kind.as_str()),
            &config.filter,
        );
        let want = filtered(golden.iter().map(|e| e.event_type.as_str()), &config.filter);
        let edits = levenshtein(&seen, &want);
        let longest = seen.len().max(want.len());
        let ratio = if longest == 0 {
            0.0
        } else {
            edits as f64 / longest as f64
        };
        let verdict = Verdict::pass_if(ratio <= config.threshold, || {
            format!(
                "{} {}: distance {ratio:.3} ({edits} edits between {} observed and {} golden events)",
                Self::NAME,
                config.threshold,
                seen.len(),
                want.len()
            )
        });
        Ok(verdict.with_score(1.0 - ratio))
    }
}

/// Edit distance between two sequences (insert, delete, substitute cost 1).
pub fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(x != y);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::super::events::test_support::typed;
    use super::*;
    use crate::tests::{grade, invalid_config};

    #[test]
    fn strict_compares_the_filtered_types_exactly() {
        let ev = typed(&[
            "io.input",
            "tick",
            "agent.turn.start",
            "llm.response",
            "agent.turn.end",
        ]);
        let ok = r#"{"filter":["io.input","agent.turn.start","agent.turn.end","llm.response"],"pattern":["io.input","agent.turn.start","llm.response","agent.turn.end"]}"#;
        assert!(grade::<EventSequenceStrict>(ok, &ev).pass);
        let bad = r#"{"filter":["io.input","llm.response","tool.invoke"],"pattern":["io.input","tool.invoke","llm.response"]}"#;
        assert_eq!(
            grade::<EventSequenceStrict>(bad, &ev).message,
            "event_sequence_strict [io.input tool.invoke llm.response]: events [io.input llm.response] differ at position 2"
        );
        let short = r#"{"pattern":["io.input","tick"]}"#;
        assert_eq!(
            grade::<EventSequenceStrict>(short, &ev).message,
            "event_sequence_strict [io.input tick]: events [io.input tick agent.turn.start llm.response agent.turn.end] differ at position 3"
        );
    }

    #[test]
    fn distance_is_the_levenshtein_ratio_against_the_golden() {
        let ev = typed(&[
            "io.input",
            "agent.turn.start",
            "llm.response",
            "agent.turn.end",
        ]);
        let golden = r#"[{"type":"io.input"},{"type":"agent.turn.start"},{"type":"llm.response"},{"type":"tool.invoke"},{"type":"agent.turn.end"}]"#;
        let pass = format!(r#"{{"threshold":0.2,"golden":{golden}}}"#);
        assert!(grade::<EventSequenceDistance>(&pass, &ev).pass);
        let fail = format!(r#"{{"threshold":0.1,"golden":{golden}}}"#);
        assert_eq!(
            grade::<EventSequenceDistance>(&fail, &ev).message,
            "event_sequence_distance 0.1: distance 0.200 (1 edits between 4 observed and 5 golden events)"
        );
        let filtered = format!(
            r#"{{"threshold":0.0,"filter":["io.input","llm.response"],"golden":{golden}}}"#
        );
        assert!(grade::<EventSequenceDistance>(&filtered, &ev).pass);
    }

    #[test]
    fn distance_without_a_golden_is_not_evaluable() {
        assert_eq!(
            evalhost_sdk::grade::<EventSequenceDistance>(r#"{"threshold":0.1}"#, &typed(&[])),
            Err(GradeError::NotEvaluable(
                "event_sequence_distance: no golden journal to compare with".to_owned()
            ))
        );
    }

    #[test]
    fn levenshtein_counts_edits() {
        assert_eq!(levenshtein(&["a", "b", "c"], &["a", "c"]), 1);
        assert_eq!(levenshtein::<&str>(&[], &["a"]), 1);
        assert_eq!(levenshtein(&["k", "i", "t"], &["s", "i", "t", "s"]), 2);
    }

    #[test]
    fn bad_configs_are_refused() {
        assert_eq!(
            invalid_config::<EventSequenceDistance>(r#"{"threshold":1.5}"#),
            "threshold 1.5 is outside 0.0 to 1.0"
        );
        assert_eq!(
            invalid_config::<EventSequenceStrict>(r#"{"pattern":[]}"#),
            "pattern is empty"
        );
    }
}

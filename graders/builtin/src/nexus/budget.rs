//! `token_budget` and `latency`: what the run cost, read off the events.

use evalhost_sdk::message::count;
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;

use super::events::{payload, usage_tokens};

/// `token_budget: {max_input_tokens: 1000, max_output_tokens: 500, per_turn: false}`
pub struct TokenBudget;

/// Config of [`TokenBudget`]. An absent limit is no limit.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenBudgetConfig {
    /// Most prompt tokens (`Usage.PromptTokens` of `llm.response` events).
    pub max_input_tokens: Option<u64>,
    /// Most completion tokens (`Usage.CompletionTokens`).
    pub max_output_tokens: Option<u64>,
    /// Apply the limits to every agent turn instead of the session total.
    #[serde(default)]
    pub per_turn: bool,
}

impl Grader for TokenBudget {
    type Config = TokenBudgetConfig;
    const NAME: &'static str = "token_budget";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "Tokens read off llm.response events stay within the caps (session total or per turn)";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "max_input_tokens": {"type": "integer", "minimum": 0},
                "max_output_tokens": {"type": "integer", "minimum": 0},
                "per_turn": {"type": "boolean"},
            },
            "additionalProperties": false,
        })
    }

    fn check(config: &TokenBudgetConfig) -> Result<(), String> {
        if config.max_input_tokens.is_none() && config.max_output_tokens.is_none() {
            return Err("set max_input_tokens, max_output_tokens or both".to_owned());
        }
        Ok(())
    }

    fn grade(config: &TokenBudgetConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        // (input, output) per turn; responses before the first turn start count as turn 1.
        let mut turns: Vec<(u64, u64)> = vec![(0, 0)];
        let mut started = false;
        for event in &evidence.events {
            match event.kind.as_str() {
                "agent.turn.start" if started => turns.push((0, 0)),
                "agent.turn.start" => started = true,
                "llm.response" => {
                    let p = payload(event);
                    if let Some(turn) = turns.last_mut() {
                        turn.0 += usage_tokens(&p, "PromptTokens");
                        turn.1 += usage_tokens(&p, "CompletionTokens");
                    }
                }
                _ => {}
            }
        }
        let mut problems = Vec::new();
        let limits = [
            (
                "max_input_tokens",
                config.max_input_tokens,
                "input token",
                "input tokens",
            ),
            (
                "max_output_tokens",
                config.max_output_tokens,
                "output token",
                "output tokens",
            ),
        ];
        for (index, (arg, limit, singular, plural)) in limits.into_iter().enumerate() {
            let Some(limit) = limit else { continue };
            let used = |t: &(u64, u64)| if index == 0 { t.0 } else { t.1 };
            if config.per_turn {
                if let Some((n, turn)) = turns.iter().enumerate().find(|(_, t)| used(t) > limit) {
                    problems.push(format!(
                        "{arg} {limit} per turn: turn {} used {}",
                        n + 1,
                        count(used(turn), singular, plural)
                    ));
                }
            } else {
                let total: u64 = turns.iter().map(used).sum();
                if total > limit {
                    problems.push(format!("{arg} {limit}: {}", count(total, singular, plural)));
                }
            }
        }
        Ok(Verdict::pass_if(problems.is_empty(), || {
            format!("{} {}", Self::NAME, problems.join("; "))
        }))
    }
}

/// `latency: {p50_ms: 500, p95_ms: 2000}`
pub struct Latency;

/// Config of [`Latency`]. An absent cap is no cap.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyConfig {
    /// Cap on the median turn latency, in milliseconds.
    pub p50_ms: Option<u64>,
    /// Cap on the 95th-percentile turn latency, in milliseconds.
    pub p95_ms: Option<u64>,
}

impl Grader for Latency {
    type Config = LatencyConfig;
    const NAME: &'static str = "latency";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str =
        "p50/p95 turn latency (agent.turn.start to agent.turn.end timestamps) within the caps";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "p50_ms": {"type": "integer", "minimum": 0},
                "p95_ms": {"type": "integer", "minimum": 0},
            },
            "additionalProperties": false,
        })
    }

    fn check(config: &LatencyConfig) -> Result<(), String> {
        if config.p50_ms.is_none() && config.p95_ms.is_none() {
            return Err("set p50_ms, p95_ms or both".to_owned());
        }
        Ok(())
    }

    fn grade(config: &LatencyConfig, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let mut durations = turn_durations(evidence);
        if durations.is_empty() {
            return Err(GradeError::NotEvaluable(format!(
                "{}: no complete agent turn (agent.turn.start to agent.turn.end) in the events",
                Self::NAME
            )));
        }
        durations.sort_unstable();
        let turns = count(durations.len() as u64, "turn", "turns");
        let mut problems = Vec::new();
        for (arg, p, cap) in [("p50_ms", 50, config.p50_ms), ("p95_ms", 95, config.p95_ms)] {
            let Some(cap) = cap else { continue };
            let seen = percentile(&durations, p);
            if seen > cap {
                problems.push(format!("{arg} {cap}: p{p} {seen} ms over {turns}"));
            }
        }
        Ok(Verdict::pass_if(problems.is_empty(), || {
            format!("{} {}", Self::NAME, problems.join("; "))
        }))
    }
}

/// Milliseconds from each `agent.turn.start` to the next `agent.turn.end`.
pub fn turn_durations(evidence: &Evidence) -> Vec<u64> {
    let mut out = Vec::new();
    let mut start = None;
    for event in &evidence.events {
        match event.kind.as_str() {
            "agent.turn.start" => start = Some(event.at_ms),
            "agent.turn.end" => {
                if let Some(s) = start.take() {
                    out.push(event.at_ms.saturating_sub(s));
                }
            }
            _ => {}
        }
    }
    out
}

/// Nearest-rank percentile of sorted, non-empty `values`.
pub fn percentile(values: &[u64], p: u64) -> u64 {
    let rank = (p as usize * values.len()).div_ceil(100).max(1);
    values.get(rank - 1).copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::events::test_support::evidence;
    use super::*;
    use crate::tests::{grade, invalid_config};
    use serde_json::json;

    fn response(input: u64, output: u64) -> serde_json::Value {
        json!({"Usage": {"PromptTokens": input, "CompletionTokens": output}})
    }

    fn two_turns() -> Evidence {
        evidence(&[
            ("agent.turn.start", 20, json!(null)),
            ("llm.response", 30, response(80, 40)),
            ("llm.response", 60, response(140, 70)),
            ("agent.turn.end", 70, json!(null)),
            ("agent.turn.start", 90, json!(null)),
            ("llm.response", 100, response(160, 50)),
            ("agent.turn.end", 290, json!(null)),
        ])
    }

    #[test]
    fn token_budget_caps_the_session_total() {
        let ok = r#"{"max_input_tokens":380,"max_output_tokens":160}"#;
        assert!(grade::<TokenBudget>(ok, &two_turns()).pass);
        let bad = r#"{"max_input_tokens":379,"max_output_tokens":100}"#;
        assert_eq!(
            grade::<TokenBudget>(bad, &two_turns()).message,
            "token_budget max_input_tokens 379: 380 input tokens; max_output_tokens 100: 160 output tokens"
        );
    }

    #[test]
    fn token_budget_per_turn_caps_each_turn() {
        let ok = r#"{"max_input_tokens":220,"per_turn":true}"#;
        assert!(grade::<TokenBudget>(ok, &two_turns()).pass);
        let bad = r#"{"max_output_tokens":100,"per_turn":true}"#;
        assert_eq!(
            grade::<TokenBudget>(bad, &two_turns()).message,
            "token_budget max_output_tokens 100 per turn: turn 1 used 110 output tokens"
        );
    }

    #[test]
    fn latency_caps_turn_percentiles() {
        // Turns of 50 ms and 200 ms: p50 50, p95 200.
        assert!(grade::<Latency>(r#"{"p50_ms":50,"p95_ms":200}"#, &two_turns()).pass);
        assert_eq!(
            grade::<Latency>(r#"{"p50_ms":49,"p95_ms":199}"#, &two_turns()).message,
            "latency p50_ms 49: p50 50 ms over 2 turns; p95_ms 199: p95 200 ms over 2 turns"
        );
    }

    #[test]
    fn latency_without_turns_is_not_evaluable() {
        let ev = evidence(&[("io.input", 0, json!(null))]);
        assert_eq!(
            evalhost_sdk::grade::<Latency>(r#"{"p95_ms":1}"#, &ev),
            Err(GradeError::NotEvaluable(
                "latency: no complete agent turn (agent.turn.start to agent.turn.end) in the events".to_owned()
            ))
        );
    }

    #[test]
    fn bad_configs_are_refused() {
        assert_eq!(
            invalid_config::<Latency>("{}"),
            "set p50_ms, p95_ms or both"
        );
        assert_eq!(
            invalid_config::<TokenBudget>(r#"{"per_turn":true}"#),
            "set max_input_tokens, max_output_tokens or both"
        );
        assert_eq!(percentile(&[1, 2, 3, 4], 50), 2);
        assert_eq!(percentile(&[7], 95), 7);
    }
}

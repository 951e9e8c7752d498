//! `verifier_reward`: the environment's verifier (a Harbor task's `tests/test.sh`, run in the
//! container after the agent) gave a reward of at least `min`.
//!
//! The host records what the verifier wrote as one `verifier.result` event: `Rewards` (`reward`
//! from `reward.txt`, each key of `reward.json`), `ExitCode`, the end of its `Output`, and an
//! `Error` when it gave no reward. A run without that event had no verifier, so there is
//! nothing to judge: not evaluable rather than a fail.

use evalhost_sdk::message::{EXCERPT_BYTES, list, name, quote};
use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};
use serde::Deserialize;
use serde_json::Value;

use crate::nexus::events::{field, payload};

/// The evidence event kind of the verifier's result.
pub const VERIFIER_RESULT: &str = "verifier.result";

/// The reward a verifier's `reward.txt` gives, and the one chosen from a `reward.json` when
/// the config names none.
pub const DEFAULT_KEY: &str = "reward";

/// `verifier_reward:` (no config, or `{}`), `verifier_reward: {min: 0.5, key: accuracy}`
pub struct VerifierReward;

/// Config of [`VerifierReward`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a map with `min` and `key`")]
pub struct VerifierRewardConfig {
    /// The lowest reward that passes (default 1).
    #[serde(default)]
    pub min: Option<f64>,
    /// Which reward of a `reward.json` (default: `reward`, else the only one).
    #[serde(default)]
    pub key: Option<String>,
}

impl VerifierRewardConfig {
    /// The lowest reward that passes.
    pub fn min(&self) -> f64 {
        self.min.unwrap_or(1.0)
    }

    /// How failure messages name the config: `min 1`, `accuracy min 0.5`.
    fn arg(&self) -> String {
        match &self.key {
            Some(key) => format!("{} min {}", name(key), self.min()),
            None => format!("min {}", self.min()),
        }
    }
}

impl Grader for VerifierReward {
    type Config = Option<VerifierRewardConfig>;
    const NAME: &'static str = "verifier_reward";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "The environment's verifier (a Harbor task's tests/test.sh) gave a reward of at least min (default 1)";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({
            "type": ["object", "null"],
            "properties": {
                "min": {"type": "number", "description": "The lowest reward that passes (default 1)"},
                "key": {"type": "string", "minLength": 1, "description": "Which reward of reward.json (default: reward, else the only one)"},
            },
            "additionalProperties": false,
        })
    }

    fn check(config: &Option<VerifierRewardConfig>) -> Result<(), String> {
        if let Some(VerifierRewardConfig { key: Some(key), .. }) = config
            && key.is_empty()
        {
            return Err("key is empty".to_owned());
        }
        Ok(())
    }

    fn grade(
        config: &Option<VerifierRewardConfig>,
        evidence: &Evidence,
    ) -> Result<Verdict, GradeError> {
        verifier_reward(&config.clone().unwrap_or_default(), evidence)
    }
}

/// Judges the last `verifier.result` event; not evaluable when there is none.
pub fn verifier_reward(
    config: &VerifierRewardConfig,
    evidence: &Evidence,
) -> Result<Verdict, GradeError> {
    let Some(event) = evidence
        .events
        .iter()
        .rev()
        .find(|event| event.kind == VERIFIER_RESULT)
    else {
        return Err(GradeError::NotEvaluable(format!(
            "{}: the run has no verifier result: the case has no verifier (a Harbor task's tests/)",
            VerifierReward::NAME
        )));
    };
    let data = payload(event);
    let fail =
        |seen: String| Verdict::fail(format!("{} {}: {seen}", VerifierReward::NAME, config.arg()));
    let rewards = field(&data, "Rewards")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if rewards.is_empty() {
        let why = field(&data, "Error")
            .and_then(Value::as_str)
            .filter(|error| !error.is_empty())
            .unwrap_or("the verifier wrote neither reward.txt nor reward.json");
        return Ok(fail(format!("no reward: {why}{}", ran(&data))));
    }
    let names = || list(rewards.keys().map(String::as_str));
    let chosen = match &config.key {
        Some(key) => rewards.get_key_value(key.as_str()),
        None if rewards.len() == 1 => rewards.iter().next(),
        None => rewards.get_key_value(DEFAULT_KEY),
    };
    let Some((key, value)) = chosen else {
        return Ok(fail(match &config.key {
            Some(key) => format!("no reward {}; rewards: {}", name(key), names()),
            None => format!(
                "rewards {} and none is named {DEFAULT_KEY}; choose one with key",
                names()
            ),
        }));
    };
    let Some(reward) = value.as_f64() else {
        // reward.txt's `nan` or `inf` reaches the evidence as JSON `null`.
        return Ok(fail(format!(
            "{} {value} is not a number{}",
            name(key),
            ran(&data)
        )));
    };
    if reward >= config.min() {
        return Ok(Verdict::pass().with_score(reward));
    }
    Ok(fail(format!("{} {reward}{}", name(key), ran(&data))).with_score(reward))
}

/// ` (tests/test.sh exit 1); output "...end of its output"`: how the verifier ended, and the
/// last bytes it printed (where a test runner's summary is), when it printed anything.
fn ran(data: &Value) -> String {
    let exit = match field(data, "ExitCode").and_then(Value::as_i64) {
        Some(code) => format!("exit {code}"),
        None => "no exit code".to_owned(),
    };
    let output = field(data, "Output")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim_end();
    if output.is_empty() {
        format!(" (tests/test.sh {exit})")
    } else {
        format!(" (tests/test.sh {exit}); output {}", quote_tail(output))
    }
}

/// Quotes the last [`EXCERPT_BYTES`] bytes of `text` (from a character boundary), with `...`
/// after the opening quote when it had to cut: the end of a log is what says why it failed.
fn quote_tail(text: &str) -> String {
    let mut start = text.len().saturating_sub(EXCERPT_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let quoted = quote(&text[start..]);
    if start == 0 {
        quoted
    } else {
        format!("\"...{}", &quoted[1..])
    }
}

#[cfg(test)]
mod tests {
    use evalhost_sdk::Event;
    use serde_json::json;

    use super::*;
    use crate::tests::{grade, invalid_config};

    /// Evidence whose only event is a `verifier.result` with this payload.
    fn verified(data: Value) -> Evidence {
        Evidence {
            events: vec![Event {
                seq: 0,
                kind: VERIFIER_RESULT.to_owned(),
                at_ms: 0,
                data: data.to_string(),
            }],
            ..Evidence::default()
        }
    }

    /// What `tests/test.sh` ends with: its rewards, exit code and output.
    fn result(rewards: Value, exit: Option<i32>, output: &str) -> Evidence {
        verified(json!({
            "Rewards": rewards, "ExitCode": exit, "Output": output, "DurationMs": 120, "Error": null,
        }))
    }

    fn graded(config: &str, evidence: &Evidence) -> Verdict {
        grade::<VerifierReward>(config, evidence)
    }

    #[test]
    fn a_reward_of_min_or_more_passes_with_the_reward_as_score() {
        let full = result(json!({"reward": 1.0}), Some(0), "1 passed\n");
        assert_eq!(graded("null", &full), Verdict::pass());
        assert_eq!(graded("{}", &full), Verdict::pass());
        let partial = result(json!({"reward": 0.75}), Some(0), "");
        assert_eq!(
            graded(r#"{"min":0.5}"#, &partial),
            Verdict::pass().with_score(0.75)
        );
        // The reward decides, not the exit code.
        let zero = result(json!({"reward": 0}), Some(1), "");
        assert_eq!(
            graded(r#"{"min":0}"#, &zero),
            Verdict::pass().with_score(0.0)
        );
    }

    #[test]
    fn a_lower_reward_fails_with_the_exit_code_and_the_end_of_the_output() {
        let failed = result(
            json!({"reward": 0}),
            Some(1),
            "collected 2 items\ntest_outputs.py F.\nFAILED test_outputs.py::test_hello - assert 'hi' == 'hello'\n",
        );
        assert_eq!(
            graded("null", &failed),
            Verdict::fail(
                r#"verifier_reward min 1: reward 0 (tests/test.sh exit 1); output "collected 2 items\ntest_outputs.py F.\nFAILED test_outputs.py::test_hello - assert 'hi' == 'hello'""#
            )
        );
        let partial = graded(
            r#"{"min":0.9}"#,
            &result(json!({"reward": 0.5}), Some(0), ""),
        );
        assert_eq!(
            partial,
            Verdict::fail("verifier_reward min 0.9: reward 0.5 (tests/test.sh exit 0)")
                .with_score(0.5)
        );
        // A long log is cut at its start: the summary a test runner prints last stays.
        let long = format!("{}\n=== 3 failed, 9 passed in 0.41s ===\n", "x".repeat(300));
        let message = graded("{}", &result(json!({"reward": 0}), None, &long)).message;
        assert!(
            message.starts_with(
                r#"verifier_reward min 1: reward 0 (tests/test.sh no exit code); output "...xxx"#
            ) && message.ends_with(r#"xxx\n=== 3 failed, 9 passed in 0.41s ===""#),
            "{message}"
        );
        let tail = message.split("output ").nth(1).unwrap();
        // 120 bytes of output, one of them a newline written as `\n`, in `"..."`.
        assert_eq!(tail.len(), EXCERPT_BYTES + 1 + "\"...\"".len(), "{tail}");
    }

    #[test]
    fn reward_json_is_read_by_key_by_reward_or_by_its_only_name() {
        let named = result(json!({"accuracy": 0.5, "reward": 1}), Some(0), "");
        assert!(graded("{}", &named).pass);
        assert_eq!(
            graded(r#"{"key":"accuracy"}"#, &named).message,
            "verifier_reward accuracy min 1: accuracy 0.5 (tests/test.sh exit 0)"
        );
        let only = result(json!({"accuracy": 0.5}), Some(0), "");
        assert_eq!(
            graded(r#"{"min":0.25}"#, &only),
            Verdict::pass().with_score(0.5)
        );
        assert_eq!(
            graded(r#"{"key":"speed"}"#, &named).message,
            "verifier_reward speed min 1: no reward speed; rewards: [accuracy reward]"
        );
        let several = result(json!({"accuracy": 1, "speed": 0.2}), Some(0), "");
        assert_eq!(
            graded("{}", &several),
            Verdict::fail(
                "verifier_reward min 1: rewards [accuracy speed] and none is named reward; choose one with key"
            )
        );
        assert!(graded(r#"{"key":"speed","min":0.1}"#, &several).pass);
    }

    #[test]
    fn no_reward_fails_with_the_verifier_s_error() {
        let timed_out = verified(json!({
            "Rewards": {}, "ExitCode": null, "Output": "running tests\n", "DurationMs": 600000,
            "Error": "the verifier timed out after 600 s",
        }));
        assert_eq!(
            graded(r#"{"key":"accuracy"}"#, &timed_out).message,
            r#"verifier_reward accuracy min 1: no reward: the verifier timed out after 600 s (tests/test.sh no exit code); output "running tests""#
        );
        let silent = result(json!({}), Some(0), "");
        assert_eq!(
            graded("{}", &silent).message,
            "verifier_reward min 1: no reward: the verifier wrote neither reward.txt nor reward.json (tests/test.sh exit 0)"
        );
        let nan = result(json!({"reward": null}), Some(0), "");
        assert_eq!(
            graded("{}", &nan).message,
            "verifier_reward min 1: reward null is not a number (tests/test.sh exit 0)"
        );
    }

    #[test]
    fn a_run_without_a_verifier_is_not_evaluable() {
        let evidence = Evidence::default();
        assert_eq!(
            evalhost_sdk::grade::<VerifierReward>("{}", &evidence),
            Err(GradeError::NotEvaluable(
                "verifier_reward: the run has no verifier result: the case has no verifier (a Harbor task's tests/)"
                    .to_owned()
            ))
        );
    }

    #[test]
    fn bad_configs_are_refused() {
        assert!(
            invalid_config::<VerifierReward>(r#"{"min":"high"}"#)
                .contains("invalid type: string \"high\", expected f64")
        );
        assert!(
            invalid_config::<VerifierReward>(r#"{"key":3}"#)
                .contains("invalid type: integer `3`, expected a string")
        );
        assert_eq!(
            invalid_config::<VerifierReward>(r#"{"key":""}"#),
            "key is empty"
        );
        assert!(
            invalid_config::<VerifierReward>(r#"{"max":1}"#)
                .contains("unknown field `max`, expected `min` or `key`")
        );
        assert!(
            invalid_config::<VerifierReward>("0.5").contains("expected a map with `min` and `key`")
        );
    }
}

//! Nexus's seven deterministic assertion kinds (`nexus eval`), as graders.
//!
//! They read the evidence's event stream: for a Nexus case that is the journal (kind =
//! event type, data = payload JSON); for evalhost's own runs it is the session log mapped
//! to the same vocabulary (`io.input`, `agent.turn.start`, `llm.request`, `llm.response`,
//! `tool.invoke`, `tool.result`, `agent.turn.end`). Graders that compare with a golden
//! journal (`event_sequence_distance`, `tool_invocation_parity`) get its events in their
//! config under `golden`, injected by the case loader.
//!
//! One deliberate difference from Nexus: `count.max: 0` written explicitly means "exactly
//! zero allowed" (Nexus reads it as "no upper bound").

mod budget;
mod emitted;
pub(crate) mod events;
mod parity;
mod sequence;

pub use budget::{Latency, TokenBudget};
pub use emitted::{EventCountBounds, EventEmitted};
pub use parity::ToolInvocationParity;
pub use sequence::{EventSequenceDistance, EventSequenceStrict};

use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};

/// `semantic:` entries of a Nexus `assertions.yaml` (Nexus Phase 5): accepted, never
/// evaluated, always reported as not evaluable.
pub struct Semantic;

/// The keys of a `semantic:` entry evalhost judges besides the `rubric` grader's config:
/// Nexus's own labels, kept in the report but not sent to the judge.
const SEMANTIC_LABELS: [&str; 2] = ["id", "description"];

/// The `rubric` config of a `semantic:` entry in evalhost's judged shape (a map with a
/// `rubric`), or `None` for any other entry (reported not evaluated, as before).
fn judged_entry(config: &serde_json::Value) -> Option<Result<crate::RubricConfig, String>> {
    let entry = config.as_object()?;
    if !entry.contains_key("rubric") {
        return None;
    }
    let rest: serde_json::Map<String, serde_json::Value> = entry
        .iter()
        .filter(|(key, _)| !SEMANTIC_LABELS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Some(
        evalhost_sdk::check_config::<crate::Rubric>(
            &serde_json::Value::Object(rest.clone()).to_string(),
        )
        .map_err(|e| e.message().to_owned())
        .and_then(|()| {
            serde_json::from_value(serde_json::Value::Object(rest)).map_err(|e| e.to_string())
        }),
    )
}

impl Grader for Semantic {
    type Config = serde_json::Value;
    const NAME: &'static str = "semantic";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "A Nexus semantic assertion: judged when it has a `rubric` and a judge is configured, otherwise reported as not evaluated";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({"description": "Any Nexus semantic assertion entry; one with `rubric` (and optionally threshold, sees, files, max_output_tokens, id, description) is judged"})
    }

    fn check(config: &serde_json::Value) -> Result<(), String> {
        match judged_entry(config) {
            Some(Err(problem)) => Err(format!(
                "a semantic entry with `rubric` is judged: {problem}"
            )),
            _ => Ok(()),
        }
    }

    fn grade(config: &serde_json::Value, evidence: &Evidence) -> Result<Verdict, GradeError> {
        let Some(Ok(rubric)) = judged_entry(config) else {
            return Err(GradeError::NotEvaluable(
                "semantic: semantic assertions are not evaluated by evalhost unless they have a `rubric` for the judge (docs/nexus.md)".to_owned(),
            ));
        };
        match crate::judged::score(&rubric, evidence, Self::NAME) {
            Ok(verdict) => Ok(verdict),
            Err(crate::judged::Unjudged::Judge(
                evalhost_sdk::judge::JudgeError::NotConfigured(_),
            )) => Err(GradeError::NotEvaluable(
                "semantic: no judge configured to judge this rubric (set [judge]; docs/judge.md)"
                    .to_owned(),
            )),
            Err(crate::judged::Unjudged::Judge(error)) => Err(error.into()),
            Err(crate::judged::Unjudged::Answer(message)) => Err(GradeError::Failed(message)),
        }
    }
}

#[cfg(test)]
mod tests {
    use evalhost_sdk::__private::Guest;

    use crate::__EvalhostGraders;

    #[test]
    fn the_component_lists_the_nexus_kinds() {
        let names: Vec<String> = __EvalhostGraders::list_graders()
            .into_iter()
            .map(|g| g.name)
            .collect();
        for kind in [
            "event_emitted",
            "event_count_bounds",
            "event_sequence_strict",
            "event_sequence_distance",
            "tool_invocation_parity",
            "token_budget",
            "latency",
            "semantic",
        ] {
            assert!(
                names.iter().any(|n| n == kind),
                "{kind} missing from {names:?}"
            );
        }
    }

    #[test]
    fn a_semantic_entry_with_a_rubric_is_checked_as_the_rubric_grader_checks_it() {
        use crate::tests::invalid_config;
        assert!(evalhost_sdk::check_config::<super::Semantic>(r#"{"judge_prompt": "x"}"#).is_ok());
        assert!(
            evalhost_sdk::check_config::<super::Semantic>(
                r#"{"id": "a", "description": "d", "rubric": "x", "threshold": 0.7}"#
            )
            .is_ok()
        );
        assert_eq!(
            invalid_config::<super::Semantic>(r#"{"id": "a", "rubric": "x", "threshold": 3}"#),
            "a semantic entry with `rubric` is judged: threshold must be from 0 to 1, found 3"
        );
        // Natively there is no judge: a judged entry is not evaluable, never an error.
        match evalhost_sdk::grade::<super::Semantic>(r#"{"rubric": "x"}"#, &Default::default()) {
            Err(evalhost_sdk::GradeError::NotEvaluable(m)) => {
                assert!(m.contains("no judge configured"), "{m}")
            }
            other => panic!("{other:?}"),
        }
    }
}

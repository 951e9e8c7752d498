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

impl Grader for Semantic {
    type Config = serde_json::Value;
    const NAME: &'static str = "semantic";
    const VERSION: &'static str = "1.0.0";
    const SUMMARY: &'static str = "A Nexus semantic assertion: accepted, reported as not evaluated";

    fn config_schema() -> serde_json::Value {
        serde_json::json!({"description": "Any Nexus semantic assertion entry"})
    }

    fn grade(_: &serde_json::Value, _: &Evidence) -> Result<Verdict, GradeError> {
        Err(GradeError::NotEvaluable(
            "semantic: semantic assertions are not evaluated by evalhost".to_owned(),
        ))
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
}

//! evalhost's built-in graders, as one WebAssembly component.
//!
//! The eleven graders of Mino's `mino eval`, with Mino's semantics, so a Mino
//! case file grades the same on evalhost:
//!
//! | grader | passes when | config |
//! |---|---|---|
//! | `final_text_contains` | the final text contains the substring | `"text"` |
//! | `final_text_not_contains` | the final text does not contain the substring | `"text"` |
//! | `final_text_matches` | the final text matches the regular expression (≤ 1 KiB) | `"regex"` |
//! | `tool_called` | some recorded call has this tool name | `bash` |
//! | `tool_not_called` | no recorded call has this tool name | `bash` |
//! | `tool_order` | the names appear in this order among the calls | `[bash, write_file]` |
//! | `result_status` | the call at this 1-based position has this status | `{call: 1, status: denied}` |
//! | `file_exists` | a regular file at this relative path exists in the workspace | `greeting.txt` |
//! | `file_contains` | that file's content contains the text | `{path: greeting.txt, text: hello}` |
//! | `max_requests` | the run made at most this many model requests | `2` |
//! | `max_tool_calls` | the model requested at most this many tool calls | `0` |
//!
//! Failure messages have the shape `<grader> <arg>: <what was seen>`; the
//! README lists every one. The grading logic is plain functions, unit-tested
//! natively; built for `wasm32-wasip2` the crate is the component the host
//! embeds.

mod agentcompany;
mod beyond;
mod calls;
mod config;
mod endpoint;
mod files;
mod judged;
mod limits;
mod nexus;
mod rubric;
mod skills;
mod text;
mod verifier;

pub use agentcompany::{
    ArgMatches, ArgMatchesConfig, MaxTurnsConfig, MessageContainsSubstring, MessageSubstringConfig,
    NoToolCalled, SemanticRubric, SemanticRubricConfig, ToolCallArgMatches, ToolCallCount,
    ToolCallCountConfig, ToolName, TraceMaxTurns,
};
pub use beyond::{JsonSchema, NoSecretLeak, WorkspaceDiff};
pub use calls::{ResultStatus, ResultStatusConfig, Status, ToolCalled, ToolNotCalled, ToolOrder};
pub use config::Text;
pub use endpoint::{NoEndpointErrors, NoSettings};
pub use files::{AbsentPaths, FileAbsent, FileContains, FileContainsConfig, FileExists};
pub use judged::{Rubric, RubricConfig, Sees};
pub use limits::{MaxRequests, MaxToolCalls};
pub use nexus::{
    EventCountBounds, EventEmitted, EventSequenceDistance, EventSequenceStrict, Latency, Semantic,
    TokenBudget, ToolInvocationParity,
};
pub use skills::SkillViewed;
pub use text::{
    FinalTextContains, FinalTextMatches, FinalTextNotContains, MAX_PATTERN_BYTES, Pattern,
};
pub use verifier::{VerifierReward, VerifierRewardConfig};

/// The built-in graders as `register_graders!` lists them, natively: `Registered::NAMES`
/// (in the order `evalhost graders` shows them) and `Registered::grade_named`, the
/// component's own dispatch (the bench's native baseline grades through it). The README's
/// count and rows and the case schema are checked against it (`tests/one_list.rs`).
pub use __EvalhostGraders as Registered;

evalhost_sdk::register_graders!(
    FinalTextContains,
    FinalTextNotContains,
    FinalTextMatches,
    ToolCalled,
    ToolNotCalled,
    ToolOrder,
    ResultStatus,
    FileExists,
    FileContains,
    MaxRequests,
    MaxToolCalls,
    ToolCallCount,
    NoToolCalled,
    MessageContainsSubstring,
    ToolCallArgMatches,
    TraceMaxTurns,
    SemanticRubric,
    EventEmitted,
    EventCountBounds,
    EventSequenceStrict,
    EventSequenceDistance,
    ToolInvocationParity,
    TokenBudget,
    Latency,
    Semantic,
    JsonSchema,
    WorkspaceDiff,
    FileAbsent,
    NoSecretLeak,
    SkillViewed,
    NoEndpointErrors,
    VerifierReward,
    Rubric,
);

#[cfg(test)]
mod tests {
    use evalhost_sdk::__private::Guest;
    use evalhost_sdk::{Evidence, GradeError, Grader, Verdict};

    use super::__EvalhostGraders;

    /// Grades through the JSON config, as the component does.
    pub fn grade<G: Grader>(config: &str, evidence: &Evidence) -> Verdict {
        evalhost_sdk::grade::<G>(config, evidence)
            .unwrap_or_else(|e| panic!("{} {config}: {e:?}", G::NAME))
    }

    /// The message of the `invalid-config` error `config` gets.
    pub fn invalid_config<G: Grader>(config: &str) -> String {
        match evalhost_sdk::check_config::<G>(config) {
            Err(GradeError::InvalidConfig(message)) => message,
            other => panic!(
                "{} {config}: expected invalid-config, got {other:?}",
                G::NAME
            ),
        }
    }

    #[test]
    fn the_component_lists_mino_s_eleven_graders() {
        let names: Vec<String> = __EvalhostGraders::list_graders()
            .into_iter()
            .map(|g| g.name)
            .collect();
        // Mino's eleven come first; other suites' graders follow.
        assert_eq!(
            names[..11],
            [
                "final_text_contains",
                "final_text_not_contains",
                "final_text_matches",
                "tool_called",
                "tool_not_called",
                "tool_order",
                "result_status",
                "file_exists",
                "file_contains",
                "max_requests",
                "max_tool_calls",
            ]
        );
        for info in __EvalhostGraders::list_graders() {
            let schema: serde_json::Value = serde_json::from_str(&info.config_schema).unwrap();
            assert!(schema.is_object(), "{}", info.name);
            assert!(
                !info.summary.is_empty() && info.version == "1.0.0",
                "{}",
                info.name
            );
        }
    }

    /// A case file's `grader: 2026` (or `true`, `"2026"`) that a grader accepts must be
    /// valid under its config schema too, or an editor would flag a case that runs.
    #[test]
    fn a_scalar_config_a_grader_accepts_its_schema_allows() {
        for info in __EvalhostGraders::list_graders() {
            let schema: serde_json::Value = serde_json::from_str(&info.config_schema).unwrap();
            for (config, kind) in [
                ("2026", "number"),
                ("true", "boolean"),
                ("\"2026\"", "string"),
            ] {
                let accepted =
                    __EvalhostGraders::check_config(info.name.clone(), config.into()).is_ok();
                // 2026 is an integer: "integer" allows it as "number" does.
                let allows =
                    |t: &serde_json::Value| t == kind || (kind == "number" && t == "integer");
                let allowed = match &schema["type"] {
                    serde_json::Value::Array(types) => types.iter().any(allows),
                    serde_json::Value::Null => true,
                    one => allows(one),
                };
                assert!(
                    !accepted || allowed,
                    "{} accepts the config {config} but its schema's type is {}",
                    info.name,
                    schema["type"]
                );
            }
        }
    }

    #[test]
    fn unknown_graders_are_named() {
        match __EvalhostGraders::check_config("tool_calls".into(), r#""bash""#.into()) {
            Err(GradeError::UnknownGrader(message)) => assert!(
                message.starts_with(r#"no grader named "tool_calls" in this component; it provides: final_text_contains, "#),
                "{message}"
            ),
            other => panic!("{other:?}"),
        }
    }
}

//! The bench-only native path: the built-in graders' own Rust code (the `graders/builtin`
//! crate compiled for the host) called in-process on the same evidence the WASM host gets.
//! This is the baseline of the WASM/native ratios; evalhost itself never grades this way.

use std::path::Path;

use evalhost::evidence::Evidence;
use evalhost_builtin_graders as builtin;
use evalhost_sdk as sdk;

/// The host's evidence in the graders' own type, with the workspace at `workspace` (a
/// native grader reads the real directory; in the sandbox it is `/workspace`).
pub fn sdk_evidence(e: &Evidence, workspace: &Path) -> sdk::Evidence {
    sdk::Evidence {
        case_name: e.case_name.clone(),
        run: e.run,
        mode: e.mode.clone(),
        model: e.model.clone(),
        prompt: e.prompt.clone(),
        final_text: e.final_text.clone(),
        messages: e
            .messages
            .iter()
            .map(|m| sdk::Message {
                role: m.role.clone(),
                content: m.content.clone(),
            })
            .collect(),
        calls: e
            .calls
            .iter()
            .map(|c| sdk::ToolCall {
                index: c.index,
                call_id: c.call_id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                status: c.status.clone(),
                output: c.output.clone(),
                started: c.started,
                duration_ms: c.duration_ms,
            })
            .collect(),
        usage: sdk::Usage {
            requests: e.usage.requests,
            input_tokens: e.usage.input_tokens,
            output_tokens: e.usage.output_tokens,
            synthetic: e.usage.synthetic,
        },
        events: e
            .events
            .iter()
            .map(|ev| sdk::Event {
                seq: ev.seq,
                kind: ev.kind.clone(),
                at_ms: ev.at_ms,
                data: ev.data.clone(),
            })
            .collect(),
        duration_ms: e.duration_ms,
        run_error: e.run_error.clone(),
        workspace: workspace.display().to_string(),
        seeded_files: e
            .seeded_files
            .iter()
            .map(|f| sdk::SeededFile {
                path: f.path.clone(),
                sha256: f.sha256.clone(),
                size: f.size,
            })
            .collect(),
    }
}

/// Grade natively: parse and check the config, then grade, exactly as the component's
/// `grade` export does, but by reference (no copy of the evidence).
pub fn grade(
    grader: &str,
    config: &str,
    evidence: &sdk::Evidence,
) -> Result<sdk::Verdict, sdk::GradeError> {
    macro_rules! dispatch {
        ($($g:ty),+ $(,)?) => {
            $(
                if grader == <$g as sdk::Grader>::NAME {
                    return sdk::grade::<$g>(config, evidence);
                }
            )+
        };
    }
    dispatch!(
        builtin::FinalTextContains,
        builtin::FinalTextNotContains,
        builtin::FinalTextMatches,
        builtin::ToolCalled,
        builtin::ToolNotCalled,
        builtin::ToolOrder,
        builtin::ResultStatus,
        builtin::FileExists,
        builtin::FileContains,
        builtin::MaxRequests,
        builtin::MaxToolCalls,
        builtin::ToolCallCount,
        builtin::NoToolCalled,
        builtin::MessageContainsSubstring,
        builtin::ToolCallArgMatches,
        builtin::TraceMaxTurns,
        builtin::SemanticRubric,
        builtin::EventEmitted,
        builtin::EventCountBounds,
        builtin::EventSequenceStrict,
        builtin::EventSequenceDistance,
        builtin::ToolInvocationParity,
        builtin::TokenBudget,
        builtin::Latency,
        builtin::Semantic,
        builtin::JsonSchema,
        builtin::WorkspaceDiff,
        builtin::NoSecretLeak,
        builtin::SkillViewed,
        builtin::VerifierReward,
    );
    Err(sdk::GradeError::UnknownGrader(grader.to_owned()))
}

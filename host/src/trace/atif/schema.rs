//! What ATIF-v1.8 defines: each object's fields (any other is named in the notes), and the
//! fields it requires.

use crate::trace::TraceError;
use crate::trace::json::{Node, Object};

pub(super) const TRAJECTORY_FIELDS: &[&str] = &[
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
];
pub(super) const AGENT_FIELDS: &[&str] =
    &["name", "version", "model_name", "tool_definitions", "extra"];
pub(super) const STEP_FIELDS: &[&str] = &[
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
];
pub(super) const TOOL_CALL_FIELDS: &[&str] =
    &["tool_call_id", "function_name", "arguments", "extra"];
pub(super) const OBSERVATION_FIELDS: &[&str] = &["results"];
pub(super) const RESULT_FIELDS: &[&str] = &[
    "source_call_id",
    "content",
    "subagent_trajectory_ref",
    "extra",
];
pub(super) const METRICS_FIELDS: &[&str] = &[
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cost_usd",
    "prompt_token_ids",
    "completion_token_ids",
    "logprobs",
    "extra",
];
pub(super) const FINAL_METRICS_FIELDS: &[&str] = &[
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
    "extra",
];
pub(super) const CONTENT_PART_FIELDS: &[&str] = &["type", "text", "source"];

/// Field `key` of `object`, which ATIF requires (absent or `null`: an error naming it).
pub(super) fn required<'a>(object: &Object<'a>, key: &str) -> Result<Node<'a>, TraceError> {
    object
        .get(key)
        .ok_or_else(|| object.missing(key, "missing: ATIF requires it"))
}

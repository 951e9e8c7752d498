//! Assertions and rubric dimensions as graders: one [`GraderUse`] each, config = the
//! assertion object without `kind`.

use std::path::Path;

use serde_json::{Map, Value};

use super::invalid;
use super::lines::Assertions;
use crate::case::error::Problems;
use crate::case::{CaseError, GraderUse, Location, MAX_GRADERS};

/// Assertion kind → grader name. AgentCompany's `tool_called` (an object config) is the
/// grader `tool_call_count`, distinct from Mino's `tool_called` (a tool name).
pub(crate) const KINDS: &[(&str, &str)] = &[
    ("tool_called", "tool_call_count"),
    ("no_tool_called", "no_tool_called"),
    ("message_contains_substring", "message_contains_substring"),
    ("tool_call_arg_matches", "tool_call_arg_matches"),
    ("trace_max_turns", "trace_max_turns"),
];

/// Grader of every `semanticRubric` dimension.
pub(crate) const RUBRIC_GRADER: &str = "semantic_rubric";

/// The graders of a fixture's assertions line (at `line`).
pub(super) fn graders(
    path: &Path,
    line: usize,
    block: &Assertions,
) -> Result<Vec<GraderUse>, CaseError> {
    let location = Location::line(path, line);
    let mut problems = Problems::default();
    if block.semantic_rubric.is_empty() {
        problems.push(invalid(
            path,
            line,
            "semanticRubric",
            "missing or empty; every fixture needs at least one semantic rubric dimension",
        ));
    }
    let total = block.assertions.len() + block.semantic_rubric.len();
    if total > MAX_GRADERS {
        problems.push(invalid(
            path,
            line,
            "assertions",
            format!("{total} assertions and rubric dimensions; at most {MAX_GRADERS}"),
        ));
    }
    let mut graders = Vec::with_capacity(total);
    for (index, assertion) in block.assertions.iter().enumerate() {
        let field = format!("assertions[{index}].kind");
        let mut config: Map<String, Value> = assertion.clone();
        let kind = match config.remove("kind") {
            Some(Value::String(kind)) => kind,
            _ => {
                problems.push(invalid(path, line, &field, "missing or not a string"));
                continue;
            }
        };
        let Some((_, grader)) = KINDS.iter().find(|(k, _)| *k == kind) else {
            let known: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
            problems.push(invalid(
                path,
                line,
                &field,
                format!("unknown kind {kind:?} (known: {})", known.join(", ")),
            ));
            continue;
        };
        graders.push(GraderUse {
            name: (*grader).into(),
            config: Value::Object(config).into(),
            location: location.clone(),
            judge: false,
        });
    }
    let mut ids: Vec<&str> = Vec::new();
    for (index, dimension) in block.semantic_rubric.iter().enumerate() {
        if let Some(id) = dimension.get("id").and_then(Value::as_str) {
            if ids.contains(&id) {
                problems.push(invalid(
                    path,
                    line,
                    &format!("semanticRubric[{index}].id"),
                    format!("{id:?} is used twice"),
                ));
            }
            ids.push(id);
        }
        graders.push(GraderUse {
            name: RUBRIC_GRADER.into(),
            config: Value::Object(dimension.clone()).into(),
            location: location.clone(),
            judge: false,
        });
    }
    problems.finish(Some(graders))
}

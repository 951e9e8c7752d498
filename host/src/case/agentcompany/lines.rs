//! The JSONL lines of a fixture: `meta` first, `turn` lines, `assertions` last.

use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::invalid;
use crate::case::CaseError;
use crate::case::error::Problems;

/// The `meta` header.
#[expect(dead_code, reason = "recordedAt, provider and model are informational")]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Meta {
    #[serde(rename = "type")]
    _type: String,
    pub fixture_id: String,
    pub pi_agent_core_version: String,
    pub recorded_at: String,
    pub scenario: String,
    pub system_prompt_hash: String,
    /// Written by the recorder; informational.
    #[serde(default)]
    pub provider: Option<String>,
    /// Written by the recorder; informational.
    #[serde(default)]
    pub model: Option<String>,
}

/// One `turn` line.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Turn {
    #[serde(rename = "type")]
    _type: String,
    pub turn_index: u64,
    pub role: Role,
    pub content: Vec<Block>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub token_ledger: Option<TokenLedger>,
    /// On a `toolResult` turn: the tool failed.
    #[serde(default)]
    pub is_error: bool,
}

/// Who a turn is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum Role {
    User,
    Assistant,
    ToolResult,
}

/// One content block of a turn.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
pub(super) enum Block {
    #[serde(rename = "text")]
    Text { text: String },
    #[serde(rename = "toolCall")]
    ToolCall {
        id: String,
        name: String,
        arguments: Map<String, Value>,
    },
}

/// Token usage of an assistant turn, snake_case on disk (pi-ai's `Usage.{input, cacheRead,
/// cacheWrite, output}`); replayed as the response's usage.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TokenLedger {
    pub input: u64,
    pub cache_read: u64,
    pub cache_creation: u64,
    pub output: u64,
}

/// The `assertions` line, its entries kept as JSON for the grader mapping.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct Assertions {
    #[serde(rename = "type")]
    _type: String,
    pub assertions: Vec<Map<String, Value>>,
    #[serde(default)]
    pub semantic_rubric: Vec<Map<String, Value>>,
}

/// A fixture split into its records, each with its 1-based line number.
pub(super) struct Lines {
    pub meta: Meta,
    pub turns: Vec<(usize, Turn)>,
    pub assertions: (usize, Assertions),
}

/// Split `text` into meta, turns and assertions, in that order, each line checked for shape.
/// A broken line is noted and the next one read, so every broken line is reported.
pub(super) fn split(path: &Path, text: &str) -> Result<Lines, CaseError> {
    let mut problems = Problems::default();
    let mut meta = None;
    let mut turns = Vec::new();
    let mut assertions: Option<(usize, Assertions)> = None;
    // The line of the assertions record, even when it did not parse.
    let mut assertions_at = None;
    // Whether line 1 is a meta record, even one that did not parse.
    let mut meta_first = false;
    let mut last_line = 0;
    for (index, line) in text.lines().enumerate() {
        let n = index + 1;
        last_line = n;
        let record = record(path, n, line, assertions_at);
        let Some((kind, value)) = problems.keep(record) else {
            continue;
        };
        match kind.as_str() {
            "meta" if n == 1 => {
                meta_first = true;
                meta = problems.keep(typed::<Meta>(path, n, "meta", value));
            }
            // (When line 1 is not the meta header, its own problem says so.)
            "meta" if !meta_first => {}
            "meta" => problems.push(invalid(
                path,
                n,
                "type",
                "a second meta line; the meta header comes once, on line 1",
            )),
            other if n == 1 => problems.push(invalid(
                path,
                n,
                "type",
                format!("the first line must be the meta header, found {other:?}"),
            )),
            "turn" => {
                if let Some(turn) = problems.keep(typed::<Turn>(path, n, "turn", value)) {
                    turns.push((n, turn));
                }
            }
            "assertions" => {
                assertions_at = Some(n);
                assertions = problems
                    .keep(typed(path, n, "assertions", value))
                    .map(|a| (n, a));
            }
            other => problems.push(invalid(
                path,
                n,
                "type",
                format!("unknown line type {other:?} (expected \"turn\" or \"assertions\")"),
            )),
        }
    }
    if last_line == 0 {
        problems.push(CaseError::malformed(
            path,
            1,
            "the fixture is empty; it needs a meta line, turns and an assertions line",
        ));
    } else if assertions_at.is_none() && problems.count() == 0 {
        // (After a broken line, a missing assertions line may be the broken one.)
        problems.push(CaseError::malformed(
            path,
            last_line,
            "no assertions line; a fixture must end with one",
        ));
    }
    let lines = match (meta, assertions) {
        (Some(meta), Some(assertions)) => Some(Lines {
            meta,
            turns,
            assertions,
        }),
        _ => None,
    };
    problems.finish(lines)
}

/// Line `n` as JSON and its `type`; `assertions_at` is the assertions line if one was read
/// (no line may follow it).
fn record(
    path: &Path,
    n: usize,
    line: &str,
    assertions_at: Option<usize>,
) -> Result<(String, Value), CaseError> {
    if line.trim().is_empty() {
        return Err(CaseError::malformed(
            path,
            n,
            "blank line; every line of a fixture is one JSON record",
        ));
    }
    let value: Value = serde_json::from_str(line).map_err(|e| {
        CaseError::malformed(path, n, format!("invalid JSON: {}", strip_position(&e)))
    })?;
    let kind = value
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            invalid(
                path,
                n,
                "type",
                "missing: each line needs \"type\": \"meta\", \"turn\" or \"assertions\"",
            )
        })?
        .to_owned();
    if let Some(at) = assertions_at {
        return Err(invalid(
            path,
            n,
            "type",
            format!(
                "a {kind:?} line after the assertions line (line {at}); the assertions line must be last"
            ),
        ));
    }
    Ok((kind, value))
}

fn typed<T: DeserializeOwned>(
    path: &Path,
    line: usize,
    what: &str,
    value: Value,
) -> Result<T, CaseError> {
    serde_json::from_value(value).map_err(|e| invalid(path, line, what, strip_position(&e)))
}

/// serde_json's message without its ` at line L column C` suffix (the line is ours).
fn strip_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) if error.line() > 0 => format!("{} (column {})", &text[..at], error.column()),
        _ => text,
    }
}

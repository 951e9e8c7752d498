//! `assertions.yaml`: `deterministic:` entries become graders named by their `kind`;
//! `semantic:` entries become `semantic` graders, reported as not evaluated.

use std::path::Path;

use serde_json::Value;

use super::super::yaml::{Node, Value as Yaml};
use super::super::{CaseError, GraderUse, MAX_GRADERS};
use super::journal::Journal;
use super::yaml::{entries, invalid, loc, read_map, to_json};

/// Nexus's deterministic assertion kinds.
pub(crate) const KINDS: &[&str] = &[
    "event_emitted",
    "event_count_bounds",
    "event_sequence_strict",
    "event_sequence_distance",
    "tool_invocation_parity",
    "token_budget",
    "latency",
];

/// Kinds that compare with the golden journal: the loader adds its events as `golden`.
pub(crate) const GOLDEN_KINDS: &[&str] = &["event_sequence_distance", "tool_invocation_parity"];

/// The golden journal's events, as injected into configs.
pub(crate) fn golden_events(journal: &Journal) -> Value {
    Value::Array(
        journal
            .events
            .iter()
            .map(|e| serde_json::json!({"type": e.event_type, "payload": e.payload}))
            .collect(),
    )
}

/// Read `assertions.yaml` at `path` into grader entries.
pub(crate) fn read_assertions(path: &Path, journal: &Journal) -> Result<Vec<GraderUse>, CaseError> {
    let root = read_map(path)?;
    let golden = golden_events(journal);
    let mut graders = Vec::new();
    for (key, node) in entries(path, &root, "", Some(&["deterministic", "semantic"]))? {
        let Yaml::Seq(items) = &node.value else {
            if matches!(node.value, Yaml::Null) {
                continue;
            }
            return Err(invalid(
                path,
                node,
                &key,
                format!("expected a list, found {}", node.value.kind()),
            ));
        };
        for (index, item) in items.iter().enumerate() {
            let field = format!("{key}[{index}]");
            let grader = if key == "semantic" {
                GraderUse {
                    name: "semantic".into(),
                    config: to_json(path, item, &field)?,
                    location: loc(path, item),
                    judge: false,
                }
            } else {
                deterministic(path, item, &field, &golden)?
            };
            graders.push(grader);
        }
    }
    if graders.is_empty() {
        return Err(CaseError::Invalid {
            location: loc(path, &root),
            field: "deterministic".into(),
            message: "no assertions; a case needs at least one".into(),
        });
    }
    if graders.len() > MAX_GRADERS {
        return Err(CaseError::Invalid {
            location: loc(path, &root),
            field: String::new(),
            message: format!(
                "{} assertions; at most {MAX_GRADERS} are allowed",
                graders.len()
            ),
        });
    }
    Ok(graders)
}

fn deterministic(
    path: &Path,
    item: &Node,
    field: &str,
    golden: &Value,
) -> Result<GraderUse, CaseError> {
    if !matches!(item.value, Yaml::Map(_)) {
        return Err(invalid(
            path,
            item,
            field,
            format!("expected a map with `kind`, found {}", item.value.kind()),
        ));
    }
    let fields = entries(path, item, field, None)?;
    let Some((_, kind_node)) = fields.iter().find(|(k, _)| k == "kind") else {
        return Err(invalid(path, item, field, "missing field `kind`"));
    };
    let Yaml::String(kind) = &kind_node.value else {
        return Err(invalid(
            path,
            kind_node,
            &format!("{field}.kind"),
            "expected a string",
        ));
    };
    if !KINDS.contains(&kind.as_str()) {
        return Err(invalid(
            path,
            kind_node,
            &format!("{field}.kind"),
            format!(
                "unknown assertion kind `{kind}` (known kinds: {})",
                KINDS.join(", ")
            ),
        ));
    }
    let mut config = serde_json::Map::new();
    for (key, value) in &fields {
        if key == "kind" {
            continue;
        }
        if key == "golden" {
            return Err(invalid(
                path,
                value,
                &format!("{field}.golden"),
                "`golden` is filled in from the case's journal; remove it",
            ));
        }
        config.insert(
            key.clone(),
            to_json(path, value, &format!("{field}.{key}"))?,
        );
    }
    if GOLDEN_KINDS.contains(&kind.as_str()) {
        config.insert("golden".into(), golden.clone());
    }
    Ok(GraderUse {
        name: kind.clone(),
        config: Value::Object(config),
        location: loc(path, item),
        judge: false,
    })
}

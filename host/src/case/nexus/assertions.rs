//! `assertions.yaml`: `deterministic:` entries become graders named by their `kind`;
//! `semantic:` entries become `semantic` graders, reported as not evaluated.

use std::path::Path;

use serde_json::Value;

use super::super::located::{Doc, child};
use super::super::yaml::{Node, Value as Yaml};
use super::super::{CaseError, GraderUse, MAX_GRADERS};
use super::journal::Journal;

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
    let golden = golden_events(journal);
    super::read_yaml(path, |doc, root| {
        let fields = doc.fields(root, "", &["deterministic", "semantic"])?;
        let mut graders = Vec::new();
        let mut given = 0;
        for (key, node) in fields.iter() {
            if matches!(node.value, Yaml::Null) {
                continue;
            }
            let Some(items) = doc.seq(node, key, "a list") else {
                continue;
            };
            for (index, item) in items.iter().enumerate() {
                given += 1;
                let field = format!("{key}[{index}]");
                if key == "semantic" {
                    graders.push(GraderUse {
                        name: "semantic".into(),
                        config: doc.json(item, &field).into(),
                        location: doc.loc(item),
                        judge: false,
                    });
                } else {
                    graders.extend(deterministic(doc, item, &field, &golden));
                }
            }
        }
        // (A misspelt section was reported already.)
        if given == 0 && !fields.unknown {
            doc.note(doc.invalid(
                root,
                "deterministic",
                "no assertions; a case needs at least one",
            ));
        }
        if given > MAX_GRADERS {
            doc.note(doc.invalid(
                root,
                "",
                format!("{given} assertions; at most {MAX_GRADERS} are allowed"),
            ));
        }
        Some(graders)
    })
}

fn deterministic(doc: &Doc, item: &Node, field: &str, golden: &Value) -> Option<GraderUse> {
    if !matches!(item.value, Yaml::Map(_)) {
        doc.note(doc.invalid(
            item,
            field,
            format!("expected a map with `kind`, found {}", item.value.kind()),
        ));
        return None;
    }
    let entries = doc.map(item, field, "a map")?;
    let Some((_, _, kind_node)) = entries.iter().find(|(k, _, _)| k == "kind") else {
        doc.note(doc.invalid(item, field, "missing field `kind`"));
        return None;
    };
    let kind_field = child(field, "kind");
    let Yaml::String(kind) = &kind_node.value else {
        doc.note(doc.invalid(kind_node, &kind_field, "expected a string"));
        return None;
    };
    if !KINDS.contains(&kind.as_str()) {
        doc.note(doc.invalid(
            kind_node,
            &kind_field,
            format!(
                "unknown assertion kind `{kind}` (known kinds: {})",
                KINDS.join(", ")
            ),
        ));
        return None;
    }
    let mut config = serde_json::Map::new();
    for (key, _, value) in &entries {
        if key == "kind" {
            continue;
        }
        if key == "golden" {
            doc.note(doc.invalid(
                value,
                &child(field, "golden"),
                "`golden` is filled in from the case's journal; remove it",
            ));
            continue;
        }
        config.insert(key.clone(), doc.json(value, &child(field, key)));
    }
    if GOLDEN_KINDS.contains(&kind.as_str()) {
        config.insert("golden".into(), golden.clone());
    }
    Some(GraderUse {
        name: kind.as_str().into(),
        config: Value::Object(config).into(),
        location: doc.loc(item),
        judge: false,
    })
}

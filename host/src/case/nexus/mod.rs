//! Nexus case directories (`nexus eval`): `case.yaml`, `input/`, `journal/`,
//! `assertions.yaml`. No agent runs: the journal is the evidence
//! ([`crate::case::Execution::Recorded`]), graded by the Nexus assertion kinds.
//!
//! ```text
//! <id>/case.yaml          name, description, tags, owner, freshness_days, model_baseline, recorded_at
//! <id>/input/config.yaml  the Nexus engine config (not read)
//! <id>/input/inputs.yaml  inputs: [...] (the user side, for people and promotion)
//! <id>/journal/header.json, events.jsonl, events-NNN.jsonl.zst
//! <id>/assertions.yaml    deterministic: [...], semantic: [...]
//! ```

mod assertions;
mod evidence;
mod journal;
pub(crate) mod promote;

#[cfg(feature = "run")]
pub(crate) use assertions::golden_events;
pub(crate) use evidence::journal_evidence;
pub use journal::Journal;
pub(crate) use journal::read_journal;

use std::path::Path;
use std::sync::Arc;

use super::error::Problems;
use super::located::Doc;
use super::read::read_text;
use super::yaml::{Node, Value};
use super::{Case, CaseError, Execution};
use crate::session::Approve;

/// The fields of `case.yaml`.
pub(crate) const CASE_FIELDS: &[&str] = &[
    "name",
    "description",
    "tags",
    "owner",
    "freshness_days",
    "model_baseline",
    "recorded_at",
];

/// Whether `dir` is a Nexus case directory (it holds a `case.yaml`).
pub(crate) fn is_case_dir(dir: &Path) -> bool {
    dir.join("case.yaml").is_file()
}

/// Whether a directory entry named `name` is skipped by discovery (hidden or `_`-prefixed).
pub(crate) fn is_ignored(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_')
}

/// Load the Nexus case in directory `dir`; its basename is the case id.
pub(crate) fn load_nexus_case(dir: &Path) -> Result<Case, CaseError> {
    let id = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let case_path = dir.join("case.yaml");
    if id.is_empty() {
        return Err(CaseError::malformed(
            dir,
            0,
            "a case directory needs a name",
        ));
    }
    if let Some(problem) = super::case_name::problem(&id) {
        return Err(CaseError::malformed(
            dir,
            0,
            format!("the directory's name is the case's: {problem}"),
        ));
    }
    // Each file of the directory is checked on its own, so a load reports the problems of
    // all of them (the assertions only once the journal they refer to has loaded).
    let mut problems = Problems::default();
    let metadata = problems.keep(read_case_yaml(&case_path, &id));
    let inputs = problems.keep(read_inputs(&dir.join("input").join("inputs.yaml")));
    let journal = problems.keep(read_journal(&dir.join("journal")));
    let graders = journal.as_ref().and_then(|journal| {
        problems.keep(assertions::read_assertions(
            &dir.join("assertions.yaml"),
            journal,
        ))
    });
    let (Some((description, tags)), Some(inputs), Some(journal), Some(graders)) =
        (metadata, inputs, journal, graders)
    else {
        return problems.finish(None);
    };
    let evidence = journal_evidence(&id, &journal);
    let prompt = inputs
        .first()
        .cloned()
        .unwrap_or_else(|| evidence.prompt.clone());
    problems.finish(Some(Case {
        name: id,
        path: dir.to_path_buf(),
        description: description.trim_end().to_owned(),
        prompt,
        follow_ups: Vec::new(),
        instructions: None,
        approve: Approve::None,
        workspace_files: Vec::new(),
        model: Vec::new(),
        graders,
        runs: None,
        timeout_secs: None,
        live: false,
        tags,
        execution: Execution::Recorded(Arc::new(evidence)),
        confine: Default::default(),
        recorded_model: None,
        digest: String::new(),
        environment: None,
        verifier: None,
        solution: None,
        body: Default::default(),
    }))
}

/// `description` and `tags` of `case.yaml`, whose `name` must be `id`.
fn read_case_yaml(case_path: &Path, id: &str) -> Result<(String, Vec<String>), CaseError> {
    read_yaml(case_path, |doc, root| {
        let fields = doc.fields(root, "", CASE_FIELDS)?;
        let mut description = String::new();
        let mut tags = Vec::new();
        for (key, node) in fields.iter() {
            match key {
                "name" => {
                    if let Some(name) = doc.keep(doc.string(node, "name"))
                        && name != id
                    {
                        doc.note(doc.invalid(
                            node,
                            "name",
                            format!("{name:?} does not match the directory name {id:?}"),
                        ));
                    }
                }
                "description" => {
                    description = doc
                        .keep(doc.string(node, "description"))
                        .unwrap_or_default();
                }
                "tags" => tags = strings(doc, node, "tags"),
                _ => {
                    // Metadata for people; checked to be a scalar.
                    doc.keep(doc.string(node, key));
                }
            }
        }
        Some((description, tags))
    })
}

/// `inputs:` of `input/inputs.yaml` (empty when the file is absent).
pub(crate) fn read_inputs(path: &Path) -> Result<Vec<String>, CaseError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    read_yaml(path, |doc, root| {
        let fields = doc.fields(root, "", &["inputs"])?;
        Some(
            fields
                .get("inputs")
                .map(|node| strings(doc, node, "inputs"))
                .unwrap_or_default(),
        )
    })
}

/// Check the YAML file `path` of a case directory with `check`, given its top level, which
/// must be a map (an empty file is an empty map). Every problem `check` notes is reported.
fn read_yaml<T>(path: &Path, check: impl FnOnce(&Doc, &Node) -> Option<T>) -> Result<T, CaseError> {
    let text = read_text(path, "case file")?;
    let doc = Doc::new(path, &text);
    let mut root = doc.root()?;
    match &root.value {
        Value::Map(_) => {}
        Value::Null => root = root.empty_map_here(),
        other => {
            return Err(CaseError::Malformed {
                location: doc.loc(&root),
                message: format!("expected a map of fields, found {}", other.kind()),
            });
        }
    }
    let value = check(&doc, &root);
    doc.finish(value)
}

/// A list of strings (null: none).
fn strings(doc: &Doc, node: &Node, field: &str) -> Vec<String> {
    if matches!(node.value, Value::Null) {
        return Vec::new();
    }
    let Some(items) = doc.seq(node, field, "a list") else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| doc.keep(doc.string(item, &format!("{field}[{index}]"))))
        .collect()
}

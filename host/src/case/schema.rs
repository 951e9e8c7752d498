//! The JSON Schema of the case YAML format, for editors (a YAML language server completes
//! and checks case files with it) and for checking case files outside evalhost.
//!
//! The schema is generated from the case format's one declaration (`format.rs`, whose field
//! lists the parser checks documents against), plus the config schema each grader publishes
//! through `list-graders`, so grader names complete and grader configs are checked as the
//! components would check them. The parser stays the authority: it also checks what a
//! schema cannot say (the name equals the file stem, seed paths stay inside the workspace, a
//! grader's own config rules).

use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use super::format::CaseFile;
use crate::grader::GraderInfo;

/// A grader key that names a component file (`path/to/grader.wasm#grader`): any config.
const PATH_REFERENCE: &str = r"\.wasm(#[^#]*)?$";
/// A grader key that names a grader of a bundle (`bundle/grader`): any config.
const BUNDLE_REFERENCE: &str = r"^[^/#]+/[^/#]+$";

/// The JSON Schema (draft 2020-12) of an evalhost case file, knowing the configs of
/// `graders` (usually the built-in graders: `GraderHost::with_builtins().graders()`).
pub fn case_schema<'a>(graders: impl IntoIterator<Item = &'a GraderInfo>) -> Value {
    let mut schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<CaseFile>()
        .to_value();
    let mut known = serde_json::Map::new();
    for info in graders {
        let mut config: Value = serde_json::from_str(&info.config_schema).unwrap_or(json!({}));
        if let Value::Object(config) = &mut config {
            // The grader's one-line summary is what an editor shows on completion.
            config
                .entry("description")
                .or_insert_with(|| Value::String(info.summary.clone()));
            // A nested `$schema` is not allowed below the root in 2020-12 documents.
            config.remove("$schema");
        }
        known.insert(info.name.clone(), config);
    }
    known.insert(
        super::JUDGE_KEY.into(),
        json!({
            "type": "boolean",
            "description": "Grant a component named by path the judge (docs/judge.md)"
        }),
    );
    if let Some(entry) = schema.pointer_mut("/$defs/GraderEntry")
        && let Value::Object(entry) = entry
    {
        entry.insert("properties".into(), Value::Object(known));
        // One grader, plus `judge: true` beside it.
        entry.remove("maxProperties");
        entry.insert(
            "anyOf".into(),
            json!([
                {"maxProperties": 1},
                {"required": [super::JUDGE_KEY], "maxProperties": 2}
            ]),
        );
        entry.insert(
            "patternProperties".into(),
            json!({ PATH_REFERENCE: {}, BUNDLE_REFERENCE: {} }),
        );
        entry.insert("additionalProperties".into(), Value::Bool(false));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_titled_and_requires_only_a_name() {
        let schema = case_schema([]);
        assert_eq!(schema["title"], "evalhost case");
        // `prompt` and `graders`, or a Harbor `task` that gives them.
        assert_eq!(schema["required"], json!(["name"]));
    }

    fn properties(schema: &Value, pointer: &str) -> Vec<String> {
        let mut names: Vec<String> = schema
            .pointer(pointer)
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    }

    fn sorted(fields: &[&str]) -> Vec<String> {
        let mut names: Vec<String> = fields.iter().map(|f| (*f).to_owned()).collect();
        names.sort();
        names
    }

    /// The schema describes exactly the fields the parser accepts: both come from
    /// `format.rs`.
    #[test]
    fn schema_fields_are_the_declared_fields() {
        use super::super::format::{Call, Recorded, Step, Usage, Workspace};
        let schema = case_schema([]);
        assert_eq!(properties(&schema, "/properties"), sorted(CaseFile::FIELDS));
        assert_eq!(
            properties(&schema, "/$defs/Workspace/properties"),
            sorted(Workspace::FIELDS)
        );
        assert_eq!(
            properties(&schema, "/$defs/Call/properties"),
            sorted(Call::FIELDS)
        );
        assert_eq!(
            properties(&schema, "/$defs/Step/properties"),
            sorted(Step::FIELDS)
        );
        assert_eq!(
            properties(&schema, "/$defs/Recorded/properties"),
            sorted(Recorded::FIELDS)
        );
        assert_eq!(
            properties(&schema, "/$defs/Usage/properties"),
            sorted(Usage::FIELDS)
        );
        assert_eq!(
            Step::FIELDS,
            ["text", "call", "calls", "expect_input_contains", "usage"]
        );
    }
}

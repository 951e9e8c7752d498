//! The JSON Schema of the case YAML format, for editors (a YAML language server completes
//! and checks case files with it) and for checking case files outside evalhost.
//!
//! The schema is generated from the document types below, which mirror what `parse.rs`
//! accepts field by field (a test keeps the field lists in step), plus the config schema
//! each grader publishes through `list-graders`, so grader names complete and grader
//! configs are checked as the components would check them. The parser stays the authority:
//! it also checks what a schema cannot say (the name equals the file stem, seed paths stay
//! inside the workspace, a grader's own config rules).

use std::collections::BTreeMap;

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use super::{MAX_GRADERS, MAX_RUNS, MAX_SEED_FILES, MAX_TIMEOUT_SECS};
use crate::grader::GraderInfo;

/// A grader key that names a component file (`path/to/grader.wasm#grader`): any config.
const PATH_REFERENCE: &str = r"\.wasm(#[^#]*)?$";
/// A grader key that names a grader of a bundle (`bundle/grader`): any config.
const BUNDLE_REFERENCE: &str = r"^[^/#]+/[^/#]+$";

/// The JSON Schema (draft 2020-12) of an evalhost case file, knowing the configs of
/// `graders` (usually the built-in graders: `GraderHost::with_builtins().graders()`).
///
/// ```
/// let schema = evalhost::case::case_schema([]);
/// assert_eq!(schema["title"], "evalhost case");
/// assert_eq!(schema["required"], serde_json::json!(["name", "prompt", "graders"]));
/// ```
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

/// An evalhost case file: one eval case (a superset of Mino's case format).
#[derive(JsonSchema)]
#[schemars(title = "evalhost case", deny_unknown_fields)]
#[allow(dead_code)] // Only the schema of these types is used; the parser reads case files.
struct CaseFile {
    /// The case name; must equal the file name without `.yaml`.
    #[schemars(length(min = 1))]
    name: Text,
    /// What the case checks, for people reading the suite.
    description: Option<Text>,
    /// What the user types: the agent's task.
    #[schemars(length(min = 1))]
    prompt: Text,
    /// Replaces evalhost's default agent instructions.
    instructions: Option<Text>,
    /// The answer to every confirmation the agent asks for (default `none`).
    approve: Option<Approve>,
    /// What the workspace holds before every run.
    workspace: Option<Workspace>,
    /// The scripted model: step N answers model request N (replay mode). Leave it out for
    /// a live-only case.
    #[schemars(length(min = 1))]
    model: Option<Vec<Step>>,
    /// How a run is judged: a list of one-key maps from grader name to its config.
    #[schemars(length(min = 1, max = MAX_GRADERS))]
    graders: Vec<GraderEntry>,
    /// Runs of this case, overriding `--runs`.
    #[schemars(range(min = 1, max = MAX_RUNS))]
    runs: Option<u32>,
    /// Seconds a run's agent may take (its turns, or the external agent) before every
    /// process of the run is killed and the run errors with `turn failed: timed out after N
    /// s`; fractions allowed (default 600; `evalhost run --timeout` overrides it).
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SECS))]
    timeout_secs: Option<f64>,
    /// `false` marks a replay-only case, skipped by `evalhost run --live` (default true).
    live: Option<bool>,
    /// Free-form labels, for `evalhost run --tags` and `evalhost list`.
    tags: Option<Vec<Tag>>,
    /// Run this external agent program instead of evalhost's own agent.
    agent: Option<Agent>,
    /// What this case's runs may do beyond the default confinement (write the workspace,
    /// HOME and TMPDIR; read the system but not the user's home; connect to the model
    /// endpoint only): docs/security.md.
    confine: Option<Confine>,
}

/// Widening of a run's confinement.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct Confine {
    /// Paths the run's processes may also read and execute: absolute, or starting with `~/`.
    read: Option<Vec<ConfinePath>>,
    /// Paths the run's processes may also write: absolute, or starting with `~/`.
    write: Option<Vec<ConfinePath>>,
    /// TCP ports the run's processes may also connect to.
    connect: Option<Vec<Port>>,
    /// `any`: connect to every TCP port (default `endpoint`: the model endpoint's only).
    network: Option<Network>,
}

/// An absolute path, or one starting with `~/` (the invoking user's home).
struct ConfinePath;

impl JsonSchema for ConfinePath {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "ConfinePath".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "pattern": "^(/|~/)" })
    }
}

/// A TCP port.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Port(#[schemars(range(min = 1, max = 65535))] u16);

/// Which TCP ports a run may connect to.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case")]
#[allow(dead_code)]
enum Network {
    /// The model endpoint's port, and `connect`'s.
    Endpoint,
    /// Every port.
    Any,
}

/// The answer to every confirmation question.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case")]
#[allow(dead_code)]
enum Approve {
    /// Decline every call that needs confirmation.
    None,
    /// Approve every call that needs confirmation (protected paths are still refused).
    All,
}

/// The workspace seeded before every run.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct Workspace {
    /// Files to write: relative path → text content (at most 64 KiB each).
    #[schemars(extend("maxProperties" = MAX_SEED_FILES))]
    files: Option<BTreeMap<String, Text>>,
}

/// One step of the model script: a text reply or a tool call.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
enum Step {
    Text(TextStep),
    Call(CallStep),
    Calls(CallsStep),
}

/// The model answers with text.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct TextStep {
    /// The text the model streams back.
    text: Text,
    /// The request this step answers must contain this text.
    #[schemars(length(min = 1))]
    expect_input_contains: Option<Text>,
}

/// The model answers with a tool call.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct CallStep {
    /// The tool call the model makes.
    call: Call,
    /// The request this step answers must contain this text.
    #[schemars(length(min = 1))]
    expect_input_contains: Option<Text>,
}

/// The model answers with several tool calls in one response (parallel tool calls).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct CallsStep {
    /// The tool calls the model makes, in order.
    #[schemars(length(min = 1))]
    calls: Vec<Call>,
    /// The request this step answers must contain this text.
    #[schemars(length(min = 1))]
    expect_input_contains: Option<String>,
}

/// A tool call of the scripted model.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct Call {
    /// The tool's name (it need not exist: an unknown tool is something a case may test).
    #[schemars(length(min = 1))]
    tool: Text,
    /// The call's arguments (default `{}`).
    arguments: Option<serde_json::Map<String, Value>>,
}

/// One grader: `grader_name: config`. A built-in grader by name, a component file as
/// `path/to/grader.wasm#grader` (with `judge: true` beside it to grant it the judge), or a
/// bundle's grader as `bundle/grader`.
#[derive(JsonSchema)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
#[allow(dead_code)]
struct GraderEntry(BTreeMap<String, Value>);

/// A non-empty label.
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)]
struct Tag(#[schemars(length(min = 1))] Text);

/// Text, as the parser reads it: a string, or a number or boolean taken as the text it was
/// written as (`prompt: 2026` is the prompt `2026`, as a YAML scalar decoded into a string is
/// in Mino).
struct Text;

impl JsonSchema for Text {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["string", "number", "boolean"] })
    }
}

/// An external agent: a program (`command`) or a preset of a real agent (`preset`).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
struct Agent {
    /// Program and arguments (no shell), started in the run's workspace.
    #[schemars(length(min = 1))]
    command: Option<Vec<String>>,
    /// A real agent evalhost runs against the endpoint (docs/agents.md).
    preset: Option<PresetName>,
    /// A preset's extra arguments, appended to its own.
    args: Option<Vec<String>>,
    /// How the prompt reaches a `command` (default `stdin`).
    prompt: Option<PromptVia>,
    /// The case's run timeout, in its older place: the same as the case's `timeout_secs`
    /// (give one or the other).
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = MAX_TIMEOUT_SECS))]
    timeout_secs: Option<f64>,
}

/// The agent presets (`crate::agent_preset::Preset`).
#[derive(JsonSchema)]
#[schemars(rename_all = "kebab-case")]
#[allow(dead_code)]
enum PresetName {
    Codex,
    ClaudeCode,
    Pi,
    MiniSweAgent,
}

/// How an external agent receives the prompt.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case")]
#[allow(dead_code)]
enum PromptVia {
    /// On standard input, which is then closed.
    Stdin,
    /// As the last command-line argument.
    Arg,
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The schema describes exactly the fields the parser accepts.
    #[test]
    fn schema_fields_match_the_parser() {
        use super::super::parse::{CALL_FIELDS, CASE_FIELDS, STEP_FIELDS, WORKSPACE_FIELDS};
        let schema = case_schema([]);
        assert_eq!(properties(&schema, "/properties"), sorted(CASE_FIELDS));
        assert_eq!(
            properties(&schema, "/$defs/Workspace/properties"),
            sorted(WORKSPACE_FIELDS)
        );
        assert_eq!(
            properties(&schema, "/$defs/Call/properties"),
            sorted(CALL_FIELDS)
        );
        let mut step = properties(&schema, "/$defs/TextStep/properties");
        step.extend(properties(&schema, "/$defs/CallStep/properties"));
        step.extend(properties(&schema, "/$defs/CallsStep/properties"));
        step.sort();
        step.dedup();
        assert_eq!(step, sorted(STEP_FIELDS));
    }
}

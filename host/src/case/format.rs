//! The case file format, declared once: the fields of each map in the order the docs list
//! them, what each holds, its limits, and the words an editor shows for it. `parse.rs`
//! checks a document against it (the field names, the `approve` values and the limits come
//! from here) and `schema.rs` generates the JSON Schema from it. The `agent:` and `confine:`
//! values are declared where they are read (`external.rs`, `confine.rs`); `environment:` is
//! declared here and read by `environment.rs`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use super::confine::ConfineField;
use super::external::AgentField;
use super::{MAX_GRADERS, MAX_RECORDED_TOKENS, MAX_RUNS, MAX_SEED_FILES, MAX_TIMEOUT_SECS};
use crate::session::Approve;

/// A map of the format: the struct (for its schema) and `FIELDS`, its field names in the
/// order declared, which the parser allows and lists in its messages.
macro_rules! format_map {
    (
        $(#[$meta:meta])*
        struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty,)*
        }
    ) => {
        #[derive(JsonSchema)]
        #[schemars(deny_unknown_fields)]
        $(#[$meta])*
        #[allow(dead_code)] // Only the schema and the field names are used.
        pub(super) struct $name {
            $($(#[$field_meta])* $field: $ty,)*
        }

        impl $name {
            /// The field names, in the order declared.
            pub(super) const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];
        }
    };
}

format_map! {
    /// An evalhost case file: one eval case (a superset of Mino's case format).
    #[schemars(title = "evalhost case", transform = prompt_or_task)]
    struct CaseFile {
        /// The case name; must equal the file name without `.yaml`.
        #[schemars(length(min = 1))]
        name: Text,
        /// What the case checks, for people reading the suite.
        description: Option<Text>,
        /// What the user types: the agent's task (required, unless `task` gives it).
        #[schemars(length(min = 1))]
        prompt: Text,
        /// Replaces evalhost's default agent instructions.
        instructions: Option<Text>,
        /// The answer to every confirmation the agent asks for (default `none`).
        approve: Option<ApproveValue>,
        /// What the workspace holds before every run.
        workspace: Option<Workspace>,
        /// The scripted model: step N answers model request N (replay mode). Leave it out for
        /// a live-only case.
        #[schemars(length(min = 1))]
        model: Option<Vec<Step>>,
        /// How a run is judged: a list of one-key maps from grader name to its config
        /// (required, unless `task` gives the verifier's grader: then these come after it).
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
        agent: Option<AgentField>,
        /// What this case's runs may do beyond the default confinement (write the workspace,
        /// HOME and TMPDIR; read the system but not the user's home; connect to the model
        /// endpoint only): docs/security.md.
        confine: Option<ConfineField>,
        /// The container image this case's runs execute in, and how their container is made
        /// (docs/environments.md): the agent's commands run there, with the workspace mounted.
        environment: Option<Environment>,
        /// A Harbor task directory, relative to this file (docs/harbor.md): the prompt
        /// (`instruction.md`), environment, verifier, solution and timeout come from it, and
        /// this file adds a model script, graders, runs and tags.
        #[schemars(length(min = 1))]
        task: Option<Text>,
        /// The live run the model script was recorded from (`evalhost record --live` writes
        /// it): with every step's `usage`, a replay reports what the recording cost at today's
        /// price of its model (`recorded_cost_usd`, docs/cost.md).
        recorded: Option<Recorded>,
        /// Tool calls answered from this recording instead of running: result N answers the
        /// run's call N, whose tool must be the one recorded (`evalhost promote --from-trace`
        /// writes it for an agent whose tools are not evalhost's; docs/traces.md). A call past
        /// the last result ends the run with an error.
        #[schemars(length(min = 1))]
        tool_results: Option<Vec<ToolResult>>,
        /// A trace of runs made elsewhere, relative to this file (OTLP, an Inspect AI log, an
        /// ATIF trajectory; docs/traces.md): each of its runs is a run of this case, graded by
        /// its graders as the trace recorded it (no agent or model runs, no workspace).
        #[schemars(length(min = 1))]
        trace: Option<Text>,
    }
}

format_map! {
    /// What one recorded tool call returned.
    struct ToolResult {
        /// The tool the call must name.
        #[schemars(length(min = 1))]
        tool: Text,
        /// What the model is told the tool returned.
        output: Text,
        /// How the call ended (default `completed`).
        status: Option<ToolResultStatus>,
    }
}

/// How a recorded tool call ended.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case")]
#[allow(dead_code)] // Only the schema is used.
pub(super) enum ToolResultStatus {
    Completed,
    Failed,
    Denied,
    InvalidArguments,
    UnknownTool,
    Cancelled,
}

/// A case gives its prompt and graders, or a trace (its runs, the prompt optional) and
/// graders, or a Harbor task that gives them; with a task, the prompt, environment and
/// timeout are the task's. (Over the derived `required`: `prompt` and
/// `graders` are declared as they are when given.)
fn prompt_or_task(schema: &mut Schema) {
    schema.insert("required".into(), json!(["name"]));
    schema.insert(
        "oneOf".into(),
        json!([
            { "required": ["prompt", "graders"], "not": { "anyOf": [{ "required": ["task"] }, { "required": ["trace"] }] } },
            { "required": ["trace", "graders"], "not": { "required": ["task"] } },
            {
                "required": ["task"],
                "not": { "anyOf": [
                    { "required": ["prompt"] },
                    { "required": ["environment"] },
                    { "required": ["timeout_secs"] }
                ] }
            }
        ]),
    );
}

format_map! {
    /// Where a case's runs execute: a container from an image (exactly one of `image` or
    /// `build`).
    #[schemars(transform = one_image)]
    struct Environment {
        /// An image by reference: `NAME[:TAG]` or `NAME@sha256:DIGEST` (pulled when missing).
        #[schemars(regex(pattern = IMAGE_REFERENCE))]
        image: Option<String>,
        /// An image built from a Dockerfile: its path relative to the case file, or
        /// `{dockerfile, context}`.
        build: Option<BuildValue>,
        /// The image id the case was recorded with: a tag that names another image since is
        /// a warning (refused with `--locked-images`).
        #[schemars(regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
        digest: Option<String>,
        /// Where the workspace is mounted and commands start (an absolute path; default: the
        /// image's `WORKDIR`, else `/workspace`).
        #[schemars(regex(pattern = "^/"))]
        workdir: Option<String>,
        /// Variables every process of a run gets, over the image's.
        #[schemars(extend("propertyNames" = {"pattern": ENV_NAME}))]
        env: Option<BTreeMap<String, Text>>,
        /// Shell commands run once on top of the image (as root, with the network), kept as an
        /// image of its own: a list, or one command.
        setup: Option<SetupValue>,
        /// CPUs a run's container may use (fractions allowed).
        #[schemars(extend("exclusiveMinimum" = 0))]
        cpus: Option<f64>,
        /// Memory a run's container may use: `512m`, `2g` (powers of 1024), or bytes; at
        /// least `6m`.
        memory: Option<MemoryValue>,
        /// Processes a run's container may have at once (default 4096).
        #[schemars(range(min = 1))]
        pids: Option<u32>,
        /// What a run's container may reach: `endpoint` (the run's model endpoint only, the
        /// default) or `none`.
        network: Option<NetworkValue>,
    }
}

/// The ways an environment names its image: exactly one is given.
pub(super) const IMAGES: [&str; 2] = ["image", "build"];

/// An image reference as Docker reads one: `[HOST[:PORT]/]PATH[:TAG][@sha256:HEX]`, the path
/// lowercase.
pub(super) const IMAGE_REFERENCE: &str = r"^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$";

/// A name an environment variable may have.
pub(super) const ENV_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]*$";

/// An environment gives exactly one of [`IMAGES`].
fn one_image(schema: &mut Schema) {
    let one_of: Vec<Value> = IMAGES
        .iter()
        .map(|image| json!({ "required": [image] }))
        .collect();
    schema.insert("oneOf".into(), Value::Array(one_of));
}

format_map! {
    /// A Dockerfile to build, and the directory it is built in.
    struct Build {
        /// The Dockerfile, relative to the case file.
        #[schemars(length(min = 1))]
        dockerfile: Text,
        /// The build context, relative to the case file (default: the Dockerfile's folder).
        #[schemars(length(min = 1))]
        context: Option<Text>,
    }
}

/// A Dockerfile's path, relative to the case file, or `{dockerfile, context}`.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
pub(super) enum BuildValue {
    Dockerfile(#[schemars(length(min = 1))] String),
    Build(Build),
}

/// Shell commands, or one.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
pub(super) enum SetupValue {
    One(#[schemars(length(min = 1))] String),
    List(Vec<SetupCommand>),
}

/// One set-up command.
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)]
pub(super) struct SetupCommand(#[schemars(length(min = 1))] String);

/// A size with a unit (`512m`, `2g`), or bytes.
#[derive(JsonSchema)]
#[schemars(untagged)]
#[allow(dead_code)]
pub(super) enum MemoryValue {
    Size(#[schemars(regex(pattern = r"^[0-9.]+\s*([bBkKmMgG]([iI]?[bB])?)?$"))] String),
    Bytes(#[schemars(range(min = 6_291_456))] u64),
}

/// What a run's container may reach.
#[derive(JsonSchema)]
#[schemars(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum NetworkValue {
    /// The run's model endpoint, and nothing else (the default).
    Endpoint,
    /// Nothing at all.
    None,
}

format_map! {
    /// The live run a replay case was recorded from.
    struct Recorded {
        /// The live model's name, as the provider was configured (`gpt-5.4`): the price
        /// table's entry for it prices the recording.
        #[schemars(length(min = 1))]
        model: Text,
    }
}

format_map! {
    /// The workspace seeded before every run.
    struct Workspace {
        /// Files to write: relative path → text content (at most 64 KiB each).
        #[schemars(extend("maxProperties" = MAX_SEED_FILES))]
        files: Option<BTreeMap<String, Text>>,
    }
}

format_map! {
    /// One step of the model script: exactly one of `text`, `call` or `calls`.
    #[schemars(transform = one_reply)]
    struct Step {
        /// The model answers with this text, streamed back.
        text: Option<Text>,
        /// The model answers with this tool call.
        call: Option<Call>,
        /// The model answers with these tool calls in one response (parallel tool calls), in
        /// order.
        #[schemars(length(min = 1))]
        calls: Option<Vec<Call>>,
        /// The request this step answers must contain this text.
        #[schemars(length(min = 1))]
        expect_input_contains: Option<Text>,
        /// The token usage the provider reported for the live response this step was recorded
        /// from; the scripted model reports it instead of synthetic counts.
        usage: Option<Usage>,
    }
}

/// The replies of a step: exactly one is given.
const REPLIES: [&str; 3] = ["text", "call", "calls"];

/// A step gives exactly one reply, and a reply given is not null.
fn one_reply(schema: &mut Schema) {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for reply in REPLIES {
            if let Some(Value::Object(property)) = properties.get_mut(reply) {
                if let Some(Value::Array(types)) = property.get_mut("type") {
                    types.retain(|t| t != "null");
                }
                if let Some(Value::Array(any_of)) = property.get_mut("anyOf") {
                    any_of.retain(|s| *s != json!({"type": "null"}));
                }
            }
        }
    }
    let one_of: Vec<Value> = REPLIES
        .iter()
        .map(|reply| json!({ "required": [reply] }))
        .collect();
    schema.insert("oneOf".into(), Value::Array(one_of));
}

format_map! {
    /// Token usage of one recorded model response, as the provider reported it.
    struct Usage {
        /// Tokens of the request, cached ones included.
        #[schemars(range(max = MAX_RECORDED_TOKENS))]
        input_tokens: u64,
        /// Of `input_tokens`, those read from the provider's prompt cache (default 0; at most
        /// `input_tokens`).
        #[schemars(range(max = MAX_RECORDED_TOKENS))]
        cached_input_tokens: Option<u64>,
        /// Tokens of the response, reasoning included.
        #[schemars(range(max = MAX_RECORDED_TOKENS))]
        output_tokens: u64,
    }
}

format_map! {
    /// A tool call of the scripted model.
    struct Call {
        /// The tool's name (it need not exist: an unknown tool is something a case may test).
        #[schemars(length(min = 1))]
        tool: Text,
        /// The call's arguments (default `{}`).
        arguments: Option<serde_json::Map<String, Value>>,
    }
}

/// The values of `approve`: what is written, what it means, and the words an editor shows.
pub(super) const APPROVE: [(&str, Approve, &str); 2] = [
    (
        "none",
        Approve::None,
        "Decline every call that needs confirmation.",
    ),
    (
        "all",
        Approve::All,
        "Approve every call that needs confirmation (protected paths are still refused).",
    ),
];

/// The answer to every confirmation question ([`APPROVE`]).
pub(super) struct ApproveValue;

impl JsonSchema for ApproveValue {
    fn schema_name() -> Cow<'static, str> {
        "Approve".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let values: Vec<Value> = APPROVE
            .iter()
            .map(|(name, _, description)| {
                json!({ "const": name, "description": description, "type": "string" })
            })
            .collect();
        json_schema!({
            "description": "The answer to every confirmation question.",
            "oneOf": values,
        })
    }
}

/// One grader: `grader_name: config`. A built-in grader by name, a component file as
/// `path/to/grader.wasm#grader` (with `judge: true` beside it to grant it the judge), or a
/// bundle's grader as `bundle/grader`.
// (`schema.rs` adds the graders' names and configs.)
#[derive(JsonSchema)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
#[allow(dead_code)]
pub(super) struct GraderEntry(BTreeMap<String, Value>);

/// A non-empty label.
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)]
struct Tag(#[schemars(length(min = 1))] Text);

/// Text, as the parser reads it: a string, or a number or boolean taken as the text it was
/// written as (`prompt: 2026` is the prompt `2026`, as a YAML scalar decoded into a string is
/// in Mino).
pub(super) struct Text;

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

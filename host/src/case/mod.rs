//! Case sources: what a run is asked to do and how it is judged.
//!
//! The native format is YAML, a strict superset of Mino's case files (see `docs/case-format.md`).
//! Everything here is validated before anything runs; every error names file:line:col and field.
//!
//! ```
//! use std::path::Path;
//!
//! let yaml = "name: greet\nprompt: Say hello.\nmodel:\n  - text: Hello!\ngraders:\n  - final_text_contains: Hello\n";
//! let case = evalhost::case::parse_case(Path::new("cases/greet.yaml"), yaml).unwrap();
//! assert_eq!(&*case.graders[0].name, "final_text_contains");
//! assert_eq!(case.graders[0].location.to_string(), "cases/greet.yaml:6:5");
//!
//! let err = evalhost::case::parse_case(Path::new("cases/other.yaml"), yaml).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     r#"cases/other.yaml:1:7: name: "greet" does not match the file stem "other""#
//! );
//! ```

pub(crate) mod agentcompany;
pub(crate) mod case_name;
mod confine;
mod environment;
mod error;
mod external;
mod format;
mod from_trace;
mod grader_config;
pub(crate) mod harbor;
mod load;
mod located;
mod names;
pub(crate) mod nexus;
mod parse;
mod read;
mod recorded;
mod schema;
mod spool;
mod workspace;
pub(crate) mod yaml;

pub use agentcompany::{FixtureOptions, PiAgentCore, PiAgentCoreError, load_fixture};
// The types of a case's fields that live in lower layers (the session's vocabulary,
// confinement, environments, the agent presets).
pub use crate::agent_preset::{Preset, UnknownPreset};
pub use crate::confine::Widening;
pub use crate::environment::{Environment, ImageSource, Network, Verifier};
pub use crate::session::{Approve, CallStatus, RecordedToolResult};
pub(crate) use environment::{EnvironmentArgError, environment_arg};
pub use error::{CaseError, Location};
pub use external::{ExternalAgent, ORACLE_SCRIPT, ORACLE_SOLUTION_DIR, PromptVia, Replaced};
pub(crate) use from_trace::trace_case_yaml;
pub use grader_config::GraderConfig;
pub(crate) use load::load_cases_with;
pub use load::{
    LoadOptions, MAX_CASES_PER_DIR, load_case, load_cases, load_each, load_each_spooled,
};
#[cfg(feature = "run")]
pub(crate) use located::child as child_field;
pub use parse::parse_case;
pub use recorded::RecordError;
pub(crate) use recorded::replay_case_yaml;
pub(crate) use schema::case_schema;
pub use spool::{CaseBody, ParkedCase, RESIDENT_BYTES, Spool, SpoolError};

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Most graders a case may declare.
pub const MAX_GRADERS: usize = 32;
/// Most files a case may seed into the workspace.
pub const MAX_SEED_FILES: usize = 64;
/// Largest seeded file, in bytes.
pub const MAX_SEED_FILE_BYTES: usize = 64 * 1024;
/// Most runs a case may ask for.
pub(crate) const MAX_RUNS: u32 = 32;
/// How long a run's agent may take, in seconds, unless the case (`timeout_secs`) or
/// `evalhost run --timeout` says otherwise: long enough for a live turn of several requests
/// or a real agent's task, short enough that a hung run does not hold CI for an hour.
pub(crate) const DEFAULT_TIMEOUT_SECS: f64 = 600.0;
/// Longest `timeout_secs` (and `--timeout`) accepted, in seconds.
pub(crate) const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// Check a run timeout in seconds (`timeout_secs`, `--timeout`): more than 0, at most
/// [`MAX_TIMEOUT_SECS`]; fractions allowed (`0.3`). The error is the message for the field.
pub(crate) fn check_timeout_secs(secs: f64) -> Result<f64, String> {
    if secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT_SECS {
        Ok(secs)
    } else {
        Err(format!(
            "must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds, found {secs}"
        ))
    }
}

/// Most tokens a recorded usage count may hold (a step's `usage:`, an AgentCompany ledger
/// field); keeps every sum over a run far from overflowing.
pub(crate) const MAX_RECORDED_TOKENS: u64 = 10_000_000_000;

/// Largest case file, in bytes (64 seed files of 64 KiB fit with room to spare).
pub const MAX_CASE_FILE_BYTES: usize = 8 * 1024 * 1024;

/// Remove every `location` field (a place in the case's file) from a serialized case.
fn strip_locations(fields: &mut serde_json::Map<String, serde_json::Value>) {
    fields.remove("location");
    for value in fields.values_mut() {
        match value {
            serde_json::Value::Object(inner) => strip_locations(inner),
            serde_json::Value::Array(items) => {
                for item in items {
                    if let serde_json::Value::Object(inner) = item {
                        strip_locations(inner);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An `io::Write` feeding a hasher, so a digest needs no serialized copy.
struct HashWriter<'a>(&'a mut sha2::Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        sha2::Digest::update(self.0, buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One eval case, validated. It serializes (JSON) so that a suite can park it in its spool
/// until its runs ([`Spool`]); that form is evalhost's own, not a case format.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    /// Equals the file stem.
    pub name: String,
    /// The file the case came from.
    pub path: PathBuf,
    /// What the case checks, for people reading the suite (empty when not given).
    pub description: String,
    /// What the user types.
    pub prompt: String,
    /// What the user types next, one entry per later user turn, in order (AgentCompany
    /// multi-turn fixtures; empty for YAML cases). Each is replayed as another agent turn of
    /// the same run, continuing the conversation.
    pub follow_ups: Vec<String>,
    /// Replaces the default agent instructions when set.
    pub instructions: Option<String>,
    /// The answer to every confirmation.
    pub approve: Approve,
    /// Files written into the workspace before every run, in file order.
    pub workspace_files: Vec<SeedFile>,
    /// The scripted model's responses, one per request (replay mode).
    pub model: Vec<ScriptStep>,
    /// How the run is judged; 1 to [`MAX_GRADERS`].
    pub graders: Vec<GraderUse>,
    /// Runs per case, overriding `--runs` (1 to `MAX_RUNS`).
    pub runs: Option<u32>,
    /// How long a run's agent (its turns, or the external agent) may take, in seconds
    /// (`timeout_secs`; `--timeout` overrides it; default `DEFAULT_TIMEOUT_SECS`).
    pub timeout_secs: Option<f64>,
    /// Whether the case runs in live mode (`live: false` marks replay-only cases).
    pub live: bool,
    /// Free-form labels for filtering and listing.
    pub tags: Vec<String>,
    /// How runs of this case are made.
    pub execution: Execution,
    /// What the case adds to the default confinement of its runs (`confine:`).
    pub confine: crate::confine::Widening,
    /// The live model the case's script was recorded from (`recorded: {model}`, written by
    /// `evalhost record --live`): a replay of it reports what the recording cost at today's
    /// price of that model ([`Case::recorded_usage`], `recorded_cost_usd`, docs/cost.md).
    /// (Left out of the serialized case when absent, so other cases keep their digests.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_model: Option<String>,
    /// sha256 (hex) of the case's content, everything but its path (`Case::content_digest`),
    /// set when loading; empty for a case made by hand.
    #[serde(default)]
    pub digest: String,
    /// The container image its runs execute in (`environment:`, a Harbor task's
    /// `environment/`); none: on the host, confined (`crate::confine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::Environment>,
    /// What checks a run in its container after the agent (a Harbor task's `tests/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifier: Option<crate::environment::Verifier>,
    /// A script that solves the task (a Harbor task's `solution/`, copied to `/solution`):
    /// what `--agent oracle` runs instead of an agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution: Option<PathBuf>,
    /// Where the bulky parts are: here, or in the spool of the suite that loaded the case
    /// (then `workspace_files`, `model`, `follow_ups` and a replayed recording are empty
    /// here; [`Case::whole`] reads them back).
    #[serde(skip)]
    pub body: CaseBody,
}

/// How the runs of a case are made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Execution {
    /// evalhost's agent loop against the scripted model, with real tools (YAML cases).
    Agent,
    /// The agent loop against the scripted model, but tool calls are answered from a
    /// recording instead of executing (AgentCompany fixtures). Exhaustion is a run error.
    ReplayTools(Vec<RecordedToolResult>),
    /// No agent run: the evidence is a recorded session (a Nexus journal).
    Recorded(std::sync::Arc<crate::evidence::Evidence>),
    /// No agent run: run N is the trace's run N (a case's `trace:`; docs/traces.md), graded
    /// without a workspace.
    Traced(std::sync::Arc<crate::trace::Imported>),
    /// An external agent program (the case's `agent:` or `--agent-cmd`) against the model
    /// endpoint; the evidence is what crossed the endpoint, plus the workspace.
    External(ExternalAgent),
}

/// A file seeded into the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedFile {
    /// Relative, `/`-separated, normalised (no `.`, `..` or empty components).
    pub path: String,
    /// The file's text, at most [`MAX_SEED_FILE_BYTES`] bytes.
    pub content: String,
}

/// One step of a model script: the answer to one model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptStep {
    /// What the model answers.
    pub reply: ScriptReply,
    /// The request this step answers must contain this substring.
    pub expect_input_contains: Option<String>,
    /// Where the step is in the case file.
    pub location: Location,
    /// Token usage the scripted model reports for this step instead of synthetic counts:
    /// the provider's usage of the live response a step was recorded from (a YAML step's
    /// `usage:`, an AgentCompany turn's `tokenLedger`); `None` when not recorded.
    pub usage: Option<RecordedUsage>,
}

/// Token usage recorded with a model response, reported as is by the scripted model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecordedUsage {
    /// Tokens of the request, cached ones included.
    pub input_tokens: u64,
    /// Of `input_tokens`, those the provider read from its prompt cache (priced apart,
    /// docs/cost.md). (Left out of the serialized case when 0, so cases recorded without it
    /// keep their digests.)
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Tokens of the response.
    pub output_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RecordedUsage {
    /// The sum of `steps`' usage when every step has one (and there is at least one).
    pub(crate) fn total(steps: &[ScriptStep]) -> Option<Self> {
        if steps.is_empty() {
            return None;
        }
        steps.iter().try_fold(Self::default(), |sum, step| {
            let usage = step.usage?;
            Some(Self {
                input_tokens: sum.input_tokens.saturating_add(usage.input_tokens),
                cached_input_tokens: sum
                    .cached_input_tokens
                    .saturating_add(usage.cached_input_tokens),
                output_tokens: sum.output_tokens.saturating_add(usage.output_tokens),
            })
        })
    }
}

/// What the scripted model answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ScriptReply {
    /// A text response, streamed as output text deltas.
    Text(String),
    /// One function call.
    Call {
        /// Name of the tool called (it need not exist: unknown tools are part of what a case
        /// may test).
        tool: String,
        /// The arguments, always a JSON object.
        arguments: serde_json::Value,
    },
    /// One response with several output items, in order: text and calls (an AgentCompany
    /// assistant turn). Nested lists are flattened.
    Items(Vec<ScriptReply>),
}

/// A grader a case declares: a one-key map from grader name to its config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraderUse {
    /// Grader name, e.g. `file_contains` (shared with the verdicts that report it).
    pub name: std::sync::Arc<str>,
    /// The config, converted from YAML to JSON (shared with the verdicts that report it).
    pub config: GraderConfig,
    /// Where the grader entry is in the case file.
    pub location: Location,
    /// `judge: true` on the entry: a component named by path may ask the judge (bundle
    /// graders are granted by their bundle's `judge` capability, built-ins always).
    pub judge: bool,
}

/// The key of a grader entry that grants a component named by path the judge.
pub(crate) const JUDGE_KEY: &str = "judge";

impl Case {
    /// sha256 (hex) of the case's content: its own serialized form without its path or
    /// digest, with its bulky parts (call before the spool takes them). Two loads of an
    /// unchanged case give the same digest, wherever its file is.
    pub(crate) fn content_digest(&self) -> String {
        use sha2::Digest;
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let Some(fields) = value.as_object_mut() {
            fields.remove("path");
            fields.remove("digest");
            // Where a grader entry or a step was written (file:line:col) names the file too.
            strip_locations(fields);
        }
        let mut hasher = sha2::Sha256::new();
        let _ = serde_json::to_writer(HashWriter(&mut hasher), &value);
        hex::encode(hasher.finalize())
    }

    /// Whether every model step carries recorded usage, so a replay reports real token
    /// counts rather than synthetic ones.
    pub fn has_recorded_usage(&self) -> bool {
        self.recorded_usage().is_some()
    }

    /// The recorded usage of the whole script (what the live run it was recorded from
    /// used), when every model step carries one; known without reading a spooled script back.
    pub fn recorded_usage(&self) -> Option<RecordedUsage> {
        match &self.body.0 {
            spool::Body::Spooled { script, .. } => script.recorded_usage,
            spool::Body::Resident => RecordedUsage::total(&self.model),
        }
    }

    /// Check that the case can run in replay mode: replay answers every model request from
    /// the case's script, so a case of evalhost's own agent without one cannot run.
    pub fn check_replayable(&self) -> Result<(), CaseError> {
        // A recorded case (a Nexus journal) runs no agent, so it needs no script. An external
        // agent may never ask the model; if it does, the empty script answers with an
        // endpoint error that fails the run (`Model script exhausted: request 1 ...`).
        let needs_script = !matches!(
            self.execution,
            Execution::Recorded(_) | Execution::Traced(_) | Execution::External(_)
        );
        if self.script_steps() == 0 && needs_script {
            return Err(CaseError::Invalid {
                location: Location {
                    path: self.path.as_path().into(),
                    line: 1,
                    column: 1,
                },
                field: "model".into(),
                message: "a replay case needs a model script".into(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod digest_tests {
    use std::path::Path;

    const CASE: &str = "name: greet\nprompt: Say hello.\nmodel:\n  - text: Hello!\ngraders:\n  - final_text_contains: Hello\n";

    fn digest_of(dir: &Path, text: &str) -> String {
        std::fs::create_dir_all(dir).unwrap();
        let file = dir.join("greet.yaml");
        std::fs::write(&file, text).unwrap();
        super::load_case(&file).unwrap().digest
    }

    #[test]
    fn a_case_has_one_digest_wherever_its_file_is_and_another_once_changed() {
        let dir = tempfile::tempdir().unwrap();
        let here = digest_of(&dir.path().join("a"), CASE);
        assert_eq!(here.len(), 64);
        assert_eq!(digest_of(&dir.path().join("b/c"), CASE), here);
        // A blank line moves every location: the content is the same.
        assert_eq!(digest_of(&dir.path().join("d"), &format!("\n{CASE}")), here);
        assert_ne!(
            digest_of(&dir.path().join("e"), &CASE.replace("Hello!", "Hi!")),
            here
        );
    }
}

//! AgentCompany fixtures: JSONL files of a recorded trace (`meta`, `turn` lines, `assertions`),
//! replayed through evalhost's agent loop (see `docs/agentcompany.md`), or through
//! pi-agent-core's with `--agent pi-agent-core` ([`pi_agent_core`], `docs/agents.md`).
//!
//! A fixture becomes a [`Case`]: the prompt is the first user turn and later user turns are
//! its follow-ups, the instructions are the scenario's `system.txt`, each assistant turn is a
//! model script step reporting its recorded token ledger as usage, the recorded tool results
//! answer the calls ([`Execution::ReplayTools`]), and every assertion and rubric dimension is
//! a grader located at the assertions line.

mod drift;
mod lines;
mod map;
pub(crate) mod pi_agent_core;
mod record;
mod turns;

pub use pi_agent_core::PiAgentCore;
pub use pi_agent_core::PiAgentCoreError;
pub use record::{FixtureHeader, fixture_text, turns_from_session};

use std::path::Path;

use super::error::Problems;
use super::read::read_text;
use super::{Case, CaseError, Execution, Location};
use crate::session::Approve;

/// Checks that depend on the environment the fixtures run in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FixtureOptions {
    /// When set, `meta.piAgentCoreVersion` must equal it.
    pub expected_agent_core_version: Option<String>,
}

/// Whether `path` names a fixture file (`*.jsonl`).
pub fn is_fixture(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// Read, validate and drift-check one fixture file.
pub fn load_fixture(path: &Path, options: &FixtureOptions) -> Result<Case, CaseError> {
    let text = read_text(path, "fixture")?;
    parse_fixture(path, &text, options)
}

/// Validate fixture `text` as the file `path` (scenario files are looked up next to it).
pub(crate) fn parse_fixture(
    path: &Path,
    text: &str,
    options: &FixtureOptions,
) -> Result<Case, CaseError> {
    // A line that is not a record stops the file; past that, the turns, the assertions and
    // the scenario files are checked on their own, so every one of their problems is
    // reported.
    let lines = lines::split(path, text)?;
    let (assertions_line, assertions) = &lines.assertions;
    let mut problems = Problems::default();
    let replay = problems.keep(turns::replay(path, &lines.turns, *assertions_line));
    let graders = problems.keep(map::graders(path, *assertions_line, assertions));
    let prompt = replay.as_ref().map(|r| r.prompt.as_str());
    let system = problems.keep(drift::check(path, &lines.meta, prompt, options));
    let (Some(replay), Some(graders), Some(system)) = (replay, graders, system) else {
        return problems.finish(None);
    };
    problems.finish(Some(Case {
        name: lines.meta.fixture_id.clone(),
        path: path.to_path_buf(),
        description: lines.meta.scenario.clone(),
        prompt: replay.prompt,
        follow_ups: replay.follow_ups,
        instructions: Some(system),
        approve: Approve::None,
        workspace_files: Vec::new(),
        model: replay.steps,
        graders,
        runs: None,
        timeout_secs: None,
        live: false,
        tags: vec!["agentcompany".to_owned()],
        execution: Execution::ReplayTools(replay.results),
        confine: Default::default(),
        recorded_model: None,
        digest: String::new(),
        environment: None,
        verifier: None,
        solution: None,
        body: Default::default(),
    }))
}

/// An error about `field` on line `line`.
fn invalid(path: &Path, line: usize, field: &str, message: impl Into<String>) -> CaseError {
    CaseError::Invalid {
        location: Location::line(path, line),
        field: field.to_owned(),
        message: message.into(),
    }
}

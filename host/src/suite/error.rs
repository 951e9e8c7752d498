//! Why a suite could not be planned. Each names what to change; the CLI prints it after
//! `Error:` and exits 2 (3 for [`SuiteError::is_internal`]).

use crate::agent_preset::PresetError;
use crate::api::ProviderError;
use crate::case::CaseError;
use crate::case::agentcompany::PiAgentCoreError;
use crate::config::ConfigError;
use crate::grader::GraderHostError;

/// A suite that cannot run as asked; nothing has run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// Problems of the case files and their graders, every one of them
    /// ([`CaseError::Several`] when more than one).
    #[error(transparent)]
    Cases(CaseError),
    #[error("no case name contains `{filter}` (--filter)")]
    NoCaseMatchesFilter { filter: String },
    #[error("no case has all the tags {} (--tags)", tags.join(","))]
    NoCaseHasTags { tags: Vec<String> },
    #[error("No cases left to run live; every case is replay-only")]
    NothingToRunLive,
    #[error("--k {k} is larger than the {runs} runs of case {case} (k must not exceed n)")]
    KExceedsRuns { k: u32, runs: u32, case: String },
    /// Agents the suite's presets need that are not installed (one problem per agent).
    #[error("{}", missing_agents(.0))]
    AgentsMissing(Vec<PresetError>),
    #[error(transparent)]
    PiAgentCore(PiAgentCoreError),
    #[error("--live needs a provider")]
    NoProvider(#[source] ConfigError),
    #[error("--live needs the provider's API key")]
    NoApiKey(#[source] ConfigError),
    #[error("failed to set up the provider client")]
    ProviderClient(#[source] ProviderError),
    #[error("failed to load the built-in graders")]
    BuiltinGraders(#[source] GraderHostError),
    #[error(transparent)]
    Config(ConfigError),
    #[error("--max-cost {limit} is not an amount of USD above 0")]
    InvalidMaxCost { limit: f64 },
    /// `--max-cost` needs the live model's price.
    #[error(
        "--max-cost needs a price for the model `{model}`, and the price table has none (evalhost's default table, as of {as_of}, and the [prices] of the configuration files; docs/cost.md): add one to evalhost.toml:\n  [prices.\"{model}\"]\n  input = 1.25         # USD per million input tokens\n  cached_input = 0.125 # USD per million cached input tokens\n  output = 10.0        # USD per million output tokens"
    )]
    NoPrice { model: String, as_of: String },
}

impl SuiteError {
    /// evalhost's own failure (exit 3) rather than the suite's or the user's (exit 2).
    pub fn is_internal(&self) -> bool {
        matches!(self, Self::ProviderClient(_) | Self::BuiltinGraders(_))
    }
}

fn missing_agents(problems: &[PresetError]) -> String {
    match problems {
        [one] => one.to_string(),
        many => format!("{} agents are missing (each shown above)", many.len()),
    }
}

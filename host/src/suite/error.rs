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
    /// `--filter` matched no case.
    #[error("no case name contains `{filter}` (--filter)")]
    NoCaseMatchesFilter {
        /// The `--filter` value.
        filter: String,
    },
    /// No case has every tag `--tags` asked for.
    #[error("no case has all the tags {} (--tags)", tags.join(","))]
    NoCaseHasTags {
        /// The `--tags` values.
        tags: Vec<String>,
    },
    /// `--live` with only replay-only cases (recorded sessions, traces).
    #[error("No cases left to run live; every case is replay-only")]
    NothingToRunLive,
    /// `--k` is larger than a case's number of runs.
    #[error("--k {k} is larger than the {runs} runs of case {case} (k must not exceed n)")]
    KExceedsRuns {
        /// The `--k` value.
        k: u32,
        /// The case's runs (its `runs:`, else `--runs`).
        runs: u32,
        /// The case's name.
        case: String,
    },
    /// Agents the suite's presets need that are not installed (one problem per agent).
    #[error("{}", missing_agents(.0))]
    AgentsMissing(Vec<PresetError>),
    /// `--agent pi-agent-core` on cases that are not AgentCompany fixtures.
    #[error(transparent)]
    PiAgentCore(PiAgentCoreError),
    /// `--live` without a provider configured (`[provider]`, `EVALHOST_*`).
    #[error("--live needs a provider")]
    NoProvider(#[source] ConfigError),
    /// `--live` without the provider's API key.
    #[error("--live needs the provider's API key")]
    NoApiKey(#[source] ConfigError),
    /// The live provider's HTTP client could not be made.
    #[error("failed to set up the provider client")]
    ProviderClient(#[source] ProviderError),
    /// The built-in graders' component could not be loaded.
    #[error("failed to load the built-in graders")]
    BuiltinGraders(#[source] GraderHostError),
    /// The configuration (`evalhost.toml`, the user's, `EVALHOST_*`) could not be read.
    #[error(transparent)]
    Config(ConfigError),
    /// `--max-cost` is not above 0.
    #[error("--max-cost {limit} is not an amount of USD above 0")]
    InvalidMaxCost {
        /// The `--max-cost` value.
        limit: f64,
    },
    /// `--max-cost` needs the live model's price.
    #[error(
        "--max-cost needs a price for the model `{model}`, and the price table has none (evalhost's default table, as of {as_of}, and the [prices] of the configuration files; docs/cost.md): add one to evalhost.toml:\n  [prices.\"{model}\"]\n  input = 1.25         # USD per million input tokens\n  cached_input = 0.125 # USD per million cached input tokens\n  output = 10.0        # USD per million output tokens"
    )]
    NoPrice {
        /// The live model.
        model: String,
        /// The date of evalhost's default price table.
        as_of: String,
    },
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

//! `evalhost run --live`: which cases run live, and the provider they run against.

use std::time::Duration;

use anyhow::{Context, anyhow};
use evalhost::agent::Limits;
use evalhost::case::{Case, Execution};
use evalhost::config::{ConfigSources, ProviderConfig};
use evalhost::provider::Provider;

use super::Failure;

/// Runs per case in live mode unless `--runs` or the case says otherwise.
pub const DEFAULT_LIVE_RUNS: u32 = 3;

/// Cases that run live, and the lines naming the ones skipped. Stops when none is left.
pub fn select(cases: Vec<Case>) -> Result<(Vec<Case>, Vec<String>), Failure> {
    let mut replay_only = Vec::new();
    let mut recorded = Vec::new();
    let mut live = Vec::new();
    for case in cases {
        // A recording (Nexus journal, AgentCompany fixture) is `live: false` too, but for
        // another reason than a scripted path: it is named on its own line.
        if !matches!(case.execution, Execution::Agent | Execution::External(_)) {
            recorded.push(case.name);
        } else if !case.live {
            replay_only.push(case.name);
        } else {
            live.push(case);
        }
    }
    let mut lines = Vec::new();
    if !replay_only.is_empty() {
        lines.push(format!(
            "Skipped replay-only cases (live: false): {}",
            replay_only.join(", ")
        ));
    }
    if !recorded.is_empty() {
        lines.push(format!(
            "Skipped cases that replay a recording (nothing to run live): {}",
            recorded.join(", ")
        ));
    }
    if live.is_empty() {
        return Err(Failure::usage(anyhow!(
            "No cases left to run live; every case is replay-only"
        )));
    }
    Ok((live, lines))
}

/// The configured provider, its key read from the variable `api_key_env` names.
pub fn provider() -> Result<Provider, Failure> {
    let sources = ConfigSources::from_environment();
    let config = sources
        .provider()
        .context("--live needs a provider")
        .map_err(Failure::usage)?;
    let key = config
        .api_key(&sources.env)
        .context("--live needs the provider's API key")
        .map_err(Failure::usage)?;
    Provider::new(config, key)
        .context("failed to set up the provider client")
        .map_err(Failure::internal)
}

/// Agent limits for live runs: one model request may take every attempt the retry policy
/// allows, with its waits, before the agent gives up on it.
pub fn agent_limits(config: &ProviderConfig) -> Limits {
    let attempts = config.retry.max_retries + 1;
    let budget = config.timeout * attempts + config.retry.max_delay * config.retry.max_retries;
    Limits {
        request_timeout: budget + Duration::from_secs(5),
        ..Limits::default()
    }
}

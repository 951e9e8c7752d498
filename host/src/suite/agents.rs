//! The installed agents of the suite's presets, located (and asked their versions) once,
//! before any run.

use crate::agent_preset::{AgentPaths, InstalledAgents, Preset, locate_all};
use crate::case::{Case, Execution};
use crate::config::ConfigSources;

use super::SuiteError;

/// Every preset the cases run, found through `[agents]`, `EVALHOST_AGENT_<NAME>` or `PATH`.
pub fn locate_agents(
    cases: &[Case],
    config: &ConfigSources,
) -> Result<InstalledAgents, SuiteError> {
    let presets = cases.iter().filter_map(preset_of).collect();
    locate_presets(presets, config)
}

/// The preset `case` runs, if it runs one.
pub(crate) fn preset_of(case: &Case) -> Option<Preset> {
    match &case.execution {
        Execution::External(agent) => agent.preset(),
        _ => None,
    }
}

/// [`locate_agents`] of the presets themselves.
pub(crate) fn locate_presets(
    presets: Vec<Preset>,
    config: &ConfigSources,
) -> Result<InstalledAgents, SuiteError> {
    if presets.is_empty() {
        return Ok(InstalledAgents::default());
    }
    let paths = AgentPaths::from_config(config).map_err(SuiteError::Config)?;
    let path = std::env::var_os("PATH");
    locate_all(presets, &paths, path.as_deref()).map_err(SuiteError::AgentsMissing)
}

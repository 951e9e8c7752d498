//! The installed agents of the suite's presets, located (and asked their versions) once,
//! before any run.

use crate::agent_preset::{AgentPaths, InstalledAgents, locate_all};
use crate::case::{Case, Execution};
use crate::config::ConfigSources;

use super::SuiteError;

/// Every preset the cases run, found through `[agents]`, `EVALHOST_AGENT_<NAME>` or `PATH`.
pub fn locate_agents(
    cases: &[Case],
    config: &ConfigSources,
) -> Result<InstalledAgents, SuiteError> {
    let presets: Vec<_> = cases
        .iter()
        .filter_map(|case| match &case.execution {
            Execution::External(agent) => agent.preset(),
            _ => None,
        })
        .collect();
    if presets.is_empty() {
        return Ok(InstalledAgents::default());
    }
    let paths = AgentPaths::from_config(config).map_err(SuiteError::Config)?;
    let path = std::env::var_os("PATH");
    locate_all(presets, &paths, path.as_deref()).map_err(SuiteError::AgentsMissing)
}

//! The agents of a suite's presets, located (and asked their versions) before any run: a
//! missing one is a usage error that says how to install it.

use anyhow::anyhow;
use evalhost::agent_preset::{AgentPaths, InstalledAgents, locate_all};
use evalhost::case::{Case, Execution};
use evalhost::config::ConfigSources;

use super::Failure;

/// Locate every preset `cases` run. Several missing agents are each printed on stderr, then
/// counted in the error.
pub fn locate(cases: &[Case]) -> Result<InstalledAgents, Failure> {
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
    let paths =
        AgentPaths::from_config(&ConfigSources::from_environment()).map_err(Failure::usage)?;
    let path = std::env::var_os("PATH");
    locate_all(presets, &paths, path.as_deref()).map_err(|mut problems| {
        if problems.len() == 1 {
            return Failure::usage(problems.remove(0));
        }
        for problem in &problems {
            eprintln!("{problem}");
        }
        Failure::usage(anyhow!(
            "{} agents are missing (each shown above)",
            problems.len()
        ))
    })
}

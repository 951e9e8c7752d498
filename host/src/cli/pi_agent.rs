//! `--agent pi-agent-core` on `evalhost run`: find the installed adapter before anything
//! loads (its version is the one fixtures must be recorded with), then hand it the cases.

use anyhow::anyhow;

use super::Failure;
use super::args::AgentChoice;
use crate::case::agentcompany::PiAgentCore;
use crate::case::agentcompany::pi_agent_core::AGENT_NAME;

/// The adapter `--agent pi-agent-core` asks for (`None` for another or no `--agent`);
/// `expected` is `--expect-agent-core-version`, which must then agree with the installed
/// version.
pub fn find(
    agent: Option<AgentChoice>,
    expected: Option<&str>,
) -> Result<Option<PiAgentCore>, Failure> {
    if agent != Some(AgentChoice::PiAgentCore) {
        return Ok(None);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let adapter = PiAgentCore::find(&path).map_err(Failure::usage)?;
    if let Some(expected) = expected
        && expected != adapter.version()
    {
        return Err(Failure::usage(anyhow!(
            "--expect-agent-core-version {expected} disagrees with the installed pi-agent-core {}; --agent {AGENT_NAME} checks fixtures against the installed version",
            adapter.version()
        )));
    }
    Ok(Some(adapter))
}

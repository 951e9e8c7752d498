//! `--agent pi-agent-core`: AgentCompany fixtures replayed the seed's way, through
//! `@mariozechner/pi-agent-core`'s `Agent` loop. The Node adapter in `agents/pi-agent-core/`
//! (`replay.mjs`) runs the fixture's user turns through that `Agent` against the run's model
//! endpoint, which serves the fixture's recorded assistant turns (the case's model script), and
//! answers the tools with the recorded results. It runs as any external agent does
//! (`runner/external.rs`): the session log is written from what crossed the endpoint, so the
//! fixture's graders judge what pi-agent-core sent.
//!
//! The installed adapter's `pi-agent-core` version is the version fixtures must have been
//! recorded with (`meta.piAgentCoreVersion`, checked when loading: the drift error).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::drift::scenario_dir;
use super::is_fixture;
use crate::case::{Case, Execution, ExternalAgent, PromptVia};

/// The agent's name on the command line (`--agent pi-agent-core`).
pub const AGENT_NAME: &str = "pi-agent-core";

/// The variable naming the adapter's directory, overriding [`default_adapter_dir`].
pub(crate) const ADAPTER_DIR_VAR: &str = "EVALHOST_PI_AGENT_CORE_DIR";

/// The adapter's entry point in its directory.
const ENTRY: &str = "replay.mjs";

/// Where the installed package's manifest is, in the adapter's directory.
const PACKAGE_JSON: &str = "node_modules/@mariozechner/pi-agent-core/package.json";

/// Why the pi-agent-core adapter cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PiAgentCoreError {
    /// No `node` on `PATH`.
    #[error(
        "`--agent pi-agent-core` needs Node.js 20 or later, and there is no `node` on PATH; install it (e.g. `apt-get install nodejs`)"
    )]
    NoNode,
    /// The adapter's directory lacks its entry point or its installed packages.
    #[error(
        "the pi-agent-core adapter is not installed in {}: run `npm ci --prefix {}` (or set {ADAPTER_DIR_VAR} to an installed copy of agents/pi-agent-core)",
        dir.display(),
        dir.display()
    )]
    NotInstalled {
        /// The adapter's directory (`EVALHOST_PI_AGENT_CORE_DIR`, else the source tree's
        /// `agents/pi-agent-core`).
        dir: PathBuf,
    },
    /// The installed pi-agent-core's `package.json` has no readable version.
    #[error("{}: cannot read the installed pi-agent-core version: {message}", path.display())]
    BadPackage {
        /// The installed package's `package.json`.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Cases that are not AgentCompany fixtures were given to `--agent pi-agent-core`.
    #[error(
        "`--agent pi-agent-core` replays AgentCompany fixtures (*.jsonl) only; run these cases without it: {}",
        list(paths)
    )]
    NotFixtures {
        /// Those cases' files.
        paths: Vec<PathBuf>,
    },
}

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

/// The adapter's directory in the source tree evalhost was built from.
pub(crate) fn default_adapter_dir() -> PathBuf {
    let host = Path::new(env!("CARGO_MANIFEST_DIR"));
    host.parent()
        .unwrap_or(host)
        .join("agents")
        .join("pi-agent-core")
}

/// An installed adapter, ready to replay fixtures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiAgentCore {
    /// `node`, by its full path.
    node: PathBuf,
    /// The adapter's directory (absolute).
    dir: PathBuf,
    /// The installed `@mariozechner/pi-agent-core` version.
    version: String,
}

impl PiAgentCore {
    /// Find `node` on `path` and the adapter in `$EVALHOST_PI_AGENT_CORE_DIR`, else in
    /// `default_adapter_dir`.
    pub fn find(path: &OsStr) -> Result<Self, PiAgentCoreError> {
        let dir = std::env::var_os(ADAPTER_DIR_VAR)
            .filter(|d| !d.is_empty())
            .map_or_else(default_adapter_dir, PathBuf::from);
        Self::find_in(path, &dir)
    }

    /// Find `node` on `path` and the adapter installed in `dir`.
    pub(crate) fn find_in(path: &OsStr, dir: &Path) -> Result<Self, PiAgentCoreError> {
        let node = crate::on_path::find(path, "node").ok_or(PiAgentCoreError::NoNode)?;
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        let manifest = dir.join(PACKAGE_JSON);
        if !dir.join(ENTRY).is_file() || !manifest.is_file() {
            return Err(PiAgentCoreError::NotInstalled { dir });
        }
        let version = installed_version(&manifest)?;
        Ok(Self { node, dir, version })
    }

    /// The installed `@mariozechner/pi-agent-core` version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The adapter's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Make `case` replay through the adapter. It must be an AgentCompany fixture: any other
    /// case is left as it is and `false` returned (a suite then refuses to run with
    /// [`PiAgentCoreError::NotFixtures`], naming each such case's file).
    pub(crate) fn apply(&self, case: &mut Case) -> bool {
        if !is_replayed_fixture(case) {
            return false;
        }
        case.execution = Execution::External(self.agent_for(case));
        true
    }

    /// `node replay.mjs FIXTURE SYSTEM` for one fixture (paths absolute: the agent runs in
    /// the run's workspace).
    fn agent_for(&self, case: &Case) -> ExternalAgent {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        // The fixture loaded, so its scenario directory exists.
        let system = scenario_dir(&case.path, &case.name)
            .map(|dir| dir.join("system.txt"))
            .unwrap_or_default();
        let arg = |p: PathBuf| p.to_string_lossy().into_owned();
        ExternalAgent::Command {
            command: vec![
                arg(self.node.clone()),
                arg(self.dir.join(ENTRY)),
                arg(absolute(&case.path)),
                arg(absolute(&system)),
            ],
            prompt: PromptVia::Stdin,
        }
    }
}

/// A case loaded from an AgentCompany fixture (replayed with its recorded tool results).
fn is_replayed_fixture(case: &Case) -> bool {
    is_fixture(&case.path) && matches!(case.execution, Execution::ReplayTools(_))
}

/// The `version` of the package manifest at `path`.
fn installed_version(path: &Path) -> Result<String, PiAgentCoreError> {
    let bad = |message: String| PiAgentCoreError::BadPackage {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let manifest: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    match manifest.get("version").and_then(serde_json::Value::as_str) {
        Some(version) if !version.is_empty() => Ok(version.to_owned()),
        _ => Err(bad("no \"version\" string".to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_path() -> std::ffi::OsString {
        std::env::var_os("PATH").unwrap_or_default()
    }

    #[test]
    fn an_uninstalled_adapter_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ENTRY), "").unwrap();
        let Err(error) = PiAgentCore::find_in(&node_path(), dir.path()) else {
            panic!("an adapter without node_modules was accepted");
        };
        if matches!(error, PiAgentCoreError::NoNode) {
            return; // (No node on this machine: that error is tested below.)
        }
        assert_eq!(
            error.to_string(),
            format!(
                "the pi-agent-core adapter is not installed in {0}: run `npm ci --prefix {0}` (or set EVALHOST_PI_AGENT_CORE_DIR to an installed copy of agents/pi-agent-core)",
                dir.path().display()
            )
        );
    }

    #[test]
    fn no_node_on_path_is_its_own_error() {
        let empty = tempfile::tempdir().unwrap();
        let error = PiAgentCore::find_in(empty.path().as_os_str(), empty.path()).unwrap_err();
        assert!(matches!(error, PiAgentCoreError::NoNode), "{error}");
    }

    #[test]
    fn the_version_is_the_installed_package_s() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("package.json");
        std::fs::write(&manifest, r#"{"name":"x","version":"0.67.68"}"#).unwrap();
        assert_eq!(installed_version(&manifest).unwrap(), "0.67.68");
        std::fs::write(&manifest, r#"{"name":"x"}"#).unwrap();
        assert_eq!(
            installed_version(&manifest).unwrap_err().to_string(),
            format!(
                "{}: cannot read the installed pi-agent-core version: no \"version\" string",
                manifest.display()
            )
        );
    }
}

//! The container engine, driven through its command line: `docker`, or `podman` where Docker
//! is missing (the same commands and flags), or the program `EVALHOST_DOCKER` names.
//!
//! The command line rather than a client crate of the Engine API: it is the one interface
//! Docker and Podman share exactly, it builds Dockerfiles with the user's own builder
//! settings and credentials, and evalhost compiles no HTTP client of the daemon. What it
//! costs was measured (docs/environments.md, "The engine"): an exec is 55–75 ms, of which the
//! client's own start is 9 ms (Docker 28's client) to 20 ms (Debian's 20.10), the rest the
//! daemon's; paid once per command an agent runs.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::EnvironmentError;

/// Characters of a failed command's stderr kept in its error.
const STDERR_TAIL: usize = 1500;

/// A located container engine.
#[derive(Debug, Clone)]
pub struct Engine {
    program: PathBuf,
}

impl Engine {
    /// `EVALHOST_DOCKER`, else `docker` on `PATH`, else `podman`.
    pub fn locate() -> Result<Engine, EnvironmentError> {
        if let Some(program) = std::env::var_os("EVALHOST_DOCKER").filter(|p| !p.is_empty()) {
            return Ok(Engine {
                program: program.into(),
            });
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        ["docker", "podman"]
            .iter()
            .find_map(|name| crate::on_path::find(&path, name))
            .map(|program| Engine { program })
            .ok_or(EnvironmentError::NoEngine)
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// A command of the engine (`docker ARGS...`), its streams not yet set.
    pub(crate) fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.kill_on_drop(true);
        command
    }

    /// Run `docker ARGS...` to its end; its standard output, trimmed. `what` names the step in
    /// the error (`building env/Dockerfile`), which carries the command's stderr.
    pub(crate) async fn output<I, S>(&self, what: &str, args: I) -> Result<String, EnvironmentError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.output_with(what, args, &std::collections::BTreeMap::new())
            .await
    }

    /// [`Engine::output`] with `vars` in the client's environment (which `-e NAME` passes on,
    /// so that no value is on a command line).
    pub(crate) async fn output_with<I, S>(
        &self,
        what: &str,
        args: I,
        vars: &std::collections::BTreeMap<String, String>,
    ) -> Result<String, EnvironmentError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.command();
        command
            .envs(vars)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = command
            .output()
            .await
            .map_err(|error| self.spawn_error(error))?;
        if !output.status.success() {
            return Err(EnvironmentError::Failed {
                what: what.to_owned(),
                status: output.status.to_string(),
                said: said(&output.stderr, &output.stdout),
            });
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// [`Engine::output`], blocking (a container removed in a `Drop`).
    pub(crate) fn output_blocking(&self, args: &[OsString]) -> std::io::Result<()> {
        let status = std::process::Command::new(&self.program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("exited with {status}")))
        }
    }

    pub(crate) fn spawn_error(&self, error: std::io::Error) -> EnvironmentError {
        EnvironmentError::Spawn {
            program: self.program.clone(),
            error,
        }
    }
}

/// What a failed command said: the end of its stderr, else of its stdout.
pub(crate) fn said(stderr: &[u8], stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(if stderr.trim_ascii().is_empty() {
        stdout
    } else {
        stderr
    });
    let text = text.trim();
    let start = text.ceil_char_boundary(text.len().saturating_sub(STDERR_TAIL));
    text[start..].to_owned()
}

//! A run's processes in its container (`crate::environment::Container`): each is the engine's
//! `exec` of the program, with the variables the caller set passed by name (their values are
//! the engine client's environment, never on a command line), from the working directory the
//! caller's directory is mounted at. For an external agent, when the environment's network is
//! `endpoint`, the run's model endpoint is served on `127.0.0.1:PORT` inside the container's
//! network namespace (made the way bubblewrap's is, `forward.rs`), at the same URL as outside.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Reach, RunChild, RunCommand, forward};
use crate::environment::{Container, Network};

/// The engine client's own variables, kept from evalhost's environment: how it reaches the
/// daemon and its configuration.
const ENGINE_VARS: &[&str] = &[
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "CONTAINER_HOST",
    "XDG_RUNTIME_DIR",
];

/// The variables not passed into the container: its image's `PATH` stands.
const NOT_PASSED: &[&str] = &["PATH"];

#[derive(Debug)]
pub(super) struct InContainer {
    container: Arc<Container>,
    network: Network,
    endpoint_port: u16,
    /// Whether the endpoint is served in the container's network namespace yet (once: the
    /// port is bound there for the container's life).
    endpoint_served: Mutex<bool>,
}

/// What runs in the container: kept apart until the command is started.
pub(super) struct Exec {
    pub(super) cwd: PathBuf,
    program: OsString,
    pub(super) args: Vec<OsString>,
    pub(super) env: Vec<(OsString, OsString)>,
    reach: Reach,
}

impl Exec {
    pub(super) fn set(&mut self, key: &OsStr, value: &OsStr) {
        match self.env.iter_mut().find(|(k, _)| k == key) {
            Some(pair) => pair.1 = value.to_owned(),
            None => self.env.push((key.to_owned(), value.to_owned())),
        }
    }
}

impl InContainer {
    pub(super) fn new(container: Arc<Container>, network: Network, endpoint_port: u16) -> Self {
        Self {
            container,
            network,
            endpoint_port,
            endpoint_served: Mutex::new(false),
        }
    }

    pub(super) fn container(&self) -> &Arc<Container> {
        &self.container
    }

    pub(super) fn command(
        &self,
        program: impl AsRef<OsStr>,
        cwd: &Path,
        reach: Reach,
    ) -> RunCommand {
        RunCommand {
            cmd: tokio::process::Command::new(self.container.engine().program()),
            forward: None,
            exec: Some(Exec {
                cwd: cwd.to_owned(),
                program: program.as_ref().to_owned(),
                args: Vec::new(),
                env: Vec::new(),
                reach,
            }),
        }
    }

    pub(super) fn spawn(
        &self,
        command: RunCommand,
        tmp: &Path,
        serve: Option<forward::ServeEndpoint<'_>>,
    ) -> std::io::Result<RunChild> {
        let RunCommand { mut cmd, exec, .. } = command;
        let Some(mut exec) = exec else {
            return Err(std::io::Error::other(
                "a command of the run's container was made outside it",
            ));
        };
        exec.set("TMPDIR".as_ref(), tmp.as_os_str());
        if exec.reach == Reach::Endpoint && self.network == Network::Endpoint {
            self.serve_endpoint(serve)?;
        }
        let names = exec
            .env
            .iter()
            .map(|(k, _)| k.as_os_str())
            .filter(|k| !NOT_PASSED.iter().any(|n| OsStr::new(n) == *k));
        cmd.args(self.container.exec_args(&exec.cwd, names))
            .arg(&exec.program)
            .args(&exec.args)
            .env_clear();
        for var in ENGINE_VARS {
            if let Some(value) = std::env::var_os(var) {
                cmd.env(var, value);
            }
        }
        if std::env::var_os("DOCKER_CONFIG").is_none()
            && let Some(home) = std::env::var_os("HOME")
        {
            // The client's configuration stays the invoking user's, whatever HOME the run has.
            cmd.env("DOCKER_CONFIG", PathBuf::from(home).join(".docker"));
        }
        cmd.envs(exec.env.iter().map(|(k, v)| (k, v)));
        crate::inherited_fds::mark_all();
        Ok(RunChild {
            child: cmd.spawn()?,
            forwarding: None,
        })
    }

    /// Serve the run's endpoint on `127.0.0.1:PORT` in the container's network namespace by
    /// `serve` (the run's session), once.
    fn serve_endpoint(&self, serve: Option<forward::ServeEndpoint<'_>>) -> std::io::Result<()> {
        let mut served = self
            .endpoint_served
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *served {
            return Ok(());
        }
        let Some(serve) = serve else {
            return Err(std::io::Error::other(
                "the run's endpoint has no session to serve it in the container",
            ));
        };
        let pid = self.container.pid().ok_or_else(|| {
            std::io::Error::other(
                "the container's processes are not in evalhost's PID namespace (is the container engine's socket from another machine or container?), so the model endpoint cannot be served into it; use `network: none`, or run evalhost beside the engine",
            )
        })?;
        let listeners = forward::listeners_in(pid, &[self.endpoint_port])
            .map_err(|error| {
                std::io::Error::other(format!(
                    "serving the model endpoint in the container (this needs evalhost to run as root, or `network: none`): {error}"
                ))
            })?;
        for listener in listeners {
            serve(listener)?;
        }
        *served = true;
        Ok(())
    }
}

//! Confining every process a run starts — the built-in agent's `bash`, an external agent or
//! preset, and everything they spawn — from before `exec`, by one of two layers.
//!
//! **Namespaces** where bubblewrap can make them (`namespaces.rs`, `forward.rs`): each process
//! starts in user (no capabilities), PID, mount (a root assembled from read-only system
//! directories and the run's writable workspace, HOME and TMPDIR), network (only the run's
//! endpoint and widened ports forwarded in), IPC, UTS and cgroup namespaces of its own.
//!
//! **Landlock** otherwise (`ruleset.rs`, `system.rs`): a run's processes may write only in the
//! run's workspace, its HOME and its temp dir (`TMPDIR`), read the system but not the invoking
//! user's home nor the directory holding every run's temp root, connect over TCP only to the
//! model endpoint's port, gain no new privileges, and neither signal processes nor reach
//! abstract UNIX sockets outside the run. The ruleset is built once per run in evalhost (with
//! the `landlock` crate), when the run starts its first process; each process is started by a
//! short-lived thread that first calls `prctl(PR_SET_NO_NEW_PRIVS)` and
//! `landlock_restrict_self` on itself, so the child inherits the domain from its first
//! instruction ([`RunConfinement::spawn`]).
//!
//! **A container** when the case has an environment (`crate::environment`): each process is
//! `docker exec`ed into the run's container, whose namespaces, capabilities, limits and
//! network (`none`, the endpoint forwarded into it as into bubblewrap's) the engine makes
//! (`container.rs` here).
//!
//! A case (`confine:`) or the command line widens either explicitly ([`Widening`]); where the
//! machine lacks a layer or a feature, [`Support::missing`] names it (`docs/security.md`).

mod container;
mod forward;
mod namespaces;
mod ruleset;
mod system;

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

/// The Landlock ABI whose features evalhost uses: file system access rights with truncation
/// and device ioctls (1–5), TCP connect rules (4), signal and abstract-socket scoping (6).
pub(crate) const TARGET_ABI: u32 = 6;

/// Caps the Landlock ABI evalhost uses (to see what an older kernel would give).
pub(crate) const ABI_VAR: &str = "EVALHOST_CONFINE_ABI";

/// What a case or the command line adds to what a run's processes may do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Widening {
    /// Paths readable (and executable) beyond the system.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<PathBuf>,
    /// Paths writable beyond the workspace, HOME and temp dir.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// TCP ports connectable beyond the endpoint's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connect: Vec<u16>,
    /// Every TCP port (`network: any`): no connect rules at all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub any_port: bool,
}

impl Widening {
    /// Nothing added.
    pub fn is_empty(&self) -> bool {
        self == &Widening::default()
    }

    /// Both widenings at once.
    pub fn with(&self, other: &Widening) -> Widening {
        let mut joined = self.clone();
        joined.read.extend(other.read.iter().cloned());
        joined.write.extend(other.write.iter().cloned());
        joined.connect.extend(other.connect.iter().copied());
        joined.any_port |= other.any_port;
        joined
    }
}

/// The suite's confinement policy (`RunOptions::confine`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Off only with `--no-confine`: runs get the user's full rights.
    pub enabled: bool,
    /// The command line's widening, for every run (`--confine-read`, ...).
    pub widen: Widening,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            enabled: true,
            widen: Widening::default(),
        }
    }
}

/// What the machine offers, decided once per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI the kernel implements (0: none), capped by `ABI_VAR`.
    pub abi: u32,
    /// Whether each run gets namespaces of its own: bubblewrap's version, or why not.
    pub namespaces: Result<&'static str, &'static str>,
}

impl Support {
    /// This machine's support (asked once; `EVALHOST_CONFINE_ABI` caps Landlock,
    /// `EVALHOST_CONFINE_NAMESPACES=0` turns namespaces off, `EVALHOST_BWRAP` names the
    /// bubblewrap to use).
    pub fn current() -> Support {
        static SUPPORT: OnceLock<Support> = OnceLock::new();
        *SUPPORT.get_or_init(|| {
            let cap = std::env::var(ABI_VAR)
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok());
            let abi = ruleset::kernel_abi();
            Support {
                abi: cap.map_or(abi, |cap| abi.min(cap)),
                namespaces: namespaces::bwrap().map(|bwrap| bwrap.version.as_str()),
            }
        })
    }

    /// The ABI evalhost builds rulesets for: the kernel's, at most [`TARGET_ABI`].
    pub(crate) fn used_abi(self) -> u32 {
        self.abi.min(TARGET_ABI)
    }

    /// The protections this machine cannot give. With namespaces, none: Landlock is their
    /// fallback. Without, the namespaces (and why) and each Landlock feature the kernel
    /// lacks, with the ABI that brings it.
    pub fn missing(self) -> Vec<String> {
        let Err(why) = self.namespaces else {
            return Vec::new();
        };
        let needs: [(u32, &str); 4] = [
            (1, "file system rules (Landlock ABI 1)"),
            (3, "truncation rules (Landlock ABI 3)"),
            (4, "TCP connect rules (Landlock ABI 4)"),
            (6, "signal and abstract-socket scoping (Landlock ABI 6)"),
        ];
        std::iter::once(format!(
            "namespaces of each run's own (user without capabilities, PID, mount, network: {why})"
        ))
        .chain(
            needs
                .iter()
                .filter(|(abi, _)| self.abi < *abi)
                .map(|(_, what)| (*what).to_owned()),
        )
        .collect()
    }
}

/// Why a run's confinement could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfineError {
    /// The kernel or the landlock crate refused a rule.
    #[error("failed to build the run's Landlock ruleset: {0}")]
    Ruleset(#[from] landlock::RulesetError),
}

/// A run's directories: its processes may write in them.
#[derive(Debug, Clone)]
pub struct RunDirs<'a> {
    /// The run's workspace (the agent's working directory).
    pub workspace: &'a Path,
    /// The run's home directory (`HOME`).
    pub home: &'a Path,
    /// The run's temp dir (`TMPDIR`).
    pub tmp: &'a Path,
    /// Only readable: for an agent whose own sandbox cannot run confined, under
    /// `approve: none` (`Preset::sandbox_nests`).
    pub workspace_read_only: bool,
}

/// How every process of one run is started: its temp dir, and the layer that confines it
/// (`Layer`).
///
/// A Landlock ruleset is built when the run starts its first process, not before: most runs
/// of the built-in agent start none (its file tools run in evalhost), and building one opens
/// every path it names (5.8 % of a 1,000-case run's profile, `docs/performance.md`,
/// "Confinement").
#[derive(Debug)]
pub struct RunConfinement {
    tmp: PathBuf,
    layer: Layer,
}

/// What confines a run's processes.
#[derive(Debug)]
enum Layer {
    /// `--no-confine`, or a library caller that wants none.
    Off,
    /// Namespaces of their own, made by bubblewrap (`namespaces.rs`).
    Namespaces(Sandbox),
    /// Landlock alone, where bubblewrap or user namespaces are missing (`ruleset.rs`).
    Landlock(Rules),
    /// The run's container (`container.rs`).
    Container(container::InContainer),
}

/// What a run's sandbox is made of.
#[derive(Debug)]
struct Sandbox {
    bwrap: &'static namespaces::Bwrap,
    workspace: PathBuf,
    home: PathBuf,
    workspace_read_only: bool,
    widen: Widening,
    endpoint_port: u16,
}

/// What a run's ruleset is built from, and the ruleset once built.
#[derive(Debug)]
struct Rules {
    /// The Landlock ABI to build for (0: the kernel has none).
    abi: u32,
    workspace: PathBuf,
    home: PathBuf,
    workspace_read_only: bool,
    widen: Widening,
    endpoint_port: u16,
    built: OnceLock<Result<Option<OwnedFd>, Arc<ConfineError>>>,
}

/// What a process of the run may reach over the network besides the ports a case widened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Nothing: the built-in agent's `bash` (the agent loop itself talks to the endpoint).
    Nothing,
    /// The run's model endpoint: an external agent.
    Endpoint,
}

/// A command for one of the run's processes, made by [`RunConfinement::command`]: the caller
/// adds the program's arguments, environment and standard streams, then hands it to
/// [`RunConfinement::spawn`]. In a container, the arguments and environment are kept apart
/// until then: they go after the engine's `exec` and the container's name.
pub(crate) struct RunCommand {
    cmd: tokio::process::Command,
    forward: Option<forward::Pending>,
    /// In a container: the program, its arguments and environment, and where it starts.
    exec: Option<container::Exec>,
}

impl RunCommand {
    /// `program` started as it is, unconfined.
    pub(crate) fn plain(program: impl AsRef<OsStr>) -> Self {
        Self {
            cmd: tokio::process::Command::new(program),
            forward: None,
            exec: None,
        }
    }

    /// Start it unconfined (a caller without a run's confinement).
    pub(crate) fn spawn_plain(mut self) -> std::io::Result<RunChild> {
        crate::inherited_fds::mark_all();
        Ok(RunChild {
            child: self.cmd.spawn()?,
            forwarding: None,
        })
    }

    pub(crate) fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        match &mut self.exec {
            Some(exec) => exec.args.push(arg.as_ref().to_owned()),
            None => {
                self.cmd.arg(arg);
            }
        }
        self
    }

    pub(crate) fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for arg in args {
            self.arg(arg);
        }
        self
    }

    /// `argv[0]` (on the host; a container's program gets its path).
    pub(crate) fn arg0(&mut self, arg0: impl AsRef<OsStr>) -> &mut Self {
        if self.exec.is_none() {
            self.cmd.arg0(arg0);
        }
        self
    }

    pub(crate) fn env_clear(&mut self) -> &mut Self {
        match &mut self.exec {
            Some(exec) => exec.env.clear(),
            None => {
                self.cmd.env_clear();
            }
        }
        self
    }

    pub(crate) fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        match &mut self.exec {
            Some(exec) => exec.set(key.as_ref(), value.as_ref()),
            None => {
                self.cmd.env(key, value);
            }
        }
        self
    }

    pub(crate) fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, value) in vars {
            self.env(key, value);
        }
        self
    }

    /// Where it starts (in a container: where that directory is mounted).
    pub(crate) fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        match &mut self.exec {
            Some(exec) => exec.cwd = dir.as_ref().to_owned(),
            None => {
                self.cmd.current_dir(dir);
            }
        }
        self
    }

    pub(crate) fn stdin(&mut self, cfg: impl Into<std::process::Stdio>) -> &mut Self {
        self.cmd.stdin(cfg);
        self
    }

    pub(crate) fn stdout(&mut self, cfg: impl Into<std::process::Stdio>) -> &mut Self {
        self.cmd.stdout(cfg);
        self
    }

    pub(crate) fn stderr(&mut self, cfg: impl Into<std::process::Stdio>) -> &mut Self {
        self.cmd.stderr(cfg);
        self
    }

    /// Its process group (in a container: the engine client's; the container's processes are
    /// found by their marker variable, `crate::process_group`).
    pub(crate) fn process_group(&mut self, pgroup: i32) -> &mut Self {
        self.cmd.process_group(pgroup);
        self
    }

    pub(crate) fn kill_on_drop(&mut self, kill: bool) -> &mut Self {
        self.cmd.kill_on_drop(kill);
        self
    }
}

/// A started process of the run, and what forwards ports into its sandbox (as long as it
/// lives).
pub(crate) struct RunChild {
    pub child: tokio::process::Child,
    pub(crate) forwarding: Option<forward::Forwarding>,
}

impl RunConfinement {
    /// No confinement at all (`--no-confine`, or a library caller that wants none): only the
    /// temp dir.
    pub fn off(tmp: PathBuf) -> Self {
        Self {
            tmp,
            layer: Layer::Off,
        }
    }

    /// The confinement of a run in `dirs` whose endpoint listens on `endpoint_port`, widened
    /// by the suite's policy and the case's `confine:`: namespaces where bubblewrap can make
    /// them, else Landlock (whose ruleset is built when the run starts its first process).
    pub fn new(policy: &Policy, case: &Widening, dirs: &RunDirs<'_>, endpoint_port: u16) -> Self {
        if !policy.enabled {
            return Self::off(dirs.tmp.to_owned());
        }
        let widen = policy.widen.with(case);
        let layer = match namespaces::bwrap() {
            Ok(bwrap) => Layer::Namespaces(Sandbox {
                bwrap,
                workspace: dirs.workspace.to_owned(),
                home: dirs.home.to_owned(),
                workspace_read_only: dirs.workspace_read_only,
                widen,
                endpoint_port,
            }),
            Err(_) => Layer::Landlock(Rules {
                abi: Support::current().used_abi(),
                workspace: dirs.workspace.to_owned(),
                home: dirs.home.to_owned(),
                workspace_read_only: dirs.workspace_read_only,
                widen,
                endpoint_port,
                built: OnceLock::new(),
            }),
        };
        Self {
            tmp: dirs.tmp.to_owned(),
            layer,
        }
    }

    /// The run's processes in `container` (its workspace, HOME and `tmp` mounted at the
    /// paths evalhost gives them); `endpoint_port`: the run's model endpoint, forwarded into
    /// the container's network namespace for an external agent when the environment's
    /// network is `endpoint`.
    pub fn container(
        container: Arc<crate::environment::Container>,
        tmp: PathBuf,
        network: crate::environment::Network,
        endpoint_port: u16,
    ) -> Self {
        Self {
            tmp,
            layer: Layer::Container(container::InContainer::new(
                container,
                network,
                endpoint_port,
            )),
        }
    }

    /// The run's container, when its processes run in one.
    pub(crate) fn in_container(&self) -> Option<&Arc<crate::environment::Container>> {
        match &self.layer {
            Layer::Container(inside) => Some(inside.container()),
            _ => None,
        }
    }

    /// The counters of the run's container's limits before a command (`None`: not in a
    /// container), for [`RunConfinement::limit_hit`] after it.
    pub(crate) fn limit_counts(&self) -> Option<(u64, u64)> {
        self.in_container()
            .map(|container| container.limit_counts())
    }

    /// The limit of the run's container a command ran into since `before`, as the agent is
    /// told (`the environment's memory limit (32 MiB) was reached: ...`).
    pub(crate) fn limit_hit(&self, before: Option<(u64, u64)>) -> Option<String> {
        self.in_container()?.limit_hit(before?)
    }

    /// Whether the kernel confines the run's processes (namespaces, or a Landlock ruleset).
    pub(crate) fn is_confined(&self) -> bool {
        match &self.layer {
            Layer::Off => false,
            Layer::Namespaces(_) | Layer::Container(_) => true,
            Layer::Landlock(rules) => rules.abi > 0,
        }
    }

    /// Whether each of the run's processes starts as bubblewrap whose child is the first
    /// process of a PID namespace of its own (the run's namespaces): once that child is
    /// killed, the kernel has ended everything the process started.
    pub(crate) fn has_pid_namespace(&self) -> bool {
        matches!(self.layer, Layer::Namespaces(_))
    }

    /// The run's temp dir: `TMPDIR` of its processes.
    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// The command that runs `program` as one of the run's processes, starting in `cwd` and
    /// reaching `reach`: in namespaces, bubblewrap's command line with `program` after `--`.
    pub(crate) fn command(
        &self,
        program: impl AsRef<OsStr>,
        cwd: &Path,
        reach: Reach,
    ) -> std::io::Result<RunCommand> {
        let sandbox = match &self.layer {
            Layer::Namespaces(sandbox) => sandbox,
            Layer::Container(inside) => return Ok(inside.command(program, cwd, reach)),
            Layer::Off | Layer::Landlock(_) => {
                let mut command = RunCommand::plain(program);
                command.cmd.current_dir(cwd);
                return Ok(command);
            }
        };
        let mut ports: Vec<u16> = Vec::new();
        if !sandbox.widen.any_port {
            if reach == Reach::Endpoint {
                ports.push(sandbox.endpoint_port);
            }
            for port in &sandbox.widen.connect {
                if !ports.contains(port) {
                    ports.push(*port);
                }
            }
        }
        let endpoint = (reach == Reach::Endpoint).then_some(sandbox.endpoint_port);
        let forward = if ports.is_empty() {
            None
        } else {
            Some(forward::Pending::new(ports, endpoint)?)
        };
        let view = namespaces::RunView {
            workspace: &sandbox.workspace,
            workspace_read_only: sandbox.workspace_read_only,
            home: &sandbox.home,
            tmp: &self.tmp,
            widen: &sandbox.widen,
            cwd,
        };
        let extra = forward
            .as_ref()
            .map(|f| f.arguments().to_vec())
            .unwrap_or_default();
        let mut cmd = tokio::process::Command::new(&sandbox.bwrap.program);
        cmd.args(namespaces::arguments(&view, &extra))
            .arg(program)
            .current_dir(cwd);
        Ok(RunCommand {
            cmd,
            forward,
            exec: None,
        })
    }

    /// Start `command` as one of the run's processes: `TMPDIR` is the run's temp dir and,
    /// when confinement is on, the child starts confined.
    ///
    /// In namespaces, bubblewrap makes them; ports are forwarded into its network namespace
    /// before the program runs (`forward.rs`). With Landlock, the child inherits its domain
    /// and `no new privileges` from the thread that starts it, so a short-lived thread of its
    /// own confines itself (two system calls) and starts the child there, then ends: no other
    /// thread of evalhost is confined. The child is then started the way an unconfined one
    /// is, with `posix_spawn`'s vfork-style clone; a `pre_exec` hook would force `fork`, which
    /// copies the page tables of the whole evalhost process on every call (5–9 ms a bash
    /// call, `docs/performance.md`, "Confinement").
    pub(crate) fn spawn(&self, command: RunCommand) -> std::io::Result<RunChild> {
        self.spawn_serving(command, None)
    }

    /// [`RunConfinement::spawn`], with the run's model endpoint served by `serve` on its
    /// listener in the sandbox (the run's own session: another session's token is refused
    /// there and recorded as this run's endpoint error); without `serve` it is relayed to the
    /// endpoint's port on the host like any forwarded port.
    pub(crate) fn spawn_serving(
        &self,
        command: RunCommand,
        serve: Option<forward::ServeEndpoint<'_>>,
    ) -> std::io::Result<RunChild> {
        if let Layer::Container(inside) = &self.layer {
            return inside.spawn(command, &self.tmp, serve);
        }
        let RunCommand {
            mut cmd, forward, ..
        } = command;
        cmd.env("TMPDIR", &self.tmp);
        // Nothing the embedding program left open reaches a run, whenever it opened it.
        crate::inherited_fds::mark_all();
        match &self.layer {
            // (A container's command was started above.)
            Layer::Off | Layer::Namespaces(_) | Layer::Container(_) => {
                if let Some(forward) = &forward {
                    let inherited = forward.inherited();
                    // SAFETY: `fcntl` is async-signal-safe; the descriptors stay open in
                    // evalhost until the child has started.
                    #[allow(unsafe_code)]
                    unsafe {
                        cmd.pre_exec(move || {
                            for fd in inherited {
                                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                                    return Err(std::io::Error::last_os_error());
                                }
                            }
                            Ok(())
                        });
                    }
                }
                let mut child = cmd.spawn()?;
                let forwarding = match forward.map(|f| f.start(serve)).transpose() {
                    Ok(forwarding) => forwarding,
                    Err(error) => {
                        let _ = child.start_kill();
                        return Err(with_stderr(error, &mut child));
                    }
                };
                Ok(RunChild { child, forwarding })
            }
            Layer::Landlock(rules) => {
                let fd = match rules.ruleset(&self.tmp) {
                    Ok(ruleset) => ruleset.map_or(-1, AsRawFd::as_raw_fd),
                    Err(error) => return Err(std::io::Error::other(error)),
                };
                // The child's pipes and its reaper belong to the runtime that awaits it.
                let runtime =
                    tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
                let child = std::thread::scope(|scope| {
                    let spawner = std::thread::Builder::new()
                        .name("evalhost-confined-spawn".into())
                        .stack_size(SPAWNER_STACK)
                        .spawn_scoped(scope, || {
                            let _runtime = runtime.enter();
                            ruleset::restrict_self(fd)?;
                            cmd.spawn()
                        })?;
                    spawner.join().unwrap_or_else(|_| {
                        Err(std::io::Error::other(
                            "the thread starting the confined process panicked",
                        ))
                    })
                })?;
                Ok(RunChild {
                    child,
                    forwarding: None,
                })
            }
        }
    }
}

/// `error`, with what bubblewrap said on the child's standard error when the sandbox did not
/// start (it exits after saying it, so what it said is in the pipe; read without waiting).
fn with_stderr(error: std::io::Error, child: &mut tokio::process::Child) -> std::io::Error {
    use std::io::Read;
    let Some(stderr) = child.stderr.take().and_then(|s| s.into_owned_fd().ok()) else {
        return error;
    };
    let mut file = std::fs::File::from(stderr);
    let nonblocking = nix::fcntl::fcntl(
        &file,
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    );
    let mut said = [0u8; 2048];
    let n = match nonblocking {
        Ok(_) => file.read(&mut said).unwrap_or(0),
        Err(_) => 0,
    };
    let said = String::from_utf8_lossy(&said[..n]);
    match said.trim() {
        "" => error,
        said => std::io::Error::other(format!("{error}: {said}")),
    }
}

impl Rules {
    /// The run's ruleset, built the first time it is asked for (`None`: the kernel has no
    /// Landlock, or made no ruleset). A failure is kept: every process of the run fails to
    /// start with it.
    fn ruleset(&self, tmp: &Path) -> Result<Option<&OwnedFd>, Arc<ConfineError>> {
        let built = self.built.get_or_init(|| {
            if self.abi == 0 {
                return Ok(None);
            }
            let dirs = RunDirs {
                workspace: &self.workspace,
                home: &self.home,
                tmp,
                workspace_read_only: self.workspace_read_only,
            };
            ruleset::build(
                self.abi,
                system::readable(),
                &dirs,
                &self.widen,
                self.endpoint_port,
            )
            .map_err(|error| Arc::new(ConfineError::Ruleset(error)))
        });
        match built {
            Ok(ruleset) => Ok(ruleset.as_ref()),
            Err(error) => Err(error.clone()),
        }
    }
}

/// Stack of the thread that starts a confined process: it only runs the standard library's
/// `posix_spawn` path and tokio's registration of the child.
const SPAWNER_STACK: usize = 256 * 1024;

/// What the report says each run may do (before its case's widening): paths and ports as
/// people read them, the kernel's ABI and the protections it lacks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowed {
    /// `false` with `--no-confine`.
    pub enforced: bool,
    /// The kernel's Landlock ABI (0: none), as capped by `EVALHOST_CONFINE_ABI`.
    pub landlock_abi: u32,
    /// The bubblewrap that gave each run namespaces of its own (`bubblewrap 0.8.0`); absent
    /// when runs had Landlock alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<String>,
    /// Writable: `workspace`, `home`, `tmp`, then the widening's paths.
    pub write: Vec<String>,
    /// Readable: `system` (less the invoking user's home and the runs' temp roots), the
    /// installations on `PATH` and the current directory inside that home, then the widening's
    /// paths.
    pub read: Vec<String>,
    /// TCP connects: `endpoint`, then the widening's ports; `any` when not restricted.
    pub connect: Vec<String>,
    /// What the command line added (`--confine-read`, ...), included in the lists above.
    #[serde(default, skip_serializing_if = "Widening::is_empty")]
    pub widened: Widening,
    /// Protections the kernel lacks (empty when confinement is complete).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

impl Allowed {
    /// What `policy` allows every run on this kernel.
    pub fn of(policy: &Policy) -> Self {
        let support = Support::current();
        if !policy.enabled {
            return Self {
                enforced: false,
                landlock_abi: support.abi,
                namespaces: None,
                write: vec!["any".into()],
                read: vec!["any".into()],
                connect: vec!["any".into()],
                widened: Widening::default(),
                missing: Vec::new(),
            };
        }
        let widen = &policy.widen;
        let mut write: Vec<String> = ["workspace", "home", "tmp"].map(String::from).into();
        write.extend(widen.write.iter().map(|p| p.display().to_string()));
        let mut read = vec!["system".to_owned()];
        read.extend(
            system::readable()
                .installs
                .iter()
                .map(|p| p.display().to_string()),
        );
        read.extend(widen.read.iter().map(|p| p.display().to_string()));
        Self {
            enforced: true,
            landlock_abi: support.abi,
            namespaces: support.namespaces.ok().map(str::to_owned),
            write,
            read,
            connect: connect_list(widen),
            widened: widen.clone(),
            missing: support.missing(),
        }
    }
}

fn connect_list(widen: &Widening) -> Vec<String> {
    if widen.any_port {
        return vec!["any".into()];
    }
    let mut connect = vec!["endpoint".to_owned()];
    connect.extend(widen.connect.iter().map(u16::to_string));
    connect
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The started process is confined; evalhost, the thread that asked included, is not,
    /// and the next process of the run is started and confined the same way.
    #[tokio::test]
    async fn only_the_started_process_is_confined_not_evalhost() {
        assert!(
            Support::current().used_abi() > 0,
            "this test needs a kernel with Landlock"
        );
        let root = tempfile::tempdir().unwrap();
        let [workspace, home, tmp, outside] = ["workspace", "home", "tmp", "outside"].map(|d| {
            let dir = root.path().join(d);
            std::fs::create_dir(&dir).unwrap();
            dir
        });
        let dirs = RunDirs {
            workspace: &workspace,
            home: &home,
            tmp: &tmp,
            workspace_read_only: false,
        };
        let confinement = RunConfinement::new(&Policy::default(), &Widening::default(), &dirs, 0);
        assert!(confinement.is_confined());
        for attempt in ["first", "second"] {
            let mut cmd = confinement
                .command("/bin/sh", &workspace, Reach::Nothing)
                .unwrap();
            cmd.arg("-c")
                .arg(format!(
                    "echo \"$TMPDIR\"; echo {attempt} > ok; echo {attempt} > ../outside/escaped"
                ))
                .stdout(std::process::Stdio::piped());
            let output = confinement
                .spawn(cmd)
                .unwrap()
                .child
                .wait_with_output()
                .await
                .unwrap();
            assert!(!output.status.success(), "the write outside is refused");
            assert_eq!(
                String::from_utf8_lossy(&output.stdout).trim(),
                tmp.display().to_string()
            );
            let ok = std::fs::read_to_string(workspace.join("ok")).unwrap();
            assert_eq!(ok, format!("{attempt}\n"), "the workspace is writable");
            assert!(!outside.join("escaped").exists());
            std::fs::write(outside.join(attempt), "evalhost writes anywhere").unwrap();
        }
    }
}

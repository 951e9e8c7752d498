//! One run's container: started from the case's prepared image with the run's workspace,
//! HOME and temp dir mounted, evalhost's labels, the environment's limits and no network;
//! the run's commands executed in it (`docker exec`, made by `crate::confine`); removed when
//! the run ends, however it ends.
//!
//! Three things remove it: [`Container::remove`] at the run's end; its `Drop` (a run timed
//! out or cancelled drops it); and, should evalhost itself die, the container's first
//! process: it waits on its standard input, which the engine closes when its client (a child
//! of evalhost, attached to it) sees its own input end — evalhost holds the only write end —
//! and the container, started with `--rm`, is removed by the engine. `reap.rs` removes what is
//! left after a crash of the engine's client too. The engine's `--init` is the container's
//! first process, so that processes orphaned in it are reaped (none counts against its
//! process limit after it ended).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

use super::engine::Engine;
use super::image::{LABEL, PreparedImage};
use super::{DEFAULT_PIDS, Environment, EnvironmentError};

/// How long a container may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The holder (the first process under the engine's init): says it is up and its pid in the
/// container, then waits for its standard input to close.
const HOLD: &str = "echo ready $$; read -r _ || :";

/// A host path mounted read-only in the container (an agent mounted from the host).
#[derive(Debug, Clone)]
pub struct Mount {
    pub host: PathBuf,
    pub container: String,
}

/// What one run's container is made of.
pub struct ContainerSpec<'a> {
    pub image: &'a PreparedImage,
    pub environment: &'a Environment,
    /// The run's directories: the workspace is mounted at the image's working directory,
    /// HOME and the temp dir at their own paths (the paths evalhost gives the agent).
    pub workspace: &'a Path,
    /// The workspace mounted read-only (an agent whose own sandbox does not run here, under
    /// `approve: none`, as on the host).
    pub workspace_read_only: bool,
    pub home: &'a Path,
    pub tmp: &'a Path,
    pub mounts: Vec<Mount>,
    /// For the labels and the name: which run this is.
    pub case: &'a str,
    pub run: u32,
}

/// A running container of one run.
#[derive(Debug)]
pub struct Container {
    engine: Engine,
    name: String,
    /// Its first process, in evalhost's PID namespace; `None` when the engine runs in another
    /// (a Docker socket mounted into evalhost's own container): then neither the endpoint can
    /// be served into it nor its cgroup's counters read.
    pid: Option<i32>,
    workdir: String,
    workspace: PathBuf,
    memory_bytes: Option<u64>,
    pids: u32,
    /// The client attached to the holder's standard input (see the module's doc).
    _holder: tokio::process::Child,
    /// The holder's pid in the container (which [`Container::kill_all`] spares).
    holder_pid: u32,
    removed: AtomicBool,
}

impl Container {
    pub async fn start(
        engine: &Engine,
        spec: ContainerSpec<'_>,
    ) -> Result<Container, EnvironmentError> {
        let environment = spec.environment;
        let name = format!(
            "evalhost-{}-{}",
            crate::process_group::new_marker(),
            spec.run
        );
        let workdir = spec.image.workdir.clone();
        let pids = environment.pids.unwrap_or(DEFAULT_PIDS);
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&str]| args.extend(items.iter().map(OsString::from));
        if let Some(home) = [spec.home, spec.tmp]
            .into_iter()
            .find(|dir| dir.starts_with(&workdir))
        {
            return Err(EnvironmentError::Failed {
                what: format!("starting a container of {}", spec.image.source),
                status: "its working directory is refused".into(),
                said: format!(
                    "workdir {workdir} holds the run's own directory {} (mounted at its own path): choose a working directory such as /app",
                    home.display()
                ),
            });
        }
        push(&["run", "--rm", "-i", "--init", "--name", &name]);
        push(&["--label", &format!("{LABEL}=run")]);
        push(&["--label", &format!("{LABEL}.pid={}", std::process::id())]);
        push(&[
            "--label",
            &format!("{LABEL}.boot={}", super::reap::boot_id()),
        ]);
        push(&[
            "--label",
            &format!("{LABEL}.pidns={}", super::reap::pid_namespace()),
        ]);
        push(&["--label", &format!("{LABEL}.case={}", spec.case)]);
        push(&["--label", &format!("{LABEL}.run={}", spec.run)]);
        // No interface but loopback: the endpoint is forwarded in by `crate::confine`.
        push(&["--network", "none"]);
        push(&["--security-opt", "no-new-privileges"]);
        // No capability at all, root or not: the set-up (its own container) is where root's
        // work is done; a run's processes own the workspace, HOME and TMPDIR, and nothing else.
        push(&["--cap-drop", "ALL"]);
        push(&["--pids-limit", &pids.to_string()]);
        if let Some(cpus) = environment.cpus {
            push(&["--cpus", &cpus.to_string()]);
        }
        if let Some(bytes) = environment.memory_bytes {
            // No swap beyond the limit: past it, the kernel kills.
            push(&[
                "--memory",
                &bytes.to_string(),
                "--memory-swap",
                &bytes.to_string(),
            ]);
        }
        // The run's directories are the invoking user's (0700): so are the container's
        // processes, whatever user the image names (root without capabilities when evalhost
        // runs as root).
        push(&[
            "--user",
            &format!("{}:{}", nix::unistd::getuid(), nix::unistd::getgid()),
        ]);
        push(&["-w", &workdir]);
        // By name: the values are in the client's environment, not on its command line.
        for key in environment.env.keys() {
            push(&["-e", key]);
        }
        let mut binds = vec![(spec.workspace, workdir.clone(), spec.workspace_read_only)];
        for dir in [spec.home, spec.tmp] {
            binds.push((dir, dir.to_string_lossy().into_owned(), false));
        }
        for mount in &spec.mounts {
            binds.push((&mount.host, mount.container.clone(), true));
        }
        for (host, inside, read_only) in binds {
            args.push("--mount".into());
            args.push(bind(host, &inside, read_only));
        }
        for arg in ["--entrypoint", "sh", &spec.image.id, "-c", HOLD] {
            args.push(arg.into());
        }
        let mut command = engine.command();
        command
            .envs(&environment.env)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::inherited_fds::mark_all();
        let mut holder = command.spawn().map_err(|error| engine.spawn_error(error))?;
        let failed = |said: String| EnvironmentError::Failed {
            what: format!("starting a container of {}", spec.image.source),
            status: "it did not start".into(),
            said,
        };
        let mut stdout =
            tokio::io::BufReader::new(holder.stdout.take().ok_or_else(|| failed(String::new()))?);
        let mut line = String::new();
        let started = tokio::time::timeout(START_TIMEOUT, stdout.read_line(&mut line)).await;
        let holder_pid = line
            .trim()
            .strip_prefix("ready ")
            .and_then(|pid| pid.parse::<u32>().ok());
        let (Ok(Ok(_)), Some(holder_pid)) = (started, holder_pid) else {
            let _ = holder.start_kill();
            let output = holder.wait_with_output().await.ok();
            let _ = engine
                .output("removing a container", ["rm", "-f", &name])
                .await;
            let said = output
                .map(|o| super::engine::said(&o.stderr, line.as_bytes()))
                .unwrap_or_default();
            return Err(failed(said));
        };
        let mut container = Container {
            engine: engine.clone(),
            name,
            pid: None,
            holder_pid,
            workdir,
            workspace: spec.workspace.to_owned(),
            memory_bytes: environment.memory_bytes,
            pids,
            _holder: holder,
            removed: AtomicBool::new(false),
        };
        let inspected = engine
            .output(
                "finding the container's first process",
                ["inspect", "-f", "{{.Id}} {{.State.Pid}}", &container.name],
            )
            .await?;
        container.pid = inspected
            .split_once(' ')
            .and_then(|(id, pid)| Some((id, pid.trim().parse::<i32>().ok()?)))
            .filter(|(id, pid)| is_its_process(*pid, id))
            .map(|(_, pid)| pid);
        Ok(container)
    }

    /// Its first process, in evalhost's PID namespace (whose network namespace ports are
    /// forwarded into): `None` when the engine runs in another.
    pub fn pid(&self) -> Option<i32> {
        self.pid
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// `cwd` of the host as the container sees it: under the workspace, the same place under
    /// the working directory; HOME and the temp dir are at their own paths.
    pub fn path_inside(&self, cwd: &Path) -> String {
        match cwd.strip_prefix(&self.workspace) {
            Ok(rest) if rest.as_os_str().is_empty() => self.workdir.clone(),
            Ok(rest) => format!("{}/{}", self.workdir.trim_end_matches('/'), rest.display()),
            Err(_) => cwd.display().to_string(),
        }
    }

    /// The engine's arguments that run a program in the container from `cwd` with the
    /// variables `names` (their values are the engine client's own environment, never on its
    /// command line): `exec -i -w CWD -e NAME... CONTAINER`; the program and its arguments
    /// follow.
    pub fn exec_args<'a>(
        &self,
        cwd: &Path,
        names: impl Iterator<Item = &'a std::ffi::OsStr>,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["exec".into(), "-i".into(), "-w".into()];
        args.push(self.path_inside(cwd).into());
        for name in names {
            args.push("-e".into());
            args.push(name.to_owned());
        }
        args.push(self.name.clone().into());
        args
    }

    /// Copy the host directory `dir`'s files to `path` in the container (made if missing).
    pub async fn copy_in(&self, dir: &Path, path: &str) -> Result<(), EnvironmentError> {
        let what = format!("copying {} to {path} in the container", dir.display());
        self.engine
            .output(&what, ["exec", "-u", "0", &self.name, "mkdir", "-p", path])
            .await?;
        let mut source = dir.as_os_str().to_owned();
        source.push("/.");
        let target = format!("{}:{path}", self.name);
        self.engine
            .output(&what, [OsString::from("cp"), source, target.into()])
            .await
            .map(|_| ())
    }

    /// Run `script` with `sh -c` in the container as root (without capabilities, as every
    /// process of it): directories evalhost makes there.
    pub async fn as_root(&self, what: &str, script: &str) -> Result<(), EnvironmentError> {
        self.engine
            .output(what, ["exec", "-u", "0", &self.name, "sh", "-c", script])
            .await
            .map(|_| ())
    }

    /// Kill every process the run left in the container (as the run's user, who started
    /// them all): all but the engine's init, the holder and the killing shell itself.
    pub async fn kill_all(&self) -> Result<(), EnvironmentError> {
        let script = format!(
            "for p in /proc/[0-9]*; do p=${{p#/proc/}}; case $p in 1|{}|$$) ;; *) kill -KILL $p 2>/dev/null;; esac; done; true",
            self.holder_pid
        );
        self.engine
            .output(
                "stopping what the agent left running",
                ["exec", &self.name, "sh", "-c", &script],
            )
            .await
            .map(|_| ())
    }

    /// Run `command` with `sh -c` in the container as the run's user, from its working
    /// directory, with `vars` (passed by name); its exit code and the last `keep` bytes of
    /// what it printed (stdout and stderr, interleaved as they came), or `None` when it did
    /// not end within `timeout` (what it left running goes with the container).
    pub async fn run_captured(
        &self,
        command: &str,
        vars: &std::collections::BTreeMap<String, String>,
        timeout: Duration,
        keep: usize,
    ) -> Result<Option<(Option<i32>, String)>, EnvironmentError> {
        let (reader, writer) = std::io::pipe().map_err(|e| self.engine.spawn_error(e))?;
        let stderr = writer.try_clone().map_err(|e| self.engine.spawn_error(e))?;
        let mut exec = self.engine.command();
        exec.args(["exec", "-w", &self.workdir]);
        for name in vars.keys() {
            exec.args(["-e", name]);
        }
        exec.args([self.name.as_str(), "sh", "-c", command])
            .envs(vars)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(stderr);
        let mut child = exec.spawn().map_err(|e| self.engine.spawn_error(e))?;
        // Its copies of the pipe's write end went with the command: end-of-file comes when
        // the command ends.
        drop(exec);
        let mut reader =
            tokio::net::unix::pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(reader))
                .map_err(|e| self.engine.spawn_error(e))?;
        let read_all = async {
            use tokio::io::AsyncReadExt;
            let mut tail: Vec<u8> = Vec::new();
            let mut chunk = vec![0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&chunk[..n]);
                if tail.len() > 2 * keep {
                    tail.drain(..tail.len() - keep);
                }
            }
            let status = child.wait().await;
            (status, tail)
        };
        let Ok((status, tail)) = tokio::time::timeout(timeout, read_all).await else {
            return Ok(None);
        };
        let status = status.map_err(|e| self.engine.spawn_error(e))?;
        let tail = &tail[tail.len().saturating_sub(keep)..];
        let text = String::from_utf8_lossy(tail).into_owned();
        Ok(Some((status.code(), text)))
    }

    /// The contents of the file `path` in the container, when it is there (read as root).
    pub async fn read_file(&self, path: &str) -> Option<String> {
        self.engine
            .output(
                "reading a file",
                ["exec", "-u", "0", &self.name, "cat", path],
            )
            .await
            .ok()
    }

    /// How often the kernel has killed a process of the container for its memory limit, and
    /// refused it a process for its pids limit (cgroup v1 or v2; 0 when unreadable).
    pub fn limit_counts(&self) -> (u64, u64) {
        self.pid.map_or((0, 0), cgroup_counts)
    }

    /// The limit a command ran into since `before` ([`Container::limit_counts`]), as an error
    /// names it.
    pub fn limit_hit(&self, before: (u64, u64)) -> Option<String> {
        let (oom, pids) = self.limit_counts();
        if oom > before.0 {
            let limit = self
                .memory_bytes
                .map(|b| format!(" ({} MiB)", b >> 20))
                .unwrap_or_default();
            return Some(format!(
                "the environment's memory limit{limit} was reached: the kernel killed a process"
            ));
        }
        if pids > before.1 {
            return Some(format!(
                "the environment's process limit ({}) was reached: a process could not be started",
                self.pids
            ));
        }
        None
    }

    /// Remove the container and everything running in it.
    pub async fn remove(&self) -> Result<(), EnvironmentError> {
        if self.removed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.engine
            .output("removing the run's container", ["rm", "-f", &self.name])
            .await
            .map(|_| ())
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if !self.removed.swap(true, Ordering::SeqCst) {
            let _ =
                self.engine
                    .output_blocking(&["rm".into(), "-f".into(), self.name.clone().into()]);
        }
    }
}

/// `--mount`'s value binding `host` at `inside`: each field quoted as CSV (the engine reads it
/// so), so that a path may hold `,`, `:` or `"`.
fn bind(host: &Path, inside: &str, read_only: bool) -> OsString {
    let quoted = |field: &str| format!("\"{}\"", field.replace('"', "\"\""));
    let mut value = OsString::from("type=bind,");
    value.push(quoted(&format!("source={}", host.display())));
    value.push(",");
    value.push(quoted(&format!("target={inside}")));
    if read_only {
        value.push(",readonly");
    }
    value
}

/// Whether `pid` of evalhost's PID namespace is the container `id`'s process: its cgroup names
/// the container (the engine's pid is of the engine's namespace, which may be another).
fn is_its_process(pid: i32, id: &str) -> bool {
    pid > 0
        && !id.is_empty()
        && std::fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|c| c.contains(id))
}

/// `(oom kills, refused forks)` of the cgroup of `pid`.
fn cgroup_counts(pid: i32) -> (u64, u64) {
    let Ok(cgroups) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
        return (0, 0);
    };
    let mut oom = 0;
    let mut pids = 0;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            // cgroup v2: one hierarchy.
            let dir = Path::new("/sys/fs/cgroup").join(path);
            oom = oom.max(counter(&dir.join("memory.events"), "oom_kill"));
            pids = pids.max(counter(&dir.join("pids.events"), "max"));
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = Path::new("/sys/fs/cgroup/memory").join(path);
            oom = oom.max(counter(&dir.join("memory.oom_control"), "oom_kill"));
        } else if controllers.split(',').any(|c| c == "pids") {
            let dir = Path::new("/sys/fs/cgroup/pids").join(path);
            pids = pids.max(counter(&dir.join("pids.events"), "max"));
        }
    }
    (oom, pids)
}

/// The value of `key` in a flat-keyed cgroup file (`key VALUE` lines).
fn counter(file: &Path, key: &str) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let (k, v) = line.split_once(' ')?;
                (k == key).then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(0)
}

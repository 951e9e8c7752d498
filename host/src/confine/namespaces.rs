//! The agent's view of the machine, built rather than subtracted: every process a run starts
//! runs inside namespaces of its own, made by bubblewrap (`bwrap`, the sandbox Flatpak and
//! agent CLIs use; Debian's `bubblewrap` package).
//!
//! - a **user namespace** with every capability dropped (`--cap-drop ALL`) and no further user
//!   namespaces (`--disable-userns`): root outside has no capability at all, in any namespace;
//! - a **PID namespace**: the run's processes see only each other, `/proc` is a fresh one of
//!   that namespace (no `/proc/<evalhost>/environ` to read), and when its first process ends
//!   or is killed the kernel kills every other (`setsid`, `env -i`, double forks included);
//! - a **mount namespace** whose root is assembled from read-only binds of the system's
//!   programs and libraries ([`system_root`]: `/usr`, `/bin`, `/lib*`, `/sbin`, `/etc` with
//!   its files that only root may read masked, `/opt`, and the `PATH` installations in the
//!   invoking user's home), a fresh `/dev` with only the harmless devices, and the run's
//!   workspace, HOME and TMPDIR writable: no other run's directories, no `--out`, no case
//!   files, no `/run` (so no Docker socket), no `/var`, no home;
//! - a **network namespace** with only a loopback interface, into which the run's model
//!   endpoint (and the ports a case widened) is forwarded (`forward.rs`);
//! - IPC, UTS and cgroup namespaces of its own, and a new session (no controlling terminal to
//!   push keystrokes into).
//!
//! Landlock (`ruleset.rs`) is the fallback where bubblewrap or unprivileged user namespaces
//! are missing (the report's header says so); it cannot be stacked under bubblewrap, which
//! needs to mount, and everything it would refuse is absent from the assembled root.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{Widening, system};

/// The bubblewrap program to use instead of `bwrap` on `PATH`.
pub(crate) const BWRAP_VAR: &str = "EVALHOST_BWRAP";
/// `0` turns the namespace layer off (to see the Landlock fallback).
pub(crate) const NAMESPACES_VAR: &str = "EVALHOST_CONFINE_NAMESPACES";

/// Top-level system directories the assembled root takes from the host (read-only; a
/// symlink such as `/bin -> usr/bin` is made as the same symlink).
const SYSTEM_DIRS: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// The size of a sandbox's `/dev/shm` (64 MiB).
const SHM_BYTES: &str = "67108864";

/// How deep and how many entries of `/etc` are looked at for files to mask.
const ETC_DEPTH: usize = 6;
const ETC_ENTRIES: usize = 20_000;

/// A working bubblewrap.
#[derive(Debug)]
pub(crate) struct Bwrap {
    pub program: PathBuf,
    /// What `bwrap --version` said (`bubblewrap 0.8.0`).
    pub version: String,
}

/// This machine's bubblewrap, tried once per process: `Err` says why runs cannot have
/// namespaces of their own (not installed, user namespaces disabled, ...).
pub(crate) fn bwrap() -> Result<&'static Bwrap, &'static str> {
    static BWRAP: OnceLock<Result<Bwrap, String>> = OnceLock::new();
    BWRAP.get_or_init(probe).as_ref().map_err(String::as_str)
}

fn probe() -> Result<Bwrap, String> {
    if std::env::var_os(NAMESPACES_VAR).is_some_and(|v| v == "0") {
        return Err(format!("turned off by {NAMESPACES_VAR}=0"));
    }
    let program = match std::env::var_os(BWRAP_VAR).filter(|v| !v.is_empty()) {
        Some(program) => PathBuf::from(program),
        None => std::env::var_os("PATH")
            .and_then(|path| crate::on_path::find(&path, "bwrap"))
            .ok_or_else(|| {
                "bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap`".to_owned()
            })?,
    };
    let version = std::process::Command::new(&program)
        .arg("--version")
        .output()
        .map_err(|e| format!("`{}` could not be started: {e}", program.display()))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    // The same namespaces a run asks for, on a root of the host's `/` read-only.
    let tried = std::process::Command::new(&program)
        .args(NAMESPACE_ARGS)
        .arg("--unshare-net")
        .args(["--ro-bind", "/", "/", "--proc", "/proc", "--", "true"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{}` could not be started: {e}", program.display()))?;
    if !tried.status.success() {
        let said = String::from_utf8_lossy(&tried.stderr);
        return Err(format!(
            "`{}` cannot make namespaces here ({}): {}",
            program.display(),
            tried.status,
            said.trim()
        ));
    }
    Ok(Bwrap { program, version })
}

/// The namespaces and privileges of every sandbox (the network namespace is added unless
/// the run may reach any port).
const NAMESPACE_ARGS: [&str; 10] = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
];

/// The read-only part of the assembled root, the same for every run: computed once per
/// process.
pub(crate) fn system_root() -> &'static [OsString] {
    static ROOT: OnceLock<Vec<OsString>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let mut args = Vec::new();
        for dir in SYSTEM_DIRS {
            let path = Path::new(dir);
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(target) = std::fs::read_link(path) {
                    push(
                        &mut args,
                        ["--symlink".as_ref(), target.as_os_str(), path.as_os_str()],
                    );
                }
            } else if meta.is_dir() {
                push(
                    &mut args,
                    ["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()],
                );
            }
        }
        mask_private(Path::new("/etc"), &mut args);
        for install in installs() {
            push(
                &mut args,
                [
                    "--ro-bind-try".as_ref(),
                    install.as_os_str(),
                    install.as_os_str(),
                ],
            );
        }
        args
    })
}

/// The `PATH` directories the system directories do not hold (a pyenv or cargo installation
/// in the invoking user's home, `/usr/local/...` aside), with the installation above a
/// `shims` directory (the same rule as Landlock's, `system.rs`): readable so that the tools on
/// `PATH` still run. Never evalhost's own directories or the runs' temp roots.
fn installs() -> Vec<PathBuf> {
    let Some(path) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    let system: Vec<PathBuf> = SYSTEM_DIRS
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let homes: Vec<PathBuf> = system::invoking_user_homes()
        .into_iter()
        .filter_map(|home| std::fs::canonicalize(home).ok())
        .collect();
    let refused = system::evalhost_dirs();
    let mut installs: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(&path) {
        let Ok(real) = std::fs::canonicalize(&dir) else {
            continue;
        };
        // A home itself is never bound whole (`~` on `PATH`), only installations in it.
        let skipped = real == Path::new("/")
            || homes.contains(&real)
            || system.iter().chain(&refused).any(|d| real.starts_with(d));
        if !skipped {
            system::add_install(&mut installs, system::installation(real, &homes));
        }
    }
    installs
}

/// Mask what only its owner or group may read under `dir` (`/etc/shadow`, `/etc/ssl/private`,
/// SSH host keys): the sandbox's root is the host's uid 0, so owner permissions alone would
/// let it read them. A file is covered by an empty one, a directory by an empty read-only
/// tmpfs.
fn mask_private(dir: &Path, args: &mut Vec<OsString>) {
    let mut pending = vec![(dir.to_owned(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > ETC_ENTRIES {
                return;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                if mode & 0o005 != 0o005 {
                    push(args, ["--tmpfs".as_ref(), path.as_os_str()]);
                    push(args, ["--remount-ro".as_ref(), path.as_os_str()]);
                } else if depth < ETC_DEPTH {
                    pending.push((path, depth + 1));
                }
            } else if meta.is_file() && mode & 0o004 == 0 {
                push(
                    args,
                    ["--ro-bind".as_ref(), "/dev/null".as_ref(), path.as_os_str()],
                );
            }
        }
    }
}

fn push<'a>(args: &mut Vec<OsString>, items: impl IntoIterator<Item = &'a OsStr>) {
    args.extend(items.into_iter().map(OsStr::to_owned));
}

/// What a run's sandbox is made of, besides the system's root.
pub(crate) struct RunView<'a> {
    pub workspace: &'a Path,
    pub workspace_read_only: bool,
    pub home: &'a Path,
    pub tmp: &'a Path,
    pub widen: &'a Widening,
    /// The directory the process starts in.
    pub cwd: &'a Path,
}

/// The bubblewrap command line before the program: namespaces, the assembled root, the run's
/// directories; `extra` (the forwarding's descriptors) just before `--`.
pub(crate) fn arguments(view: &RunView<'_>, extra: &[OsString]) -> Vec<OsString> {
    let mut args: Vec<OsString> = NAMESPACE_ARGS.iter().map(OsString::from).collect();
    if !view.widen.any_port {
        args.push("--unshare-net".into());
    }
    args.extend(system_root().iter().cloned());
    push(
        &mut args,
        [
            "--dev".as_ref(),
            "/dev".as_ref(),
            "--proc".as_ref(),
            "/proc".as_ref(),
        ],
    );
    // POSIX shared memory (Python's multiprocessing), small: the rest of `/dev` is read-only.
    push(
        &mut args,
        [
            "--size".as_ref(),
            SHM_BYTES.as_ref(),
            "--tmpfs".as_ref(),
            "/dev/shm".as_ref(),
        ],
    );
    for path in view.widen.read.iter().filter(|p| bindable(p)) {
        push(
            &mut args,
            ["--ro-bind-try".as_ref(), path.as_os_str(), path.as_os_str()],
        );
    }
    // The run's temp root read-only beneath its three writable directories: `..` of the
    // workspace is no place to write (the session log has no name there).
    if let Some(root) = view.workspace.parent()
        && view.home.parent() == Some(root)
        && view.tmp.parent() == Some(root)
    {
        push(
            &mut args,
            ["--ro-bind".as_ref(), root.as_os_str(), root.as_os_str()],
        );
    }
    for dir in [view.home, view.tmp] {
        push(
            &mut args,
            ["--bind".as_ref(), dir.as_os_str(), dir.as_os_str()],
        );
    }
    let workspace = if view.workspace_read_only {
        "--ro-bind"
    } else {
        "--bind"
    };
    push(
        &mut args,
        [
            workspace.as_ref(),
            view.workspace.as_os_str(),
            view.workspace.as_os_str(),
        ],
    );
    for path in view.widen.write.iter().filter(|p| bindable(p)) {
        push(
            &mut args,
            ["--bind-try".as_ref(), path.as_os_str(), path.as_os_str()],
        );
    }
    // The root's and `/dev`'s own directories (mount points made on the way) stay
    // read-only: nothing written outside the binds, and no RAM filled through their tmpfs.
    push(
        &mut args,
        [
            "--remount-ro".as_ref(),
            "/dev".as_ref(),
            "--remount-ro".as_ref(),
            "/".as_ref(),
            "--chdir".as_ref(),
            view.cwd.as_os_str(),
        ],
    );
    args.extend(extra.iter().cloned());
    args.push("--".into());
    args
}

/// Whether a widened path can be bound into a sandbox: not one leading into `/proc`, `/dev` or
/// `/sys` (`/dev/fd/7` named in an agent's command: the sandbox has its own `/proc` and `/dev`,
/// and bubblewrap cannot bind the host's over them).
fn bindable(path: &Path) -> bool {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    !["/proc", "/dev", "/sys"]
        .iter()
        .any(|special| real.starts_with(special))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_files_under_a_directory_are_masked_and_readable_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::write(dir.join("public"), "x").unwrap();
        std::fs::write(dir.join("shadow"), "x").unwrap();
        std::fs::set_permissions(dir.join("shadow"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
        std::fs::create_dir(dir.join("private")).unwrap();
        std::fs::set_permissions(dir.join("private"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        let mut args = Vec::new();
        mask_private(dir, &mut args);
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let shadow = dir.join("shadow").display().to_string();
        let private = dir.join("private").display().to_string();
        assert!(
            args.windows(3)
                .any(|w| w == ["--ro-bind", "/dev/null", shadow.as_str()])
        );
        assert!(args.windows(2).any(|w| w == ["--tmpfs", private.as_str()]));
        assert!(!args.iter().any(|a| a.ends_with("public")), "{args:?}");
    }
}

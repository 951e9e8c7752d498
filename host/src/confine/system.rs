//! What "reads of the system" means: every path under `/` except the invoking user's home,
//! the directory holding every run's temp root (other runs' workspaces), evalhost's own
//! directories and `/dev` (a disk's device node reads every file on it: only the harmless
//! devices are granted, `ruleset.rs`). Landlock grants access beneath a path and cannot take part of it back, so
//! the readable set is the siblings along the way from `/` to each refused path.
//!
//! Tools on `PATH` inside the refused home stay usable: each such `PATH` directory is
//! readable, and for a `shims` directory (pyenv, rbenv) the installation above it, which the
//! shims run from; so does the current directory when it is inside the home (a project in
//! `~/project`) but not the home itself. The report lists these ([`Readable::installs`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The readable part of the file system, computed once per process.
#[derive(Debug, Default)]
pub(crate) struct Readable {
    /// Paths under which everything may be read and executed.
    pub roots: Vec<PathBuf>,
    /// The `PATH` installations and the current directory inside a refused home that were
    /// made readable.
    pub installs: Vec<PathBuf>,
}

/// The invoking user's home directories: `$HOME` and the password database's (they may
/// differ); never `/`.
pub(crate) fn invoking_user_homes() -> Vec<PathBuf> {
    let mut homes = Vec::new();
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        homes.push(home);
    }
    if let Ok(Some(user)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        homes.push(user.dir);
    }
    homes.retain(|h| h.is_absolute() && h != Path::new("/"));
    homes
}

pub(crate) fn readable() -> &'static Readable {
    static READABLE: OnceLock<Readable> = OnceLock::new();
    READABLE.get_or_init(|| {
        let homes = canonical_all(invoking_user_homes());
        let mut refused = homes.clone();
        // Device nodes give the raw disk and memory to root: only the devices of
        // `ruleset::DEVICES` are granted.
        refused.push(PathBuf::from("/dev"));
        refused.extend(evalhost_dirs());
        let refused = canonical_all(refused);
        let mut installs = installs_in(&homes, std::env::var_os("PATH").unwrap_or_default());
        // A project under the home (`~/project`, evalhost run from there) keeps its cases'
        // files and agents readable; the home itself does not.
        if let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize)
            && homes.iter().any(|h| cwd.starts_with(h) && &cwd != h)
            && !installs.iter().any(|i| cwd.starts_with(i))
        {
            installs.push(cwd);
        }
        let mut roots = Vec::new();
        allow_except(Path::new("/"), &refused, &mut roots);
        roots.extend(installs.iter().cloned());
        Readable { roots, installs }
    })
}

/// Directories no run may read, as they are on disk: the one holding every run's temp root
/// (other runs' workspaces) and evalhost's own configuration, data and cache directories.
pub(super) fn evalhost_dirs() -> Vec<PathBuf> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let mut dirs = vec![crate::config::temp_parent().to_owned()];
    dirs.extend(crate::config::own_dirs(&env).into_iter().map(|d| d.path));
    canonical_all(dirs)
}

/// Each path as it is on disk (`..` and symlinks resolved); paths that do not exist and `/`
/// are dropped.
fn canonical_all(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = paths
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p != Path::new("/"))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Push onto `roots` every entry of `dir` except the refused paths, descending into the
/// entries that hold a refused path.
fn allow_except(dir: &Path, refused: &[PathBuf], roots: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        // A symlink counts as what it leads to (`/bin` -> `usr/bin`).
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if refused.iter().any(|r| real.starts_with(r)) {
            continue;
        }
        if refused.iter().any(|r| r.starts_with(&real)) {
            if real.is_dir() {
                allow_except(&real, refused, roots);
            }
            continue;
        }
        if grantable(&path, &real) {
            roots.push(path);
        }
    }
}

/// Whether Landlock can take a rule on `path` (canonically `real`): a directory, file or
/// device; not a pipe or socket, nor a link into `/proc` (`/dev/stdin`, `/dev/fd`: evalhost's
/// own descriptors), whose file systems refuse rules.
fn grantable(path: &Path, real: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::metadata(real) else {
        return false;
    };
    let kind = meta.file_type();
    let fits = kind.is_dir() || kind.is_file() || kind.is_char_device() || kind.is_block_device();
    fits && (path == real || !real.starts_with("/proc"))
}

/// The `PATH` directories inside `homes`, and the installation above each `shims` one.
fn installs_in(homes: &[PathBuf], path: std::ffi::OsString) -> Vec<PathBuf> {
    let mut installs = Vec::new();
    for dir in std::env::split_paths(&path) {
        let Ok(real) = std::fs::canonicalize(&dir) else {
            continue;
        };
        if homes.iter().any(|h| real.starts_with(h)) {
            add_install(&mut installs, installation(real, homes));
        }
    }
    installs
}

/// The installation a `PATH` directory (as it is on disk) belongs to: the directory above a
/// `shims` directory (pyenv, rbenv: the shims run from there), unless that is `/` or one of
/// `homes`; else the directory itself.
pub(super) fn installation(real: PathBuf, homes: &[PathBuf]) -> PathBuf {
    match (real.file_name(), real.parent()) {
        (Some(name), Some(parent))
            if name == "shims"
                && parent != Path::new("/")
                && !homes.iter().any(|h| h == parent) =>
        {
            parent.to_owned()
        }
        _ => real,
    }
}

/// Add `install` to `installs`, unless one holds it already; those it holds are dropped.
pub(super) fn add_install(installs: &mut Vec<PathBuf>, install: PathBuf) {
    if !installs.iter().any(|i| install.starts_with(i)) {
        installs.retain(|i| !i.starts_with(&install));
        installs.push(install);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_paths_are_left_out_and_their_siblings_kept() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        for dir in ["home/ada/.ssh", "home/bob", "usr/bin", "tmp/runs"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let refused = vec![root.join("home/ada"), root.join("tmp/runs")];
        let mut roots = Vec::new();
        allow_except(&root, &refused, &mut roots);
        roots.sort();
        assert_eq!(
            roots,
            vec![root.join("home/bob"), root.join("usr")],
            "tmp/ holds only the refused runs"
        );
    }

    #[test]
    fn path_entries_in_the_home_become_installs() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        for dir in [".pyenv/shims", ".pyenv/bin", ".cargo/bin"] {
            std::fs::create_dir_all(home.join(dir)).unwrap();
        }
        let path = std::env::join_paths([
            home.join(".cargo/bin"),
            home.join(".pyenv/shims"),
            home.join(".pyenv/bin"),
            PathBuf::from("/usr/bin"),
        ])
        .unwrap();
        assert_eq!(
            installs_in(std::slice::from_ref(&home), path),
            vec![home.join(".cargo/bin"), home.join(".pyenv")]
        );
    }
}

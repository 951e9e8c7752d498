//! evalhost's own directories, after the XDG Base Directory spec: configuration
//! (`$XDG_CONFIG_HOME/evalhost`, default `~/.config/evalhost`), data (`$XDG_DATA_HOME/evalhost`,
//! default `~/.local/share/evalhost`: the bundle store, unless `EVALHOST_BUNDLE_STORE` moves
//! it) and cache (`$XDG_CACHE_HOME/evalhost`, default `~/.cache/evalhost`: compiled
//! components). An `XDG_*` variable that is empty or relative is ignored, as the spec says.
//!
//! Reports are refused inside them ([`own_dir_containing`]), as Mino refuses an `--out`
//! inside `~/.mino`: a report there could be taken for evalhost's own state, and clearing a
//! cache would delete it.

use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The environment variable that moves the bundle store (tests point it at a temp dir).
pub(crate) const STORE_ENV: &str = "EVALHOST_BUNDLE_STORE";

/// What one of evalhost's directories holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnDirKind {
    /// The user's configuration file.
    Config,
    /// Installed data (the default bundle store).
    Data,
    /// `EVALHOST_BUNDLE_STORE`, when set.
    BundleStore,
    /// Compiled components.
    Cache,
}

/// One of evalhost's own directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnDir {
    /// What it holds.
    pub kind: OwnDirKind,
    /// Where it is (as the environment names it).
    pub path: PathBuf,
}

impl fmt::Display for OwnDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            OwnDirKind::Config => "configuration directory",
            OwnDirKind::Data => "data directory",
            OwnDirKind::BundleStore => "bundle store",
            OwnDirKind::Cache => "cache directory",
        };
        write!(f, "evalhost's {what} `{}`", self.path.display())
    }
}

/// `$XDG_CONFIG_HOME`, else `~/.config`.
pub(crate) fn config_home(env: &HashMap<String, String>) -> Option<PathBuf> {
    base_dir(env, "XDG_CONFIG_HOME", ".config")
}

/// `$XDG_DATA_HOME`, else `~/.local/share`.
pub(crate) fn data_home(env: &HashMap<String, String>) -> Option<PathBuf> {
    base_dir(env, "XDG_DATA_HOME", ".local/share")
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
pub(crate) fn cache_home(env: &HashMap<String, String>) -> Option<PathBuf> {
    base_dir(env, "XDG_CACHE_HOME", ".cache")
}

fn base_dir(env: &HashMap<String, String>, var: &str, under_home: &str) -> Option<PathBuf> {
    let set = |name: &str| env.get(name).map(PathBuf::from).filter(|p| p.is_absolute());
    set(var).or_else(|| set("HOME").map(|home| home.join(under_home)))
}

/// evalhost's own directories that the environment names (none without `HOME` or `XDG_*`).
pub(crate) fn own_dirs(env: &HashMap<String, String>) -> Vec<OwnDir> {
    let own = |kind, base: Option<PathBuf>| {
        base.map(|base| OwnDir {
            kind,
            path: base.join("evalhost"),
        })
    };
    let store = env
        .get(STORE_ENV)
        .filter(|v| !v.is_empty())
        .map(|path| OwnDir {
            kind: OwnDirKind::BundleStore,
            path: PathBuf::from(path),
        });
    [
        own(OwnDirKind::Config, config_home(env)),
        own(OwnDirKind::Data, data_home(env)),
        store,
        own(OwnDirKind::Cache, cache_home(env)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The own directory `path` is (or is inside), if any. Both are compared as they are on
/// disk (symlinks resolved as far as they exist, `..` taken), so `./x/../.cache/evalhost`
/// or a symlink into the cache does not slip through.
pub fn own_dir_containing(path: &Path, env: &HashMap<String, String>) -> Option<OwnDir> {
    let path = resolve(path);
    own_dirs(env)
        .into_iter()
        .find(|dir| path.starts_with(resolve(&dir.path)))
}

/// `path` made absolute, its longest existing ancestor canonicalized and the rest normalized
/// lexically.
fn resolve(path: &Path) -> PathBuf {
    let absolute = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_owned(),
    };
    let mut resolved = PathBuf::new();
    let mut on_disk = true;
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if on_disk {
                    resolved = resolved
                        .parent()
                        .map_or_else(|| resolved.clone(), Path::to_owned);
                } else {
                    resolved.pop();
                }
            }
            other => {
                resolved.push(other);
                if on_disk {
                    match resolved.canonicalize() {
                        Ok(real) => resolved = real,
                        Err(_) => on_disk = false,
                    }
                }
            }
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_evalhosts_cache_names_it() {
        let env = HashMap::from([("HOME".to_owned(), "/home/ada".to_owned())]);
        let found = own_dir_containing(Path::new("/home/ada/.cache/evalhost/out"), &env).unwrap();
        assert_eq!(
            found.to_string(),
            "evalhost's cache directory `/home/ada/.cache/evalhost`"
        );
        assert!(own_dir_containing(Path::new("/home/ada/out"), &env).is_none());
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn xdg_variables_win_over_home_and_relative_ones_are_ignored() {
        let env = env(&[
            ("HOME", "/home/ada"),
            ("XDG_CACHE_HOME", "/var/cache/ada"),
            ("XDG_DATA_HOME", "relative/data"),
            ("XDG_CONFIG_HOME", ""),
            ("EVALHOST_BUNDLE_STORE", "/srv/bundles"),
        ]);
        let dirs: Vec<String> = own_dirs(&env).iter().map(ToString::to_string).collect();
        assert_eq!(
            dirs,
            [
                "evalhost's configuration directory `/home/ada/.config/evalhost`",
                "evalhost's data directory `/home/ada/.local/share/evalhost`",
                "evalhost's bundle store `/srv/bundles`",
                "evalhost's cache directory `/var/cache/ada/evalhost`",
            ]
        );
        assert!(own_dirs(&HashMap::new()).is_empty());
    }

    #[test]
    fn a_path_inside_is_found_through_dots_and_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(home.join(".cache/evalhost")).unwrap();
        std::os::unix::fs::symlink(home.join(".cache/evalhost"), tmp.path().join("link")).unwrap();
        let env = env(&[("HOME", home.to_str().unwrap())]);
        for inside in [
            home.join(".cache/evalhost"),
            home.join(".cache/evalhost/new/out"),
            home.join("x/../.cache/./evalhost/out"),
            tmp.path().join("link/out"),
            home.join(".config/evalhost/not-yet/../reports"),
        ] {
            assert!(
                own_dir_containing(&inside, &env).is_some(),
                "{}",
                inside.display()
            );
        }
        for outside in [
            home.clone(),
            home.join(".cache/evalhost-reports"),
            home.join(".cache/evalhost/../out"),
        ] {
            assert_eq!(
                own_dir_containing(&outside, &env),
                None,
                "{}",
                outside.display()
            );
        }
    }
}

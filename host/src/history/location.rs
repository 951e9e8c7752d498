//! Where the history store is. First found wins: `--history` (or `--no-history`), the
//! `EVALHOST_HISTORY` variable, `[history] store` in the project's `evalhost.toml` or the
//! user's configuration (a relative path relative to that file), then [`DEFAULT_STORE`] in
//! the current directory (the project's, where `evalhost.toml` and `evalhost.lock` are).
//! Each may be a SQLite file's path, a `postgres://` / `postgresql://` URL, or `off`.

use std::path::{Path, PathBuf};

use super::StoreError;
use super::store::Store;

/// The default store, relative to the project directory.
pub const DEFAULT_STORE: &str = ".evalhost/history.db";

/// A history store's place.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database (its connection URL).
    Postgres(String),
    /// No history (`--no-history`, `off`).
    Off,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Location({self})")
    }
}

impl std::fmt::Display for Location {
    /// The path, or the URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&without_password(url)),
            Location::Off => f.write_str("off"),
        }
    }
}

impl Location {
    /// `text` as written in a flag, variable or file; a relative path is taken relative to
    /// `base`.
    pub fn parse(text: &str, base: &Path) -> Result<Self, StoreError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(StoreError::BadLocation {
                location: text.to_owned(),
                message: "empty (give a file path, a postgres:// URL, or `off`)".into(),
            });
        }
        if text == "off" {
            return Ok(Location::Off);
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(Location::Postgres(text.to_owned()));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(StoreError::BadLocation {
                location: text.to_owned(),
                message: format!(
                    "unknown scheme `{scheme}` (a SQLite file's path or a postgres:// URL)"
                ),
            });
        }
        Ok(Location::Sqlite(base.join(text)))
    }

    /// Where the history is for a process in `cwd` with this configuration: `flag`
    /// (`--history`), `no_history`, the environment's `EVALHOST_HISTORY`, then the
    /// configuration files' `[history] store`, then the default.
    pub fn resolve(
        flag: Option<&str>,
        no_history: bool,
        cwd: &Path,
        sources: &crate::config::ConfigSources,
    ) -> Result<Self, StoreError> {
        if no_history {
            return Ok(Location::Off);
        }
        if let Some(flag) = flag {
            return Self::parse(flag, cwd);
        }
        if let Some(env) = sources.env_var("EVALHOST_HISTORY") {
            return Self::parse(env, cwd);
        }
        let settings = sources.history().map_err(|e| StoreError::BadLocation {
            location: "[history]".into(),
            message: e.to_string(),
        })?;
        if let Some((store, file)) = settings.store {
            let base = file.parent().unwrap_or(cwd);
            return Self::parse(&store, base);
        }
        Ok(Location::Sqlite(cwd.join(DEFAULT_STORE)))
    }

    /// Open the store to write: created (with its directory) when missing, migrated.
    pub fn open(&self) -> Result<Store, StoreError> {
        Store::open(self, true)
    }

    /// Open an existing store to read (not created; still migrated, as a write would).
    pub fn open_existing(&self) -> Result<Store, StoreError> {
        Store::open(self, false)
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(
            Location::Postgres("postgres://ci:s3cret@db.example:5432/evals?sslmode=disable".into())
                .to_string(),
            "postgres://ci:***@db.example:5432/evals?sslmode=disable"
        );
        assert_eq!(
            Location::Postgres("postgresql:///evals?host=/tmp".into()).to_string(),
            "postgresql:///evals?host=/tmp"
        );
    }

    #[test]
    fn locations_parse() {
        let base = Path::new("/p");
        assert_eq!(
            Location::parse("h.db", base).unwrap(),
            Location::Sqlite("/p/h.db".into())
        );
        assert_eq!(Location::parse("off", base).unwrap(), Location::Off);
        assert!(Location::parse("mysql://x", base).is_err());
    }
}

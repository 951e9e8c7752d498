//! What can go wrong with the history store; every error names the store.

use std::time::Duration;

/// Why the history store could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file of the store, or the thread that writes it, could not be made.
    #[error("history store {location}: {source}")]
    Io {
        /// The store: its path, or its URL without the password.
        location: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// A store opened to be read does not exist.
    #[error("history store {location} does not exist (no run has been recorded there)")]
    Missing {
        /// The store's path.
        location: String,
    },
    /// Another process held the SQLite store's write lock for longer than the wait.
    #[error(
        "history store {location} is locked: another evalhost held it for more than {} s; the run is not recorded there",
        waited.as_secs()
    )]
    Locked {
        /// The store's path.
        location: String,
        /// How long this process waited for the lock.
        waited: Duration,
    },
    /// The file is not a SQLite database, or a damaged one.
    #[error(
        "history store {location} is not a readable store ({message}); move it away to start a new history"
    )]
    Corrupt {
        /// The store's path.
        location: String,
        /// SQLite's error.
        message: String,
    },
    /// The store's schema is newer than this evalhost knows: it is refused, never written.
    #[error(
        "history store {location} was written by a newer evalhost (schema version {found}; this evalhost knows up to {known}): upgrade evalhost, or use another store with --history"
    )]
    Newer {
        /// The store: its path, or its URL without the password.
        location: String,
        /// The store's schema version.
        found: i64,
        /// The newest schema version this evalhost knows.
        known: i64,
    },
    /// The database (SQLite or PostgreSQL) refused a statement or a connection.
    #[error("history store {location}: {message}")]
    Database {
        /// The store: its path, or its URL without the password.
        location: String,
        /// The database's error.
        message: String,
    },
    /// The store holds something evalhost did not write, or its writer stopped.
    #[error("history store {location}: {message}")]
    Data {
        /// The store: its path, or its URL without the password.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// What a query asked for is not in the store (a run id, an interrupted run for
    /// `--resume`, a branch's last run); the message says what and where.
    #[error("{0}")]
    NotFound(String),
    /// `--history`, `EVALHOST_HISTORY` or `[history] store` names no store evalhost can use,
    /// or the history is off.
    #[error("`{location}` is not a history store: {message}")]
    BadLocation {
        /// The location as given.
        location: String,
        /// Why it cannot be used.
        message: String,
    },
    /// `evalhost history import` could not import a report.
    #[error("history import {path}: {message}")]
    Import {
        /// The report being imported.
        path: String,
        /// Why it could not be imported.
        message: String,
    },
}

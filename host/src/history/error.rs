//! What can go wrong with the history store; every error names the store.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("history store {location}: {source}")]
    Io {
        location: String,
        #[source]
        source: std::io::Error,
    },
    #[error("history store {location} does not exist (no run has been recorded there)")]
    Missing { location: String },
    #[error(
        "history store {location} is locked: another evalhost held it for more than {} s; the run is not recorded there",
        waited.as_secs()
    )]
    Locked { location: String, waited: Duration },
    #[error(
        "history store {location} is not a readable store ({message}); move it away to start a new history"
    )]
    Corrupt { location: String, message: String },
    #[error(
        "history store {location} was written by a newer evalhost (schema version {found}; this evalhost knows up to {known}): upgrade evalhost, or use another store with --history"
    )]
    Newer {
        location: String,
        found: i64,
        known: i64,
    },
    #[error("history store {location}: {message}")]
    Database { location: String, message: String },
    #[error("history store {location}: {message}")]
    Data { location: String, message: String },
    #[error("{0}")]
    NotFound(String),
    #[error("`{location}` is not a history store: {message}")]
    BadLocation { location: String, message: String },
    #[error("history import {path}: {message}")]
    Import { path: String, message: String },
}

//! Every run remembered (docs/history.md): the history store, SQLite by default
//! (`.evalhost/history.db` in the project directory) or a team's PostgreSQL.
//!
//! - [`Location`]: where the store is (`--history`, `EVALHOST_HISTORY`, `[history] store`).
//! - [`Store`]: a connection; writes a run's rows, answers the queries of `history`,
//!   `compare` and `view`.
//! - [`Recorder`]: records a suite run as it goes, from a writer thread of its own, so a
//!   slow or broken store never slows or fails the run; Ctrl-C leaves it `interrupted`
//!   with what finished.
//! - `import`: `--out` directories and merged shard reports made elsewhere.
//!
//! What is recorded is what the reports hold (the JSON report's fields, each run's session
//! log and evidence as `--out` keeps them), never an API key or the environment.

mod backend;
mod blob;
mod error;
mod gc;
mod git;
mod import;
mod location;
mod postgres;
mod query;
mod recorder;
mod schema;
mod sqlite;
mod store;

pub use error::StoreError;
pub use gc::{Retention, collect_garbage};
pub(crate) use git::git_state;
pub use import::{Imported, import_path, record_report};
pub use location::{DEFAULT_STORE, Location};
pub use query::{CaseFilter, CaseHistoryEntry, CasePage, Flaky, Resumable, ResumedCase, RunFilter};
pub use recorder::Recorder;
pub use store::{Artifacts, CaseRun, RecordedCase, RecordedRun, RunStatus, Store};

/// A new run id: 16 hex digits from the OS's random source.
pub(crate) fn new_run_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::getrandom(&mut bytes).is_err() {
        // Unique enough without the OS's randomness: the time and the process.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (now ^ (u64::from(std::process::id()) << 40)).to_be_bytes();
    }
    hex::encode(bytes)
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

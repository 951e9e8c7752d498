//! `evalhost history gc`: remove the runs a retention policy does not keep
//! (`--keep-runs`, `--keep-days`, or `[history] keep_runs` / `keep_days`). The newest run of
//! each branch is always kept, so `BRANCH@latest` still names a run; a run still running is
//! never removed.

use super::StoreError;
use super::query::RunFilter;
use super::store::{RecordedRun, RunStatus, Store};

/// What `history gc` keeps; `None` keeps everything on that count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// The newest this many runs.
    pub keep_runs: Option<u32>,
    /// Runs started at most this many days ago.
    pub keep_days: Option<u32>,
}

/// Remove what `retention` does not keep, as of `now_ms`; the runs removed (or, with
/// `dry_run`, that would be).
pub fn collect_garbage(
    store: &mut Store,
    retention: Retention,
    now_ms: u64,
    dry_run: bool,
) -> Result<Vec<RecordedRun>, StoreError> {
    let runs = store.runs(&RunFilter::default())?;
    let oldest_kept = retention
        .keep_days
        .map(|days| now_ms.saturating_sub(u64::from(days) * 86_400_000));
    let mut newest_of_branch = std::collections::HashSet::new();
    let mut removed = Vec::new();
    for (i, run) in runs.into_iter().enumerate() {
        let branch = run.git.as_ref().and_then(|g| g.branch.clone());
        let first_of_branch = branch.is_some_and(|b| newest_of_branch.insert(b));
        let too_many = retention
            .keep_runs
            .is_some_and(|n| i as u64 >= u64::from(n));
        let too_old = oldest_kept.is_some_and(|oldest| run.started_ms < oldest);
        if (too_many || too_old) && !first_of_branch && run.status != RunStatus::Running {
            removed.push(run);
        }
    }
    if !dry_run && !removed.is_empty() {
        store.write(|store| {
            for run in &removed {
                store.delete_run(&run.id)?;
            }
            Ok(())
        })?;
        store.compact()?;
    }
    Ok(removed)
}

impl Store {
    /// Give the space of removed runs back to the file system (SQLite's `VACUUM`;
    /// PostgreSQL's autovacuum does it on its own).
    fn compact(&mut self) -> Result<(), StoreError> {
        if self.backend.dialect() == super::backend::Dialect::Sqlite {
            self.backend.batch("VACUUM")?;
        }
        Ok(())
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::GitState;

    fn run(id: &str, started_ms: u64, branch: Option<&str>) -> RecordedRun {
        RecordedRun {
            id: id.into(),
            command: "run".into(),
            status: RunStatus::Finished,
            started_ms,
            git: branch.map(|b| GitState {
                commit: "c0ffee".into(),
                branch: Some(b.into()),
                dirty: false,
            }),
            ..RecordedRun::default()
        }
    }

    #[test]
    fn the_newest_run_of_each_branch_and_a_running_one_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = crate::history::Location::Sqlite(dir.path().join("h.db"))
            .open()
            .unwrap();
        let runs = [
            run("aaaa000000000005", 5_000, None),
            run("aaaa000000000004", 4_000, Some("main")),
            run("aaaa000000000003", 3_000, Some("main")),
            run("aaaa000000000002", 2_000, Some("feature")),
            RecordedRun {
                status: RunStatus::Running,
                ..run("aaaa000000000001", 1_000, None)
            },
            run("aaaa000000000000", 500, None),
        ];
        for r in &runs {
            store.write(|s| s.insert_run(r, "{}")).unwrap();
        }
        let retention = Retention {
            keep_runs: Some(1),
            keep_days: None,
        };
        let removed = collect_garbage(&mut store, retention, 10_000, false).unwrap();
        let removed: Vec<&str> = removed.iter().map(|r| r.id.as_str()).collect();
        // Kept: the newest run; main's and feature's newest; the running one.
        assert_eq!(removed, ["aaaa000000000003", "aaaa000000000000"]);
        let left: Vec<String> = store
            .runs(&crate::history::RunFilter::default())
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(
            left,
            [
                "aaaa000000000005",
                "aaaa000000000004",
                "aaaa000000000002",
                "aaaa000000000001"
            ]
        );
    }
}

//! The store's tables, versioned: migration N brings a store from version N − 1 to N, in one
//! transaction, and `meta.schema_version` says where a store is. A store from a newer
//! evalhost is refused ([`StoreError::Newer`]), never written.
//!
//! - `suite_runs`: one row per recorded run of a suite (`evalhost run`, `record --live`,
//!   `grade`, an import): its provenance and totals.
//! - `case_results`: one row per case of a suite run: its name, digest, tags, numbers, and its
//!   report (`CaseReport` without its runs) as JSON.
//! - `case_runs`: one row per run of a case: its numbers, its `RunReport` as JSON, and its
//!   session log, evidence and workspace changes (`WorkspaceChanges` JSON), zstd-compressed,
//!   and the image its container started from (a case with an `environment:`).

use super::StoreError;
use super::backend::{Backend, Value};

/// The schema this evalhost writes.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Each migration's statements (`{blob}`: the dialect's binary type).
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: runs, cases and case runs.
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE suite_runs (
        id TEXT PRIMARY KEY,
        command TEXT NOT NULL,
        status TEXT NOT NULL,
        started_ms BIGINT NOT NULL,
        ended_ms BIGINT,
        evalhost_version TEXT NOT NULL,
        git_commit TEXT,
        git_branch TEXT,
        git_dirty BIGINT,
        mode TEXT NOT NULL,
        provider TEXT,
        model TEXT NOT NULL,
        agents TEXT NOT NULL,
        runs_per_case BIGINT NOT NULL,
        k BIGINT,
        cases BIGINT NOT NULL DEFAULT 0,
        runs BIGINT NOT NULL DEFAULT 0,
        passed BIGINT NOT NULL DEFAULT 0,
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        duration_ms BIGINT NOT NULL DEFAULT 0,
        source TEXT,
        header TEXT NOT NULL
     );
     CREATE INDEX suite_runs_started ON suite_runs (started_ms);
     CREATE TABLE case_results (
        suite_run TEXT NOT NULL,
        ord BIGINT NOT NULL,
        name TEXT NOT NULL,
        path TEXT NOT NULL,
        digest TEXT,
        tags TEXT NOT NULL,
        graders TEXT NOT NULL,
        failing TEXT NOT NULL,
        runs BIGINT NOT NULL,
        passed BIGINT NOT NULL,
        pass BIGINT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        duration_ms BIGINT NOT NULL,
        report TEXT NOT NULL,
        PRIMARY KEY (suite_run, ord)
     );
     CREATE INDEX case_results_name ON case_results (name);
     CREATE TABLE case_runs (
        suite_run TEXT NOT NULL,
        case_ord BIGINT NOT NULL,
        run BIGINT NOT NULL,
        pass BIGINT NOT NULL,
        input_tokens BIGINT NOT NULL,
        output_tokens BIGINT NOT NULL,
        duration_ms BIGINT NOT NULL,
        report TEXT NOT NULL,
        session_log {blob},
        evidence {blob},
        workspace {blob},
        PRIMARY KEY (suite_run, case_ord, run)
     );",
    // 2: cost (item 4 of issue 35), and finding a branch's latest run without a scan.
    "ALTER TABLE suite_runs ADD COLUMN cost_usd DOUBLE PRECISION;
     ALTER TABLE case_results ADD COLUMN cost_usd DOUBLE PRECISION;
     ALTER TABLE case_runs ADD COLUMN cost_usd DOUBLE PRECISION;
     CREATE INDEX suite_runs_branch ON suite_runs (git_branch, started_ms);",
    // 3: flaky marks of a page of cases (`evalhost view`'s comparison) from the index alone.
    "CREATE INDEX case_results_name_digest ON case_results (name, digest, runs, passed);",
    // 4: the image a run's container started from (issue 37): as the case named it, its id,
    // its registry digest; NULL for a run on the host.
    "ALTER TABLE case_runs ADD COLUMN image_source TEXT;
     ALTER TABLE case_runs ADD COLUMN image_digest TEXT;
     ALTER TABLE case_runs ADD COLUMN image_repo_digest TEXT;",
];

/// The version `backend`'s store is at (0: empty).
pub(crate) fn version(backend: &mut dyn Backend) -> Result<i64, StoreError> {
    let has_meta = match backend.dialect() {
        super::backend::Dialect::Sqlite => backend.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            &[],
        )?,
        super::backend::Dialect::Postgres => backend.query(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'meta'",
            &[],
        )?,
    };
    if has_meta.is_empty() {
        return Ok(0);
    }
    let rows = backend.query(
        "SELECT value FROM meta WHERE key = ?",
        &["schema_version".into()],
    )?;
    Ok(rows
        .first()
        .and_then(|r| r.opt_text(0))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Bring the store to `target` (normally [`VERSION`]); each step in its own transaction, so
/// two processes migrating at once leave one migrated store (the second waits, then finds
/// nothing to do).
pub(crate) fn migrate_to(
    backend: &mut dyn Backend,
    location: &str,
    target: i64,
) -> Result<(), StoreError> {
    loop {
        let found = version(backend)?;
        if found > VERSION {
            return Err(StoreError::Newer {
                location: location.to_owned(),
                found,
                known: VERSION,
            });
        }
        if found >= target {
            return Ok(());
        }
        match backend.dialect() {
            // Two servers' first runs may migrate at once: the lock makes the second wait.
            super::backend::Dialect::Postgres => {
                backend.batch("BEGIN; SELECT pg_advisory_xact_lock(7436508)")?
            }
            super::backend::Dialect::Sqlite => begin_write(backend)?,
        }
        // Another process may have migrated while this one waited for the lock.
        let result = (|| {
            if version(backend)? != found {
                return Ok(());
            }
            let sql = backend
                .dialect()
                .ddl(MIGRATIONS[usize::try_from(found).unwrap_or(0)]);
            backend.batch(&sql)?;
            backend.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &["schema_version".into(), Value::Text((found + 1).to_string())],
            )?;
            Ok(())
        })();
        finish_write(backend, result)?;
    }
}

/// Start a write transaction that holds the write lock from its start (SQLite's
/// `IMMEDIATE`), so two writers queue rather than deadlock on an upgrade.
pub(crate) fn begin_write(backend: &mut dyn Backend) -> Result<(), StoreError> {
    match backend.dialect() {
        super::backend::Dialect::Sqlite => backend.batch("BEGIN IMMEDIATE"),
        super::backend::Dialect::Postgres => backend.batch("BEGIN"),
    }
}

/// Commit when `result` is Ok, roll back otherwise; `result`'s error wins.
pub(crate) fn finish_write(
    backend: &mut dyn Backend,
    result: Result<(), StoreError>,
) -> Result<(), StoreError> {
    match result {
        Ok(()) => backend.batch("COMMIT"),
        Err(e) => {
            let _ = backend.batch("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::backend::Backend;

    /// A store made by the first version's evalhost keeps its runs when a later one opens it,
    /// and gains the later columns.
    #[test]
    fn a_version_1_store_migrates_and_keeps_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut old = crate::history::sqlite::Sqlite::open(&path, true).unwrap();
        migrate_to(&mut old, "h.db", 1).unwrap();
        assert_eq!(version(&mut old).unwrap(), 1);
        old.execute(
            "INSERT INTO suite_runs (id, command, status, started_ms, evalhost_version, mode, model, agents, runs_per_case, header) VALUES ('00112233aabbccdd', 'run', 'finished', 1, '0.1.0', 'replay', 'scripted', '[]', 1, '{}')",
            &[],
        )
        .unwrap();
        assert!(
            old.query("SELECT cost_usd FROM suite_runs", &[]).is_err(),
            "version 1 has no cost"
        );
        drop(old);

        let mut store = crate::history::Location::Sqlite(path).open().unwrap();
        assert_eq!(version(store.backend.as_mut()).unwrap(), VERSION);
        let run = store.resolve("0011").unwrap();
        assert_eq!((run.id.as_str(), run.cost_usd), ("00112233aabbccdd", None));
    }

    /// A run's report as JSON, with `image` when given.
    fn run_json(run: u32, image: Option<serde_json::Value>) -> String {
        let mut report = serde_json::json!({
            "run": run, "pass": true, "error": null,
            "usage": {"requests": 1, "input_tokens": 7, "output_tokens": 3, "synthetic": false},
            "tool_calls": 0, "duration_ms": 5, "verdicts": [],
        });
        if let Some(image) = image {
            report["image"] = image;
        }
        report.to_string()
    }

    /// A version 3 store (before the image had columns) keeps its case runs when a later
    /// evalhost opens it: a run on the host has no image, a run whose report named its image
    /// still shows it, and a new run's image lands in the new columns.
    #[test]
    fn a_version_3_store_migrates_and_keeps_its_runs_images() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut old = crate::history::sqlite::Sqlite::open(&path, true).unwrap();
        migrate_to(&mut old, "h.db", 3).unwrap();
        let in_report =
            serde_json::json!({"source": "evalhost-test/busybox:1", "digest": "sha256:00aa"});
        for (run, image) in [(1, None), (2, Some(in_report))] {
            old.execute(
                "INSERT INTO case_runs (suite_run, case_ord, run, pass, input_tokens, output_tokens, duration_ms, report) VALUES ('00112233aabbccdd', 0, ?, 1, 7, 3, 5, ?)",
                &[Value::from(run), run_json(run, image).into()],
            )
            .unwrap();
        }
        assert!(
            old.query("SELECT image_digest FROM case_runs", &[])
                .is_err(),
            "version 3 has no image columns"
        );
        drop(old);

        let mut store = crate::history::Location::Sqlite(path).open().unwrap();
        assert_eq!(version(store.backend.as_mut()).unwrap(), VERSION);
        let runs = store.case_runs("00112233aabbccdd", 0).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].image, None);
        let image = runs[1].image.as_ref().expect("the image its report named");
        assert_eq!(
            (image.source.as_str(), image.digest.as_str()),
            ("evalhost-test/busybox:1", "sha256:00aa")
        );

        let mut new: crate::report::RunReport = serde_json::from_str(&run_json(3, None)).unwrap();
        new.image = Some(crate::report::RunImage {
            source: "debian:bookworm".into(),
            digest: "sha256:11bb".into(),
            setup_digest: None,
            repo_digest: Some("debian@sha256:22cc".into()),
        });
        store
            .write(|s| s.insert_case_run("00112233aabbccdd", 0, &new, Default::default()))
            .unwrap();
        let rows = store
            .backend
            .query(
                "SELECT image_source, image_digest, image_repo_digest FROM case_runs WHERE run = 3",
                &[],
            )
            .unwrap();
        assert_eq!(
            (
                rows[0].opt_text(0),
                rows[0].opt_text(1),
                rows[0].opt_text(2)
            ),
            (
                Some("debian:bookworm".into()),
                Some("sha256:11bb".into()),
                Some("debian@sha256:22cc".into())
            )
        );
        assert_eq!(
            store.case_runs("00112233aabbccdd", 0).unwrap()[2].image,
            new.image
        );
    }
}

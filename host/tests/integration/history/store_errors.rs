//! A history store that is corrupt, locked too long or from a newer evalhost: a clear error naming it, and
//! the run itself still reports and exits as it would without history.

use crate::support::evalhost::Evalhost;

#[test]
fn a_corrupt_store_is_named_and_the_run_still_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    std::fs::write(
        &db,
        "this is not a SQLite database, it is a note to self\n".repeat(200),
    )
    .unwrap();
    let output = Evalhost::new()
        .args(["run", "cases/mino", "--history"])
        .arg(&db)
        .run();
    output.assert_code(0);
    output.assert_stdout_contains("All cases passed.");
    output.assert_stderr_contains(&format!(
        "Warning: not recording this run in the history: history store {} is not a readable store",
        db.display()
    ));
    assert!(!output.stdout().contains("Recorded as run"));
    // The file is left as it was: nothing is lost.
    assert!(
        std::fs::read_to_string(&db)
            .unwrap()
            .starts_with("this is not")
    );

    let listed = Evalhost::new()
        .args(["history", "--history"])
        .arg(&db)
        .run();
    listed.assert_code(2);
    listed.assert_stderr_contains(&format!("history store {}", db.display()));

    // Control: a failing suite still fails as it would without history.
    let failing = dir.path().join("fails.yaml");
    std::fs::write(
        &failing,
        "name: fails\nprompt: hi\nmodel:\n  - text: no\ngraders:\n  - final_text_contains: yes\n",
    )
    .unwrap();
    Evalhost::new()
        .arg("run")
        .arg(&failing)
        .arg("--history")
        .arg(&db)
        .run()
        .assert_code(1);
}

#[test]
fn a_store_from_a_newer_evalhost_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(&db)
        .run()
        .assert_code(0);
    let connection = rusqlite::Connection::open(&db).unwrap();
    connection
        .execute(
            "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .unwrap();
    drop(connection);
    let output = Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(&db)
        .run();
    output.assert_code(0);
    output.assert_stderr_contains(&format!(
        "history store {} was written by a newer evalhost (schema version 99; this evalhost knows up to",
        db.display()
    ));
    let connection = rusqlite::Connection::open(&db).unwrap();
    let runs: i64 = connection
        .query_row("SELECT COUNT(*) FROM suite_runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, 1, "nothing was written into the newer store");
}

/// Another process holds the store's write lock past the 30 s wait: the run says so and
/// still reports and exits as it would without history. (This test waits those 30 s.)
#[test]
fn a_store_locked_too_long_is_named_and_the_run_still_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(&db)
        .run()
        .assert_code(0);
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = std::time::Instant::now();
    let output = Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(&db)
        .run();
    output.assert_code(0);
    output.assert_stdout_contains("All cases passed.");
    output.assert_stderr_contains(&format!(
        "Warning: not recording this run in the history: history store {} is locked: another evalhost held it for more than 30 s",
        db.display()
    ));
    assert!(started.elapsed() >= std::time::Duration::from_secs(29));
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    // Control: once released, the next run records.
    let output = Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(&db)
        .run();
    output.assert_stdout_contains("Recorded as run ");
}

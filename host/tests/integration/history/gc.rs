//! `evalhost history gc`: the retention policy removes what it does not keep, with its cases
//! and runs (a dry run removes nothing), and without a policy nothing happens.

use evalhost::history::RunFilter;

use super::records::{recorded_id, store};
use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

#[test]
fn gc_removes_what_the_policy_does_not_keep_and_a_dry_run_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // Three runs outside a repository (no branch), the newest last.
    let ids: Vec<String> = (0..3)
        .map(|_| {
            let output = Evalhost::new()
                .arg("run")
                .arg(repo().join("cases/mino/write-then-read.yaml"))
                .arg("--history")
                .arg(&db)
                .current_dir(dir.path())
                .run();
            output.assert_code(0);
            recorded_id(output.stdout())
        })
        .collect();
    let gc = |args: &[&str]| {
        Evalhost::new()
            .args(["history", "gc", "--history"])
            .arg(&db)
            .args(args)
            .run()
    };

    let refused = gc(&[]);
    refused.assert_code(2);
    refused.assert_stderr_contains("no retention policy");

    let dry = gc(&["--keep-runs", "1", "--dry-run"]);
    dry.assert_code(0);
    dry.assert_stdout_contains("Would remove 2 runs");
    assert_eq!(store(&db).runs(&RunFilter::default()).unwrap().len(), 3);

    let removed = gc(&["--keep-runs", "1"]);
    removed.assert_code(0);
    for id in &ids[..2] {
        removed.assert_stdout_contains(&format!("Removed run {id}"));
    }
    let mut history = store(&db);
    let left = history.runs(&RunFilter::default()).unwrap();
    assert_eq!(left.len(), 1);
    assert!(left[0].id.starts_with(&ids[2]), "the newest stays");
    // Its cases and runs stay with it; the removed runs' are gone.
    assert_eq!(history.all_cases(&left[0].id).unwrap().len(), 1);
    let gone = history.resolve(&ids[0]);
    assert!(gone.is_err(), "{gone:?}");
}

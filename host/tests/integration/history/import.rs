//! `evalhost history import`: CI shards' `--out` directories and their merged report land in
//! one history, each once, the directories with their session logs.

use evalhost::history::RunFilter;

use super::records::store;
use crate::support::evalhost::Evalhost;

#[test]
fn shards_and_their_merged_report_are_imported_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |n: u32| {
        let out = dir.path().join(format!("shard-{n}"));
        Evalhost::new()
            .args(["run", "--runs", "2", "cases/mino", "--partition"])
            .arg(format!("hash:{n}/2"))
            .arg("--out")
            .arg(&out)
            .run();
        out
    };
    let (one, two) = (shard(1), shard(2));
    let merged = dir.path().join("merged.json");
    Evalhost::new()
        .args(["report", "merge"])
        .arg(one.join("report.json"))
        .arg(two.join("report.json"))
        .arg("-o")
        .arg(&merged)
        .run()
        .assert_code(0);
    let db = dir.path().join("team.db");
    let import = |paths: &[&std::path::Path]| {
        Evalhost::new()
            .args(["history", "import", "--history"])
            .arg(&db)
            .args(paths)
            .run()
    };
    let first = import(&[&one, &two, &merged]);
    first.assert_code(0);
    assert_eq!(
        first.stdout().matches("Imported ").count(),
        3,
        "{}",
        first.stdout()
    );
    assert!(
        first.stdout().contains("session logs"),
        "{}",
        first.stdout()
    );

    let mut history = store(&db);
    let runs = history.runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 3);
    let whole = runs.iter().find(|r| r.cases == 5).expect("the merged run");
    assert_eq!((whole.runs, whole.passed), (10, 10));
    assert_eq!(whole.command, "import");
    let shards: u32 = runs.iter().filter(|r| r.cases < 5).map(|r| r.cases).sum();
    assert_eq!(shards, 5, "{runs:?}");
    // A shard's runs came with their session logs; the merged file's without.
    let shard_run = runs.iter().find(|r| r.cases < 5 && r.cases > 0).unwrap();
    let case = &history.all_cases(&shard_run.id).unwrap()[0];
    assert!(history.case_runs(&shard_run.id, case.ord).unwrap()[0].has_session_log);
    let case = &history.all_cases(&whole.id).unwrap()[0];
    assert!(!history.case_runs(&whole.id, case.ord).unwrap()[0].has_session_log);
    drop(history);

    // Again: nothing new.
    let again = import(&[&one, &merged]);
    again.assert_code(0);
    assert_eq!(
        again.stdout().matches("already in").count(),
        2,
        "{}",
        again.stdout()
    );
    assert_eq!(store(&db).runs(&RunFilter::default()).unwrap().len(), 3);

    // Something that is not a report is an error naming it.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a report\"}").unwrap();
    let refused = import(&[&bad]);
    refused.assert_code(2);
    refused.assert_stderr_contains(&format!("history import {}", bad.display()));
}

#[test]
fn an_imported_run_in_a_container_keeps_its_image() {
    let dir = tempfile::tempdir().unwrap();
    // Recorded nowhere: only its --out directory and report.json.
    let Some((stdout, report)) = super::records::run_in_a_container(dir.path(), "off") else {
        return;
    };
    assert!(!stdout.contains("Recorded as run"), "{stdout}");
    let image = &report["cases"][0]["runs"][0]["image"];
    let expected = (
        image["source"].as_str().unwrap().to_owned(),
        image["digest"].as_str().unwrap().to_owned(),
    );
    let db = dir.path().join("team.db");
    let imported = Evalhost::new()
        .args(["history", "import", "--history"])
        .arg(&db)
        .arg(dir.path().join("out/report.json"))
        .run();
    imported.assert_code(0);
    let mut history = store(&db);
    let id = history.runs(&RunFilter::default()).unwrap()[0].id.clone();
    assert_eq!(
        super::records::stored_images(&mut history, &id),
        vec![expected.clone(); 2]
    );
    let column: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT image_digest FROM case_runs WHERE run = 1",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(column, expected.1);
}

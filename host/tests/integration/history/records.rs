//! Every `evalhost run` recorded in the history store: its provenance, every case and run
//! with its session log, evidence and workspace changes; concurrent writers; `--no-history`.

use std::path::Path;

use evalhost::history::{Location, RunFilter};

use crate::support::common::repo;
use crate::support::evalhost::Evalhost;

/// The run id `evalhost run` printed (`Recorded as run XXXXXXXX in ...`).
pub(crate) fn recorded_id(stdout: &str) -> String {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Recorded as run "))
        .unwrap_or_else(|| panic!("no `Recorded as run` line:\n{stdout}"));
    line["Recorded as run ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .to_owned()
}

pub(crate) fn store(path: &Path) -> evalhost::history::Store {
    Location::Sqlite(path.to_owned()).open_existing().unwrap()
}

#[test]
fn a_run_is_recorded_with_its_provenance_cases_runs_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args(["run", "--runs", "2", "cases/mino", "--history"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .run();
    output.assert_code(0);
    let id = recorded_id(output.stdout());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&db).unwrap().permissions().mode() & 0o777,
        0o600,
        "the store holds session logs: private"
    );

    // The report names the run the history has.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let run_id = report["run_id"].as_str().unwrap();
    assert!(run_id.starts_with(&id), "{run_id} vs {id}");
    assert_eq!(report["cases"][0]["digest"].as_str().unwrap().len(), 64);

    let mut store = store(&db);
    let runs = store.runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.id, run_id);
    assert_eq!(run.status.as_str(), "finished");
    assert_eq!((run.cases, run.runs, run.passed), (5, 10, 10));
    assert_eq!(run.mode, "replay");
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(repo())
        .output()
        .unwrap();
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    if !head.is_empty() {
        assert_eq!(run.git.as_ref().unwrap().commit, head);
    }
    assert!(run.ended_ms.unwrap() >= run.started_ms);

    // A case's runs, each with its session log, evidence and workspace changes.
    let (case, _report, case_runs) = store.case(&run.id, "write-then-read").unwrap().unwrap();
    assert_eq!((case.runs, case.passed), (2, 2));
    assert_eq!(case.graders, ["file_exists", "file_contains"]);
    assert_eq!(case_runs.len(), 2);
    let files = store.artifacts(&run.id, case.ord, 2).unwrap();
    let log = String::from_utf8(files.session_log.unwrap()).unwrap();
    let kept = std::fs::read_to_string(out.join("write-then-read/run-2.jsonl")).unwrap();
    assert_eq!(log, kept, "the stored session log is the one --out kept");
    let evidence: serde_json::Value = serde_json::from_slice(&files.evidence.unwrap()).unwrap();
    assert!(evidence["final_text"].as_str().unwrap().contains("hello"));
    let workspace = String::from_utf8(files.workspace.unwrap()).unwrap();
    assert!(
        workspace.contains("greeting.txt") && workspace.contains("created"),
        "{workspace}"
    );

    // `history` lists it.
    let listed = Evalhost::new()
        .args(["history", "--json", "--history"])
        .arg(&db)
        .run();
    listed.assert_code(0);
    let line: serde_json::Value = serde_json::from_str(listed.stdout().trim()).unwrap();
    assert_eq!(line["id"], run_id);
    assert_eq!(line["cases"], 5);

    // Re-grading the saved runs is recorded too, as a run of its own.
    let regraded = Evalhost::new()
        .args(["grade", "--evidence"])
        .arg(&out)
        .arg("--history")
        .arg(&db)
        .run();
    regraded.assert_code(0);
    let grade_id = recorded_id(regraded.stdout());
    let graded = store.resolve(&grade_id).unwrap();
    assert_eq!(
        (graded.command.as_str(), graded.cases, graded.runs),
        ("grade", 5, 10)
    );
    assert_ne!(graded.id, run.id);
    let ord = store
        .case(&graded.id, "write-then-read")
        .unwrap()
        .unwrap()
        .0
        .ord;
    assert!(
        store
            .artifacts(&graded.id, ord, 1)
            .unwrap()
            .session_log
            .is_some()
    );
}

#[test]
fn no_history_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--no-history"])
        .env("EVALHOST_HISTORY", &db)
        .run()
        .assert_code(0);
    assert!(!db.exists());
    // Control: the variable alone records.
    let output = Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml"])
        .env("EVALHOST_HISTORY", &db)
        .run();
    output.assert_code(0);
    recorded_id(output.stdout());
    assert!(db.exists());
}

#[test]
fn four_processes_writing_one_store_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Evalhost::new()
                .args(["run", "--runs", "3", "cases/mino", "--history"])
                .arg(&db)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
        })
        .collect();
    let mut ids = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(!stderr.contains("Warning"), "{stderr}");
        ids.push(recorded_id(&stdout));
    }
    let mut store = store(&db);
    let runs = store.runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 4);
    for run in &runs {
        assert!(ids.iter().any(|id| run.id.starts_with(id)));
        assert_eq!((run.cases, run.runs, run.passed), (5, 15, 15), "{run:?}");
        for case in store.all_cases(&run.id).unwrap() {
            let runs = store.case_runs(&run.id, case.ord).unwrap();
            assert_eq!(runs.len(), 3, "{}", case.name);
            assert!(runs.iter().all(|r| r.has_session_log && r.has_evidence));
        }
    }
}

/// A case whose agent runs in a container of `IMAGE`.
pub(crate) const IN_A_CONTAINER: &str = "name: x\nprompt: Go.\nenvironment:\n  image: IMAGE\nmodel:\n  - text: ok\ngraders:\n  - final_text_contains: ok\n";

/// `evalhost run --runs 2 --out DIR/out --history STORE` on [`IN_A_CONTAINER`] of busybox,
/// written in `dir`; what it printed and its report.json. `None` without Docker (the test is
/// skipped).
pub(crate) fn run_in_a_container(dir: &Path, db: &str) -> Option<(String, serde_json::Value)> {
    crate::support::docker::require_docker()?;
    let image = crate::support::docker::busybox_image();
    let case = dir.join("x.yaml");
    std::fs::write(&case, IN_A_CONTAINER.replace("IMAGE", image)).unwrap();
    let out = dir.join("out");
    let output = Evalhost::new()
        .args(["run", "--runs", "2", "--history", db, "--out"])
        .arg(&out)
        .arg(&case)
        .run();
    output.assert_code(0);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    Some((output.stdout().to_owned(), report))
}

/// The image each run of case `x` of `run` was stored with: (source, digest).
pub(crate) fn stored_images(
    store: &mut evalhost::history::Store,
    run: &str,
) -> Vec<(String, String)> {
    let run = store.resolve(run).unwrap();
    let (_, _, runs) = store.case(&run.id, "x").unwrap().unwrap();
    runs.iter()
        .map(|r| {
            let image = r
                .image
                .as_ref()
                .expect("a run in a container has its image");
            (image.source.clone(), image.digest.clone())
        })
        .collect()
}

#[test]
fn a_run_in_a_container_is_recorded_with_its_image_and_the_view_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let Some((stdout, report)) = run_in_a_container(dir.path(), db.to_str().unwrap()) else {
        return;
    };
    let id = recorded_id(&stdout);
    let image = &report["cases"][0]["runs"][0]["image"];
    let digest = image["digest"]
        .as_str()
        .expect("the report names the image");
    assert!(digest.starts_with("sha256:"), "{image}");
    let source = crate::support::docker::BUSYBOX_IMAGE;
    assert_eq!(image["source"], source);

    let mut store = store(&db);
    assert_eq!(
        stored_images(&mut store, &id),
        vec![(source.to_owned(), digest.to_owned()); 2],
        "each run's image is the report's"
    );
    // In the store's own columns, not only inside each run's report.
    let columns: Vec<(String, String)> = rusqlite::Connection::open(&db)
        .unwrap()
        .prepare("SELECT image_source, image_digest FROM case_runs ORDER BY run")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(columns, vec![(source.to_owned(), digest.to_owned()); 2]);
    // Control: a case on the host has none.
    let host = Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(&db)
        .run();
    host.assert_code(0);
    let host_id = recorded_id(host.stdout());
    let host_run = store.resolve(&host_id).unwrap();
    let (_, _, runs) = store
        .case(&host_run.id, "write-then-read")
        .unwrap()
        .unwrap();
    assert_eq!(runs[0].image, None);

    // `evalhost view` shows it in each run of the case.
    let view = crate::view::store::View::start(&db, &[]);
    let page = view.get(&format!("/runs/{id}/cases/x"));
    assert_eq!(page.status, 200, "{page:?}");
    let short = &digest["sha256:".len()..][..12];
    let title = match image["repo_digest"].as_str() {
        Some(repo) => format!("{digest} · {repo}"),
        None => digest.to_owned(),
    };
    let line =
        format!("image <code>{source}</code> · <code title=\"{title}\">sha256:{short}</code>");
    assert_eq!(page.body.matches(&line).count(), 2, "{}", page.body);
    let page = view.get(&format!("/runs/{host_id}/cases/write-then-read"));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(!page.body.contains("run-image"), "{}", page.body);
}

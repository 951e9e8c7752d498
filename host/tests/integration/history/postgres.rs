//! A team's shared history on a real PostgreSQL server: the same store behind
//! `--history postgres://...`, written by concurrent runs, listed, imported into, resolved.

use evalhost::history::{Location, RunFilter};

use super::records::recorded_id;
use crate::support::evalhost::Evalhost;
use crate::support::postgres::PostgresServer;

#[test]
fn runs_record_into_and_read_from_a_postgres_history() {
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.url();
    // Two CI machines at once (the first also migrates the empty database).
    let children: Vec<_> = (0..2)
        .map(|_| {
            Evalhost::new()
                .args(["run", "--runs", "2", "cases/mino", "--history", &url])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
        })
        .collect();
    let mut ids = Vec::new();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(!stderr.contains("Warning"), "{stderr}");
        assert!(
            stdout.contains(&format!("in postgres://postgres@127.0.0.1:{}", server.port)),
            "{stdout}"
        );
        ids.push(recorded_id(&stdout));
    }

    let mut store = Location::Postgres(url.clone()).open_existing().unwrap();
    let runs = store.runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 2);
    for run in &runs {
        assert_eq!(
            (run.status.as_str(), run.cases, run.runs, run.passed),
            ("finished", 5, 10, 10)
        );
    }
    let latest = store.resolve("latest").unwrap();
    assert_eq!(latest.id, runs[0].id);
    let (case, _, case_runs) = store.case(&latest.id, "write-then-read").unwrap().unwrap();
    assert_eq!(case_runs.len(), 2);
    let files = store.artifacts(&latest.id, case.ord, 1).unwrap();
    assert!(
        String::from_utf8(files.session_log.unwrap())
            .unwrap()
            .contains("greeting.txt")
    );
    let page = store
        .cases(
            &latest.id,
            &evalhost::history::CaseFilter {
                search: Some("BASH".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        page.total, 2,
        "case-insensitive search: bash-approved, bash-denied"
    );

    // `history` on the command line, and an import into the shared store.
    let listed = Evalhost::new().args(["history", "--history", &url]).run();
    listed.assert_code(0);
    for id in &ids {
        listed.assert_stdout_contains(id);
    }
    let dir = tempfile::tempdir().unwrap();
    Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--out"])
        .arg(dir.path())
        .run()
        .assert_code(0);
    let imported = Evalhost::new()
        .args(["history", "import", "--history", &url])
        .arg(dir.path())
        .run();
    imported.assert_code(0);
    imported.assert_stdout_contains("Imported ");
    assert_eq!(store.runs(&RunFilter::default()).unwrap().len(), 3);

    // `evalhost view` serves the shared history too.
    let view = crate::view::store::View::start(std::path::Path::new(&url), &[]);
    let runs = view.get("/");
    assert_eq!(runs.status, 200, "{runs:?}");
    for id in &ids {
        assert!(runs.body.contains(id.as_str()), "{runs:?}");
    }
    let run = view.get(&format!("/runs/{}", ids[0]));
    assert_eq!(run.status, 200, "{run:?}");
    assert!(run.body.contains("write-then-read"), "{run:?}");
    let compared = view.get(&format!("/compare?a={}&b={}", ids[0], ids[1]));
    assert_eq!(compared.status, 200, "{compared:?}");
}

#[test]
fn an_unreachable_postgres_history_is_a_warning_not_a_failed_run() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let output = Evalhost::new()
        .args(["run", "cases/mino/write-then-read.yaml", "--history"])
        .arg(format!("postgres://ci:s3cret@127.0.0.1:{port}/evals"))
        .run();
    output.assert_code(0);
    output.assert_stderr_contains(&format!(
        "Warning: not recording this run in the history: history store postgres://ci:***@127.0.0.1:{port}/evals"
    ));
    assert!(!output.stderr().contains("s3cret"), "{}", output.stderr());
}

#[test]
fn a_run_in_a_container_records_its_image_into_a_postgres_history() {
    if crate::support::docker::require_docker().is_none() {
        return;
    }
    let Some(server) = PostgresServer::start() else {
        return;
    };
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let Some((stdout, report)) = super::records::run_in_a_container(dir.path(), &url) else {
        return;
    };
    let id = recorded_id(&stdout);
    let image = &report["cases"][0]["runs"][0]["image"];
    let source = image["source"].as_str().unwrap().to_owned();
    let digest = image["digest"].as_str().unwrap().to_owned();
    assert!(digest.starts_with("sha256:"), "{image}");

    let mut store = Location::Postgres(url.clone()).open_existing().unwrap();
    assert_eq!(
        super::records::stored_images(&mut store, &id),
        vec![(source.clone(), digest.clone()); 2]
    );
    // In the store's own columns, not only inside each run's report.
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let columns: Vec<(String, String)> = client
        .query(
            "SELECT image_source, image_digest FROM case_runs ORDER BY run",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(columns, vec![(source, digest); 2]);
}

//! Private output, as Mino's: every file evalhost writes for a run's reports and artifacts
//! (`--out`'s report, session logs, evidence, workspace snapshots; `--junit`, `--html`;
//! `grade -o`, `report merge -o`) is mode 0600, every directory it creates 0700; and a
//! report path inside evalhost's own configuration, data or cache directory is refused.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::common::repo;
use crate::support::evalhost::{Evalhost, Output};

const CASE: &str = "name: secret-notes
prompt: Read the notes.
approve: all
workspace:
  files:
    notes.md: API_TOKEN=do-not-leak
    deep/dir/plan.md: step one
model:
  - call: {tool: read_file, arguments: {path: notes.md}}
  - text: The notes hold a token.
graders:
  - tool_called: read_file
  - final_text_contains: token
";

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// `dir` and everything under it, with each entry's mode.
fn tree(dir: &Path) -> Vec<(PathBuf, u32, bool)> {
    let mut found = vec![(dir.to_owned(), mode(dir), true)];
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if entry.file_type().unwrap().is_dir() {
            found.extend(tree(&entry.path()));
        } else {
            found.push((entry.path(), mode(&entry.path()), false));
        }
    }
    found
}

#[test]
fn every_report_and_artifact_file_is_0600_and_every_directory_0700() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = tmp.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(cases.join("secret-notes.yaml"), CASE).unwrap();
    let out = tmp.path().join("reports/out");
    let junit = tmp.path().join("junit.xml");
    let html = tmp.path().join("report.html");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            &s(&out),
            "--junit",
            &s(&junit),
            "--html",
            &s(&html),
            &s(&cases),
        ])
        .run();
    output.assert_code(0);

    let written = tree(&tmp.path().join("reports"));
    let names: Vec<String> = written
        .iter()
        .map(|(p, _, _)| {
            p.strip_prefix(tmp.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "reports",
            "reports/out",
            "reports/out/report.json",
            "reports/out/secret-notes",
            "reports/out/secret-notes/run-1.evidence.json",
            "reports/out/secret-notes/run-1.jsonl",
            "reports/out/secret-notes/run-1.workspace",
            "reports/out/secret-notes/run-1.workspace/deep",
            "reports/out/secret-notes/run-1.workspace/deep/dir",
            "reports/out/secret-notes/run-1.workspace/deep/dir/plan.md",
            "reports/out/secret-notes/run-1.workspace/notes.md",
        ]
    );
    for (path, mode, is_dir) in &written {
        let expected = if *is_dir { 0o700 } else { 0o600 };
        assert_eq!(*mode, expected, "{} is {mode:o}", path.display());
    }
    assert_eq!(mode(&junit), 0o600);
    assert_eq!(mode(&html), 0o600);

    // The re-graded and merged reports too.
    let regraded = tmp.path().join("regraded.json");
    let output = Evalhost::new()
        .args(["grade", "--evidence", &s(&out), "-o", &s(&regraded)])
        .run();
    output.assert_code(0);
    assert_eq!(mode(&regraded), 0o600);
    let merged = tmp.path().join("merged.json");
    let report = out.join("report.json");
    let output = Evalhost::new()
        .args(["report", "merge", &s(&report), "-o", &s(&merged)])
        .run();
    output.assert_code(0);
    assert_eq!(mode(&merged), 0o600);
    // Written over: the old file's mode does not survive.
    std::fs::set_permissions(&merged, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = Evalhost::new()
        .args(["report", "merge", &s(&report), "-o", &s(&merged)])
        .run();
    output.assert_code(0);
    assert_eq!(mode(&merged), 0o600);
}

/// `evalhost ARGS` with `HOME` at `home` and no `XDG_*` variables: `(code, stdout, stderr)`.
fn evalhost_at_home(home: &Path, args: &[&str]) -> Output {
    Evalhost::new()
        .args(args)
        .current_dir(repo())
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("EVALHOST_BUNDLE_STORE")
        .run()
}

#[test]
fn a_report_path_inside_evalhosts_own_directories_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().canonicalize().unwrap();
    let h = home.display();
    std::fs::create_dir_all(home.join(".cache/evalhost/components")).unwrap();
    let out = format!("{h}/.cache/evalhost/reports");
    let output = evalhost_at_home(&home, &["run", "--out", &out, "cases/mino"]);
    output.assert_code(2);
    let (stdout, stderr) = (output.stdout(), output.stderr());
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "Error: --out `{h}/.cache/evalhost/reports` is inside evalhost's cache directory `{h}/.cache/evalhost`; write reports outside evalhost's configuration, data and cache directories\n"
        )
    );
    assert!(!Path::new(&out).exists(), "nothing was written");

    // The directories need not exist yet; `..` and the other flags do not slip through.
    let junit = format!("{h}/elsewhere/../.config/evalhost/junit.xml");
    let output = evalhost_at_home(&home, &["run", "--junit", &junit, "cases/mino"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert_eq!(
        stderr,
        format!(
            "Error: --junit `{junit}` is inside evalhost's configuration directory `{h}/.config/evalhost`; write reports outside evalhost's configuration, data and cache directories\n"
        )
    );
    let html = format!("{h}/.local/share/evalhost/report.html");
    let output = evalhost_at_home(&home, &["run", "--html", &html, "cases/mino"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.starts_with(&format!(
            "Error: --html `{html}` is inside evalhost's data directory `{h}/.local/share/evalhost`;"
        )),
        "{stderr}"
    );
    let output = evalhost_at_home(
        &home,
        &[
            "report",
            "merge",
            "x.json",
            "-o",
            &format!("{h}/.cache/evalhost/m.json"),
        ],
    );
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.starts_with("Error: --out `"), "{stderr}");
    let output = evalhost_at_home(
        &home,
        &[
            "grade",
            "--evidence",
            "x",
            "-o",
            &format!("{h}/.cache/evalhost/g.json"),
        ],
    );
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(stderr.starts_with("Error: --out `"), "{stderr}");

    // Beside them is fine.
    let beside = home.join(".cache/evalhost-reports");
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            beside.to_str().unwrap(),
            "cases/mino/bash-denied.yaml",
        ])
        .run();
    output.assert_code(0);
    assert!(beside.join("report.json").is_file());
}

//! Nothing lost: `--out` files are written atomically, so killing `evalhost run` with
//! SIGKILL mid-suite leaves every present report.json, evidence file and session log
//! complete; and a run whose temp directory cannot be created is an errored run naming the
//! path, not a crash.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::evalhost::Evalhost;
use serde_json::Value;

/// Every file under `dir` (recursively), skipping finished-workspace snapshots.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if !name.ends_with(".workspace") {
                found.extend(files(&path));
            }
        } else {
            found.push(path);
        }
    }
    found
}

fn count_evidence(dir: &Path) -> usize {
    files(dir)
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".evidence.json"))
        .count()
}

/// Panics unless every result file under `out` is complete: JSON files parse, and every
/// line of a session log parses. Leftover `.tmp` files are not results and are skipped.
fn assert_complete(out: &Path) -> usize {
    let mut checked = 0;
    for path in files(out) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if name.ends_with(".json") {
            serde_json::from_str::<Value>(&text)
                .unwrap_or_else(|e| panic!("{} is half written: {e}", path.display()));
            checked += 1;
        } else if name.ends_with(".jsonl") {
            assert!(text.ends_with('\n'), "{} is cut short", path.display());
            for line in text.lines() {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|e| panic!("{} is half written: {e}", path.display()));
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn sigkill_mid_suite_leaves_no_half_written_file() {
    // Kill at several points: after the first, the fifth and the twentieth run was kept.
    for kill_after in [1, 5, 20] {
        let out = tempfile::tempdir().unwrap();
        // The killed runs' temp roots land here and go with it (nothing cleans up after a
        // SIGKILL; left in the default place they would pile up in RAM-backed /dev/shm).
        let run_roots = tempfile::tempdir().unwrap();
        let mut child = Evalhost::new()
            .env("TMPDIR", run_roots.path())
            .args(["run", "--runs", "8", "--jobs", "2", "--out"])
            .arg(out.path())
            .args(["cases/agentcompany", "cases/mino"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut finished = false;
        while count_evidence(out.path()) < kill_after {
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
            assert!(Instant::now() < deadline, "no run finished in time");
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(!finished, "the suite ended before it could be killed");
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        assert!(
            !out.path().join("report.json").exists(),
            "killed mid-suite, there is no suite report"
        );
        let checked = assert_complete(out.path());
        assert!(checked >= kill_after, "checked {checked} files");
    }
}

#[test]
fn an_uncreatable_temp_directory_makes_every_run_errored_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    // A regular file where the temp directory should be: creating anything in it fails
    // (ENOTDIR), even for root, whom permissions would not stop.
    let not_a_dir = dir.path().join("not-a-directory");
    std::fs::write(&not_a_dir, "").unwrap();
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args(["run", "--runs", "2", "--out"])
        .arg(&out)
        .arg("cases/mino")
        .env("TMPDIR", &not_a_dir)
        .run();
    output.assert_code(1);
    let stderr = output.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let runs: Vec<&Value> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["runs"].as_array().unwrap())
        .collect();
    assert_eq!(runs.len(), 10, "5 cases × 2 runs");
    let expected = format!(
        "failed to create the run's temp directory in `{}`",
        not_a_dir.display()
    );
    for run in runs {
        assert_eq!(run["pass"], false);
        let error = run["error"].as_str().unwrap_or_default();
        assert!(error.starts_with(&expected), "{error}");
    }
}

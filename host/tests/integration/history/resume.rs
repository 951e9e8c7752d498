//! Ctrl-C mid-suite leaves the recorded run `interrupted` with what finished; `run --resume`
//! finishes it: the runs recorded of unchanged cases are taken from it (their session logs
//! copied, not made again), the changed case runs, and the report covers the whole suite.

use std::process::Stdio;
use std::time::{Duration, Instant};

use evalhost::history::RunFilter;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::records::{recorded_id, store};
use crate::support::evalhost::Evalhost;

// a-fast's log holds what `date +%s%N` printed: a run made again never has the same log (a
// scripted run's `at_ms` can be the same twice).
const FAST: &str = "name: a-fast
prompt: Say done.
approve: all
model:
  - call: {tool: bash, arguments: {command: \"date +%s%N\"}}
  - text: done
graders:
  - final_text_contains: done
";

const SLOW: &str = "name: b-slow
prompt: Sleep.
approve: all
model:
  - call: {tool: bash, arguments: {command: \"sleep 30\"}}
  - text: slept
graders:
  - final_text_contains: slept
";

const SLOW_FIXED: &str = "name: b-slow
prompt: Sleep.
approve: all
model:
  - text: slept
graders:
  - final_text_contains: slept
";

#[test]
fn an_interrupted_run_is_recorded_as_such_and_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(cases.join("a-fast.yaml"), FAST).unwrap();
    std::fs::write(cases.join("b-slow.yaml"), SLOW).unwrap();
    let db = dir.path().join("h.db");
    let child = Evalhost::new()
        .args(["run", "--jobs", "1", "--history"])
        .arg(&db)
        .arg(&cases)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    // Once a-fast is stored, b-slow is in its `sleep 30`.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let stored = db.exists()
            && evalhost::history::Location::Sqlite(db.clone())
                .open_existing()
                .ok()
                .and_then(|mut s| {
                    let run = s.runs(&RunFilter::default()).ok()?.pop()?;
                    Some(!s.all_cases(&run.id).ok()?.is_empty())
                })
                .unwrap_or(false);
        if stored {
            break;
        }
        assert!(Instant::now() < deadline, "a-fast was never recorded");
        std::thread::sleep(Duration::from_millis(50));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    let first = recorded_id(&stdout);

    let mut history = store(&db);
    let run = history.resolve(&first).unwrap();
    assert_eq!(run.status.as_str(), "interrupted");
    assert_eq!((run.runs, run.passed), (1, 1));
    let a_fast = history.case(&run.id, "a-fast").unwrap().unwrap();
    assert_eq!(a_fast.0.runs, 1);
    let old_log = history.artifacts(&run.id, a_fast.0.ord, 1).unwrap();
    drop(history);

    // b-slow changes (its digest with it); a-fast does not.
    std::fs::write(cases.join("b-slow.yaml"), SLOW_FIXED).unwrap();
    let resumed = Evalhost::new()
        .args(["run", "--jobs", "1", "--resume", "--history"])
        .arg(&db)
        .arg(&cases)
        .current_dir(dir.path())
        .run();
    resumed.assert_code(0);
    assert!(
        resumed.stdout().contains(&format!(
            "Resuming run {first} (interrupted; cases with runs recorded: 1)"
        )),
        "{}",
        resumed.stdout()
    );
    assert!(resumed.stdout().contains("All cases passed."));
    let second = recorded_id(resumed.stdout());
    let mut history = store(&db);
    let run = history.resolve(&second).unwrap();
    assert_eq!(
        (run.status.as_str(), run.cases, run.runs),
        ("finished", 2, 2)
    );
    let copied = history.case(&run.id, "a-fast").unwrap().unwrap();
    let new_log = history.artifacts(&run.id, copied.0.ord, 1).unwrap();
    assert_eq!(
        new_log.session_log, old_log.session_log,
        "a-fast's run was taken from the interrupted run, not made again (its log has the first run's clock)"
    );
    assert!(new_log.session_log.is_some());

    // Control: without --resume, a-fast runs again (its log is new).
    let again = Evalhost::new()
        .args(["run", "--jobs", "1", "--history"])
        .arg(&db)
        .arg(&cases)
        .current_dir(dir.path())
        .run();
    again.assert_code(0);
    let third = recorded_id(again.stdout());
    let run = history.resolve(&third).unwrap();
    let ord = history.case(&run.id, "a-fast").unwrap().unwrap().0.ord;
    assert_ne!(
        history.artifacts(&run.id, ord, 1).unwrap().session_log,
        old_log.session_log
    );
}

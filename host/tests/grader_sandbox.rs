//! The grader host against real hostile guest components (built from `tests/guests/hostile`
//! by the host build): every probe is contained with a named error, and the next call works.

use std::path::Path;
use std::time::Duration;

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{
    GraderComponent, GraderError, GraderHost, Limits, PreparedEvidence, Verdict,
};

const HOSTILE: &str = env!("EVALHOST_TEST_HOSTILE_WASM");

fn host(limits: Limits) -> GraderHost {
    GraderHost::new(limits, None).expect("engine")
}

fn hostile(host: &GraderHost) -> GraderComponent {
    host.load_component_file(Path::new(HOSTILE))
        .expect("hostile component loads")
}

fn evidence() -> PreparedEvidence {
    PreparedEvidence::new(&Evidence::from_session(&[], RunFacts::default()))
}

/// A workspace holding one file, plus a secret file beside it (outside the workspace).
fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("workspace");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("notes.md"), "inside").unwrap();
    std::fs::write(root.path().join("secret.txt"), "TOP-SECRET").unwrap();
    (root, ws)
}

fn grade(c: &GraderComponent, probe: &str, ws: &Path) -> Result<Verdict, GraderError> {
    c.grade(probe, "null", &evidence(), Some(ws)).0
}

/// The `ok` probe passes: the component still works after whatever came before.
fn assert_next_call_works(c: &GraderComponent, ws: &Path) {
    let verdict = grade(c, "ok", ws).expect("ok probe");
    assert!(verdict.pass, "ok probe should pass: {verdict:?}");
}

/// A probe the sandbox must stop: it never passes (a pass means it got what it wanted).
fn assert_contained(c: &GraderComponent, probe: &str, ws: &Path) -> GraderError {
    match grade(c, probe, ws) {
        Ok(v) => panic!("probe {probe} escaped the sandbox: {v:?}"),
        Err(e) => {
            assert_next_call_works(c, ws);
            e
        }
    }
}

#[test]
fn filesystem_escapes_are_refused() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (root, ws) = workspace();
    std::os::unix::fs::symlink(root.path().join("secret.txt"), ws.join("link")).unwrap();
    for probe in ["read-etc-passwd", "read-parent", "read-symlink"] {
        let error = assert_contained(&c, probe, &ws);
        assert!(
            matches!(error, GraderError::Failed(_)),
            "{probe}: expected the guest's own I/O error, got {error:?}"
        );
        assert!(
            !error.to_string().contains("TOP-SECRET"),
            "{probe}: {error}"
        );
    }
}

#[test]
fn the_workspace_is_read_only() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let error = assert_contained(&c, "write-file", &ws);
    assert!(matches!(error, GraderError::Failed(_)), "{error:?}");
    assert!(
        !ws.join("pwned.txt").exists(),
        "the guest created a file in the workspace"
    );
}

#[test]
fn an_infinite_loop_exhausts_fuel() {
    let host = host(Limits {
        fuel: 20_000_000,
        ..Limits::default()
    });
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let error = assert_contained(&c, "infinite-loop", &ws);
    assert_eq!(error, GraderError::FuelExhausted { budget: 20_000_000 });
    assert_eq!(
        error.to_string(),
        "fuel exhausted after 20000000 instructions"
    );
}

#[test]
fn an_infinite_loop_hits_the_wall_clock_deadline() {
    let host = host(Limits {
        fuel: u64::MAX,
        deadline: Duration::from_millis(200),
        ..Limits::default()
    });
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let error = assert_contained(&c, "infinite-loop", &ws);
    assert!(
        matches!(error, GraderError::DeadlineExceeded { .. }),
        "{error:?}"
    );
}

#[test]
fn a_one_gib_allocation_hits_the_memory_cap() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let error = assert_contained(&c, "alloc-1gib", &ws);
    assert!(
        matches!(error, GraderError::MemoryLimit { .. }),
        "{error:?}"
    );
    assert!(error.to_string().starts_with("memory limit"), "{error}");
}

#[test]
fn deep_recursion_is_a_stack_overflow() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let error = assert_contained(&c, "deep-recursion", &ws);
    assert_eq!(error, GraderError::StackOverflow);
}

#[test]
fn ten_mib_of_stdout_hits_the_output_limit() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let error = assert_contained(&c, "stdout-flood", &ws);
    assert!(matches!(error, GraderError::OutputLimit(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "output limit: wrote more than {} bytes to stdout",
            Limits::default().output_bytes
        )
    );
}

#[test]
fn no_environment_and_no_arguments() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    assert_contained(&c, "env", &ws);
}

#[test]
fn clock_and_random_are_virtual_and_deterministic() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let first = grade(&c, "clock", &ws).expect("clock probe");
    let second = grade(&c, "clock", &ws).expect("clock probe");
    assert_eq!(first, second, "clock/random must not vary between calls");
    assert!(
        first.message.contains("1767225600"),
        "virtual wall clock: {first:?}"
    );
}

#[test]
fn fuel_used_is_the_same_on_every_call() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let (_root, ws) = workspace();
    let fuel: Vec<u64> = (0..3)
        .map(|_| c.grade("ok", "null", &evidence(), Some(&ws)).1.fuel_used)
        .collect();
    assert!(fuel[0] > 0);
    assert!(fuel.iter().all(|f| *f == fuel[0]), "{fuel:?}");
}

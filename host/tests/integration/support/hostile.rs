//! The hostile-grader probes as data, shared by `grader/sandbox.rs` (one test per probe)
//! and `hardening/probes.rs` (every probe in one process: the probe → outcome → time table,
//! deadline overruns and host memory).
//!
//! A probe is one grader of the hostile component (`tests/guests/hostile`), or one of the
//! misfit components (`tests/guests/wrong_world`, `unknown_import`, `huge_schema`) that must
//! be refused at load time.

#![allow(dead_code)]

use crate::support::guests;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{
    GraderComponent, GraderError, GraderHost, GraderHostError, Limits, PreparedEvidence,
};

pub const BUILTIN: &str = env!("EVALHOST_BUILTIN_GRADERS_WASM");

/// The content of the secret file beside the workspace; no probe may ever report it.
pub const SECRET: &str = "TOP-SECRET";
/// The content of the one seeded workspace file; no probe may change it.
pub const NOTES: &str = "inside";

pub fn host(limits: Limits) -> GraderHost {
    GraderHost::new(limits, None).expect("engine")
}

pub fn hostile(host: &GraderHost) -> GraderComponent {
    host.load_component_file(Path::new(guests::hostile()))
        .expect("hostile component loads")
}

pub fn evidence() -> PreparedEvidence {
    PreparedEvidence::new(&Evidence::from_session(&[], RunFacts::default()))
}

/// A run's temp root as the runner lays it out: `workspace/` holding `notes.md`, and a
/// secret file beside the workspace. In the workspace, `link` points at the secret by
/// absolute path, and `chain` → `chain2` → `chain3` → `../secret.txt` reaches it by a chain
/// of links whose last one is relative.
pub struct Sandbox {
    pub root: tempfile::TempDir,
    pub workspace: PathBuf,
    notes_modified: std::time::SystemTime,
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("temp root");
        let workspace = root.path().join("workspace");
        std::fs::create_dir(&workspace).unwrap();
        std::fs::write(workspace.join("notes.md"), NOTES).unwrap();
        let secret = root.path().join("secret.txt");
        std::fs::write(&secret, SECRET).unwrap();
        use std::os::unix::fs::symlink as link;
        link(&secret, workspace.join("link")).unwrap();
        link("chain2", workspace.join("chain")).unwrap();
        link("chain3", workspace.join("chain2")).unwrap();
        link("../secret.txt", workspace.join("chain3")).unwrap();
        let notes_modified = modified(&workspace.join("notes.md"));
        Self {
            root,
            workspace,
            notes_modified,
        }
    }

    /// Panics unless the workspace holds exactly what `new` put there, unchanged.
    pub fn assert_intact(&self, probe: &str) {
        let mut names: Vec<String> = std::fs::read_dir(&self.workspace)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["chain", "chain2", "chain3", "link", "notes.md"],
            "{probe} changed the workspace"
        );
        let notes = self.workspace.join("notes.md");
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            NOTES,
            "{probe} changed notes.md"
        );
        assert_eq!(
            modified(&notes),
            self.notes_modified,
            "{probe} changed the times of notes.md"
        );
        assert_eq!(std::fs::metadata(&notes).unwrap().len(), NOTES.len() as u64);
    }
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// What a probe is stopped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The guest's own I/O call was refused: `GraderError::Failed` with the OS error.
    Refused,
    Fuel,
    Deadline,
    Memory,
    Table,
    Stack,
    Output,
    Message,
    Panicked,
    Unreachable,
    /// Held more host resources (open files) than the handle cap.
    Handles,
    /// Refused at load time: the component does not export the grader world.
    WrongWorld,
    /// Refused at load time: the component imports what the sandbox does not provide.
    UnknownImport,
    /// Refused at load time: a listed config schema is over the cap.
    Schema,
}

impl Expect {
    fn matches_call(self, error: &GraderError, limits: &Limits) -> bool {
        match self {
            Expect::Refused => matches!(error, GraderError::Failed(_)),
            Expect::Fuel => {
                *error
                    == GraderError::FuelExhausted {
                        budget: limits.fuel,
                    }
            }
            Expect::Deadline => {
                *error
                    == GraderError::DeadlineExceeded {
                        deadline: limits.deadline,
                    }
            }
            Expect::Memory => matches!(
                error,
                GraderError::MemoryLimit { cap, desired } if *cap == limits.memory_bytes && desired > cap
            ),
            Expect::Table => matches!(
                error,
                GraderError::TableLimit { cap, desired } if *cap == limits.table_elements && desired > cap
            ),
            Expect::Stack => *error == GraderError::StackOverflow,
            Expect::Output => matches!(
                error,
                GraderError::OutputLimit(limit) if limit.stream == "stdout" && limit.cap == limits.output_bytes
            ),
            Expect::Message => matches!(
                error,
                GraderError::MessageLimit { cap, len } if *cap == limits.message_bytes && *len == 100 << 20
            ),
            Expect::Panicked => matches!(
                error,
                GraderError::Panicked(m) if m.contains("the panic probe panicked")
            ),
            Expect::Unreachable => {
                *error
                    == GraderError::Trap(
                        "wasm trap: wasm `unreachable` instruction executed".to_owned(),
                    )
            }
            Expect::Handles => {
                *error
                    == GraderError::HandleLimit {
                        cap: limits.handles,
                    }
            }
            Expect::WrongWorld | Expect::UnknownImport | Expect::Schema => false,
        }
    }

    fn matches_load(self, error: &GraderHostError, limits: &Limits) -> bool {
        match self {
            Expect::WrongWorld => matches!(error, GraderHostError::WrongWorld { .. }),
            Expect::UnknownImport => matches!(
                error,
                GraderHostError::Link { message, .. } if message.contains("evalhost-test:unknown-import/secrets")
            ),
            Expect::Schema => matches!(
                error,
                GraderHostError::ListGraders {
                    error: GraderError::SchemaLimit { grader, cap, len },
                    ..
                } if grader == "huge-schema" && *cap == limits.schema_bytes && *len > 100 << 20
            ),
            _ => false,
        }
    }
}

/// One probe: which grader (or misfit component) under which limits, and what must stop it.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The hostile component's grader name, or the misfit component's label.
    pub name: &'static str,
    /// For a load-time probe: the component file.
    pub component: Option<&'static str>,
    pub limits: Limits,
    pub expect: Expect,
}

/// Limits with a short deadline and unbounded fuel, so the deadline is what stops a loop.
pub fn deadline_limits(deadline: Duration) -> Limits {
    Limits {
        fuel: u64::MAX,
        deadline,
        ..Limits::default()
    }
}

/// Every probe, in the order of the table in `docs/security.md`. `deadline` is the wall-clock
/// deadline the loop probes run under.
pub fn probes(deadline: Duration) -> Vec<Probe> {
    let call = |name, limits, expect| Probe {
        name,
        component: None,
        limits,
        expect,
    };
    let load = |name, component, expect| Probe {
        name,
        component: Some(component),
        limits: Limits::default(),
        expect,
    };
    let default = Limits::default();
    vec![
        call("read-etc-passwd", default, Expect::Refused),
        call("read-parent", default, Expect::Refused),
        call("read-symlink", default, Expect::Refused),
        call("read-symlink-chain", default, Expect::Refused),
        call("read-trailing-slash", default, Expect::Refused),
        call("write-file", default, Expect::Refused),
        call("truncate", default, Expect::Refused),
        call("create", default, Expect::Refused),
        call("rename", default, Expect::Refused),
        call("hard-link", default, Expect::Refused),
        call("set-times", default, Expect::Refused),
        call("remove", default, Expect::Refused),
        call("network", default, Expect::Refused),
        call("socket-listen", default, Expect::Refused),
        call("env", default, Expect::Refused),
        call(
            "infinite-loop",
            Limits {
                fuel: 20_000_000,
                ..default
            },
            Expect::Fuel,
        ),
        call("infinite-loop", deadline_limits(deadline), Expect::Deadline),
        // Unbounded fuel: whether the default budget or the deadline comes first depends on
        // the machine's speed, and the deadline is what this probe measures.
        call(
            "memory-copy-loop",
            deadline_limits(deadline),
            Expect::Deadline,
        ),
        call("alloc-1gib", default, Expect::Memory),
        // A Rust guest cannot emit `table.grow`; its function table is checked against the
        // cap when the instance is created, so a cap below that table's size is the probe.
        call(
            "ok",
            Limits {
                table_elements: 1,
                ..default
            },
            Expect::Table,
        ),
        call("deep-recursion", default, Expect::Stack),
        call("stdout-flood", default, Expect::Output),
        call("huge-verdict", default, Expect::Message),
        call("panic", default, Expect::Panicked),
        call("unreachable", default, Expect::Unreachable),
        call("open-files", default, Expect::Handles),
        load("wrong-world", guests::wrong_world(), Expect::WrongWorld),
        load(
            "unknown-import",
            guests::unknown_import(),
            Expect::UnknownImport,
        ),
        load("huge-schema", guests::huge_schema(), Expect::Schema),
    ]
}

/// The probe named `name` (the first, if several share the name), under `deadline`.
pub fn probe(name: &str, expect: Expect) -> Probe {
    probes(Duration::from_millis(500))
        .into_iter()
        .find(|p| p.name == name && p.expect == expect)
        .unwrap_or_else(|| panic!("no probe {name} expecting {expect:?}"))
}

/// What one probe ended with.
#[derive(Debug)]
pub struct Outcome {
    /// The error's text, as a report would show it.
    pub error: String,
    /// Wall time of the call (or of the load), including instantiation.
    pub elapsed: Duration,
}

/// Run `probe` in a fresh sandbox and assert everything the hardening suite promises:
/// the expected named error, no secret in it, the workspace unchanged, and the next call
/// (the `ok` probe, in a fresh host with default limits and in the same host) passing.
pub fn run(probe: &Probe) -> Outcome {
    let sandbox = Sandbox::new();
    let host = host(probe.limits);
    let (error, elapsed) = match probe.component {
        Some(path) => {
            let started = Instant::now();
            let loaded = host.load_component_file(Path::new(path));
            let elapsed = started.elapsed();
            match loaded {
                Ok(c) => panic!("{}: the misfit component loaded: {c:?}", probe.name),
                Err(e) => {
                    assert!(
                        probe.expect.matches_load(&e, &probe.limits),
                        "{}: expected {:?}, got {e:?}",
                        probe.name,
                        probe.expect
                    );
                    (e.to_string(), elapsed)
                }
            }
        }
        None => {
            // Loading under a table cap below the component's own table fails at once.
            let started = Instant::now();
            let loaded = host.load_component_file(Path::new(guests::hostile()));
            let load_elapsed = started.elapsed();
            let component = match loaded {
                Ok(c) => c,
                Err(GraderHostError::ListGraders { error, .. }) => {
                    assert!(
                        probe.expect.matches_call(&error, &probe.limits),
                        "{}: expected {:?}, got {error:?}",
                        probe.name,
                        probe.expect
                    );
                    return finish(probe, &sandbox, error.to_string(), load_elapsed);
                }
                Err(e) => panic!("hostile component: {e}"),
            };
            // The probe and then `ok` in one session, as a run's entries of one component.
            let mut session = component.session(Some(&sandbox.workspace));
            let started = Instant::now();
            let (result, _) = session.grade_with_judge(probe.name, "null", &evidence(), None);
            let elapsed = started.elapsed();
            let error = match result {
                Ok(v) => panic!("probe {} escaped the sandbox: {v:?}", probe.name),
                Err(e) => e,
            };
            assert!(
                probe.expect.matches_call(&error, &probe.limits),
                "{}: expected {:?}, got {error:?}",
                probe.name,
                probe.expect
            );
            // The next entry of the same component, same run: its verdict is a fresh
            // instance's.
            let (next, _) = session.grade_with_judge("ok", "null", &evidence(), None);
            assert!(
                next.as_ref().is_ok_and(|v| v.pass),
                "{}: the next call failed: {next:?}",
                probe.name
            );
            let (fresh, _) = component.grade("ok", "null", &evidence(), Some(&sandbox.workspace));
            assert_eq!(next, fresh, "{}: the next verdict changed", probe.name);
            (error.to_string(), elapsed)
        }
    };
    finish(probe, &sandbox, error, elapsed)
}

fn finish(probe: &Probe, sandbox: &Sandbox, error: String, elapsed: Duration) -> Outcome {
    assert!(!error.contains(SECRET), "{}: {error}", probe.name);
    assert!(
        !error.contains("root:x:0:0"),
        "{}: read /etc/passwd: {error}",
        probe.name
    );
    sandbox.assert_intact(probe.name);
    // A fresh host with default limits: the next grader works.
    let host = host(Limits::default());
    let (next, _) = hostile(&host).grade("ok", "null", &evidence(), Some(&sandbox.workspace));
    assert!(
        next.as_ref().is_ok_and(|v| v.pass),
        "{}: the next grader failed: {next:?}",
        probe.name
    );
    Outcome { error, elapsed }
}

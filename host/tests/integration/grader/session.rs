//! One instance per run and component (`GraderSession`): a run's entries of one component
//! share an instance, yet an entry that traps, hits a limit or leaves memory grown cannot
//! change the verdict of a later entry; fuel stays per call and deterministic.

use std::path::Path;

use crate::support::evalhost::Evalhost;
use crate::support::guests;
use crate::support::hostile::{Sandbox, evidence, host, hostile};
use evalhost::grader::{CallStats, GraderComponent, GraderError, Limits, Verdict};

type Graded = (Result<Verdict, GraderError>, CallStats);

/// `entries` (grader, config) in one session, in order.
fn in_one_session(component: &GraderComponent, ws: &Path, entries: &[(&str, &str)]) -> Vec<Graded> {
    let mut session = component.session(Some(ws));
    entries
        .iter()
        .map(|(grader, config)| session.grade_with_judge(grader, config, &evidence(), None))
        .collect()
}

fn limits() -> Limits {
    Limits {
        fuel: 100_000_000,
        memory_bytes: 64 << 20,
        ..Limits::default()
    }
}

#[test]
fn an_entry_after_a_trap_or_limit_gets_a_fresh_instance() {
    let host = host(limits());
    let component = hostile(&host);
    let sandbox = Sandbox::new();
    let (fresh, fresh_stats) = component.grade("ok", "null", &evidence(), Some(&sandbox.workspace));
    for (probe, expect) in [
        ("alloc-1gib", "memory limit: tried to grow linear memory"),
        (
            "infinite-loop",
            "fuel exhausted after 100000000 instructions",
        ),
        ("panic", "grader panicked: panicked at"),
        (
            "unreachable",
            "trapped: wasm trap: wasm `unreachable` instruction executed",
        ),
        ("deep-recursion", "stack overflow"),
        (
            "stdout-flood",
            "output limit: wrote more than 65536 bytes to stdout",
        ),
    ] {
        let graded = in_one_session(
            &component,
            &sandbox.workspace,
            &[(probe, "null"), ("ok", "null")],
        );
        let error = graded[0].0.as_ref().expect_err(probe).to_string();
        assert!(error.starts_with(expect), "{probe}: {error}");
        // The next entry's verdict and fuel are those of a fresh instance's first call.
        assert_eq!(graded[1].0, fresh, "{probe}: the next verdict changed");
        assert_eq!(
            graded[1].1.fuel_used, fresh_stats.fuel_used,
            "{probe}: the next call's fuel changed"
        );
        assert_eq!(
            graded[1].1.stdout, "",
            "{probe}: output leaked into the next call"
        );
    }
}

#[test]
fn memory_kept_by_an_earlier_entry_does_not_decide_a_later_one() {
    let host = host(limits());
    let component = hostile(&host);
    let sandbox = Sandbox::new();
    // 40 MiB kept, then 40 MiB more: over the 64 MiB cap only because of the first entry.
    let graded = in_one_session(
        &component,
        &sandbox.workspace,
        &[("hold-memory", "40"), ("use-memory", "40"), ("ok", "null")],
    );
    let (alone, alone_stats) =
        component.grade("use-memory", "40", &evidence(), Some(&sandbox.workspace));
    let alone = alone.expect("40 MiB fits the cap");
    assert!(
        graded[0].0.as_ref().is_ok_and(|v| v.pass),
        "{:?}",
        graded[0].0
    );
    assert_eq!(
        graded[1].0.as_ref(),
        Ok(&alone),
        "made again on a fresh instance"
    );
    assert_eq!(graded[1].1.fuel_used, alone_stats.fuel_used);
    assert!(
        graded[2].0.as_ref().is_ok_and(|v| v.pass),
        "{:?}",
        graded[2].0
    );

    // An entry over the cap on its own is the memory limit, in a session as alone.
    let graded = in_one_session(&component, &sandbox.workspace, &[("use-memory", "80")]);
    assert!(
        matches!(graded[0].0, Err(GraderError::MemoryLimit { cap, .. }) if cap == 64 << 20),
        "{:?}",
        graded[0].0
    );
}

#[test]
fn fuel_is_per_call_and_the_same_in_every_session() {
    let host = host(limits());
    let component = hostile(&host);
    let sandbox = Sandbox::new();
    let entries = [
        ("ok", "null"),
        ("clock", "null"),
        ("ok", "null"),
        ("use-memory", "1"),
    ];
    let fuel = |graded: Vec<Graded>| -> Vec<u64> {
        graded
            .into_iter()
            .map(|(result, stats)| {
                assert!(result.is_ok_and(|v| v.pass));
                stats.fuel_used
            })
            .collect()
    };
    let first = fuel(in_one_session(&component, &sandbox.workspace, &entries));
    let second = fuel(in_one_session(&component, &sandbox.workspace, &entries));
    assert_eq!(first, second, "fuel differs between two sessions");
    assert!(
        first.iter().all(|f| *f > 0 && *f < limits().fuel),
        "{first:?}"
    );
}

/// Through `evalhost run`: a case whose hostile entries come before normal entries of the
/// same component.
#[test]
fn a_run_grades_every_entry_of_a_component_as_if_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("graders")).unwrap();
    std::fs::copy(guests::hostile(), dir.path().join("graders/hostile.wasm")).unwrap();
    let case = dir.path().join("session.yaml");
    let entry =
        |grader: &str, config: &str| format!("  - graders/hostile.wasm#{grader}: {config}\n");
    std::fs::write(
        &case,
        format!(
            "name: session\nprompt: Say hello.\nmodel:\n  - text: Hello there!\ngraders:\n{}{}{}{}{}",
            entry("alloc-1gib", "null"),
            entry("ok", "null"),
            entry("hold-memory", "200"),
            entry("use-memory", "100"),
            entry("panic", "null"),
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args([
            "run",
            "--out",
            out.to_str().unwrap(),
            case.to_str().unwrap(),
        ])
        .run();
    let stdout = output.stdout();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let verdicts = report["cases"][0]["runs"][0]["verdicts"]
        .as_array()
        .unwrap();
    let outcomes: Vec<(&str, &str)> = verdicts
        .iter()
        .map(|v| {
            (
                v["outcome"].as_str().unwrap(),
                v["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes.len(), 5, "{outcomes:?}");
    assert_eq!(outcomes[0].0, "error");
    assert!(
        outcomes[0]
            .1
            .starts_with("memory limit: tried to grow linear memory"),
        "{outcomes:?}"
    );
    // Each normal entry passes with the message it gives alone (kept in the report).
    assert_eq!(
        &outcomes[1..4],
        &[
            ("pass", "ok"),
            ("pass", "allocated 200 MiB and touched 51200 pages"),
            ("pass", "allocated 100 MiB and touched 25600 pages"),
        ]
    );
    assert_eq!(outcomes[4].0, "error");
    assert!(
        outcomes[4].1.starts_with("grader panicked: panicked at"),
        "{outcomes:?}"
    );
}

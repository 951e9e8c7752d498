//! One instance per run and component (`GraderSession`): a run's entries of one component
//! share an instance, yet an entry that traps, hits a limit or leaves memory grown cannot
//! change the verdict of a later entry; fuel stays per call and deterministic. A component
//! of WIT 0.5.0 (the SDK's) is handed the run's evidence once per instance (`begin-run`),
//! charged to no entry.

use std::path::Path;

use crate::support::evalhost::Evalhost;
use crate::support::guests;
use crate::support::hostile::{BUILTIN, Sandbox, evidence, host, hostile};
use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{
    CallStats, GraderComponent, GraderError, Limits, PreparedEvidence, Verdict,
};

type Graded = (Result<Verdict, GraderError>, CallStats);

/// `entries` (grader, config) in one session, in order, grading one run.
fn in_one_session(component: &GraderComponent, ws: &Path, entries: &[(&str, &str)]) -> Vec<Graded> {
    grade_run(component, ws, &evidence(), entries)
}

/// `entries` (grader, config) in one session grading `evidence`, in order.
fn grade_run(
    component: &GraderComponent,
    ws: &Path,
    evidence: &PreparedEvidence,
    entries: &[(&str, &str)],
) -> Vec<Graded> {
    let mut session = component.session(Some(ws));
    entries
        .iter()
        .map(|(grader, config)| session.grade_with_judge(grader, config, evidence, None))
        .collect()
}

fn final_text(text: &str) -> PreparedEvidence {
    let mut evidence = Evidence::from_session(&[], RunFacts::default());
    evidence.final_text = text.to_owned();
    PreparedEvidence::new(&evidence)
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

/// The built-in graders (WIT 0.5.0): each entry of a session gives the verdict and spends the
/// fuel of a fresh call, whatever its position; handing the instance the evidence
/// (`begin-run`) is charged to none of them.
#[test]
fn a_0_5_0_session_grades_as_fresh_calls_and_charges_no_entry_for_the_evidence() {
    let host = host(limits());
    let component = host.load_component_file(Path::new(BUILTIN)).unwrap();
    assert_eq!(component.world_version(), "0.5.0");
    let sandbox = Sandbox::new();
    let ws = sandbox.workspace.as_path();
    let evidence = final_text("all done, see notes.md");
    let entries = [
        ("final_text_contains", r#""done""#),
        ("max_requests", "2"),
        ("final_text_matches", r#""d.ne""#),
        ("file_contains", r#"{"path":"notes.md","text":"inside"}"#),
        ("final_text_contains", r#""nope""#),
        ("final_text_contains", r#""done""#),
    ];
    let graded = grade_run(&component, ws, &evidence, &entries);
    for (at, ((grader, config), (verdict, stats))) in entries.iter().zip(&graded).enumerate() {
        let (fresh, fresh_stats) = component.grade(grader, config, &evidence, Some(ws));
        assert_eq!(verdict, &fresh, "{grader} {config}");
        if at == 0 {
            // The instance's first `grade-in-run`, after `begin-run`, as in a fresh call.
            assert_eq!(stats.fuel_used, fresh_stats.fuel_used, "{grader} {config}");
        } else {
            assert_close(
                stats.fuel_used,
                fresh_stats.fuel_used,
                &format!("{grader} at {at}"),
            );
        }
    }
    let passed: Vec<bool> = graded
        .iter()
        .map(|(v, _)| v.as_ref().unwrap().pass)
        .collect();
    assert_eq!(passed, [true, true, true, true, false, true]);
    assert_eq!(
        graded[4].0.as_ref().unwrap().message,
        r#"final_text_contains "nope": final text "all done, see notes.md""#
    );
    // The same entry first and last in the session spends the same fuel.
    assert_close(
        graded[0].1.fuel_used,
        graded[5].1.fuel_used,
        "first and last",
    );

    // An entry that reads little of the evidence spends as much on a large one: handing the
    // evidence over is charged to no entry (as `grade` with the evidence it was ~30 % of a
    // small grader's fuel, and grew with the evidence).
    let mut large = Evidence::from_session(&[], RunFacts::default());
    large.final_text = "all done, see notes.md".into();
    large.messages = (0..500)
        .map(|i| evalhost::evidence::Message {
            role: "tool".into(),
            content: format!("{i:0>100}"),
        })
        .collect();
    let large = PreparedEvidence::new(&large);
    let on_large = grade_run(&component, ws, &large, &entries);
    assert_eq!(entries[1].0, "max_requests"); // reads the usage only
    assert_close(
        on_large[1].1.fuel_used,
        graded[1].1.fuel_used,
        "on a large evidence",
    );
    // A second session of the same run spends the same fuel, entry by entry.
    let again = grade_run(&component, ws, &evidence, &entries);
    assert_eq!(fuel(&graded), fuel(&again));
}

fn fuel(graded: &[Graded]) -> Vec<u64> {
    graded.iter().map(|(_, s)| s.fuel_used).collect()
}

/// Fuel equal but for the guest allocator's state: a call's allocations take a few more or
/// fewer instructions after other calls' frees (a few dozen, where `begin-run` costs
/// thousands).
fn assert_close(fuel: u64, expected: u64, what: &str) {
    assert!(
        fuel.abs_diff(expected) <= 64,
        "{what}: {fuel} fuel, expected {expected}"
    );
}

/// `tests/guests/begin_run` says what its instance was handed: `begin-run` once per
/// instance, and each entry graded against that evidence.
#[test]
fn a_0_5_0_instance_receives_the_evidence_once_and_grades_only_that_run() {
    let host = host(limits());
    let component = host
        .load_component_file(Path::new(guests::begin_run()))
        .unwrap();
    assert_eq!(component.world_version(), "0.5.0");
    let sandbox = Sandbox::new();
    let done = final_text("done");
    let graded = grade_run(
        &component,
        &sandbox.workspace,
        &done,
        &[
            ("instance", r#""""#),
            ("final_text_is", r#""done""#),
            ("instance", r#""""#),
        ],
    );
    let messages: Vec<String> = graded
        .into_iter()
        .map(|(v, _)| v.unwrap().message)
        .collect();
    assert_eq!(
        messages,
        [
            r#"begin-run 1 time(s), grade-in-run 1 time(s), final text "done""#,
            "",
            r#"begin-run 1 time(s), grade-in-run 3 time(s), final text "done""#,
        ]
    );
    // Another run's evidence in the same session gets a fresh instance: no instance grades
    // two runs.
    let mut session = component.session(Some(&sandbox.workspace));
    let other = final_text("other");
    let mut message = |evidence: &PreparedEvidence| {
        let (verdict, _) = session.grade_with_judge("instance", r#""""#, evidence, None);
        verdict.unwrap().message
    };
    assert_eq!(
        message(&done),
        r#"begin-run 1 time(s), grade-in-run 1 time(s), final text "done""#
    );
    assert_eq!(
        message(&other),
        r#"begin-run 1 time(s), grade-in-run 1 time(s), final text "other""#
    );
    // A fresh call (`evalhost grader test`) is `begin-run` and one `grade-in-run`.
    let (fresh, _) = component.grade("instance", r#""""#, &done, None);
    assert_eq!(
        fresh.unwrap().message,
        r#"begin-run 1 time(s), grade-in-run 1 time(s), final text "done""#
    );
}

/// A `begin-run` that panics or runs out of fuel is the named error of the entry that needed
/// the instance; the instance is dropped and the next entry gets a fresh one.
#[test]
fn a_failed_begin_run_is_the_entrys_error_and_the_next_entry_gets_a_fresh_instance() {
    let fuel = 10_000_000;
    let host = host(Limits { fuel, ..limits() });
    let component = host
        .load_component_file(Path::new(guests::begin_run()))
        .unwrap();
    let root = tempfile::tempdir().unwrap();
    let ws = root.path();
    let evidence = final_text("done");
    let probe = ws.join("begin-run");
    for (what, expect) in [
        (
            "panic",
            "while receiving the evidence: grader panicked: panicked at ",
        ),
        (
            "spin",
            "while receiving the evidence: fuel exhausted after 10000000 instructions",
        ),
    ] {
        std::fs::write(&probe, what).unwrap();
        let (fresh, fresh_stats) =
            component.grade("final_text_is", r#""done""#, &evidence, Some(ws));
        let error = fresh.expect_err(what);
        assert!(
            matches!(error, GraderError::ReceivingEvidence(_)),
            "{what}: {error:?}"
        );
        assert!(error.to_string().starts_with(expect), "{what}: {error}");
        if what == "panic" {
            assert!(error.to_string().ends_with("no evidence wanted"), "{error}");
        } else {
            // What the failed `begin-run` spent is shown with its error.
            assert_eq!(fresh_stats.fuel_used, fuel);
        }

        let mut session = component.session(Some(ws));
        let (first, _) = session.grade_with_judge("instance", r#""""#, &evidence, None);
        assert_eq!(first.unwrap_err(), error, "{what}: in a session as alone");
        std::fs::remove_file(&probe).unwrap();
        let (next, _) = session.grade_with_judge("instance", r#""""#, &evidence, None);
        assert_eq!(
            next.unwrap().message,
            r#"begin-run 1 time(s), grade-in-run 1 time(s), final text "done""#,
            "{what}: the next entry's instance is fresh"
        );
    }
}

//! The grader host against real hostile guest components (built from `tests/guests/` by the
//! host build): every probe ends with its own named error, leaves the workspace unchanged,
//! and the next call works. The probes are data in `support::hostile`; `hardening/probes.rs`
//! runs them all in one process for the timing table and host memory.

use crate::support::evalhost::Evalhost;
use crate::support::guests;
use crate::support::hostile;

use std::time::Duration;

use crate::support::hostile::{Expect, Sandbox, evidence, host, hostile, probe, run};
use evalhost::grader::{GraderError, Limits};

/// One test per probe: `name` stopped as `expect` says, with the error text checked.
macro_rules! probe_test {
    ($test:ident, $probe:literal, $expect:expr, |$error:ident| $check:expr) => {
        #[test]
        fn $test() {
            let $error = run(&probe($probe, $expect)).error;
            assert!($check, "{}: {}", $probe, $error);
        }
    };
}

probe_test!(
    reading_etc_passwd_is_refused,
    "read-etc-passwd",
    Expect::Refused,
    |e| { e.starts_with("grader failed: /etc/passwd:") }
);
probe_test!(
    reading_through_dotdot_is_refused,
    "read-parent",
    Expect::Refused,
    |e| { e.contains("/workspace/../secret.txt:") && e.contains("../secret.txt:") }
);
probe_test!(
    an_absolute_symlink_out_is_refused,
    "read-symlink",
    Expect::Refused,
    |e| { e.contains("/workspace/link:") }
);
probe_test!(
    a_symlink_chain_out_is_refused,
    "read-symlink-chain",
    Expect::Refused,
    |e| { e.contains("/workspace/chain:") }
);
probe_test!(
    trailing_slash_and_dot_forms_are_refused,
    "read-trailing-slash",
    Expect::Refused,
    |e| e.contains("/workspace/../secret.txt/:") && e.contains("/workspace/..:")
);
probe_test!(
    creating_a_file_is_refused,
    "write-file",
    Expect::Refused,
    |e| { e.contains("/workspace/pwned.txt:") }
);
probe_test!(truncating_is_refused, "truncate", Expect::Refused, |e| {
    e.contains("O_TRUNC") && e.contains("set_len(0)")
});
probe_test!(
    create_new_and_mkdir_are_refused,
    "create",
    Expect::Refused,
    |e| { e.contains("create created.txt:") && e.contains("create created-dir:") }
);
probe_test!(renaming_is_refused, "rename", Expect::Refused, |e| e
    .contains("rename notes.md:"));
probe_test!(hard_linking_is_refused, "hard-link", Expect::Refused, |e| e
    .contains("hard-link notes.md:"));
probe_test!(
    setting_times_is_refused,
    "set-times",
    Expect::Refused,
    |e| e.contains("set-times notes.md:")
);
probe_test!(removing_is_refused, "remove", Expect::Refused, |e| e
    .contains("remove notes.md:"));
probe_test!(connecting_out_is_refused, "network", Expect::Refused, |e| {
    e.contains("127.0.0.1:80:") && e.contains("1.1.1.1:443:")
});
probe_test!(
    listening_and_binding_are_refused,
    "socket-listen",
    Expect::Refused,
    |e| { e.contains("tcp listen:") && e.contains("udp bind:") }
);
probe_test!(
    no_environment_and_no_arguments,
    "env",
    Expect::Refused,
    |e| e == "grader failed: no environment variables and no arguments"
);
probe_test!(
    an_infinite_loop_exhausts_fuel,
    "infinite-loop",
    Expect::Fuel,
    |e| e == "fuel exhausted after 20000000 instructions"
);
probe_test!(
    an_infinite_loop_hits_the_wall_clock_deadline,
    "infinite-loop",
    Expect::Deadline,
    |e| e == "deadline exceeded: still running after 500ms"
);
probe_test!(
    a_memory_copy_busy_loop_hits_the_deadline,
    "memory-copy-loop",
    Expect::Deadline,
    |e| e == "deadline exceeded: still running after 500ms"
);
probe_test!(
    a_one_gib_allocation_hits_the_memory_cap,
    "alloc-1gib",
    Expect::Memory,
    |e| {
        e.starts_with("memory limit: tried to grow linear memory to ")
            && e.ends_with(&format!("(cap {})", Limits::default().memory_bytes))
    }
);
probe_test!(a_table_past_the_cap_is_refused, "ok", Expect::Table, |e| {
    e.starts_with("table limit: tried to grow a table to ") && e.ends_with("(cap 1)")
});
probe_test!(
    deep_recursion_is_a_stack_overflow,
    "deep-recursion",
    Expect::Stack,
    |e| e == "stack overflow"
);
probe_test!(
    a_hundred_mib_of_stdout_hits_the_output_limit,
    "stdout-flood",
    Expect::Output,
    |e| e
        == format!(
            "output limit: wrote more than {} bytes to stdout",
            Limits::default().output_bytes
        )
);
probe_test!(
    a_hundred_mib_verdict_message_hits_the_message_limit,
    "huge-verdict",
    Expect::Message,
    |e| e == "message limit: the grader returned a 104857600-byte message (cap 65536)"
);
probe_test!(
    a_panic_is_named_with_its_message,
    "panic",
    Expect::Panicked,
    |e| {
        e.starts_with("grader panicked: panicked at ") && e.ends_with("the panic probe panicked")
    }
);
probe_test!(
    unreachable_is_a_named_trap,
    "unreachable",
    Expect::Unreachable,
    |e| e == "trapped: wasm trap: wasm `unreachable` instruction executed"
);
probe_test!(
    a_component_of_another_world_is_refused_at_load,
    "wrong-world",
    Expect::WrongWorld,
    |e| e.contains("does not export the evalhost grader world")
);
probe_test!(
    an_unknown_import_is_refused_at_load,
    "unknown-import",
    Expect::UnknownImport,
    |e| e.contains("imports something the grader sandbox does not provide")
);
probe_test!(
    a_hundred_mib_schema_is_refused_at_load,
    "huge-schema",
    Expect::Schema,
    |e| e.contains(
        "schema limit: grader `huge-schema` lists a 104857618-byte config schema (cap 1048576)"
    )
);

#[test]
fn clock_and_random_are_virtual_and_deterministic() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let sandbox = Sandbox::new();
    let grade = || {
        c.grade("clock", "null", &evidence(), Some(&sandbox.workspace))
            .0
            .expect("clock probe")
    };
    let first = grade();
    assert_eq!(first, grade(), "clock/random must not vary between calls");
    assert!(
        first.message.contains("1767225600"),
        "virtual wall clock: {first:?}"
    );
    // A second host (another process, another day) sees the same.
    let other = hostile(&hostile::host(Limits::default()));
    let (again, _) = other.grade("clock", "null", &evidence(), Some(&sandbox.workspace));
    assert_eq!(again.expect("clock probe"), first);
}

#[test]
fn fuel_used_is_the_same_on_every_call() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let sandbox = Sandbox::new();
    let fuel: Vec<u64> = (0..3)
        .map(|_| {
            c.grade("ok", "null", &evidence(), Some(&sandbox.workspace))
                .1
                .fuel_used
        })
        .collect();
    assert!(fuel[0] > 0);
    assert!(fuel.iter().all(|f| *f == fuel[0]), "{fuel:?}");
}

#[test]
fn the_fuel_budget_stops_a_loop_whatever_the_deadline() {
    // Fuel is deterministic: the same budget, the same error, on every call.
    let host = host(Limits {
        fuel: 5_000_000,
        deadline: Duration::from_secs(30),
        ..Limits::default()
    });
    let c = hostile(&host);
    let sandbox = Sandbox::new();
    for _ in 0..2 {
        let (result, stats) = c.grade(
            "infinite-loop",
            "null",
            &evidence(),
            Some(&sandbox.workspace),
        );
        assert_eq!(
            result,
            Err(GraderError::FuelExhausted { budget: 5_000_000 })
        );
        assert_eq!(stats.fuel_used, 5_000_000);
    }
}

#[test]
fn a_case_with_hostile_graders_does_not_affect_the_next_case() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(guests::hostile(), dir.path().join("hostile.wasm")).unwrap();
    let case = |name: &str, graders: &str| {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(
            &path,
            format!(
                "name: {name}\nprompt: Say hello.\nmodel:\n  - text: Hello there!\ngraders:\n{graders}"
            ),
        )
        .unwrap();
        path
    };
    let hostile_case = case(
        "a-hostile",
        "  - hostile.wasm#panic: null\n  - hostile.wasm#stdout-flood: null\n  - hostile.wasm#deep-recursion: null\n  - hostile.wasm#alloc-1gib: null\n  - hostile.wasm#huge-verdict: null\n",
    );
    let next_case = case(
        "b-next",
        "  - final_text_contains: Hello\n  - hostile.wasm#ok: null\n",
    );
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args(["run", "--jobs", "1", "--out"])
        .arg(&out)
        .args([&hostile_case, &next_case])
        .env(
            "XDG_CACHE_HOME",
            std::env::temp_dir().join("evalhost-test-cache"),
        )
        .run();
    output.assert_code(1);
    let stderr = output.stderr();
    assert!(!stderr.contains("panicked at"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let verdicts = |case: usize| report["cases"][case]["runs"][0]["verdicts"].clone();
    let outcomes: Vec<(String, String)> = verdicts(0)
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["outcome"].as_str().unwrap_or_default().to_owned(),
                v["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let messages: Vec<&str> = outcomes.iter().map(|(_, m)| m.as_str()).collect();
    assert!(outcomes.iter().all(|(o, _)| o == "error"), "{outcomes:?}");
    for expected in [
        "grader panicked: ",
        "output limit: ",
        "stack overflow",
        "memory limit: ",
        "message limit: ",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "{expected}: {messages:?}"
        );
    }
    assert_eq!(report["cases"][1]["runs"][0]["pass"], true, "{report}");
    assert!(
        report.to_string().len() < 1 << 20,
        "the report carries no flood"
    );
}

/// A grader that opens files without closing them meets the handle cap (each open file
/// holds a host descriptor), and the next call works.
#[test]
fn open_files_stop_at_the_handle_cap() {
    let host = host(Limits::default());
    let c = hostile(&host);
    let sandbox = Sandbox::new();
    let (result, _) = c.grade("open-files", "null", &evidence(), Some(&sandbox.workspace));
    match result {
        Err(GraderError::HandleLimit { cap }) => assert_eq!(cap, Limits::default().handles),
        other => panic!("expected the handle limit, got {other:?}"),
    }
    let (result, _) = c.grade("ok", "null", &evidence(), Some(&sandbox.workspace));
    assert!(result.is_ok(), "the next call works: {result:?}");
}

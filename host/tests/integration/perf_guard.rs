//! The performance regression guard CI can run on a noisy machine: it counts deterministic
//! things (fuel per built-in grader call on fixed evidence, component compilations), never
//! time. The timings themselves are `bench/run.sh`'s job (docs/performance.md).

use crate::support::evalhost::Evalhost;

use std::path::Path;
use std::time::SystemTime;

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{
    BUILTIN_GRADERS_WASM, BUILTIN_ORIGIN, GraderHost, Limits, PreparedEvidence,
};
use evalhost::internals::session::CallStatus;
use evalhost::internals::session::{Event, OutputItem, Record};

/// Fuel per call when this table was last committed. The budget is 25 % more: a grader or
/// host change that blows it is a slowdown to look at (and, if it is worth it, a value to
/// raise in the same commit). Fuel is deterministic, so the guard never flakes. Since the
/// built-ins target WIT 0.5.0 a call's fuel no longer includes taking in the evidence (and the
/// guest allocator's first growth): `begin-run` does that once per instance, charged to no
/// call (each figure fell by 23–31 k: `max_requests` 32,828 → 1,478). Built at `opt-level = 3`
/// instead of "s", every call fell again by 11–25 % (`max_requests` 1,478 → 1,110), and
/// `file_contains` reads a small file with a buffer of its size instead of a zeroed 64 KiB
/// (86,268 → 18,017).
const FUEL_MEASURED: &[(&str, &str, u64)] = &[
    ("final_text_contains", r#""created""#, 2_898),
    ("final_text_not_contains", r#""password""#, 2_599),
    ("final_text_matches", r#""(?i)created|wrote""#, 59_108),
    ("tool_called", r#""write_file""#, 1_798),
    ("tool_not_called", r#""bash""#, 1_605),
    ("tool_order", r#"["write_file", "read_file"]"#, 4_236),
    (
        "result_status",
        r#"{"call": 2, "status": "completed"}"#,
        2_805,
    ),
    ("file_exists", r#""greeting.txt""#, 13_940),
    (
        "file_contains",
        r#"{"path": "greeting.txt", "text": "hello"}"#,
        18_017,
    ),
    ("max_requests", "3", 1_110),
    ("max_tool_calls", "2", 1_110),
];

#[test]
fn built_in_grader_calls_stay_within_their_fuel_budgets() {
    let host = GraderHost::with_builtins().expect("built-in graders load");
    let workspace = tempfile::tempdir().expect("temp dir");
    std::fs::write(workspace.path().join("greeting.txt"), "hello\n").expect("seed");
    let evidence = PreparedEvidence::new(&fixed_evidence());
    let mut over = Vec::new();
    for &(grader, config, measured) in FUEL_MEASURED {
        let budget = measured + measured / 4;
        let component = host.find(grader).expect("built-in grader exists");
        let (verdict, stats) = component.grade(grader, config, &evidence, Some(workspace.path()));
        let verdict = verdict.unwrap_or_else(|e| panic!("{grader} {config}: {e}"));
        assert!(verdict.pass, "{grader} {config}: {}", verdict.message);
        // Deterministic: the same call twice uses the same fuel.
        let (_, again) = component.grade(grader, config, &evidence, Some(workspace.path()));
        assert_eq!(
            stats.fuel_used, again.fuel_used,
            "{grader}: fuel is not deterministic"
        );
        if stats.fuel_used > budget {
            over.push(format!(
                "{grader}: {} fuel, budget {budget}",
                stats.fuel_used
            ));
        }
    }
    assert!(
        over.is_empty(),
        "over the fuel budget:\n{}",
        over.join("\n")
    );
}

#[test]
fn a_warm_cache_compiles_no_component() {
    let cache = tempfile::tempdir().expect("temp dir");
    let load = || {
        let mut host =
            GraderHost::new(Limits::default(), Some(cache.path().to_owned())).expect("engine");
        host.add_component(BUILTIN_GRADERS_WASM, BUILTIN_ORIGIN)
            .expect("built-in graders load");
        host
    };
    assert_eq!(
        load().compilations(),
        1,
        "a cold cache compiles the built-in component once"
    );
    assert_eq!(load().compilations(), 0, "a warm cache compiles nothing");
}

#[test]
fn a_second_evalhost_run_compiles_nothing() {
    let cache = tempfile::tempdir().expect("temp dir");
    let run = || {
        Evalhost::new()
            .args(["run", "cases/mino/write-then-read.yaml"])
            .env("XDG_CACHE_HOME", cache.path())
            .run()
            .assert_success();
        cached_components(cache.path())
    };
    let first = run();
    assert_eq!(
        first.len(),
        1,
        "the first run caches the built-in component: {first:?}"
    );
    // The cache file is written only when a component is compiled.
    assert_eq!(run(), first, "the second run recompiled a component");
}

/// Every precompiled component in the cache, with its modification time.
fn cached_components(cache: &Path) -> Vec<(String, SystemTime)> {
    let dir = cache.join("evalhost").join("components");
    let mut files: Vec<(String, SystemTime)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let entry = entry.expect("dir entry");
            let modified = entry.metadata().and_then(|m| m.modified()).expect("mtime");
            (entry.file_name().to_string_lossy().into_owned(), modified)
        })
        .filter(|(name, _)| name.ends_with(".cwasm"))
        .collect();
    files.sort();
    files
}

/// A write, a read and a final answer, with a 64 KiB tool output in the transcript.
fn fixed_evidence() -> Evidence {
    let big = "INFO request served\n".repeat(64 * 1024 / 20);
    let at = |event| Record { at_ms: 0, event };
    let call = |n: u32, name: &str, arguments: &str| Event::ModelResponse {
        n,
        output: vec![OutputItem::FunctionCall {
            call_id: format!("call_{n}"),
            name: name.into(),
            arguments: arguments.into(),
        }],
        input_tokens: 100,
        output_tokens: 10,
        cached_input_tokens: 0,
    };
    let records = vec![
        at(Event::SessionStart {
            case: "perf-guard".into(),
            run: 1,
            mode: "replay".into(),
            model: "scripted".into(),
        }),
        at(Event::UserMessage {
            text: "Write hello to greeting.txt, then read the log".into(),
        }),
        at(Event::ModelRequest {
            n: 1,
            body: serde_json::json!({}).into(),
        }),
        at(call(
            1,
            "write_file",
            r#"{"path":"greeting.txt","content":"hello\n"}"#,
        )),
        at(Event::ToolStart {
            call_id: "call_1".into(),
            name: "write_file".into(),
        }),
        at(Event::ToolResult {
            call_id: "call_1".into(),
            name: "write_file".into(),
            status: CallStatus::Completed,
            output: "wrote 6 bytes".into(),
            duration_ms: 1,
        }),
        at(Event::ModelRequest {
            n: 2,
            body: serde_json::json!({}).into(),
        }),
        at(call(2, "read_file", r#"{"path":"app.log"}"#)),
        at(Event::ToolStart {
            call_id: "call_2".into(),
            name: "read_file".into(),
        }),
        at(Event::ToolResult {
            call_id: "call_2".into(),
            name: "read_file".into(),
            status: CallStatus::Completed,
            output: big,
            duration_ms: 1,
        }),
        at(Event::ModelRequest {
            n: 3,
            body: serde_json::json!({}).into(),
        }),
        at(Event::ModelResponse {
            n: 3,
            output: vec![OutputItem::Message {
                text: "I created greeting.txt and read the log.".into(),
            }],
            input_tokens: 120,
            output_tokens: 8,
            cached_input_tokens: 0,
        }),
        at(Event::TurnEnd {
            final_text: "I created greeting.txt and read the log.".into(),
        }),
    ];
    Evidence::from_session(&records, RunFacts::default())
}

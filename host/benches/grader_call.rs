//! Per-grader-call cost of the built-in component, two ways: a fresh instance for every call
//! (`GraderComponent::grade`, as `evalhost grader test` calls), and a case's five graders in
//! one session (`GraderSession`, as a run grades). Run:
//! `cargo bench -p evalhost --bench grader_call` (p50/p99 tables), or
//! `cargo bench -p evalhost --bench grader_call -- fresh|session ROUNDS` (ROUNDS rounds of
//! the five graders and nothing else, for `valgrind --tool=callgrind`: instructions per call
//! are the difference between two ROUNDS divided by five times their difference).

use std::path::Path;
use std::time::{Duration, Instant};

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{GraderHost, PreparedEvidence};
use evalhost::internals::session::{Event, OutputItem, Record};

const CALLS: usize = 5_000;

/// A case's five graders (every one passes on [`small_transcript`]).
const GRADERS: [(&str, &str); 5] = [
    ("final_text_contains", r#""created""#),
    ("tool_called", r#""write_file""#),
    ("max_requests", "2"),
    ("file_contains", r#"{"path":"greeting.txt","text":"hello"}"#),
    ("final_text_matches", r#""(?i)created|wrote""#),
];

fn main() {
    let host = GraderHost::with_builtins().expect("built-in graders load");
    let workspace = tempfile::tempdir().expect("temp dir");
    std::fs::write(workspace.path().join("greeting.txt"), "hello\n").expect("seed");
    let evidence = PreparedEvidence::new(&small_transcript());
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [mode @ ("fresh" | "session"), rounds] => {
            let rounds = rounds.parse().expect("ROUNDS is a number");
            for _ in 0..rounds {
                round(&host, &evidence, workspace.path(), mode == "session");
            }
        }
        _ => tables(&host, &evidence, workspace.path()),
    }
}

/// The five graders once: each in a fresh instance, or all in one session.
fn round(host: &GraderHost, evidence: &PreparedEvidence, ws: &Path, session: bool) {
    let component = host.find(GRADERS[0].0).expect("grader exists");
    let mut shared = component.session(Some(ws));
    for (name, config) in GRADERS {
        let (verdict, _) = if session {
            shared.grade_with_judge(name, config, evidence, None)
        } else {
            component.grade(name, config, evidence, Some(ws))
        };
        assert!(verdict.expect("verdict").pass, "{name} should pass");
    }
}

fn tables(host: &GraderHost, evidence: &PreparedEvidence, ws: &Path) {
    println!("fresh instance per call");
    println!(
        "{:<22} {:>9} {:>9} {:>9}",
        "grader", "p50 µs", "p99 µs", "fuel"
    );
    for (name, config) in GRADERS {
        let component = host.find(name).expect("grader exists");
        let mut times = Vec::with_capacity(CALLS);
        let mut fuel = 0;
        for _ in 0..CALLS {
            let started = Instant::now();
            let (verdict, stats) = component.grade(name, config, evidence, Some(ws));
            times.push(started.elapsed());
            fuel = stats.fuel_used;
            assert!(verdict.expect("verdict").pass, "{name} should pass");
        }
        times.sort();
        println!(
            "{name:<22} {:>9.1} {:>9.1} {fuel:>9}",
            micros(times[CALLS / 2]),
            micros(times[CALLS * 99 / 100])
        );
    }
    for (label, session) in [("fresh", false), ("session", true)] {
        let rounds = CALLS / GRADERS.len();
        let mut times: Vec<Duration> = (0..rounds)
            .map(|_| {
                let started = Instant::now();
                round(host, evidence, ws, session);
                started.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "five graders per case, {label:<7}: p50 {:.1} µs per case, {:.1} µs per call",
            micros(times[rounds / 2]),
            micros(times[rounds / 2]) / GRADERS.len() as f64
        );
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn small_transcript() -> Evidence {
    let at = |event| Record { at_ms: 0, event };
    let records = vec![
        at(Event::SessionStart {
            case: "bench".into(),
            run: 1,
            mode: "replay".into(),
            model: "scripted".into(),
        }),
        at(Event::UserMessage {
            text: "Write hello to greeting.txt".into(),
        }),
        at(Event::ModelRequest {
            n: 1,
            body: serde_json::json!({}).into(),
        }),
        at(Event::ModelResponse {
            n: 1,
            output: vec![OutputItem::FunctionCall {
                call_id: "call_1".into(),
                name: "write_file".into(),
                arguments: r#"{"path":"greeting.txt","content":"hello\n"}"#.into(),
            }],
            input_tokens: 100,
            output_tokens: 10,
            cached_input_tokens: 0,
        }),
        at(Event::ModelRequest {
            n: 2,
            body: serde_json::json!({}).into(),
        }),
        at(Event::ModelResponse {
            n: 2,
            output: vec![OutputItem::Message {
                text: "I created greeting.txt.".into(),
            }],
            input_tokens: 120,
            output_tokens: 8,
            cached_input_tokens: 0,
        }),
        at(Event::TurnEnd {
            final_text: "I created greeting.txt.".into(),
        }),
    ];
    Evidence::from_session(&records, RunFacts::default())
}

//! Per-grader-call cost: fresh instance from the pre-instantiated, precompiled built-in
//! component, one call, drop. Run: `cargo bench -p evalhost --bench grader_call`.

use std::time::{Duration, Instant};

use evalhost::evidence::{Evidence, RunFacts};
use evalhost::grader::{GraderHost, PreparedEvidence};
use evalhost::session::{Event, OutputItem, Record};

const CALLS: usize = 5_000;

fn main() {
    let host = GraderHost::with_builtins().expect("built-in graders load");
    let workspace = tempfile::tempdir().expect("temp dir");
    std::fs::write(workspace.path().join("greeting.txt"), "hello\n").expect("seed");
    let evidence = PreparedEvidence::new(&small_transcript());
    let cases = [
        ("final_text_contains", r#""created""#),
        ("tool_called", r#""write_file""#),
        ("max_requests", "2"),
        ("file_contains", r#"{"path":"greeting.txt","text":"hello"}"#),
        ("final_text_matches", r#""(?i)created|wrote""#),
    ];
    println!(
        "{:<22} {:>9} {:>9} {:>9}",
        "grader", "p50 µs", "p99 µs", "fuel"
    );
    for (name, config) in cases {
        let component = host.find(name).expect("grader exists");
        let mut times = Vec::with_capacity(CALLS);
        let mut fuel = 0;
        for _ in 0..CALLS {
            let started = Instant::now();
            let (verdict, stats) = component.grade(name, config, &evidence, Some(workspace.path()));
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
        }),
        at(Event::TurnEnd {
            final_text: "I created greeting.txt.".into(),
        }),
    ];
    Evidence::from_session(&records, RunFacts::default())
}

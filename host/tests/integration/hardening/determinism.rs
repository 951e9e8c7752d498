//! Determinism: the same suite, run 20 times by the real binary, half with `--jobs 1` and
//! half with `--jobs 4`, yields the same JSON report every time apart from wall-clock
//! durations; the fuel every grader used is part of what must be equal.

use crate::support::evalhost::Evalhost;
use serde_json::Value;

/// The suites run together: Mino's YAML cases (the agent and its bash tool; passing and
/// failing), Nexus case directories, the beyond-the-seeds graders, and AgentCompany fixtures
/// (replayed tools; the one sharing a name with a Nexus case left out).
const SUITES: [&str; 6] = [
    "cases/mino",
    "cases/mino-failing",
    "cases/nexus",
    "cases/beyond",
    "cases/agentcompany/ceo-bootstrap-empty.jsonl",
    "cases/agentcompany/ceo-plan-follow-up.jsonl",
];

const RUNS: usize = 20;

/// Keys whose values are wall-clock measurements, the only thing allowed to differ.
/// Timings, and each run's own history id and times.
const TIMING_KEYS: [&str; 7] = [
    "duration_ms",
    "duration_us",
    "at_ms",
    "started_at",
    "run_id",
    "started_unix_ms",
    "finished_unix_ms",
];

/// `evalhost run --jobs JOBS --out DIR SUITES...`: the report.json it wrote.
fn report(jobs: u32) -> Value {
    let out = tempfile::tempdir().unwrap();
    let output = Evalhost::new()
        .args(["run", "--jobs", &jobs.to_string(), "--out"])
        .arg(out.path())
        .args(SUITES)
        .run();
    let stderr = output.stderr();
    assert!(matches!(output.code(), 0 | 1), "{output}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let text = std::fs::read_to_string(out.path().join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// `value` without its timing fields.
fn without_timings(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !TIMING_KEYS.contains(&key.as_str()));
            map.values_mut().for_each(without_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(without_timings),
        _ => {}
    }
}

/// Every `fuel_used` in the report, in order.
fn fuel(value: &Value, into: &mut Vec<u64>) {
    match value {
        Value::Object(map) => {
            if let Some(used) = map.get("fuel_used").and_then(Value::as_u64) {
                into.push(used);
            }
            map.values().for_each(|v| fuel(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| fuel(v, into)),
        _ => {}
    }
}

#[test]
fn twenty_runs_at_one_and_four_jobs_give_the_same_report() {
    let mut first = report(1);
    let mut first_fuel = Vec::new();
    fuel(&first, &mut first_fuel);
    assert!(
        first_fuel.len() >= 20 && first_fuel.iter().all(|f| *f > 0),
        "every verdict records the fuel its grader used: {first_fuel:?}"
    );
    let cases = first["cases"].as_array().map_or(0, Vec::len);
    assert!(cases >= 10, "the suites hold {cases} cases");
    without_timings(&mut first);

    for i in 1..RUNS {
        let jobs = if i % 2 == 0 { 1 } else { 4 };
        let mut again = report(jobs);
        let mut again_fuel = Vec::new();
        fuel(&again, &mut again_fuel);
        assert_eq!(again_fuel, first_fuel, "run {i} (--jobs {jobs}): fuel used");
        without_timings(&mut again);
        if again != first {
            let a = serde_json::to_string_pretty(&first).unwrap();
            let b = serde_json::to_string_pretty(&again).unwrap();
            let first_difference = a
                .lines()
                .zip(b.lines())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            panic!(
                "run {i} (--jobs {jobs}) differs from run 0 (--jobs 1) at line {first_difference}:\n{}\n---\n{}",
                a.lines()
                    .skip(first_difference.saturating_sub(5))
                    .take(10)
                    .collect::<Vec<_>>()
                    .join("\n"),
                b.lines()
                    .skip(first_difference.saturating_sub(5))
                    .take(10)
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
    }
}

//! A run read from a trace promoted to a replay case (`evalhost promote --from-trace`;
//! docs/traces.md): the trace's model turns replay offline through evalhost's own agent, its
//! tool calls answered from the trace, and the case passes; changing what the trace recorded
//! makes the replay fail (the expectations check it).

use std::path::Path;

use crate::support::evalhost::Evalhost;

const INSPECT: &str = "cases/traces/inspect/arithmetic.eval";
const ATIF: &str = "cases/traces/atif/trajectory.json";
const OTLP: &str = "cases/traces/otel/trace.pb";

fn promote(trace: &str, run: Option<&str>, dir: &Path, id: &str) -> std::path::PathBuf {
    let mut command = Evalhost::new()
        .args([
            "promote",
            "--from-trace",
            trace,
            "--case",
            id,
            "--cases-dir",
        ])
        .arg(dir);
    if let Some(run) = run {
        command = command.args(["--run", run]);
    }
    let output = command.run();
    output.assert_code(0);
    output.assert_stdout_contains("Promoted ");
    dir.join(format!("{id}.yaml"))
}

/// An Inspect sample, an ATIF trajectory and the OTLP trace of a real instrumented agent each
/// become a replay case that passes offline: the script is the trace's model turns, the tool
/// results the trace's.
#[test]
fn a_promoted_trace_run_replays_offline_and_passes() {
    let dir = tempfile::tempdir().unwrap();
    let inspect = promote(INSPECT, Some("1"), dir.path(), "add-two");
    let yaml = std::fs::read_to_string(&inspect).unwrap();
    assert!(
        yaml.contains("prompt: \"What is 2+2? Use the add tool.\""),
        "{yaml}"
    );
    assert!(
        yaml.contains("  - call: {tool: \"add\", arguments: {\"x\":2,\"y\":2}}"),
        "{yaml}"
    );
    assert!(
        yaml.contains("tool_results:\n  - {tool: \"add\", status: completed, output: \"4\"}"),
        "{yaml}"
    );
    assert!(
        yaml.contains("  - final_text_contains: \"The answer is 4.\""),
        "{yaml}"
    );
    let atif = promote(ATIF, None, dir.path(), "greeting");
    let otlp = promote(OTLP, None, dir.path(), "launch-code");
    let yaml = std::fs::read_to_string(&otlp).unwrap();
    assert!(
        yaml.contains("    expect_input_contains: \"launch code: tangerine-42\""),
        "{yaml}"
    );
    let output = Evalhost::new()
        .args(["run"])
        .arg(&inspect)
        .arg(&atif)
        .arg(&otlp)
        .run();
    output.assert_code(0);
    output.assert_stdout_contains("All cases passed.");
}

/// Control: the promoted case checks what the trace recorded. A tool result changed in the
/// case no longer matches the next request's expectation, and the replay fails.
#[test]
fn a_promoted_case_fails_when_the_recorded_result_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = promote(INSPECT, Some("sample 1 epoch 1"), dir.path(), "add-two");
    let yaml = std::fs::read_to_string(&path).unwrap();
    assert!(yaml.contains("expect_input_contains: \"4\""), "{yaml}");
    let changed = yaml.replace(
        "{tool: \"add\", status: completed, output: \"4\"}",
        "{tool: \"add\", status: completed, output: \"5\"}",
    );
    assert_ne!(changed, yaml);
    std::fs::write(&path, changed).unwrap();
    let output = Evalhost::new().args(["run"]).arg(&path).run();
    output.assert_code(1);
}

/// A trace of several runs needs `--run`; the error lists them by number and label.
#[test]
fn a_trace_of_several_runs_asks_which() {
    let dir = tempfile::tempdir().unwrap();
    let output = Evalhost::new()
        .args([
            "promote",
            "--from-trace",
            INSPECT,
            "--case",
            "x",
            "--cases-dir",
        ])
        .arg(dir.path())
        .run();
    output.assert_code(2);
    output.assert_stderr_contains(
        "holds 3 runs: choose one with --run N or --run LABEL (1 `sample 1 epoch 1`, 2 `sample notes epoch 1`, 3 `sample 3 epoch 1`)",
    );
    let output = Evalhost::new()
        .args([
            "promote",
            "--from-trace",
            INSPECT,
            "--run",
            "7",
            "--case",
            "x",
            "--cases-dir",
        ])
        .arg(dir.path())
        .run();
    output.assert_code(2);
    output.assert_stderr_contains("has no run `7`");
}

//! Runs made elsewhere graded by evalhost's graders (docs/traces.md): `evalhost grade --trace
//! FILE... CASE`, and a case whose source is a trace (`trace: FILE`) run with a suite. The
//! traces are the committed examples made by the real tools (`cases/traces/`).

use std::path::Path;

use serde_json::Value;

use crate::support::evalhost::Evalhost;

const INSPECT: &str = "cases/traces/inspect/arithmetic.eval";
const ATIF: &str = "cases/traces/atif/trajectory.json";

/// A case file `NAME.yaml` in `dir` with these graders (and no model: it only grades).
fn grading_case(dir: &Path, name: &str, graders: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &path,
        format!("name: {name}\nprompt: (graded from traces)\ngraders:\n{graders}"),
    )
    .unwrap();
    path
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// An Inspect log's three samples are three runs of the case: each graded by the case's
/// graders as its transcript says (the first calls `add` and answers 4; the others do not),
/// each naming its sample; a grader of the workspace is not evaluable, saying the trace has
/// none, and what the log holds that evalhost does not map is listed.
#[test]
fn each_run_of_an_inspect_log_is_graded_by_the_cases_graders() {
    let dir = tempfile::tempdir().unwrap();
    let case = grading_case(
        dir.path(),
        "arithmetic",
        "  - tool_called: add\n  - final_text_contains: \"4\"\n  - file_exists: answer.txt\n",
    );
    let out = dir.path().join("report.json");
    let output = Evalhost::new()
        .args(["grade", "--trace", INSPECT, "-o"])
        .arg(&out)
        .arg(&case)
        .run();
    output.assert_code(1);
    output.assert_stdout_contains("Graded 3 runs from 1 trace (no agent or model ran).");
    output.assert_stdout_contains(&format!("{INSPECT} (Inspect AI log): 3 runs"));
    output.assert_stdout_contains("not mapped: Inspect scores (the log's own scorers): 2 samples");
    output.assert_stdout_contains(&format!(
        "arithmetic run 2 ({INSPECT}: sample notes epoch 1): graders[0] tool_called add: calls: [read]"
    ));
    let report = report(&out);
    assert_eq!(report["mode"], "trace");
    assert_eq!(report["model"], "mockllm/model");
    let runs = report["cases"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(
        runs.iter()
            .map(|r| r["pass"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [true, false, false],
        "{runs:#?}"
    );
    assert_eq!(runs[0]["source"], format!("{INSPECT}: sample 1 epoch 1"));
    assert_eq!(runs[0]["usage"]["input_tokens"], 334);
    let file = &runs[0]["verdicts"][2];
    assert_eq!(file["outcome"], "not_evaluable", "{file}");
    assert!(
        file["message"]
            .as_str()
            .unwrap()
            .contains("the run has no workspace"),
        "{file}"
    );
}

/// Traces of different formats grade as runs of one case, in the order given.
#[test]
fn traces_of_two_formats_are_runs_of_one_case() {
    let dir = tempfile::tempdir().unwrap();
    let case = grading_case(dir.path(), "any", "  - max_requests: 3\n");
    let out = dir.path().join("report.json");
    let output = Evalhost::new()
        .args(["grade", "--trace", INSPECT, "--trace", ATIF, "-o"])
        .arg(&out)
        .arg(&case)
        .run();
    output.assert_code(0);
    output.assert_stdout_contains("Graded 4 runs from 2 traces");
    output.assert_stdout_contains(&format!("{ATIF} (ATIF trajectory): 1 run"));
    let report = report(&out);
    let runs = report["cases"][0]["runs"].as_array().unwrap();
    assert_eq!(
        runs[3]["source"],
        format!("{ATIF}: session 0199e0a4-2b7c-7d1e-9a3f-5c2d8e6f1a40")
    );
    assert_eq!(runs[3]["usage"]["requests"], 3);
}

/// The example suite of traces (Inspect, ATIF, OTLP) runs as any suite does: each trace's runs are its case's, the
/// run's session log is the trace's transcript (`--out`), and nothing runs.
#[test]
fn a_case_whose_source_is_a_trace_runs_with_a_suite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args([
            "run",
            "cases/traces/inspect/arithmetic.yaml",
            "cases/traces/atif/greeting.yaml",
            "cases/traces/otel/launch-code.yaml",
            "--out",
        ])
        .arg(&out)
        .run();
    output.assert_code(0);
    let report = report(&out.join("report.json"));
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases[0]["summary"]["runs"], 3);
    assert_eq!(cases[1]["summary"]["runs"], 1);
    assert_eq!(cases[2]["summary"]["runs"], 1);
    assert!(
        cases[2]["runs"][0]["source"]
            .as_str()
            .unwrap()
            .starts_with("cases/traces/otel/trace.pb: trace "),
        "{report}"
    );
    let log = std::fs::read_to_string(out.join("greeting/run-1.jsonl")).unwrap();
    let records: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records[0]["type"], "session_start");
    assert_eq!(records[0]["mode"], "trace");
    assert_eq!(records[0]["model"], "openai/gpt-5-mini");
    assert!(
        records.iter().any(|r| r["type"] == "tool_result"
            && r["output"].as_str().unwrap().contains("Hello from Harbor!")),
        "{log}"
    );
}

/// A file that is no trace, and a case naming a trace that is not there, are refused before
/// anything is graded, naming the file (and the case's field).
#[test]
fn what_is_not_a_trace_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let case = grading_case(dir.path(), "any", "  - max_requests: 3\n");
    let not_a_trace = dir.path().join("notes.json");
    std::fs::write(&not_a_trace, "{\"hello\": 1}\n").unwrap();
    let output = Evalhost::new()
        .args(["grade", "--trace"])
        .arg(&not_a_trace)
        .arg(&case)
        .run();
    output.assert_code(2);
    output.assert_stderr_contains(&format!(
        "`{}` is not a trace evalhost reads",
        not_a_trace.display()
    ));
    let traced = dir.path().join("gone.yaml");
    std::fs::write(
        &traced,
        "name: gone\ntrace: missing.eval\ngraders:\n  - max_requests: 1\n",
    )
    .unwrap();
    let output = Evalhost::new().args(["run"]).arg(&traced).run();
    output.assert_code(2);
    output.assert_stderr_contains(&format!(
        "{}:2:8: trace: failed to read the trace",
        traced.display()
    ));
}

/// evalhost's own runs exported as OTLP (`--otel-file`) grade again from the trace with the
/// case's graders and pass: the export carries what the graders read (the prompt, each call
/// with its arguments, status and output, the final text).
#[test]
fn evalhosts_own_export_grades_the_same_from_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("traces.jsonl");
    Evalhost::new()
        .args(["run", "cases/mino/bash-approved.yaml", "--otel-file"])
        .arg(&file)
        .run()
        .assert_code(0);
    let out = dir.path().join("report.json");
    let output = Evalhost::new()
        .args(["grade", "--trace"])
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .arg("cases/mino/bash-approved.yaml")
        .run();
    output.assert_code(0);
    output.assert_stdout_contains("(OTLP): 1 run");
    let report = report(&out);
    let run = &report["cases"][0]["runs"][0];
    assert_eq!(run["verdicts"].as_array().unwrap().len(), 4, "{run}");
    assert!(
        run["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["outcome"] == "pass"),
        "{run}"
    );
}

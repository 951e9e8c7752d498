//! Inspect AI logs in (docs/traces.md): the real `inspect_ai`, pinned, runs
//! `cases/traces/inspect/make_log.py` (three samples against its mock model: a tool call then
//! the answer, a tool that fails then an answer without it, a tool that raises and ends the
//! sample in error) and writes a `.eval` log and a `.json` log; each imports as three runs
//! whose evidence is what a grader sees: the prompt, the calls with their arguments, statuses
//! and outputs, the final text, the token usage the mock reported, the sample's error. The
//! committed `cases/traces/inspect/arithmetic.eval` imports the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

use evalhost::Evidence;
use evalhost::trace::{Imported, TraceFormat, import};

use crate::support::common::repo;
use crate::support::python::python_modules;

/// What `.ci/run` installs.
const INSTALL: &str = "pip install inspect_ai==0.3.285";

fn case_dir() -> PathBuf {
    repo().join("cases/traces/inspect")
}

/// A fresh log from the real tool, in `dir`: `.eval`, or `.json` when `json`.
fn make_log(dir: &Path, json: bool) -> PathBuf {
    let mut command = Command::new("python3");
    command.arg(case_dir().join("make_log.py")).arg(dir);
    if json {
        command.arg("--json");
    }
    let output = command.output().expect("run python3");
    assert!(
        output.status.success(),
        "make_log.py failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// One call as a grader sees it.
#[derive(Debug, PartialEq)]
struct Call {
    name: String,
    arguments: serde_json::Value,
    status: String,
    started: bool,
    output: String,
}

/// What a grader sees of one run, less its times (which differ from one log to the next).
#[derive(Debug, PartialEq)]
struct Seen {
    label: String,
    model: String,
    prompt: String,
    calls: Vec<Call>,
    final_text: String,
    requests: u32,
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
    run_error: Option<String>,
}

fn seen(imported: &Imported) -> Vec<Seen> {
    assert_eq!(imported.format, TraceFormat::Inspect);
    imported
        .runs
        .iter()
        .map(|run| {
            let evidence = Evidence::from_session(&run.records, Default::default());
            assert_eq!(evidence.case_name, run.label);
            assert_eq!(evidence.mode, "trace");
            assert!(run.usage_recorded, "{}", run.label);
            Seen {
                label: run.label.clone(),
                model: evidence.model,
                prompt: evidence.prompt,
                calls: evidence
                    .calls
                    .into_iter()
                    .map(|c| Call {
                        name: c.name,
                        arguments: serde_json::from_str(&c.arguments).unwrap(),
                        status: c.status,
                        started: c.started,
                        output: c.output,
                    })
                    .collect(),
                final_text: evidence.final_text,
                requests: evidence.usage.requests,
                input_tokens: evidence.usage.input_tokens,
                output_tokens: evidence.usage.output_tokens,
                cached_input_tokens: evidence.usage.cached_input_tokens,
                run_error: evidence.run_error,
            }
        })
        .collect()
}

/// What `make_log.py`'s three samples are, as a grader sees them.
fn expected() -> Vec<Seen> {
    let call = |name: &str, arguments, status: &str, output: &str| Call {
        name: name.into(),
        arguments,
        status: status.into(),
        started: true,
        output: output.into(),
    };
    vec![
        Seen {
            label: "sample 1 epoch 1".into(),
            model: "mockllm/model".into(),
            prompt: "What is 2+2? Use the add tool.".into(),
            calls: vec![call(
                "add",
                serde_json::json!({"x": 2, "y": 2}),
                "completed",
                "4",
            )],
            final_text: "The answer is 4.".into(),
            requests: 2,
            // The mock's usage: 120 (+ 64 read from the cache) and 150 in, 18 and 7 out.
            input_tokens: 120 + 64 + 150,
            output_tokens: 18 + 7,
            cached_input_tokens: 64,
            run_error: None,
        },
        Seen {
            label: "sample notes epoch 1".into(),
            model: "mockllm/model".into(),
            prompt: "What does notes.txt say?".into(),
            calls: vec![call(
                "read",
                serde_json::json!({"path": "notes.txt"}),
                "failed",
                "notes.txt: no such file",
            )],
            final_text: "I could not read notes.txt: it does not exist.".into(),
            requests: 2,
            input_tokens: 110 + 140,
            output_tokens: 15 + 12,
            cached_input_tokens: 0,
            run_error: None,
        },
        Seen {
            label: "sample 3 epoch 1".into(),
            model: "mockllm/model".into(),
            prompt: "Divide 1 by 0 with the divide tool.".into(),
            calls: vec![call(
                "divide",
                serde_json::json!({"x": 1, "y": 0}),
                "failed",
                "",
            )],
            // No answer: the text of its last response (the mock's, beside its call).
            final_text: "tool call for tool divide".into(),
            requests: 1,
            input_tokens: 100,
            output_tokens: 14,
            cached_input_tokens: 0,
            run_error: Some("ZeroDivisionError('division by zero')".into()),
        },
    ]
}

/// What a log's runs leave unmapped, whatever its container.
const NOTES: [&str; 4] = [
    "system messages: 3",
    "Inspect scores (the log's own scorers): 2 samples",
    "targets (the dataset's expected answers): 3 samples",
    // The sample that ended in error: Inspect's warning about it.
    "log messages (Inspect's logger events): 1",
];

fn check(imported: &Imported) {
    assert_eq!(seen(imported), expected());
    for note in NOTES {
        assert!(
            imported.unmapped.iter().any(|n| n == note),
            "{note} not in {:?}",
            imported.unmapped
        );
    }
}

#[test]
fn a_fresh_eval_log_imports_as_its_samples_runs() {
    let Some(()) = python_modules("inspect_ai", INSTALL) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = make_log(dir.path(), false);
    assert_eq!(path.extension().unwrap(), "eval");
    let imported = import(&path).unwrap();
    check(&imported);
    // Times from the sample's events: in order, the tool's within the run.
    let run = &imported.runs[0];
    assert!(run.duration_ms > 0);
    let times: Vec<u64> = run.records.iter().map(|r| r.at_ms).collect();
    assert!(times.is_sorted(), "{times:?}");
    assert!(*times.last().unwrap() <= run.duration_ms + 10, "{times:?}");
    let kinds: Vec<&str> = run.records.iter().map(|r| r.event.kind()).collect();
    assert_eq!(
        kinds,
        [
            "session_start",
            "user_message",
            "model_request",
            "model_response",
            "tool_start",
            "tool_result",
            "model_request",
            "model_response",
            "turn_end",
        ]
    );
}

#[test]
fn a_fresh_json_log_imports_as_the_eval_log_does() {
    let Some(()) = python_modules("inspect_ai", INSTALL) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = make_log(dir.path(), true);
    assert_eq!(path.extension().unwrap(), "json");
    check(&import(&path).unwrap());
}

#[test]
fn the_committed_eval_log_imports_as_a_fresh_one_does() {
    let path = case_dir().join("arithmetic.eval");
    let imported = import(&path).unwrap();
    check(&imported);
    // The provider's request as Inspect recorded it, its messages back in place.
    let evalhost::trace::ImportedRun { records, .. } = &imported.runs[0];
    let body = records
        .iter()
        .find_map(|r| match &r.event {
            evalhost::internals::session::Event::ModelRequest { n: 2, body } => {
                Some(body.to_value())
            }
            _ => None,
        })
        .unwrap();
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
}

/// The committed log with member `name`'s JSON changed by `edit`, re-written deflated (as
/// Inspect's earlier versions wrote it).
fn edited(name: &str, edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    use std::io::{Cursor, Read, Write};
    let bytes = std::fs::read(case_dir().join("arithmetic.eval")).unwrap();
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let member = archive.by_index_raw(i).unwrap();
        let member_name = member.name().unwrap().into_owned();
        let mut text = Vec::new();
        ruzstd::decoding::StreamingDecoder::new(member)
            .unwrap()
            .read_to_end(&mut text)
            .unwrap();
        if member_name == name {
            let mut value: serde_json::Value = serde_json::from_slice(&text).unwrap();
            edit(&mut value);
            text = serde_json::to_vec(&value).unwrap();
        }
        out.start_file(member_name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&text).unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[test]
fn a_sample_of_the_wrong_shape_is_an_error_naming_its_member_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.eval");
    // Deflated members read as Zstandard ones do.
    std::fs::write(&path, edited("header.json", |_| {})).unwrap();
    check(&import(&path).unwrap());

    let bytes = edited("samples/notes_epoch_1.json", |sample| {
        sample["messages"] = "What does notes.txt say?".into();
    });
    std::fs::write(&path, bytes).unwrap();
    let message = import(&path).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "{}: samples/notes_epoch_1.json: 1:",
            path.display()
        )) && message.ends_with(": messages: expected a list, found a string"),
        "{message}"
    );

    let bytes = edited("samples/1_epoch_1.json", |sample| {
        sample["messages"][2]["tool_calls"][0]["function"] = 7.into();
    });
    std::fs::write(&path, bytes).unwrap();
    let message = import(&path).unwrap_err().to_string();
    assert!(
        message.contains(": samples/1_epoch_1.json: ")
            && message.ends_with(
                ": messages[2].tool_calls[0].function: expected a string, found a number"
            ),
        "{message}"
    );
}

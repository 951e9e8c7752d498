//! Trajectories written here: what each record holds, what is noted, and errors that name the
//! file, line, column and field.

use std::path::Path;

use serde_json::json;

use super::runs;
use super::step::compact;
use crate::session::{CallStatus, Event, OutputItem, RequestBody};
use crate::trace::ImportedRun;

fn import(document: &serde_json::Value) -> (ImportedRun, Vec<String>) {
    let text = serde_json::to_string_pretty(document).unwrap();
    let (mut runs, notes) = runs(Path::new("t.json"), text.as_bytes()).unwrap();
    assert_eq!(runs.len(), 1);
    (runs.remove(0), notes)
}

fn error(text: &str) -> String {
    runs(Path::new("t.json"), text.as_bytes())
        .unwrap_err()
        .to_string()
}

fn trajectory(steps: serde_json::Value) -> serde_json::Value {
    json!({
        "schema_version": "ATIF-v1.8",
        "session_id": "s-1",
        "agent": {"name": "a", "version": "1", "model_name": "m-1"},
        "steps": steps,
    })
}

fn events(run: &ImportedRun) -> Vec<(u64, Event)> {
    run.records
        .iter()
        .map(|r| (r.at_ms, r.event.clone()))
        .collect()
}

fn tool_result(call_id: &str, name: &str, status: CallStatus, output: &str) -> Event {
    Event::ToolResult {
        call_id: call_id.into(),
        name: name.into(),
        status,
        output: output.into(),
        duration_ms: 0,
    }
}

#[test]
fn steps_become_the_session_they_record() {
    let (run, notes) = import(&trajectory(json!([
        {"step_id": 1, "timestamp": "2026-12-03T10:00:00+00:00", "source": "user",
         "message": "Print greeting.txt."},
        {"step_id": 2, "timestamp": "2026-12-03T10:00:01.250000+00:00", "source": "agent",
         "message": "Reading it.",
         "tool_calls": [{"tool_call_id": "c1", "function_name": "bash",
                         "arguments": {"command": "cat greeting.txt", "timeout": 5}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "Hello\n"}]},
         "metrics": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 40}},
        {"step_id": 3, "timestamp": "2026-12-03T10:00:03Z", "source": "agent",
         "message": "It says Hello.",
         "metrics": {"prompt_tokens": 130, "completion_tokens": 5}},
    ])));
    assert_eq!(run.label, "session s-1");
    assert_eq!(run.model, "m-1");
    assert_eq!(run.duration_ms, 3_000);
    assert!(run.usage_recorded);
    let null = || RequestBody::from(serde_json::Value::Null);
    assert_eq!(
        events(&run),
        [
            (
                0,
                Event::SessionStart {
                    case: "session s-1".into(),
                    run: 1,
                    mode: "trace".into(),
                    model: "m-1".into()
                }
            ),
            (
                0,
                Event::UserMessage {
                    text: "Print greeting.txt.".into()
                }
            ),
            (1_250, Event::ModelRequest { n: 1, body: null() }),
            (
                1_250,
                Event::ModelResponse {
                    n: 1,
                    output: vec![
                        OutputItem::Message {
                            text: "Reading it.".into()
                        },
                        OutputItem::FunctionCall {
                            call_id: "c1".into(),
                            name: "bash".into(),
                            // On one line, in the file's order.
                            arguments: r#"{"command":"cat greeting.txt","timeout":5}"#.into(),
                        }
                    ],
                    input_tokens: 100,
                    output_tokens: 20,
                    cached_input_tokens: 40
                }
            ),
            (
                1_250,
                Event::ToolStart {
                    call_id: "c1".into(),
                    name: "bash".into()
                }
            ),
            (
                1_250,
                tool_result("c1", "bash", CallStatus::Completed, "Hello\n")
            ),
            (3_000, Event::ModelRequest { n: 2, body: null() }),
            (
                3_000,
                Event::ModelResponse {
                    n: 2,
                    output: vec![OutputItem::Message {
                        text: "It says Hello.".into()
                    }],
                    input_tokens: 130,
                    output_tokens: 5,
                    cached_input_tokens: 0
                }
            ),
            (
                3_000,
                Event::TurnEnd {
                    final_text: "It says Hello.".into()
                }
            ),
        ]
    );
    assert_eq!(
        notes,
        ["the agent's name and version (`agent.name`, `agent.version`): 1 run"]
    );
}

#[test]
fn a_result_is_failed_when_its_extra_says_so_as_harbors_converters_write_it() {
    let failing = [
        json!({"is_error": true}),
        json!({"tool_result_is_error": true}),
        json!({"error": "exit status 1"}),
        json!({"status": "error"}),
        json!({"execution_status": "FAILED"}),
    ];
    let passing = [
        json!({"is_error": false}),
        json!({"error": null}),
        json!({"status": "success"}),
        json!({"duration_ms": 5}),
    ];
    for (extra, status) in failing
        .iter()
        .map(|e| (e, CallStatus::Failed))
        .chain(passing.iter().map(|e| (e, CallStatus::Completed)))
    {
        let (run, notes) = import(&trajectory(json!([
            {"step_id": 1, "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {}}],
             "observation": {"results": [{"source_call_id": "c", "content": "out",
                                          "extra": extra}]}},
        ])));
        let result = run.records.iter().find_map(|r| match &r.event {
            Event::ToolResult { status, .. } => Some(*status),
            _ => None,
        });
        assert_eq!(result, Some(status), "{extra}");
        assert!(
            notes.contains(
                &"custom metadata (`steps[].observation.results[].extra`): 1 result".into()
            ),
            "{notes:?}"
        );
    }
}

#[test]
fn what_has_no_record_is_named_with_how_often() {
    let (run, notes) = import(&json!({
        "schema_version": "ATIF-v1.7",
        "trajectory_id": "t-9",
        "agent": {"name": "a", "version": "1", "tool_definitions": [], "extra": {"k": 1}},
        "notes": "n",
        "continued_trajectory_ref": "trajectory.cont-1.json",
        "subagent_trajectories": [
            {"trajectory_id": "sub-1", "agent": {"name": "s", "version": "1"},
             "steps": [{"step_id": 1, "source": "user", "message": "x"}]}
        ],
        "final_metrics": {"total_prompt_tokens": 10, "total_completion_tokens": 2,
                          "total_cost_usd": 0.5},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You are terse."},
            {"step_id": 2, "source": "user", "timestamp": "yesterday",
             "message": [{"type": "text", "text": "Look:"},
                         {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}},
                         {"type": "text", "text": "what is it?"}]},
            {"step_id": 3, "source": "agent", "model_name": "m-2", "message": "Two calls.",
             "reasoning_content": "hm", "reasoning_effort": "high", "llm_call_count": 2,
             "is_copied_context": true, "future_field": 1,
             "tool_calls": [
                {"tool_call_id": "a", "function_name": "look", "arguments": {}},
                {"tool_call_id": "b", "function_name": "look", "arguments": {}}],
             "observation": {"results": [
                {"content": "both outputs at once"},
                {"source_call_id": "a",
                 "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}]}]},
             "metrics": {"cost_usd": 0.1, "logprobs": [-0.1]}},
        ],
    }));
    assert_eq!(run.label, "trajectory t-9");
    // The first agent step names the model when the agent does not.
    assert_eq!(run.model, "m-2");
    assert_eq!(
        run.records[1].event,
        Event::UserMessage {
            text: "Look:\nwhat is it?".into()
        }
    );
    // Continued in another file: the run has not ended here.
    assert!(
        !run.records
            .iter()
            .any(|r| matches!(r.event, Event::TurnEnd { .. }))
    );
    // The steps record no tokens: the totals go on the last response.
    assert!(run.usage_recorded);
    assert!(run.records.iter().any(|r| matches!(
        r.event,
        Event::ModelResponse {
            input_tokens: 10,
            output_tokens: 2,
            ..
        }
    )));
    assert_eq!(
        notes,
        [
            "the agent's name and version (`agent.name`, `agent.version`): 1 run",
            "the agent's tool definitions (`agent.tool_definitions`): 1 run",
            "custom metadata (`agent.extra`): 1 run",
            "system steps (`source: system`): 1 step",
            "image and audio content parts, not imported: 1 part",
            "step timestamps evalhost cannot read (not ISO 8601 date and time; the step before's time kept): 1 step",
            "fields ATIF-v1.8 does not define (`steps[].future_field`): 1 occurrence",
            "the agent's reasoning (`steps[].reasoning_content`): 1 step",
            "reasoning effort (`steps[].reasoning_effort`): 1 step",
            "agent steps of several model calls (`llm_call_count` > 1), imported as one exchange each: 1 step",
            "costs in USD (`steps[].metrics.cost_usd`): 1 step",
            "token ids and log probabilities (`steps[].metrics`): 1 step",
            "observation results tied to no tool call of their step (`source_call_id`): 1 result",
            "subagent trajectory references (`subagent_trajectory_ref`): 1 reference",
            "tool calls without a result: 1 call",
            "steps copied from an earlier trajectory (`is_copied_context`), imported as the others: 1 step",
            "a continuation in another file (`continued_trajectory_ref`; import that file too): 1 run",
            "the total cost in USD (`final_metrics.total_cost_usd`): 1 run",
            "token totals (`final_metrics`) put on the last model response: no step records its own: 1 run",
            "the trajectory's notes (`notes`): 1 run",
            "embedded subagent trajectories (`subagent_trajectories`), not imported as runs: 1 subagent",
        ]
    );
}

#[test]
fn final_metrics_that_disagree_with_the_steps_are_noted_and_the_steps_kept() {
    let mut document = trajectory(json!([
        {"step_id": 1, "source": "agent", "message": "done",
         "metrics": {"prompt_tokens": 7, "completion_tokens": 3}},
    ]));
    document["final_metrics"] = json!({"total_prompt_tokens": 7, "total_completion_tokens": 3});
    let (_, notes) = import(&document);
    assert!(
        !notes.iter().any(|n| n.contains("final_metrics")),
        "{notes:?}"
    );
    document["final_metrics"] = json!({"total_prompt_tokens": 70, "total_completion_tokens": 3});
    let (run, notes) = import(&document);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("token totals (`final_metrics`) other than")),
        "{notes:?}"
    );
    assert!(matches!(
        run.records[2].event,
        Event::ModelResponse {
            input_tokens: 7,
            ..
        }
    ));
}

#[test]
fn a_trajectory_without_times_or_usage_says_so() {
    let mut document = trajectory(json!([
        {"step_id": 1, "source": "user", "message": "hi"},
        {"step_id": 2, "source": "agent", "message": "hello"},
    ]));
    document.as_object_mut().unwrap().remove("session_id");
    let (run, _) = import(&document);
    assert_eq!(run.label, "trajectory t.json");
    assert_eq!(run.duration_ms, 0);
    assert!(!run.usage_recorded);
    assert!(run.records.iter().all(|r| r.at_ms == 0));
    let empty = trajectory(json!([]));
    let (runs, _) = runs(Path::new("t.json"), empty.to_string().as_bytes()).unwrap();
    assert!(runs.is_empty());
}

#[test]
fn compact_arguments_keep_their_strings() {
    assert_eq!(
        compact("{\n  \"a b\": \"x \\\" y\\\\\",\n  \"n\": [1, 2]\n}"),
        r#"{"a b":"x \" y\\","n":[1,2]}"#
    );
}

#[test]
fn a_bad_field_is_named_with_its_line_and_column() {
    let text = r#"{
  "schema_version": "ATIF-v1.8",
  "agent": {"name": "a", "version": "1"},
  "steps": [
    {"step_id": 1, "source": "user", "message": "hi"},
    {"step_id": 2, "source": "agent", "message": "go",
     "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": "{}"}]}
  ]
}"#;
    assert_eq!(
        error(text),
        "t.json:7:78: steps[1].tool_calls[0].arguments: expected an object, found a string"
    );
    let tokens = text.replace(
        r#""arguments": "{}"}]"#,
        r#""arguments": {}}], "metrics": {"prompt_tokens": "12"}"#,
    );
    assert_eq!(
        error(&tokens),
        "t.json:7:116: steps[1].metrics.prompt_tokens: invalid type: string \"12\", expected u64"
    );
    let missing = text.replace(r#""source": "user", "#, "");
    assert_eq!(
        error(&missing),
        "t.json:5:5: steps[0].source: missing: ATIF requires it"
    );
    let source = text.replace(r#""source": "user""#, r#""source": "tool""#);
    assert_eq!(
        error(&source),
        "t.json:5:30: steps[0].source: `tool` is not a source ATIF defines (`user`, `agent`, `system`)"
    );
    let message = text.replace(r#""message": "hi""#, r#""message": 3"#);
    assert_eq!(
        error(&message),
        "t.json:5:49: steps[0].message: expected text or a list of content parts, found a number"
    );
    let version = text.replace("ATIF-v1.8", "ATIF-v2.0");
    assert!(
        error(&version)
            .starts_with("t.json:2:21: schema_version: `ATIF-v2.0`: evalhost reads ATIF v1"),
        "{}",
        error(&version)
    );
    let steps = text
        .replace(r#""steps": ["#, r#""steps": {"x": ["#)
        .replace("\n  ]\n", "\n  ]}\n");
    assert_eq!(
        error(&steps),
        "t.json:4:12: steps: expected a list, found an object"
    );
    assert!(
        error(&text[..60]).starts_with("t.json:3:"),
        "{}",
        error(&text[..60])
    );
    assert_eq!(
        runs(Path::new("t.json"), b"{\"steps\": \"\xff\"}")
            .unwrap_err()
            .to_string(),
        "t.json:1:12: (document): not UTF-8 text"
    );
}

//! The importer on small logs written here, in both containers: what each record holds,
//! what is noted, and errors that name the file, member and field.

use std::path::Path;

use serde_json::{Value, json};

use super::archive::tests::archive;
use super::runs;
use crate::session::{CallStatus, Event, OutputItem};
use crate::trace::ImportedRun;

/// A `.json` log of `samples`.
fn json_log(samples: Value) -> Vec<u8> {
    serde_json::to_vec_pretty(&json!({
        "version": 2,
        "status": "success",
        "eval": {
            "task": "t",
            "model": "openai/gpt-4o",
            "dataset": {"samples": 3, "sample_ids": [1, "two", 3]},
        },
        "samples": samples,
    }))
    .unwrap()
}

fn import(bytes: &[u8]) -> (Vec<ImportedRun>, Vec<String>) {
    runs(Path::new("log.json"), bytes).unwrap()
}

fn error(bytes: &[u8]) -> String {
    runs(Path::new("log.json"), bytes).unwrap_err().to_string()
}

fn kinds(run: &ImportedRun) -> Vec<&'static str> {
    run.records.iter().map(|r| r.event.kind()).collect()
}

fn at(ts_ms: u64) -> String {
    // 2026-12-03T21:09:12.000000+00:00 plus `ts_ms`.
    format!(
        "2026-12-03T21:09:{:02}.{:06}+00:00",
        12 + ts_ms / 1000,
        ts_ms % 1000 * 1000
    )
}

/// Sample 1 as Inspect writes it: a system prompt, the user's question, a tool call, its
/// result, the answer; a model event per exchange, a tool event, a scorer's events.
fn sample_one() -> Value {
    json!({
        "id": 1,
        "epoch": 1,
        "input": "What is 2+2?",
        "target": "4",
        "messages": [
            {"id": "s", "role": "system", "content": "Be careful."},
            {"id": "u", "role": "user", "source": "input", "content": "What is 2+2?"},
            {"id": "a1", "role": "assistant", "content": "Adding.", "model": "gpt-4o-2024",
             "tool_calls": [{"id": "call_1", "function": "add", "arguments": {"x": 2, "y": 2}, "type": "function"}]},
            {"id": "t1", "role": "tool", "content": "4", "tool_call_id": "call_1", "function": "add"},
            {"id": "a2", "role": "assistant", "content": [{"type": "reasoning", "reasoning": "easy"}, {"type": "text", "text": "The answer is 4."}]},
        ],
        "output": {"model": "gpt-4o-2024", "completion": "The answer is 4.",
                   "usage": {"input_tokens": 150, "output_tokens": 7, "total_tokens": 157}},
        "scores": {"includes": {"value": "C"}},
        "metadata": {},
        "store": {},
        "events": [
            {"event": "span_begin", "timestamp": at(0), "id": "x", "name": "init"},
            {"event": "sample_init", "timestamp": at(5)},
            {"event": "model", "timestamp": at(100), "completed": at(400), "model": "openai/gpt-4o",
             "input": [], "input_refs": [[0, 2]], "tools": [], "tool_choice": "auto", "config": {},
             "output": {"model": "gpt-4o-2024", "choices": [{"message": {"id": "a1", "role": "assistant", "content": "Adding."}}],
                        "usage": {"input_tokens": 120, "output_tokens": 18, "input_tokens_cache_read": 64, "input_tokens_cache_write": 6}},
             "call": {"request": {"model": "gpt-4o"}, "call_refs": [[0, 2]], "call_key": "messages"}},
            {"event": "tool", "timestamp": at(410), "completed": at(460), "working_time": 0.04,
             "id": "call_1", "function": "add", "arguments": {"x": 2, "y": 2}, "result": "4"},
            {"event": "model", "timestamp": at(470), "completed": at(900), "model": "openai/gpt-4o",
             "input": [], "input_refs": [[0, 4]],
             "output": {"choices": [{"message": {"id": "a2", "role": "assistant"}}],
                        "usage": {"input_tokens": 150, "output_tokens": 7}}},
            {"event": "model", "timestamp": at(950), "completed": at(990), "model": "openai/grader",
             "output": {"choices": [{"message": {"id": "g", "role": "assistant"}}], "usage": {"input_tokens": 9}}},
            {"event": "score", "timestamp": at(995), "score": {"value": "C"}},
            {"event": "sandbox", "timestamp": at(996), "action": "exec"},
        ],
        "events_data": {
            "messages": [
                {"role": "system", "content": "Be careful."},
                {"role": "user", "content": "What is 2+2?"},
                {"role": "assistant", "content": "Adding."},
                {"role": "tool", "content": "4"},
            ],
            "calls": [
                {"role": "system", "content": "attachment://abc"},
                {"role": "user", "content": "What is 2+2?"},
            ],
        },
        "attachments": {"abc": "Be careful."},
        "model_usage": {"openai/gpt-4o": {"input_tokens": 270, "output_tokens": 25}},
        "started_at": at(2),
        "completed_at": at(1000),
        "total_time": 0.998,
    })
}

#[test]
fn a_sample_becomes_a_run_of_its_exchanges_calls_and_answer() {
    let (runs, notes) = import(&json_log(json!([sample_one()])));
    let [run] = runs.as_slice() else {
        panic!("{runs:?}")
    };
    assert_eq!(run.label, "sample 1 epoch 1");
    assert_eq!(run.model, "gpt-4o-2024");
    assert_eq!(run.duration_ms, 998);
    assert!(run.usage_recorded);
    assert_eq!(
        kinds(run),
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
    let times: Vec<u64> = run.records.iter().map(|r| r.at_ms).collect();
    // From the first event (the init span); records with no time of their own keep the last.
    assert_eq!(times, [0, 0, 100, 400, 410, 460, 470, 900, 1000]);
    let events: Vec<&Event> = run.records.iter().map(|r| &r.event).collect();
    assert_eq!(
        events[0],
        &Event::SessionStart {
            case: "sample 1 epoch 1".into(),
            run: 1,
            mode: "trace".into(),
            model: "gpt-4o-2024".into(),
        }
    );
    assert_eq!(
        events[1],
        &Event::UserMessage {
            text: "What is 2+2?".into()
        }
    );
    let Event::ModelRequest { n: 1, body } = events[2] else {
        panic!("{:?}", events[2])
    };
    // The provider's request, its messages back from the pool, attachments resolved.
    assert_eq!(
        body.to_value(),
        json!({"model": "gpt-4o", "messages": [
            {"role": "system", "content": "Be careful."},
            {"role": "user", "content": "What is 2+2?"},
        ]})
    );
    assert_eq!(
        events[3],
        &Event::ModelResponse {
            n: 1,
            output: vec![
                OutputItem::Message {
                    text: "Adding.".into()
                },
                OutputItem::FunctionCall {
                    call_id: "call_1".into(),
                    name: "add".into(),
                    arguments: r#"{"x":2,"y":2}"#.into(),
                },
            ],
            // Inspect's input leaves the cache out; evalhost's counts it.
            input_tokens: 120 + 64 + 6,
            output_tokens: 18,
            cached_input_tokens: 64,
        }
    );
    assert_eq!(
        events[5],
        &Event::ToolResult {
            call_id: "call_1".into(),
            name: "add".into(),
            status: CallStatus::Completed,
            output: "4".into(),
            duration_ms: 50,
        }
    );
    // No provider request recorded: Inspect's own input, from the pool.
    let Event::ModelRequest { n: 2, body } = events[6] else {
        panic!("{:?}", events[6])
    };
    assert_eq!(body.to_value()["input"].as_array().unwrap().len(), 4);
    assert_eq!(body.to_value()["model"], "openai/gpt-4o");
    let Event::ModelResponse {
        output,
        input_tokens: 150,
        output_tokens: 7,
        cached_input_tokens: 0,
        ..
    } = events[7]
    else {
        panic!("{:?}", events[7])
    };
    assert_eq!(
        output,
        &[OutputItem::Message {
            text: "The answer is 4.".into()
        }]
    );
    assert_eq!(
        events[8],
        &Event::TurnEnd {
            final_text: "The answer is 4.".into()
        }
    );
    assert_eq!(
        notes,
        [
            "reasoning in messages: 1",
            "system messages: 1",
            "model calls outside the sample's messages (scorers, sub-agents): 1",
            "sandbox events (commands and files in Inspect's sandbox): 1",
            "Inspect scores (the log's own scorers): 1 sample",
            "targets (the dataset's expected answers): 1 sample",
        ]
    );
}

#[test]
fn evidence_sees_the_prompt_calls_usage_and_answer() {
    let (runs, _) = import(&json_log(json!([sample_one()])));
    let evidence = crate::evidence::Evidence::from_session(&runs[0].records, Default::default());
    assert_eq!(evidence.prompt, "What is 2+2?");
    assert_eq!(evidence.final_text, "The answer is 4.");
    assert_eq!(evidence.calls.len(), 1);
    assert_eq!(evidence.calls[0].name, "add");
    assert_eq!(evidence.calls[0].status, "completed");
    assert!(evidence.calls[0].started);
    assert_eq!(evidence.usage.requests, 2);
    assert_eq!(evidence.usage.input_tokens, 190 + 150);
    assert_eq!(evidence.usage.cached_input_tokens, 64);
}

/// A minimal sample: `messages` and the rest of its fields from `extra`.
fn sample(id: Value, epoch: u64, messages: Value, extra: Value) -> Value {
    let mut sample = json!({"id": id, "epoch": epoch, "input": "hi", "messages": messages});
    for (key, value) in extra.as_object().unwrap() {
        sample[key] = value.clone();
    }
    sample
}

fn call(id: &str, function: &str) -> Value {
    json!({"id": "a", "role": "assistant", "content": "",
           "tool_calls": [{"id": id, "function": function, "arguments": {}}]})
}

#[test]
fn a_tool_error_fails_the_call_or_says_it_never_ran() {
    let cases = [
        (
            "unknown",
            "notes.txt: no such file",
            CallStatus::Failed,
            true,
        ),
        ("timeout", "Command timed out", CallStatus::TimedOut, true),
        (
            "parsing",
            "Found 1 validation error",
            CallStatus::InvalidArguments,
            false,
        ),
        (
            "parsing",
            "Tool nope not found",
            CallStatus::UnknownTool,
            false,
        ),
        (
            "approval",
            "Rejected by the approver",
            CallStatus::Denied,
            false,
        ),
        (
            "limit",
            "The tool exceeded its output limit of 16 KiB.",
            CallStatus::OutputLimit,
            true,
        ),
    ];
    for (kind, message, status, started) in cases {
        let messages = json!([
            {"role": "user", "content": "read it"},
            call("c1", "read"),
            {"role": "tool", "content": "", "tool_call_id": "c1", "function": "read",
             "error": {"type": kind, "message": message}},
            {"role": "assistant", "content": "It failed."},
        ]);
        let (runs, _) = import(&json_log(json!([sample(json!(1), 1, messages, json!({}))])));
        let run = &runs[0];
        assert_eq!(
            kinds(run).contains(&"tool_start"),
            started,
            "{kind}: {message}"
        );
        let result = run
            .records
            .iter()
            .find_map(|r| match &r.event {
                Event::ToolResult { status, output, .. } => Some((*status, output.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(result, (status, message.to_owned()), "{kind}");
    }
}

#[test]
fn a_sample_error_is_the_run_error_and_a_call_it_cut_short_is_failed_or_cancelled() {
    let messages = json!([
        {"role": "user", "content": "Divide 1 by 0."},
        {"id": "a1", "role": "assistant", "content": "",
         "tool_calls": [{"id": "c1", "function": "divide", "arguments": {"x": 1, "y": 0}},
                        {"id": "c2", "function": "divide", "arguments": {"x": 2, "y": 0}}]},
    ]);
    let extra = json!({
        "error": {"message": "ZeroDivisionError('division by zero')", "traceback": "..."},
        "events": [{"event": "tool", "timestamp": at(10), "completed": at(12), "id": "c1",
                    "function": "divide", "result": "", "failed": true}],
    });
    let (runs, _) = import(&json_log(json!([sample(json!(3), 1, messages, extra)])));
    let run = &runs[0];
    assert_eq!(
        kinds(run),
        [
            "session_start",
            "user_message",
            "model_request",
            "model_response",
            "tool_start",
            "tool_result",
            "tool_result",
            "run_error",
        ]
    );
    let Event::ToolResult {
        status: CallStatus::Failed,
        duration_ms: 2,
        ..
    } = &run.records[5].event
    else {
        panic!("{:?}", run.records[5])
    };
    let Event::ToolResult {
        status: CallStatus::Cancelled,
        output,
        ..
    } = &run.records[6].event
    else {
        panic!("{:?}", run.records[6])
    };
    assert_eq!(
        output,
        "Not run: the sample ended before the call returned."
    );
    assert_eq!(
        run.records[7].event,
        Event::RunError {
            message: "ZeroDivisionError('division by zero')".into()
        }
    );
}

#[test]
fn a_sample_ended_at_a_limit_is_a_run_error() {
    let messages =
        json!([{"role": "user", "content": "go"}, {"role": "assistant", "content": "going"}]);
    let extra = json!({"limit": {"type": "message", "limit": 10.0}});
    let (runs, _) = import(&json_log(json!([sample(json!(1), 1, messages, extra)])));
    assert_eq!(
        runs[0].records.last().unwrap().event,
        Event::RunError {
            message: "Inspect ended the sample at its message limit (10)".into()
        }
    );
}

#[test]
fn without_model_events_the_samples_usage_is_on_its_last_response() {
    let messages = json!([
        {"role": "user", "content": "hi"},
        call("c1", "noop"),
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "function": "noop"},
        {"role": "assistant", "content": "done"},
    ]);
    let extra = json!({"model_usage": {
        "a/m": {"input_tokens": 10, "output_tokens": 2, "input_tokens_cache_read": 5},
        "b/m": {"input_tokens": 1, "output_tokens": 1},
    }});
    let (runs, notes) = import(&json_log(json!([sample(
        json!(1),
        1,
        messages.clone(),
        extra
    )])));
    let usage: Vec<(u64, u64, u64)> = runs[0]
        .records
        .iter()
        .filter_map(|r| match r.event {
            Event::ModelResponse {
                input_tokens,
                output_tokens,
                cached_input_tokens,
                ..
            } => Some((input_tokens, output_tokens, cached_input_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(usage, [(0, 0, 0), (16, 3, 5)]);
    assert!(runs[0].usage_recorded);
    assert_eq!(
        notes,
        ["token usage per exchange (the sample's total is on its last response): 1 sample"]
    );
    // Nothing at all recorded: the run says so.
    let (runs, _) = import(&json_log(json!([sample(json!(1), 1, messages, json!({}))])));
    assert!(!runs[0].usage_recorded);
    assert!(runs[0].records.iter().all(|r| r.at_ms == 0));
}

#[test]
fn content_parts_are_joined_and_what_is_not_text_is_noted() {
    let messages = json!([
        {"role": "user", "content": [{"type": "text", "text": "Look:"}, {"type": "image", "image": "attachment://img"},
                                     {"type": "text", "text": "what is it?"}]},
        {"role": "assistant", "content": "A cat."},
        {"role": "narrator", "content": "..."},
    ]);
    let (runs, notes) = import(&json_log(json!([sample(json!(1), 1, messages, json!({}))])));
    assert_eq!(
        runs[0].records[1].event,
        Event::UserMessage {
            text: "Look:\nwhat is it?".into()
        }
    );
    assert_eq!(
        notes,
        [
            "message content of type `image`: 1",
            "messages of role `narrator`: 1"
        ]
    );
}

#[test]
fn runs_follow_the_datasets_order_epoch_by_epoch_and_ids_may_be_strings() {
    let one = |id: Value, epoch| {
        sample(
            id,
            epoch,
            json!([{"role": "user", "content": "q"}]),
            json!({}),
        )
    };
    let samples = json!([
        one(json!(3), 1),
        one(json!("two"), 2),
        one(json!(1), 2),
        one(json!("two"), 1)
    ]);
    let (runs, _) = import(&json_log(samples));
    let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "sample two epoch 1",
            "sample 3 epoch 1",
            "sample 1 epoch 2",
            "sample two epoch 2"
        ]
    );
    // No output model: the eval's.
    assert_eq!(runs[0].model, "openai/gpt-4o");
    // A sample that never began: its input is the prompt.
    let bare = json!([{"id": 9, "epoch": 1, "input": "just this"}]);
    let (runs, _) = import(&json_log(bare));
    assert_eq!(
        kinds(&runs[0]),
        ["session_start", "user_message", "turn_end"]
    );
}

#[test]
fn an_eval_archive_reads_as_the_json_log_does() {
    let header = json!({"version": 2, "status": "cancelled",
                        "eval": {"model": "openai/gpt-4o", "dataset": {"sample_ids": [1]}}});
    let sample = serde_json::to_string(&sample_one()).unwrap();
    let header = header.to_string();
    let bytes = archive(
        &[
            ("_journal/start.json", "{}"),
            ("samples/1_epoch_1.json", &sample),
            ("header.json", &header),
        ],
        true,
    );
    let (runs, notes) = runs(Path::new("log.eval"), &bytes).unwrap();
    let (json_runs, _) = import(&json_log(json!([sample_one()])));
    assert_eq!(runs[0].records, json_runs[0].records);
    assert_eq!(
        notes[0],
        "log status `cancelled` (the eval did not finish: samples it did not write are not here): 1"
    );
}

#[test]
fn a_wrong_field_is_named_with_its_member_or_line_and_path() {
    // In an archive: the member, then the line and column inside it.
    let header = r#"{"status": "success", "eval": {"model": "m"}}"#;
    let bytes = archive(
        &[
            ("header.json", header),
            (
                "samples/1_epoch_1.json",
                r#"{"id": 1, "epoch": 1, "messages": "hello"}"#,
            ),
        ],
        true,
    );
    let message = runs(Path::new("log.eval"), &bytes).unwrap_err().to_string();
    assert_eq!(
        message,
        "log.eval: samples/1_epoch_1.json: 1:35: messages: expected a list, found a string"
    );
    // In a `.json` log: its line and column, and the field's path from the root.
    let bad = sample(
        json!(1),
        1,
        json!([{"role": "user", "content": 5}]),
        json!({}),
    );
    let message = error(&json_log(json!([bad])));
    assert!(
        message.starts_with("log.json:")
            && message
                .ends_with(": samples[0].messages[0].content: expected a string, found a number"),
        "{message}"
    );
    let bad = sample(
        json!(1),
        1,
        json!([call("c", "f")]),
        json!({"events": [{"event": "tool", "timestamp": "yesterday"}]}),
    );
    let message = error(&json_log(json!([bad])));
    assert!(
        message.ends_with("samples[0].events[0].timestamp: `yesterday` is not an RFC 3339 time"),
        "{message}"
    );
    let bad = sample(json!([1]), 1, json!([]), json!({}));
    assert!(
        error(&json_log(json!([bad])))
            .ends_with("samples[0].id: expected an integer or a string, found a list")
    );
    let bad = sample(json!(1), 1, json!([{"content": "no role"}]), json!({}));
    assert!(error(&json_log(json!([bad]))).ends_with("samples[0].messages[0]: has no `role`"));
    let bad = sample(
        json!(1),
        1,
        json!([{"role": "assistant", "tool_calls": [{"id": "c", "function": 7}]}]),
        json!({}),
    );
    assert!(error(&json_log(json!([bad]))).ends_with(
        "samples[0].messages[0].tool_calls[0].function: expected a string, found a number"
    ));
    // Not UTF-8, not an Inspect log.
    assert!(error(b"{\"eval\": \"\xff\"}").starts_with("log.json:1:11: (document): not UTF-8"));
    assert!(error(br#"{"samples": []}"#).ends_with("(document): has no `eval`"));
    let bytes = archive(&[("samples/1_epoch_1.json", "{}")], false);
    let message = runs(Path::new("log.eval"), &bytes).unwrap_err().to_string();
    assert!(
        message.starts_with("log.eval: header.json: missing"),
        "{message}"
    );
}

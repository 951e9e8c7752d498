//! The provider side of live mode as the real APIs behave, against realistic fake streams on
//! 127.0.0.1 (`event:` lines, every event type the APIs send, usage as they report it):
//! errors reported inside a stream are retried like the same error over HTTP and keep their
//! message and code; reasoning (Responses reasoning items, Anthropic thinking blocks) is
//! passed back across a tool loop; a Chat Completions refusal is the answer's text; repeated
//! tool-call ids are not concatenated; the clean two-request turn in all three dialects.

use crate::support::live::*;
use serde_json::{Value, json};

const WRITE: &str = "prompt: Write hello to a.txt.\napprove: all\nruns: 1\ngraders:\n  - file_contains: {path: a.txt, text: hello}\n  - final_text_contains: done\n";
const GREET: &str = "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n";
const ARGS: &str = r#"{"path":"a.txt","content":"hello\n"}"#;

/// The `CASE` row's cells.
fn row<'a>(stdout: &'a str, case: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .find(|l| l.starts_with(case))
        .unwrap_or_else(|| panic!("no row for {case}:\n{stdout}"))
        .split_whitespace()
        .collect()
}

/// IN_TOK and OUT_TOK of a one-run row (`CASE RUNS PASS pass@k pass^k REQ TOOLS IN OUT STATUS`).
fn tokens<'a>(cells: &[&'a str]) -> (&'a str, &'a str) {
    (cells[cells.len() - 3], cells[cells.len() - 2])
}

// ---------------------------------------------------------------------------------------
// OpenAI Responses: the full event sequence of a streamed response.

/// A Responses stream as the API sends it: created, in_progress, per item its added / delta
/// / done events, completed with the output and usage; `sequence_number` on every event.
fn responses_stream(id: &str, items: &[Value], input: u64, output: u64) -> String {
    let mut events = Vec::new();
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": id, "object": "response", "created_at": 1764500000, "status": status,
               "model": "fake-model", "output": output, "usage": usage, "error": null,
               "incomplete_details": null, "store": false})
    };
    events.push(json!({"type": "response.created", "response": response("in_progress", json!([]), Value::Null)}));
    events.push(json!({"type": "response.in_progress", "response": response("in_progress", json!([]), Value::Null)}));
    for (index, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("message") => {
                let text = item["content"][0]["text"].as_str().unwrap_or_default();
                let item_id = item["id"].clone();
                events.push(json!({"type": "response.output_item.added", "output_index": index,
                    "item": {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}}));
                events.push(json!({"type": "response.content_part.added", "item_id": item_id, "output_index": index,
                    "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
                let (a, b) = text.split_at(text.len() / 2);
                for delta in [a, b] {
                    events.push(
                        json!({"type": "response.output_text.delta", "item_id": item_id,
                        "output_index": index, "content_index": 0, "delta": delta, "logprobs": []}),
                    );
                }
                events.push(
                    json!({"type": "response.output_text.done", "item_id": item_id,
                    "output_index": index, "content_index": 0, "text": text, "logprobs": []}),
                );
                events.push(json!({"type": "response.content_part.done", "item_id": item_id, "output_index": index,
                    "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}}));
            }
            Some("function_call") => {
                let arguments = item["arguments"].as_str().unwrap_or_default();
                let mut added = item.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                events.push(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
                let (a, b) = arguments.split_at(arguments.len() / 2);
                for delta in [a, b] {
                    events.push(json!({"type": "response.function_call_arguments.delta",
                        "item_id": item["id"], "output_index": index, "delta": delta}));
                }
                events.push(json!({"type": "response.function_call_arguments.done",
                    "item_id": item["id"], "output_index": index, "arguments": arguments}));
            }
            _ => {
                let mut added = item.clone();
                if let Some(object) = added.as_object_mut() {
                    object.remove("encrypted_content");
                }
                events.push(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
            }
        }
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    let usage = json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": input / 2},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": output / 2},
        "total_tokens": input + output});
    events.push(json!({"type": "response.completed", "response": response("completed", json!(items), usage)}));
    for (n, event) in events.iter_mut().enumerate() {
        event["sequence_number"] = json!(n);
    }
    sse(&events)
}

fn message(id: &str, text: &str) -> Value {
    json!({"type": "message", "id": id, "status": "completed", "role": "assistant",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn call(id: &str, call_id: &str) -> Value {
    json!({"type": "function_call", "id": id, "call_id": call_id, "name": "write_file",
           "arguments": ARGS, "status": "completed"})
}

fn reasoning(id: &str, encrypted: &str) -> Value {
    json!({"type": "reasoning", "id": id, "encrypted_content": encrypted,
           "summary": [{"type": "summary_text", "text": "**Planning** I should write the file."}]})
}

/// The opening events of a Responses stream, then `tail`.
fn responses_failing(tail: Value) -> String {
    let response =
        json!({"id": "resp_x", "object": "response", "status": "in_progress", "output": []});
    let mut events = vec![
        json!({"type": "response.created", "sequence_number": 0, "response": response}),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": response}),
    ];
    events.push(tail);
    sse(&events)
}

fn server_error() -> Value {
    json!({"type": "response.failed", "sequence_number": 2, "response": {
        "id": "resp_x", "object": "response", "status": "failed", "output": [], "usage": null,
        "error": {"code": "server_error", "message": "An error occurred while processing your request. You can retry your request, or contact us through our help center at help.openai.com if the error persists. Please include the request ID req_123 in your message."}}})
}

#[test]
fn responses_clean_turn_passes_reasoning_back_with_usage_right() {
    let fake = FakeProvider::start(
        vec![
            Step::Raw(responses_stream(
                "resp_1",
                &[
                    reasoning("rs_1", "gAAAAA-enc-1"),
                    message("msg_0", "Writing it."),
                    call("fc_1", "call_a"),
                ],
                120,
                40,
            )),
            Step::Raw(responses_stream(
                "resp_2",
                &[message("msg_2", "done, hello")],
                200,
                10,
            )),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-responses", &fake, "reasoning_effort = \"high\"\n");
    project.case("write", WRITE);
    let evalhost_output = project.evalhost(&["run", "--live", "cases"]);
    evalhost_output.assert_code(0);
    let stdout = evalhost_output.stdout();
    assert_eq!(tokens(&row(stdout, "write")), ("320", "50"), "{stdout}");

    let received = fake.received();
    assert_eq!(received.len(), 2);
    let first = &received[0].body;
    assert_eq!(first["reasoning"], json!({"effort": "high"}));
    assert_eq!(first["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(first["store"], false);
    // The second request carries the reasoning item, as received, before the reply's text
    // and call, then the call's output.
    let input = received[1].body["input"].as_array().expect("input").clone();
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    let at = kinds
        .iter()
        .position(|k| *k == "reasoning")
        .expect("reasoning passed back");
    assert_eq!(input[at], reasoning("rs_1", "gAAAAA-enc-1"));
    assert_eq!(input[at + 1]["role"], "assistant", "{input:?}");
    assert_eq!(input[at + 2]["type"], "function_call");
    assert_eq!(input[at + 2]["call_id"], "call_a");
    assert_eq!(input[at + 3]["type"], "function_call_output");
    assert_eq!(kinds.iter().filter(|k| **k == "reasoning").count(), 1);
}

#[test]
fn reasoning_is_carried_within_a_run_never_into_another() {
    // A provider that numbers call ids per conversation (as local servers do) repeats
    // `call_a` in the second run, this time without reasoning: the first run's reasoning
    // must not be put in front of it.
    let answer = |id: &str, items: &[Value]| Step::Raw(responses_stream(id, items, 10, 5));
    let fake = FakeProvider::start(
        vec![
            answer(
                "resp_1",
                &[reasoning("rs_1", "enc-1"), call("fc_1", "call_a")],
            ),
            answer("resp_2", &[message("msg_2", "done, hello")]),
            answer("resp_3", &[call("fc_3", "call_a")]),
            answer("resp_4", &[message("msg_4", "done, hello")]),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-responses", &fake, "reasoning_effort = \"high\"\n");
    project.case("write", &WRITE.replace("runs: 1", "runs: 2"));
    let output = project.evalhost(&["run", "--live", "--jobs", "1", "cases"]);
    output.assert_code(0);
    let received = fake.received();
    assert_eq!(received.len(), 4);
    let reasoning_items = |n: usize| {
        received[n].body["input"]
            .as_array()
            .expect("input")
            .iter()
            .filter(|i| i["type"] == "reasoning")
            .count()
    };
    assert_eq!(
        reasoning_items(1),
        1,
        "the first run passes its reasoning back"
    );
    assert_eq!(reasoning_items(3), 0, "the second run has none of its own");
}

#[test]
fn responses_reasoning_without_encrypted_content_is_not_passed_back_unstored() {
    let mut plain = reasoning("rs_9", "");
    plain
        .as_object_mut()
        .expect("object")
        .remove("encrypted_content");
    let fake = FakeProvider::start(
        vec![
            Step::Raw(responses_stream(
                "resp_1",
                &[plain, call("fc_1", "call_b")],
                10,
                5,
            )),
            Step::Raw(responses_stream(
                "resp_2",
                &[message("msg_2", "done")],
                20,
                5,
            )),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    // No reasoning_effort: nothing asked for, and no reasoning item the API could not resolve.
    let project = Project::for_fake("openai-responses", &fake, "");
    project.case("write", WRITE);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let received = fake.received();
    assert!(
        received[0].body.get("reasoning").is_none() && received[0].body.get("include").is_none()
    );
    let input = received[1].body["input"].as_array().expect("input");
    assert!(input.iter().all(|i| i["type"] != "reasoning"), "{input:?}");
}

#[test]
fn responses_failed_server_error_is_retried_then_succeeds() {
    let fake = FakeProvider::start(
        vec![Step::Raw(responses_failing(server_error()))],
        Step::Raw(responses_stream(
            "resp_2",
            &[message("msg_1", "hello there")],
            30,
            4,
        )),
    );
    let project = Project::for_fake("openai-responses", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 2, "one failed attempt, one retry");
    assert_eq!(tokens(&row(stdout, "greet")), ("30", "4"));
}

#[test]
fn responses_failed_server_error_that_persists_keeps_its_code_and_text() {
    let fake = FakeProvider::start(vec![], Step::Raw(responses_failing(server_error())));
    let project = Project::for_fake("openai-responses", &fake, "max_retries = 2\n");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 3, "first attempt and two retries");
    assert!(
        stdout.contains("greet run 1: Provider openai-responses (model fake-model) failed on request 1: the provider reported an error: server_error: An error occurred while processing your request. You can retry your request"),
        "{stdout}"
    );
    assert!(stdout.contains("(gave up after 3 attempts)"), "{stdout}");
}

#[test]
fn responses_nested_rate_limit_error_is_retried_and_keeps_message_and_code() {
    let nested = json!({"type": "error", "sequence_number": 2, "error": {
        "type": "too_many_requests", "code": "rate_limit_exceeded", "param": null,
        "message": "Rate limit reached for fake-model on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 20ms."}});
    let fake = FakeProvider::start(
        vec![Step::Raw(responses_failing(nested.clone()))],
        Step::Raw(responses_stream(
            "resp_2",
            &[message("msg_1", "hello")],
            8,
            2,
        )),
    );
    let project = Project::for_fake("openai-responses", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    assert_eq!(fake.received().len(), 2, "the rate limit was retried");

    let fake = FakeProvider::start(vec![], Step::Raw(responses_failing(nested)));
    let project = Project::for_fake("openai-responses", &fake, "max_retries = 1\n");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("failed on request 1: the provider reported an error: rate_limit_exceeded: Rate limit reached for fake-model on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 20ms. (gave up after 2 attempts)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("the model stream reported an error"),
        "{stdout}"
    );
}

#[test]
fn responses_flat_error_event_is_retried_and_a_fatal_one_is_not() {
    let flat = json!({"type": "error", "sequence_number": 2, "code": "server_error", "param": null,
        "message": "The server had an error while processing your request. Sorry about that!"});
    let fake = FakeProvider::start(
        vec![Step::Raw(responses_failing(flat))],
        Step::Raw(responses_stream(
            "resp_2",
            &[message("msg_1", "hello")],
            8,
            2,
        )),
    );
    let project = Project::for_fake("openai-responses", &fake, "");
    project.case("greet", GREET);
    let evalhost_output = project.evalhost(&["run", "--live", "cases"]);
    evalhost_output.assert_code(0);
    let _code = evalhost_output.code();
    assert_eq!(fake.received().len(), 2);

    let fatal = json!({"type": "response.failed", "sequence_number": 2, "response": {
        "id": "resp_x", "status": "failed", "output": [],
        "error": {"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model. Please adjust your input and try again."}}});
    let fake = FakeProvider::start(vec![], Step::Raw(responses_failing(fatal)));
    let project = Project::for_fake("openai-responses", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 1, "not retried");
    assert!(
        stdout.contains("failed on request 1: the provider reported an error: context_length_exceeded: Your input exceeds the context window of this model."),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------
// OpenAI Chat Completions.

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764500000,
           "model": "fake-model", "system_fingerprint": "fp_1",
           "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
}

fn chat_usage(input: u64, output: u64) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1764500000,
           "model": "fake-model", "choices": [],
           "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
                     "prompt_tokens_details": {"cached_tokens": 0}}})
}

#[test]
fn chat_clean_turn_with_ids_repeated_on_every_delta() {
    // Some servers repeat the call's id (and name) on every delta; the id stays `call_r`.
    let delta = |arguments: &str| {
        json!({"tool_calls": [{"index": 0, "id": "call_r", "type": "function",
                "function": {"name": "write_file", "arguments": arguments}}]})
    };
    let (a, b) = ARGS.split_at(ARGS.len() / 2);
    let first = sse(&[
        chunk(
            json!({"role": "assistant", "content": null, "refusal": null}),
            Value::Null,
        ),
        chunk(delta(a), Value::Null),
        chunk(delta(b), Value::Null),
        chunk(json!({}), json!("tool_calls")),
        chat_usage(50, 12),
        json!("[DONE]"),
    ]);
    let second = sse(&[
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "done, wrote "}), Value::Null),
        chunk(json!({"content": "hello"}), Value::Null),
        chunk(json!({}), json!("stop")),
        chat_usage(70, 5),
        json!("[DONE]"),
    ]);
    let fake = FakeProvider::start(
        vec![Step::Raw(first), Step::Raw(second)],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("openai-chat", &fake, "reasoning_effort = \"low\"\n");
    project.case("write", WRITE);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert_eq!(tokens(&row(stdout, "write")), ("120", "17"));
    let received = fake.received();
    assert_eq!(received[0].body["reasoning_effort"], "low");
    let messages = received[1].body["messages"].as_array().expect("messages");
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_r");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "write_file");
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], ARGS);
    let tool = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool message");
    assert_eq!(tool["tool_call_id"], "call_r");
}

#[test]
fn chat_refusal_is_the_answers_text() {
    let refusal = sse(&[
        chunk(
            json!({"role": "assistant", "content": null, "refusal": ""}),
            Value::Null,
        ),
        chunk(json!({"refusal": "I'm sorry, I can't "}), Value::Null),
        chunk(json!({"refusal": "help with that."}), Value::Null),
        chunk(json!({}), json!("stop")),
        chat_usage(9, 6),
        json!("[DONE]"),
    ]);
    let fake = FakeProvider::start(vec![], Step::Raw(refusal));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case(
        "refuse",
        "prompt: Do something bad.\nruns: 1\ngraders:\n  - final_text_contains: \"can't help with that\"\n",
    );
    let out = project.path().join("out");
    let out_arg = out.display().to_string();
    let output = project.evalhost(&["run", "--live", "--out", &out_arg, "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert!(row(stdout, "refuse").contains(&"pass"), "{stdout}");
    // The refusal is the run's final text in the session log --out keeps.
    let mut logs = Vec::new();
    let mut dirs = vec![out];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if std::fs::read_to_string(&path)
                .is_ok_and(|text| text.contains("I'm sorry, I can't help with that."))
            {
                logs.push(path);
            }
        }
    }
    assert!(!logs.is_empty(), "no file under --out holds the refusal");
}

#[test]
fn chat_error_chunk_is_retried_like_its_status() {
    // OpenRouter's mid-stream error: an `error` with a numeric code, finish_reason `error`.
    let broken = sse(&[
        chunk(json!({"role": "assistant", "content": "hel"}), Value::Null),
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "fake-model",
               "error": {"code": 502, "message": "Provider returned error: upstream disconnected"},
               "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}),
    ]);
    let fine = sse(&[
        chunk(
            json!({"role": "assistant", "content": "hello"}),
            Value::Null,
        ),
        chunk(json!({}), json!("stop")),
        chat_usage(9, 2),
        json!("[DONE]"),
    ]);
    let fake = FakeProvider::start(vec![Step::Raw(broken.clone())], Step::Raw(fine));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let _code = output.code();
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 2, "retried once");
    assert_eq!(
        tokens(&row(stdout, "greet")),
        ("9", "2"),
        "only the answer's usage"
    );

    // vLLM's shape, a string type, kept with its text; a 400 is not retried.
    let invalid = sse(&[
        json!({"error": {"object": "error", "type": "BadRequestError",
        "message": "tool schema invalid", "code": 400}}),
    ]);
    let fake = FakeProvider::start(vec![], Step::Raw(invalid));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 1);
    assert!(
        stdout.contains("failed on request 1: the provider reported an error: BadRequestError: tool schema invalid"),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------
// Anthropic Messages.

fn message_start(input: u64, cache_read: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant",
        "model": "fake-model", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": cache_read, "output_tokens": 1}}})
}

fn message_end(stop: &str, input: u64, cache_read: u64, output: u64) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"input_tokens": input, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": cache_read, "output_tokens": output}}),
        json!({"type": "message_stop"}),
    ]
}

/// Thinking (with its signature), a text block and a tool_use, as Claude streams them.
fn anthropic_thinking_call() -> String {
    let (a, b) = ARGS.split_at(ARGS.len() / 2);
    let mut events = vec![
        message_start(100, 20),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants a file. "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "I'll call write_file."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCkYIBxgCKkBsig=="}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Writing it."}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_01A", "name": "write_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": a}}),
        json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": b}}),
        json!({"type": "content_block_stop", "index": 3}),
    ];
    events.extend(message_end("tool_use", 100, 20, 60));
    sse(&events)
}

fn anthropic_text_reply(text: &str, input: u64, output: u64) -> String {
    let mut events = vec![
        message_start(input, 0),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
    ];
    events.extend(message_end("end_turn", input, 0, output));
    sse(&events)
}

#[test]
fn anthropic_clean_turn_passes_thinking_back_with_its_signature() {
    let fake = FakeProvider::start(
        vec![
            Step::Raw(anthropic_thinking_call()),
            Step::Raw(anthropic_text_reply("done, hello is written", 180, 9)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("anthropic", &fake, "reasoning_effort = \"medium\"\n");
    project.case("write", WRITE);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    // 100 uncached + 20 cache reads, then 180; 60 + 9 out.
    assert_eq!(tokens(&row(stdout, "write")), ("300", "69"));

    let received = fake.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body["thinking"], json!({"type": "adaptive"}));
    assert_eq!(
        received[0].body["output_config"],
        json!({"effort": "medium"})
    );
    let messages = received[1].body["messages"].as_array().expect("messages");
    let assistant = &messages[1];
    assert_eq!(assistant["role"], "assistant");
    let blocks = assistant["content"].as_array().expect("blocks");
    assert_eq!(
        blocks[0],
        json!({"type": "thinking", "thinking": "The user wants a file. I'll call write_file.", "signature": "EqQBCkYIBxgCKkBsig=="})
    );
    assert_eq!(
        blocks[1],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
    );
    assert_eq!(blocks[2]["type"], "text");
    assert_eq!(blocks[3]["type"], "tool_use");
    assert_eq!(blocks[3]["id"], "toolu_01A");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_01A");
}

#[test]
fn anthropic_thinking_budget_is_sent_for_older_models() {
    let fake = FakeProvider::start(vec![], Step::Raw(anthropic_text_reply("hello", 5, 1)));
    let project = Project::for_fake(
        "anthropic",
        &fake,
        "thinking_budget_tokens = 2048\nmax_tokens = 8192\n",
    );
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let body = &fake.received()[0].body;
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(body["max_tokens"], 8192);
    assert!(body.get("output_config").is_none());
}

#[test]
fn anthropic_overloaded_error_event_is_retried_like_529() {
    let overloaded = sse(&[
        message_start(10, 0),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
               "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}),
    ]);
    let fake = FakeProvider::start(
        vec![Step::Raw(overloaded.clone())],
        Step::Raw(anthropic_text_reply("hello", 10, 2)),
    );
    let project = Project::for_fake("anthropic", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    let stdout = output.stdout();
    assert_eq!(fake.received().len(), 2);
    assert_eq!(tokens(&row(stdout, "greet")), ("10", "2"));

    let fake = FakeProvider::start(vec![], Step::Raw(overloaded));
    let project = Project::for_fake("anthropic", &fake, "max_retries = 1\n");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    let stdout = output.stdout();
    assert!(
        stdout.contains("failed on request 1: the provider reported an error: overloaded_error: Overloaded (gave up after 2 attempts)"),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------------------
// The setting.

#[test]
fn reasoning_effort_is_checked_and_the_environment_sets_it() {
    let fake = FakeProvider::start(vec![], Step::Raw(anthropic_text_reply("hello", 5, 1)));
    let project = Project::for_fake("anthropic", &fake, "reasoning_effort = \"minimal\"\n");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("provider field `reasoning_effort`") && stderr.contains("`minimal` is not an effort anthropic accepts (known: low, medium, high, xhigh, max)"),
        "{stderr}"
    );
    assert!(fake.received().is_empty());
    let output = project.evalhost_with(
        &["run", "--live", "cases"],
        &[
            ("EVALHOST_TEST_KEY", SECRET),
            ("EVALHOST_REASONING_EFFORT", "max"),
        ],
    );
    output.assert_code(0);
    assert_eq!(
        fake.received()[0].body["output_config"],
        json!({"effort": "max"})
    );
}

// ---------------------------------------------------------------------------------------
// Gemini.

/// A Gemini chunk of `parts`, finished with `usage` when given.
fn gemini_chunk(parts: Value, usage: Option<(u64, u64)>) -> Value {
    let mut chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
                           "modelVersion": "fake-model", "responseId": "r1"});
    if let Some((input, output)) = usage {
        chunk["candidates"][0]["finishReason"] = json!("STOP");
        chunk["usageMetadata"] = json!({"promptTokenCount": input, "candidatesTokenCount": output,
                                        "totalTokenCount": input + output});
    }
    chunk
}

fn gemini_text_reply(text: &str, input: u64, output: u64) -> String {
    let (a, b) = text.split_at(text.len() / 2);
    sse(&[
        gemini_chunk(json!([{"text": a}]), None),
        gemini_chunk(json!([{"text": b}]), Some((input, output))),
    ])
}

#[test]
fn gemini_clean_turn_sends_calls_back_by_id_with_their_thought_signature() {
    // Gemini 3 gives the call no id but a thought signature it requires back with the call.
    let call = sse(&[
        gemini_chunk(json!([{"text": "Writing it."}]), None),
        gemini_chunk(
            json!([{"functionCall": {"name": "write_file", "args": serde_json::from_str::<Value>(ARGS).unwrap()},
                    "thoughtSignature": "c2lnbmF0dXJl"}]),
            Some((100, 60)),
        ),
    ]);
    let fake = FakeProvider::start(
        vec![
            Step::Raw(call),
            Step::Raw(gemini_text_reply("done, hello is written", 180, 9)),
        ],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("gemini", &fake, "reasoning_effort = \"low\"\n");
    project.case("write", WRITE);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(0);
    assert_eq!(tokens(&row(output.stdout(), "write")), ("280", "69"));

    let received = fake.received();
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].path,
        "/v1/models/fake-model:streamGenerateContent"
    );
    assert_eq!(received[0].headers["x-goog-api-key"], SECRET);
    assert!(received[0].headers.get("authorization").is_none());
    assert_eq!(
        received[0].body["generationConfig"]["thinkingConfig"],
        json!({"thinkingLevel": "low"})
    );
    assert!(
        received[0].body["systemInstruction"]["parts"][0]["text"].is_string(),
        "{}",
        received[0].body
    );
    let declared = &received[0].body["tools"][0]["functionDeclarations"];
    assert!(
        declared
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "write_file" && f["parametersJsonSchema"]["type"] == "object"),
        "{declared}"
    );
    let contents = received[1].body["contents"].as_array().expect("contents");
    let model = &contents[contents.len() - 2];
    assert_eq!(model["role"], "model");
    let parts = model["parts"].as_array().expect("parts");
    let call = parts
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .expect("the call goes back");
    assert_eq!(call["thoughtSignature"], "c2lnbmF0dXJl");
    assert_eq!(call["functionCall"]["args"]["path"], "a.txt");
    let id = call["functionCall"]["id"].as_str().expect("an id");
    let result = &contents[contents.len() - 1];
    assert_eq!(result["role"], "user");
    assert_eq!(result["parts"][0]["functionResponse"]["id"], id);
    assert_eq!(result["parts"][0]["functionResponse"]["name"], "write_file");
    assert!(result["parts"][0]["functionResponse"]["response"]["output"].is_string());
}

#[test]
fn gemini_safety_stop_is_the_runs_error_and_not_retried() {
    let fake = FakeProvider::start(
        vec![Step::Raw(sse(&[
            json!({"candidates": [{"finishReason": "SAFETY", "index": 0}]}),
        ]))],
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = Project::for_fake("gemini", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "cases"]);
    output.assert_code(1);
    assert!(
        output
            .stdout()
            .contains("Gemini stopped the answer: SAFETY"),
        "{}",
        output.stdout()
    );
    assert_eq!(fake.received().len(), 1, "a refusal is not retried");
}

// ---------------------------------------------------------------------------------------
// The library: a reply says how many attempts it took.

fn complete(
    provider: &evalhost::internals::api::Provider,
) -> Result<evalhost::internals::api::Reply, evalhost::internals::api::ProviderError> {
    let request: evalhost::internals::api::responses::wire::ResponsesRequest = serde_json::from_value(json!({
        "model": "agent", "input": [{"role": "user", "content": "Say hello."}], "stream": true, "store": false,
    }))
    .expect("request");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(provider.complete(&request, &Default::default()))
}

#[test]
fn each_dialects_in_stream_error_costs_one_attempt_and_the_reply_counts_them() {
    use evalhost::internals::wire::Api;
    let nested = json!({"type": "error", "sequence_number": 2, "error": {
        "type": "too_many_requests", "code": "rate_limit_exceeded", "message": "Slow down. Please try again in 10ms."}});
    let cases = [
        (
            Api::Responses,
            vec![responses_failing(server_error()), responses_failing(nested)],
            responses_stream("resp_3", &[message("msg_1", "hello")], 7, 3),
        ),
        (
            Api::Chat,
            vec![sse(&[
                json!({"error": {"code": 429, "message": "rate limited"}}),
            ])],
            sse(&[
                chunk(
                    json!({"role": "assistant", "content": "hello"}),
                    json!("stop"),
                ),
                chat_usage(7, 3),
                json!("[DONE]"),
            ]),
        ),
        (
            Api::Anthropic,
            vec![sse(&[
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ])],
            anthropic_text_reply("hello", 7, 3),
        ),
        (
            Api::Gemini,
            vec![sse(&[
                json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
            ])],
            gemini_text_reply("hello", 7, 3),
        ),
    ];
    for (kind, failures, answer) in cases {
        let attempts = failures.len() as u32 + 1;
        let fake = FakeProvider::start(
            failures.into_iter().map(Step::Raw).collect(),
            Step::Raw(answer),
        );
        let reply = complete(&provider(kind, &fake)).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(reply.attempts, attempts, "{kind}");
        assert_eq!(fake.received().len() as u32, attempts, "{kind}");
        assert_eq!((reply.input_tokens, reply.output_tokens), (7, 3), "{kind}");
        assert_eq!(
            reply.output,
            [evalhost::internals::session::OutputItem::Message {
                text: "hello".to_owned()
            }],
            "{kind}"
        );
    }
}

#[test]
fn http_overloads_and_cut_streams_are_retried_in_every_dialect() {
    use evalhost::internals::wire::Api;
    // `data:` payloads of each dialect's opening events, then the connection dies.
    let responses_head = vec![
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "r", "status": "in_progress", "output": []}}).to_string(),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
               "item": {"type": "message", "id": "m", "role": "assistant", "content": []}}).to_string(),
    ];
    let chat_head =
        vec![chunk(json!({"role": "assistant", "content": "hel"}), Value::Null).to_string()];
    let gemini_head = vec![gemini_chunk(json!([{"text": "hel"}]), None).to_string()];
    let anthropic_head = vec![
        message_start(7, 0).to_string(),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}).to_string(),
    ];
    let cases = [
        (
            Api::Responses,
            vec![
                Step::Status(503, None, "upstream connect error"),
                Step::Cut(responses_head),
            ],
            responses_stream("resp_3", &[message("msg_1", "hello")], 7, 3),
        ),
        (
            Api::Chat,
            vec![
                Step::Cut(chat_head),
                Step::Status(429, Some("0"), "rate limited"),
            ],
            sse(&[
                chunk(
                    json!({"role": "assistant", "content": "hello"}),
                    json!("stop"),
                ),
                chat_usage(7, 3),
                json!("[DONE]"),
            ]),
        ),
        (
            Api::Anthropic,
            vec![
                Step::Status(529, None, "Overloaded"),
                Step::Cut(anthropic_head),
            ],
            anthropic_text_reply("hello", 7, 3),
        ),
        (
            Api::Gemini,
            vec![
                Step::Status(429, Some("0"), "Resource exhausted"),
                Step::Cut(gemini_head),
            ],
            gemini_text_reply("hello", 7, 3),
        ),
    ];
    for (kind, failures, answer) in cases {
        let fake = FakeProvider::start(failures, Step::Raw(answer));
        let reply = complete(&provider(kind, &fake)).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(reply.attempts, 3, "{kind}");
        assert_eq!(fake.received().len(), 3, "{kind}");
        assert_eq!((reply.input_tokens, reply.output_tokens), (7, 3), "{kind}");
    }
}

//! The scripted model server over real HTTP on 127.0.0.1: exact Responses stream shapes,
//! call ids, synthetic usage, and strictness in both directions.

use evalhost::case::{Location, ScriptReply, ScriptStep};
use evalhost::internals::model::{ModelServer, Outcome};
use evalhost::internals::wire::SseParser;
use serde_json::{Value, json};

fn text(text: &str) -> ScriptStep {
    ScriptStep {
        reply: ScriptReply::Text(text.to_owned()),
        expect_input_contains: None,
        location: Location::default(),
        usage: None,
    }
}

fn call(tool: &str, arguments: Value) -> ScriptStep {
    ScriptStep {
        reply: ScriptReply::Call {
            tool: tool.to_owned(),
            arguments,
        },
        expect_input_contains: None,
        location: Location::default(),
        usage: None,
    }
}

struct Answer {
    status: u16,
    content_type: String,
    /// `(event:, data as JSON)` per SSE event; the raw body when not an event stream.
    events: Vec<(Option<String>, Value)>,
    raw: String,
}

impl Answer {
    fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|(_, data)| data["type"].as_str().expect("type"))
            .collect()
    }

    fn last(&self) -> &Value {
        &self.events.last().expect("events").1
    }
}

async fn post(url: &str, body: &str) -> Answer {
    evalhost::internals::tls::install_crypto_provider();
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let raw = response.text().await.expect("body");
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    if content_type.starts_with("text/event-stream") {
        for event in parser.push(raw.as_bytes()).expect("parse") {
            let data = serde_json::from_str(&event.data).expect("event data is JSON");
            events.push((event.event, data));
        }
        assert!(parser.finish().is_none(), "every event is terminated");
    }
    Answer {
        status,
        content_type,
        events,
        raw,
    }
}

fn request(model: &str, extra: &str) -> String {
    format!(
        r#"{{"model":"{model}","input":[{{"role":"user","content":"hi{extra}"}}],"stream":true}}"#
    )
}

#[tokio::test]
async fn text_step_streams_the_full_responses_event_sequence() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![text("Hello from the script.")]);
    let body = request("gpt-test", "");
    let answer = post(&format!("{}/responses", script.base_url()), &body).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.content_type, "text/event-stream");
    assert_eq!(
        answer.types(),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (i, (event, data)) in answer.events.iter().enumerate() {
        assert_eq!(
            event.as_deref(),
            data["type"].as_str(),
            "event: names the type"
        );
        assert_eq!(data["sequence_number"], json!(i));
    }
    let created = &answer.events[0].1["response"];
    assert_eq!(
        (
            &created["id"],
            &created["object"],
            &created["status"],
            &created["model"],
            &created["output"]
        ),
        (
            &json!("resp_1"),
            &json!("response"),
            &json!("in_progress"),
            &json!("gpt-test"),
            &json!([])
        )
    );
    assert_eq!(
        answer.events[2].1["item"],
        json!({"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []})
    );
    let empty_part = json!({"type": "output_text", "text": "", "annotations": [], "logprobs": []});
    assert_eq!(answer.events[3].1["part"], empty_part);
    let deltas: String = answer.events[4..7]
        .iter()
        .map(|(_, d)| {
            assert_eq!(d["item_id"], "msg_1");
            assert_eq!(
                (d["output_index"].as_u64(), d["content_index"].as_u64()),
                (Some(0), Some(0))
            );
            d["delta"].as_str().expect("delta")
        })
        .collect();
    assert_eq!(deltas, "Hello from the script.");
    assert_eq!(answer.events[7].1["text"], "Hello from the script.");
    let part = json!({"type": "output_text", "text": "Hello from the script.", "annotations": [], "logprobs": []});
    assert_eq!(answer.events[8].1["part"], part);
    let message = json!({
        "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [part],
    });
    assert_eq!(
        answer.events[9].1,
        json!({"type": "response.output_item.done", "sequence_number": 9, "output_index": 0, "item": message})
    );
    // Synthetic usage is what it always was: the typed item's bytes / 4.
    let typed = json!({
        "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": "Hello from the script.", "annotations": []}],
    });
    let output_bytes = serde_json::to_string(&json!([typed])).expect("json").len() as u64;
    let input_tokens = body.len() as u64 / 4;
    let output_tokens = output_bytes / 4;
    let completed = &answer.last()["response"];
    assert_eq!(answer.last()["type"], "response.completed");
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"], json!([message]));
    assert_eq!(
        completed["usage"],
        json!({
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        })
    );
    assert_eq!(script.failure(), None);
}

#[tokio::test]
async fn call_steps_complete_with_one_function_call_numbered_over_the_script() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![
        call("bash", json!({"command": "ls -la"})),
        text("between"),
        call("write_file", json!({"path": "a.txt", "content": "x"})),
    ]);
    let url = format!("{}/responses", script.base_url());
    let first = post(&url, &request("m", "")).await;
    assert_eq!(
        first.types(),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let item = json!({
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash",
        "arguments": "{\"command\":\"ls -la\"}", "status": "completed",
    });
    assert_eq!(
        first.events[2].1["item"],
        json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash",
               "arguments": "", "status": "in_progress"})
    );
    let arguments: String = first.events[3..6]
        .iter()
        .map(|(_, d)| d["delta"].as_str().expect("delta"))
        .collect();
    assert_eq!(arguments, "{\"command\":\"ls -la\"}");
    assert_eq!(first.events[6].1["arguments"], item["arguments"]);
    assert_eq!(first.events[6].1["name"], "bash");
    assert_eq!(first.events[7].1["item"], item);
    assert_eq!(first.last()["response"]["output"], json!([item]));
    assert_eq!(first.last()["response"]["status"], "completed");
    let output_bytes = serde_json::to_string(&json!([item])).expect("json").len() as u64;
    assert_eq!(
        first.last()["response"]["usage"]["output_tokens"],
        json!(output_bytes / 4)
    );

    post(&url, &request("m", "")).await;
    let third = post(&url, &request("m", "")).await;
    let output = &third.last()["response"]["output"][0];
    assert_eq!(
        output["call_id"], "call_2",
        "call ids count call steps only"
    );
    assert_eq!(output["id"], "fc_3");
    assert_eq!(output["name"], "write_file");
    let arguments: Value =
        serde_json::from_str(output["arguments"].as_str().expect("arguments text")).expect("JSON");
    assert_eq!(arguments, json!({"path": "a.txt", "content": "x"}));
    assert_eq!(script.requests(), 3);
    assert_eq!(script.unused_steps(), 0);
    assert_eq!(script.failure(), None);
}

#[tokio::test]
async fn a_call_to_a_declared_custom_tool_is_a_custom_tool_call() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![call(
        "apply_patch",
        json!({"input": "*** Begin Patch\n*** End Patch"}),
    )]);
    let body = json!({"model": "m", "input": "patch it", "stream": true, "tools": [
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}},
        {"type": "web_search"},
    ]});
    let answer = post(
        &format!("{}/responses", script.base_url()),
        &body.to_string(),
    )
    .await;
    assert_eq!(
        answer.types()[2..],
        [
            "response.output_item.added",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(
        answer.last()["response"]["output"],
        json!([{"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply_patch",
                "input": "*** Begin Patch\n*** End Patch", "status": "completed"}])
    );
}

#[tokio::test]
async fn input_tokens_follow_the_request_size() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![text("a"), text("a")]);
    let url = format!("{}/responses", script.base_url());
    let small = request("m", "");
    let large = request("m", &"x".repeat(4000));
    let tokens = |a: &Answer| a.last()["response"]["usage"]["input_tokens"].as_u64();
    assert_eq!(
        tokens(&post(&url, &small).await),
        Some(small.len() as u64 / 4)
    );
    assert_eq!(
        tokens(&post(&url, &large).await),
        Some(large.len() as u64 / 4)
    );
}

#[tokio::test]
async fn a_request_beyond_the_script_fails_loudly() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![text("only one")]);
    let url = format!("{}/responses", script.base_url());
    post(&url, &request("m", "")).await;
    let answer = post(&url, &request("m", "")).await;
    let message = "Model script exhausted: request 2 has no scripted response";
    assert_eq!(answer.status, 200);
    assert_eq!(answer.types(), ["response.failed"]);
    assert_eq!(answer.last()["response"]["status"], "failed");
    assert_eq!(answer.last()["response"]["error"]["message"], message);
    assert_eq!(script.failure().as_deref(), Some(message));
    // The first failure is the one reported.
    post(&url, &request("m", "")).await;
    assert_eq!(script.failure().as_deref(), Some(message));
}

#[tokio::test]
async fn a_step_checks_its_expected_input() {
    let server = ModelServer::start().await.expect("start");
    let mut expecting = text("ok");
    expecting.expect_input_contains = Some("did not approve".into());
    let mut quoted = text("ok");
    // Quotes are escaped in the JSON body; the check still sees the text the agent sent.
    quoted.expect_input_contains = Some("say \"hi\"".into());
    let script = server.script(vec![text("first"), expecting.clone()]);
    let url = format!("{}/responses", script.base_url());
    post(&url, &request("m", "")).await;
    let answer = post(&url, &request("m", " The user approved.")).await;
    let message = "Request 2 did not contain \"did not approve\"";
    assert_eq!(answer.types(), ["response.failed"]);
    assert_eq!(answer.last()["response"]["error"]["message"], message);
    assert_eq!(script.failure().as_deref(), Some(message));

    let script = server.script(vec![expecting, quoted]);
    let url = format!("{}/responses", script.base_url());
    let first = post(&url, &request("m", " The user did not approve this call.")).await;
    assert_eq!(first.last()["type"], "response.completed");
    let body = json!({"model": "m", "input": [{"role": "user", "content": "please say \"hi\""}], "stream": true});
    let second = post(&url, &body.to_string()).await;
    assert_eq!(second.last()["type"], "response.completed");
    assert_eq!(script.failure(), None);
}

#[tokio::test]
async fn a_request_without_stream_gets_one_response_object() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![text("a"), call("bash", json!({"command": "ls"}))]);
    let url = format!("{}/responses", script.base_url());
    for body in [
        r#"{"model":"m","input":[],"stream":false}"#,
        r#"{"model":"m","input":"hi"}"#,
    ] {
        let answer = post(&url, body).await;
        assert_eq!(answer.status, 200);
        assert_eq!(answer.content_type, "application/json");
        let response: Value = serde_json::from_str(&answer.raw).expect("JSON");
        assert_eq!(response["object"], "response");
        assert_eq!(response["status"], "completed");
        let kind = response["output"][0]["type"].as_str().expect("an item");
        assert!(kind == "message" || kind == "function_call", "{kind}");
    }
    assert_eq!(script.failure(), None);

    let script = server.script(vec![text("a")]);
    let garbage = post(&format!("{}/responses", script.base_url()), "{not json").await;
    assert_eq!(garbage.status, 400);
    assert!(
        script
            .failure()
            .expect("failure")
            .starts_with("Request 1 is not a JSON Responses request"),
    );
}

#[tokio::test]
async fn unserved_requests_are_answered_in_the_dialect_s_error_shape_and_recorded() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![text("a")]);
    let base = script.base_url().to_owned();
    evalhost::internals::tls::install_crypto_provider();
    let client = reqwest::Client::new();
    let get = client
        .get(format!("{base}/responses"))
        .header("upgrade", "websocket")
        .header("connection", "Upgrade")
        .send()
        .await
        .expect("get");
    assert_eq!(get.status().as_u16(), 404);
    let error: Value = get.json().await.expect("JSON");
    assert!(
        error["error"]["message"]
            .as_str()
            .expect("message")
            .starts_with("WebSocket upgrade to /v1/responses is not served"),
        "{error}"
    );
    let wrong = post(&format!("{base}/completions"), "{}").await;
    assert_eq!(wrong.status, 404);
    let head = client
        .head(format!("{}/v1/messages", script.anthropic_base_url()))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status().as_u16(), 405);
    let record = script.record();
    let unserved: Vec<String> = record
        .iter()
        .map(|exchange| match &exchange.outcome {
            Outcome::Unserved { status, .. } => format!("{} {status}", exchange.target()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        unserved,
        [
            "GET /v1/responses 404",
            "POST /v1/completions 404",
            "HEAD /v1/messages 405"
        ]
    );
    assert_eq!(
        script.requests(),
        0,
        "unserved requests do not consume steps"
    );
    assert_eq!(script.failure(), None);
}

#[tokio::test]
async fn scripts_are_independent_and_unregistered_when_dropped() {
    let server = ModelServer::start().await.expect("start");
    let a = server.script(vec![text("from a")]);
    let b = server.script(vec![text("from b"), text("b again")]);
    assert_ne!(a.base_url(), b.base_url());
    let (url_a, url_b, body) = (
        format!("{}/responses", a.base_url()),
        format!("{}/responses", b.base_url()),
        request("m", ""),
    );
    let (ra, rb) = tokio::join!(post(&url_a, &body), post(&url_b, &body));
    assert_eq!(
        ra.last()["response"]["output"][0]["content"][0]["text"],
        "from a"
    );
    assert_eq!(
        rb.last()["response"]["output"][0]["content"][0]["text"],
        "from b"
    );
    assert_eq!(b.unused_steps(), 1);

    let url = format!("{}/responses", a.base_url());
    drop(a);
    let gone = post(&url, &request("m", "")).await;
    assert_eq!(gone.status, 404);
    assert!(gone.raw.contains("no session"), "{}", gone.raw);
    let root = post(
        &format!("http://{}/v1/responses", server.addr()),
        &request("m", ""),
    )
    .await;
    assert_eq!(root.status, 404);
}

/// Gemini's paths name the model and the method; one script answers them as Google does.
#[tokio::test]
async fn gemini_is_served_as_one_object_as_sse_chunks_or_as_a_json_array() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![
        call("read_file", json!({"path": "in.txt"})),
        text("It says forty-two."),
        text("Again: forty-two."),
    ]);
    let root = format!("{}/v1beta/models/gemini-x", script.anthropic_base_url());
    // Each request its own conversation (one that repeats the last is the agent's retry).
    let body = |k: u32| {
        format!(
            r#"{{"contents":[{{"role":"user","parts":[{{"text":"What does in.txt say? ({k})"}}]}}]}}"#
        )
    };

    let whole = post(&format!("{root}:generateContent"), &body(1)).await;
    assert_eq!(whole.status, 200);
    assert!(whole.content_type.starts_with("application/json"));
    let object: Value = serde_json::from_str(&whole.raw).expect("one JSON object");
    let candidate = &object["candidates"][0];
    assert_eq!(candidate["finishReason"], "STOP");
    assert_eq!(candidate["content"]["role"], "model");
    assert_eq!(
        candidate["content"]["parts"][0]["functionCall"],
        json!({"id": "call_1", "name": "read_file", "args": {"path": "in.txt"}})
    );
    assert!(object["usageMetadata"]["promptTokenCount"].as_u64() > Some(0));
    assert_eq!(object["modelVersion"], "gemini-x");

    let streamed = post(&format!("{root}:streamGenerateContent?alt=sse"), &body(2)).await;
    assert!(streamed.content_type.starts_with("text/event-stream"));
    assert!(streamed.events.len() >= 2, "a text is sent in deltas");
    assert!(streamed.events.iter().all(|(event, _)| event.is_none()));
    let text: String = streamed
        .events
        .iter()
        .map(|(_, chunk)| {
            chunk["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .expect("a text part")
                .to_owned()
        })
        .collect();
    assert_eq!(text, "It says forty-two.");
    assert_eq!(streamed.last()["candidates"][0]["finishReason"], "STOP");
    assert!(streamed.events[0].1.get("usageMetadata").is_none());
    assert!(streamed.last()["usageMetadata"]["totalTokenCount"].as_u64() > Some(0));

    let array = post(&format!("{root}:streamGenerateContent"), &body(3)).await;
    let chunks: Vec<Value> = serde_json::from_str(&array.raw).expect("a JSON array of chunks");
    assert_eq!(
        chunks.last().unwrap()["candidates"][0]["finishReason"],
        "STOP"
    );

    let counted = post(&format!("{root}:countTokens"), &body(4)).await;
    let counted: Value = serde_json::from_str(&counted.raw).expect("JSON");
    assert!(counted["totalTokens"].as_u64() > Some(0));
    assert_eq!(script.requests(), 3, "countTokens is not a model request");

    let beyond = post(&format!("{root}:generateContent"), &body(5)).await;
    assert_eq!(beyond.status, 400);
    let error: Value = serde_json::from_str(&beyond.raw).expect("Google's error body");
    assert_eq!(error["error"]["code"], 400);
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("request 4 has no scripted response"),
        "{error}"
    );
    let unknown = post(&format!("{root}:embedContent"), &body(6)).await;
    assert_eq!(unknown.status, 404);
    let error: Value = serde_json::from_str(&unknown.raw).expect("Google's error body");
    assert_eq!(error["error"]["status"], "NOT_FOUND", "{error}");
}

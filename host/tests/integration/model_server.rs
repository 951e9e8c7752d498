//! The scripted model server over real HTTP on 127.0.0.1: exact Responses stream shapes,
//! call ids, synthetic usage, and strictness in both directions.

use evalhost::case::{Location, ScriptReply, ScriptStep};
use evalhost::model::{ModelServer, SseParser};
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
    evalhost::provider::install_crypto_provider();
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
async fn text_step_streams_deltas_then_a_completed_message() {
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
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
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
    assert_eq!(
        answer.events[0].1,
        json!({
            "type": "response.created",
            "sequence_number": 0,
            "response": {
                "id": "resp_1", "object": "response", "created_at": 0,
                "status": "in_progress", "model": "gpt-test", "output": [],
                "usage": null, "error": null,
            },
        })
    );
    let deltas: String = answer.events[1..4]
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
    let message = json!({
        "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": "Hello from the script.", "annotations": []}],
    });
    assert_eq!(
        answer.events[4].1,
        json!({"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": message})
    );
    let output_bytes = serde_json::to_string(&json!([message]))
        .expect("json")
        .len() as u64;
    let input_tokens = body.len() as u64 / 4;
    let output_tokens = output_bytes / 4;
    assert_eq!(
        *answer.last(),
        json!({
            "type": "response.completed",
            "sequence_number": 5,
            "response": {
                "id": "resp_1", "object": "response", "created_at": 0,
                "status": "completed", "model": "gpt-test", "output": [message],
                "usage": {
                    "input_tokens": input_tokens,
                    "output_tokens": output_tokens,
                    "total_tokens": input_tokens + output_tokens,
                },
                "error": null,
            },
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
            "response.output_item.done",
            "response.completed"
        ]
    );
    let item = json!({
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash",
        "arguments": "{\"command\":\"ls -la\"}", "status": "completed",
    });
    assert_eq!(first.events[1].1["item"], item);
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
async fn only_streaming_posts_to_responses_are_accepted() {
    let server = ModelServer::start().await.expect("start");
    let script = server.script(vec![text("a"), text("b")]);
    let base = script.base_url().to_owned();

    let not_streaming = post(
        &format!("{base}/responses"),
        r#"{"model":"m","input":[],"stream":false}"#,
    )
    .await;
    assert_eq!(not_streaming.status, 400);
    assert!(
        not_streaming.raw.contains("did not ask for a stream"),
        "{}",
        not_streaming.raw
    );
    assert_eq!(
        script.failure().as_deref(),
        Some(
            "Request 1 did not ask for a stream: the scripted model answers only \"stream\": true"
        )
    );

    let script = server.script(vec![text("a")]);
    let base = script.base_url().to_owned();
    let garbage = post(&format!("{base}/responses"), "{not json").await;
    assert_eq!(garbage.status, 400);
    assert!(
        script
            .failure()
            .expect("failure")
            .starts_with("Request 1 is not a JSON")
    );

    let script = server.script(vec![text("a")]);
    let base = script.base_url().to_owned();
    let chat = post(&format!("{base}/chat/completions"), &request("m", "")).await;
    assert_eq!(chat.status, 404);
    assert!(
        script
            .failure()
            .expect("failure")
            .starts_with("Request to unsupported endpoint POST "),
    );
    evalhost::provider::install_crypto_provider();
    let get = reqwest::get(format!("{base}/responses"))
        .await
        .expect("get");
    assert_eq!(get.status().as_u16(), 404);
    assert_eq!(
        script.requests(),
        0,
        "rejected endpoints do not consume steps"
    );
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
    assert!(gone.raw.contains("no script"), "{}", gone.raw);
    let root = post(
        &format!("http://{}/v1/responses", server.addr()),
        &request("m", ""),
    )
    .await;
    assert_eq!(root.status, 404);
}

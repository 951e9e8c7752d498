//! A fake model provider on 127.0.0.1 for live-mode tests: answers each request with the next
//! scripted step (an SSE stream, an HTTP error with retry-after, a stream cut mid-way, or a
//! hang), records what it received, and a project directory to run `evalhost` in.

#![allow(dead_code)]

use crate::support::evalhost::{Evalhost, Output};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the fake answers one request with.
#[derive(Debug, Clone)]
pub enum Step {
    /// `200 OK` with these SSE `data:` payloads, then the end of the stream.
    Sse(Vec<String>),
    /// `200 OK`, these payloads, then the connection is dropped mid-stream.
    Cut(Vec<String>),
    /// `200 OK` with this SSE body as is (`event:` lines and all; see [`sse`]).
    Raw(String),
    /// An HTTP error with an optional `retry-after` (seconds) and this JSON error message.
    Status(u16, Option<&'static str>, &'static str),
    /// Never answer.
    Hang,
}

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    pub at: Instant,
}

struct State {
    steps: Mutex<VecDeque<Step>>,
    default: Step,
    received: Mutex<Vec<Received>>,
}

/// A running fake provider; stops with the process.
pub struct FakeProvider {
    pub base_url: String,
    state: Arc<State>,
}

impl FakeProvider {
    /// Serve `steps` in order, then `default` for every further request.
    pub fn start(steps: Vec<Step>, default: Step) -> Self {
        let state = Arc::new(State {
            steps: Mutex::new(steps.into()),
            default,
            received: Mutex::new(Vec::new()),
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let served = Arc::clone(&state);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("addr")).expect("send");
                let app = Router::new()
                    .route("/{*path}", post(answer))
                    .with_state(served);
                axum::serve(listener, app).await.expect("serve");
            });
        });
        let addr = rx.recv().expect("fake provider started");
        Self {
            base_url: format!("http://{addr}/v1"),
            state,
        }
    }

    /// Requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.received.lock().expect("lock").clone()
    }
}

async fn answer(
    axum::extract::State(state): axum::extract::State<Arc<State>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    state.received.lock().expect("lock").push(Received {
        path: uri.path().to_owned(),
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at: Instant::now(),
    });
    let step = state
        .steps
        .lock()
        .expect("lock")
        .pop_front()
        .unwrap_or_else(|| state.default.clone());
    match step {
        Step::Sse(events) => stream(events, false),
        Step::Cut(events) => stream(events, true),
        Step::Raw(body) => ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response(),
        Step::Status(code, retry_after, message) => {
            let mut response = (
                StatusCode::from_u16(code).expect("status"),
                axum::Json(json!({"error": {"message": message, "type": "fake_error"}})),
            )
                .into_response();
            if let Some(wait) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", wait.parse().expect("header"));
            }
            response
        }
        Step::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::GATEWAY_TIMEOUT.into_response()
        }
    }
}

fn stream(events: Vec<String>, cut: bool) -> Response {
    use futures_util::StreamExt;
    let chunks: Vec<Result<Bytes, std::io::Error>> = events
        .into_iter()
        .map(|data| Ok(Bytes::from(format!("data: {data}\n\n"))))
        .collect();
    // A cut comes after the first events reached the client: the connection then dies.
    let tail = futures_util::stream::once(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        Err(std::io::Error::other("cut"))
    })
    .filter(move |_| futures_util::future::ready(cut));
    let _: Option<Infallible> = None;
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(futures_util::stream::iter(chunks).chain(tail)),
    )
        .into_response()
}

/// Chat Completions stream: `text` in two deltas, or one call, then usage and `[DONE]`.
pub fn chat_text(text: &str, input: u64, output: u64) -> Vec<String> {
    let (a, b) = text.split_at(text.len() / 2);
    vec![
        json!({"choices":[{"index":0,"delta":{"role":"assistant","content":a}}]}).to_string(),
        json!({"choices":[{"index":0,"delta":{"content":b}}]}).to_string(),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
        json!({"choices":[],"usage":{"prompt_tokens":input,"completion_tokens":output}})
            .to_string(),
        "[DONE]".to_owned(),
    ]
}

/// Chat Completions stream with one tool call, its arguments split over two deltas.
pub fn chat_call(id: &str, name: &str, arguments: &Value, input: u64, output: u64) -> Vec<String> {
    let args = arguments.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    vec![
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":id,"type":"function","function":{"name":name,"arguments":a}}]}}]}).to_string(),
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":b}}]}}]}).to_string(),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}).to_string(),
        json!({"choices":[],"usage":{"prompt_tokens":input,"completion_tokens":output}}).to_string(),
        "[DONE]".to_owned(),
    ]
}

/// Anthropic Messages stream with a text block.
pub fn anthropic_text(text: &str, input: u64, output: u64) -> Vec<String> {
    vec![
        json!({"type":"message_start","message":{"usage":{"input_tokens":input,"output_tokens":1}}}).to_string(),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}).to_string(),
        json!({"type":"ping"}).to_string(),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}).to_string(),
        json!({"type":"content_block_stop","index":0}).to_string(),
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":output}}).to_string(),
        json!({"type":"message_stop"}).to_string(),
    ]
}

/// Anthropic Messages stream with one tool_use block.
pub fn anthropic_call(
    id: &str,
    name: &str,
    input_json: &Value,
    input: u64,
    output: u64,
) -> Vec<String> {
    let args = input_json.to_string();
    let (a, b) = args.split_at(args.len() / 2);
    vec![
        json!({"type":"message_start","message":{"usage":{"input_tokens":input,"output_tokens":1}}}).to_string(),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}).to_string(),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":a}}).to_string(),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":b}}).to_string(),
        json!({"type":"content_block_stop","index":0}).to_string(),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":output}}).to_string(),
        json!({"type":"message_stop"}).to_string(),
    ]
}

/// OpenAI Responses stream with these output items.
pub fn responses_output(output: Value, input: u64, out: u64) -> Vec<String> {
    vec![
        json!({"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}).to_string(),
        json!({"type":"response.completed","response":{"id":"r","status":"completed","output":output,"usage":{"input_tokens":input,"output_tokens":out,"total_tokens":input+out}}}).to_string(),
    ]
}

/// An SSE body as the real APIs write it: `event: <type>` then `data: <json>` per event,
/// the type taken from the event's `type` (Chat Completions chunks, which have none, get
/// no `event:` line; `[DONE]` is a bare data line).
pub fn sse(events: &[Value]) -> String {
    let mut body = String::new();
    for event in events {
        match event {
            Value::String(done) => body.push_str(&format!("data: {done}\n\n")),
            _ => match event["type"].as_str() {
                Some(kind) => body.push_str(&format!("event: {kind}\ndata: {event}\n\n")),
                None => body.push_str(&format!("data: {event}\n\n")),
            },
        }
    }
    body
}

/// A project directory: `evalhost.toml`, a `cases/` directory, an empty XDG config home.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    /// A project whose `evalhost.toml` holds `toml`.
    pub fn new(toml: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("evalhost.toml"), toml).expect("toml");
        std::fs::create_dir(dir.path().join("cases")).expect("cases");
        std::fs::create_dir(dir.path().join("xdg")).expect("xdg");
        Self { dir }
    }

    /// `[provider]` for `fake`, with fast retries and a short timeout.
    pub fn for_fake(kind: &str, fake: &FakeProvider, extra: &str) -> Self {
        let base = if kind == "anthropic" {
            fake.base_url.trim_end_matches("/v1").to_owned()
        } else {
            fake.base_url.clone()
        };
        let mut toml = format!(
            "[provider]\nkind = \"{kind}\"\nbase_url = \"{base}\"\nmodel = \"fake-model\"\n\
             api_key_env = \"EVALHOST_TEST_KEY\"\n{extra}"
        );
        for (key, value) in [
            ("timeout_secs", "5"),
            ("retry_base_ms", "10"),
            ("retry_max_ms", "3000"),
        ] {
            if !extra.contains(key) {
                toml.push_str(&format!("{key} = {value}\n"));
            }
        }
        Self::new(&toml)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `cases/<name>.yaml`.
    pub fn case(&self, name: &str, yaml: &str) -> PathBuf {
        let path = self.path().join("cases").join(format!("{name}.yaml"));
        std::fs::write(&path, format!("name: {name}\n{yaml}")).expect("case");
        path
    }

    /// Run `evalhost` here with the test key set: `(exit code, stdout, stderr)`.
    pub fn evalhost(&self, args: &[&str]) -> Output {
        self.evalhost_with(args, &[("EVALHOST_TEST_KEY", SECRET)])
    }

    /// Run `evalhost` here with these extra environment variables.
    pub fn evalhost_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Evalhost::new()
            .args(args)
            .current_dir(self.path())
            .env("XDG_CONFIG_HOME", self.path().join("xdg"))
            .env_remove("EVALHOST_PROVIDER")
            .env_remove("EVALHOST_BASE_URL")
            .env_remove("EVALHOST_MODEL")
            .env_remove("EVALHOST_API_KEY_ENV")
            .env_remove("EVALHOST_REASONING_EFFORT")
            .env_remove("EVALHOST_JUDGE_PROVIDER")
            .env_remove("EVALHOST_JUDGE_BASE_URL")
            .env_remove("EVALHOST_JUDGE_MODEL")
            .env_remove("EVALHOST_JUDGE_API_KEY_ENV")
            .env_remove("EVALHOST_JUDGE_REASONING_EFFORT")
            .env_remove("EVALHOST_TEST_KEY")
            .envs(env.iter().copied())
            .run()
    }
}

/// The API key the tests hand evalhost; it must never show up in any output.
pub const SECRET: &str = "sk-test-7f3c-NEVER-WRITE-ME";

/// A provider client of `kind` for the fake (short timeouts, fast retries, no API key).
pub fn provider(
    kind: evalhost::internals::wire::Api,
    fake: &FakeProvider,
) -> evalhost::internals::api::Provider {
    let base_url = match kind {
        evalhost::internals::wire::Api::Anthropic => {
            fake.base_url.trim_end_matches("/v1").to_owned()
        }
        _ => fake.base_url.clone(),
    };
    let config = evalhost::config::ProviderConfig {
        api: kind,
        base_url,
        model: "fake-model".to_owned(),
        api_key_env: None,
        timeout: std::time::Duration::from_secs(5),
        retry: evalhost::config::RetryPolicy {
            max_retries: 3,
            base_delay: std::time::Duration::from_millis(5),
            max_delay: std::time::Duration::from_millis(50),
        },
        max_concurrency: 1,
        max_tokens: 4096,
        reasoning_effort: None,
        thinking_budget_tokens: None,
        origin: "test".to_owned(),
    };
    evalhost::internals::api::Provider::new(config, None).expect("provider")
}

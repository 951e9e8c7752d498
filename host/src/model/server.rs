//! The scripted model endpoint: one loopback HTTP server answering many runs at once, each
//! through its own script under `/s/<id>/v1`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::serve::ListenerExt;
use tokio::task::JoinHandle;

use super::responses::{SequencedEvent, StreamEvent};
use super::script::{Plan, Script};
use super::sse::SseEvent;
use crate::case::ScriptStep;

/// Largest request body accepted. A turn's input grows with every tool result (each capped
/// at 64 KiB, at most 16 per turn), so this leaves ample room.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Why the model server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ModelServerError {
    /// Binding the loopback listener failed.
    #[error("failed to bind the scripted model server to 127.0.0.1")]
    Bind {
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
}

/// A scripted model server on `127.0.0.1` (ephemeral port), speaking the OpenAI Responses
/// API as a real SSE stream.
///
/// One server serves many runs: each run gets its own script through
/// [`ModelServer::script`]. The server stops when this value is dropped.
pub struct ModelServer {
    addr: SocketAddr,
    registry: Arc<Registry>,
    task: JoinHandle<()>,
}

impl ModelServer {
    /// Bind `127.0.0.1:0` and start serving on the current tokio runtime.
    pub async fn start() -> Result<Self, ModelServerError> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|source| ModelServerError::Bind { source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ModelServerError::Bind { source })?;
        let registry = Arc::new(Registry::default());
        let app = Router::new()
            .route("/s/{id}/{*rest}", any(script_request))
            .fallback(not_found)
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .with_state(Arc::clone(&registry));
        // Events are small writes; without TCP_NODELAY Nagle's algorithm can hold one back
        // for tens of milliseconds, which a suite of a thousand runs would feel.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            // serve only returns on a listener error; there is no one left to report it to,
            // and every later request then fails loudly on the client side.
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            addr,
            registry,
            task,
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Register a script; the returned handle names its base URL and, after the run, the
    /// first way the agent broke it. The script is unregistered when the handle is dropped.
    pub fn script(&self, steps: Vec<ScriptStep>) -> ScriptHandle {
        let id = self.registry.next_id.fetch_add(1, Ordering::Relaxed);
        let script = Arc::new(Script::new(steps));
        self.registry.lock().insert(id, Arc::clone(&script));
        ScriptHandle {
            id,
            base_url: format!("http://{}/s/{id}/v1", self.addr),
            script,
            registry: Arc::clone(&self.registry),
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One registered script. Dropping it unregisters the script.
pub struct ScriptHandle {
    id: u64,
    base_url: String,
    script: Arc<Script>,
    registry: Arc<Registry>,
}

impl ScriptHandle {
    /// The OpenAI-compatible base URL of this script, e.g. `http://127.0.0.1:PORT/s/7/v1`;
    /// the agent posts to `{base_url}/responses`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The first script failure, e.g. `Model script exhausted: request 3 has no scripted
    /// response` or `Request 2 did not contain "did not approve"`.
    pub fn failure(&self) -> Option<String> {
        self.script.failure()
    }

    /// Requests received so far.
    pub fn requests(&self) -> u32 {
        self.script.requests()
    }

    /// Each request the script received (as JSON) and what it was answered, in order.
    pub(crate) fn exchanges(&self) -> Vec<(serde_json::Value, super::script::Plan)> {
        self.script.exchanges()
    }

    /// Steps the agent never asked for (a run that ends early leaves some).
    pub fn unused_steps(&self) -> usize {
        self.script.len().saturating_sub(self.requests() as usize)
    }
}

impl Drop for ScriptHandle {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

#[derive(Default)]
struct Registry {
    next_id: AtomicU64,
    scripts: Mutex<HashMap<u64, Arc<Script>>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Script>>> {
        // Map operations cannot leave it inconsistent, so a poisoned lock is still usable.
        self.scripts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

async fn script_request(
    State(registry): State<Arc<Registry>>,
    Path((id, rest)): Path<(String, String)>,
    method: Method,
    body: Bytes,
) -> Response {
    let script = id
        .parse::<u64>()
        .ok()
        .and_then(|id| registry.lock().get(&id).cloned());
    let Some(script) = script else {
        return error_response(
            StatusCode::NOT_FOUND,
            &format!("no script `{id}` is registered on this server"),
        );
    };
    if method != Method::POST || rest != "v1/responses" {
        let message = format!(
            "Request to unsupported endpoint {method} /s/{id}/{rest}: the scripted model accepts only POST /s/{id}/v1/responses"
        );
        script.record_failure(&message);
        return error_response(StatusCode::NOT_FOUND, &message);
    }
    render(script.answer(body))
}

async fn not_found() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        "not a scripted model endpoint: use POST /s/<id>/v1/responses",
    )
}

/// Put a plan on the wire.
fn render(plan: Plan) -> Response {
    match plan {
        Plan::Stream(events) => sse_response(events),
        Plan::Reject { status, message } => error_response(status, &message),
    }
}

/// A `200 OK` SSE response sending each event as its own body chunk, as a live service does.
fn sse_response(events: Vec<StreamEvent>) -> Response {
    let chunks: Vec<Result<Bytes, Infallible>> = events
        .iter()
        .enumerate()
        .map(|(i, event)| Ok(Bytes::from(encode_event(i as u64, event))))
        .collect();
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(futures_util::stream::iter(chunks)),
    )
        .into_response()
}

/// One stream event as SSE: the `event:` line names the type, `data:` is the JSON.
fn encode_event(sequence_number: u64, event: &StreamEvent) -> String {
    let data = serde_json::to_string(&SequencedEvent {
        event,
        sequence_number,
    })
    .unwrap_or_default();
    SseEvent {
        event: event.event_type().map(str::to_owned),
        data,
        ..SseEvent::default()
    }
    .encode()
}

/// The error shape of the OpenAI API: `{"error": {"message", "type"}}`.
fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({
        "error": {"message": message, "type": "invalid_request_error"}
    });
    (status, axum::Json(body)).into_response()
}

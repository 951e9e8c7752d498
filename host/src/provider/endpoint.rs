//! The live model endpoint: a loopback Responses server that passes each request through to
//! the provider and records what crossed it.

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
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::{Provider, ProviderReply};
use crate::model::SseEvent;
use crate::model::responses::{
    ResponseError, ResponseItem, ResponseObject, ResponseUsage, ResponsesRequest, SequencedEvent,
    StreamEvent,
};
use crate::session::OutputItem;

/// Largest request body accepted (as the scripted server).
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// One request that crossed the endpoint and what the provider answered.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The agent's request body as JSON.
    pub request: Value,
    /// The provider's reply, or its error text.
    pub reply: Result<ProviderReply, String>,
}

#[derive(Default)]
struct Registry {
    next_id: AtomicU64,
    sessions: Mutex<HashMap<u64, Arc<Mutex<Vec<Exchange>>>>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Mutex<Vec<Exchange>>>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Shared {
    provider: Arc<Provider>,
    registry: Registry,
    /// Bounds requests in flight to the provider, whatever `--jobs` is.
    permits: Semaphore,
}

/// A loopback Responses endpoint on `127.0.0.1` passing requests through to a provider; one
/// server for many runs, each under its own `/l/<id>/v1`. Stops when dropped.
pub struct LiveEndpoint {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for LiveEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveEndpoint")
            .field("addr", &self.addr)
            .field("provider", &self.shared.provider)
            .finish()
    }
}

impl LiveEndpoint {
    /// Bind `127.0.0.1:0` and serve on the current tokio runtime.
    pub async fn start(provider: Provider) -> Result<Self, std::io::Error> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let permits = Semaphore::new(provider.config().max_concurrency);
        let shared = Arc::new(Shared {
            provider: Arc::new(provider),
            registry: Registry::default(),
            permits,
        });
        let app = Router::new()
            .route("/l/{id}/{*rest}", any(handle))
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
            .with_state(Arc::clone(&shared));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, shared, task })
    }

    /// The provider's model name.
    pub fn model(&self) -> &str {
        &self.shared.provider.config().model
    }

    /// The provider behind the endpoint.
    pub fn provider(&self) -> &Provider {
        &self.shared.provider
    }

    /// A fresh session for one run: its own base URL and recording, no state shared with
    /// other runs (each live run is independent; nothing is cached).
    pub fn session(&self) -> LiveSession {
        let id = self.shared.registry.next_id.fetch_add(1, Ordering::Relaxed);
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        self.shared
            .registry
            .lock()
            .insert(id, Arc::clone(&exchanges));
        LiveSession {
            id,
            base_url: format!("http://{}/l/{id}/v1", self.addr),
            exchanges,
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for LiveEndpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One run's view of the live endpoint. Unregistered when dropped.
pub struct LiveSession {
    id: u64,
    base_url: String,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
    shared: Arc<Shared>,
}

impl LiveSession {
    /// OpenAI-compatible base URL; the agent posts to `{base_url}/responses`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// What crossed the endpoint so far, in order.
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.exchanges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for LiveSession {
    fn drop(&mut self) {
        self.shared.registry.lock().remove(&self.id);
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    Path((id, rest)): Path<(String, String)>,
    method: Method,
    body: Bytes,
) -> Response {
    let session = id
        .parse::<u64>()
        .ok()
        .and_then(|id| shared.registry.lock().get(&id).cloned());
    let Some(session) = session else {
        return error_response(StatusCode::NOT_FOUND, "no live session with this id");
    };
    if method != Method::POST || rest != "v1/responses" {
        return error_response(
            StatusCode::NOT_FOUND,
            "the live endpoint accepts only POST .../v1/responses",
        );
    }
    let request: ResponsesRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &format!("request is not a Responses request: {e}"),
            );
        }
    };
    let n = session.lock().map_or(0, |s| s.len()) as u32 + 1;
    let result = {
        let _permit = shared.permits.acquire().await;
        shared.provider.complete(&request).await
    };
    let config = shared.provider.config();
    let reply = result.map_err(|e| {
        format!(
            "Provider {} (model {}) failed on request {n}: {e}",
            config.kind, config.model
        )
    });
    let events = match &reply {
        Ok(reply) => reply_events(n, &config.model, reply),
        Err(message) => failed_events(n, &config.model, message),
    };
    session
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Exchange {
            request: serde_json::from_slice(&body).unwrap_or(Value::Null),
            reply,
        });
    sse_response(events)
}

fn response(n: u32, model: &str, status: &str) -> ResponseObject {
    ResponseObject {
        id: format!("resp_live_{n}"),
        object: "response".to_owned(),
        status: status.to_owned(),
        model: model.to_owned(),
        ..ResponseObject::default()
    }
}

/// The reply as a Responses stream: created, one delta per message, item done, completed.
fn reply_events(n: u32, model: &str, reply: &ProviderReply) -> Vec<StreamEvent> {
    let mut events = vec![StreamEvent::Created {
        response: response(n, model, "in_progress"),
    }];
    let mut output = Vec::new();
    for (index, item) in reply.output.iter().enumerate() {
        let item = match item {
            OutputItem::Message { text } => {
                let id = format!("msg_{n}_{index}");
                events.push(StreamEvent::OutputTextDelta {
                    item_id: id.clone(),
                    output_index: index as u32,
                    content_index: 0,
                    delta: text.clone(),
                });
                ResponseItem::message(id, text.clone())
            }
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let call_id = if call_id.is_empty() {
                    format!("call_{n}_{index}")
                } else {
                    call_id.clone()
                };
                ResponseItem::function_call(
                    format!("fc_{n}_{index}"),
                    call_id,
                    name.clone(),
                    arguments.clone(),
                )
            }
        };
        events.push(StreamEvent::OutputItemDone {
            output_index: index as u32,
            item: item.clone(),
        });
        output.push(item);
    }
    events.push(StreamEvent::Completed {
        response: ResponseObject {
            output,
            usage: Some(ResponseUsage::new(reply.input_tokens, reply.output_tokens)),
            ..response(n, model, "completed")
        },
    });
    events
}

fn failed_events(n: u32, model: &str, message: &str) -> Vec<StreamEvent> {
    vec![StreamEvent::Failed {
        response: ResponseObject {
            error: Some(ResponseError {
                code: Some("provider_error".to_owned()),
                message: message.to_owned(),
            }),
            ..response(n, model, "failed")
        },
    }]
}

fn sse_response(events: Vec<StreamEvent>) -> Response {
    let chunks: Vec<Result<Bytes, Infallible>> = events
        .iter()
        .enumerate()
        .map(|(i, event)| {
            let data = serde_json::to_string(&SequencedEvent {
                event,
                sequence_number: i as u64,
            })
            .unwrap_or_default();
            Ok(Bytes::from(
                SseEvent {
                    event: event.event_type().map(str::to_owned),
                    data,
                    ..SseEvent::default()
                }
                .encode(),
            ))
        })
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

fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({"error": {"message": message, "type": "invalid_request_error"}});
    (status, axum::Json(body)).into_response()
}

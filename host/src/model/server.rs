//! The model endpoint: one loopback HTTP server per suite, answering many runs at once, each
//! through its own session under `/s/<id>`.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::any;
use axum::serve::ListenerExt;
use tokio::task::JoinHandle;

use super::dialect::{self, Dialect};
use super::live::LiveModel;
use super::record::Exchange;
use super::script::Script;
use super::session::{Responder, SessionState};
use crate::case::ScriptStep;
use crate::provider::Carried;

/// Largest request body accepted. A turn's input grows with every tool result (each capped
/// at 64 KiB, at most 16 per turn), so this leaves ample room.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Why the model server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelServerError {
    /// Binding the loopback listener failed.
    #[error("failed to bind the model endpoint to 127.0.0.1")]
    Bind {
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
}

/// The model endpoint on `127.0.0.1` (ephemeral port), speaking OpenAI Responses, OpenAI Chat
/// Completions and Anthropic Messages, streamed or not.
///
/// One server serves many runs: each run gets its own session through
/// [`ModelServer::script`] (replay) or [`ModelServer::live`]. The server stops when this
/// value is dropped.
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
            .route("/s/{id}", any(session_request))
            .route("/s/{id}/", any(session_request))
            .route("/s/{id}/{*rest}", any(session_request))
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

    /// A replay session answered by `steps`; the handle names its base URLs and, after the
    /// run, what crossed it. The session is closed when the handle is dropped.
    pub fn script(&self, steps: Vec<ScriptStep>) -> Session {
        self.open(Responder::Script(Script::new(steps)))
    }

    /// A live session answered by `model`'s provider.
    pub fn live(&self, model: Arc<LiveModel>) -> Session {
        self.open(Responder::Live(model, Carried::default()))
    }

    fn open(&self, responder: Responder) -> Session {
        let id = self.registry.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(SessionState::new(responder));
        self.registry.lock().insert(id, Arc::clone(&state));
        Session {
            id,
            root: format!("http://{}/s/{id}", self.addr),
            openai: format!("http://{}/s/{id}/v1", self.addr),
            state,
            registry: Arc::clone(&self.registry),
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One run's session. Dropping it closes the session.
pub struct Session {
    id: u64,
    root: String,
    openai: String,
    state: Arc<SessionState>,
    registry: Arc<Registry>,
}

impl Session {
    /// The OpenAI-style base URL, e.g. `http://127.0.0.1:PORT/s/7/v1`: clients post to
    /// `{base_url}/responses` or `{base_url}/chat/completions` (`OPENAI_BASE_URL`).
    pub fn base_url(&self) -> &str {
        &self.openai
    }

    /// The Anthropic-style base URL, e.g. `http://127.0.0.1:PORT/s/7`: clients post to
    /// `{anthropic_base_url}/v1/messages` (`ANTHROPIC_BASE_URL`).
    pub fn anthropic_base_url(&self) -> &str {
        &self.root
    }

    /// The script's first failure, e.g. `Model script exhausted: request 3 has no scripted
    /// response` or `Request 2 did not contain "did not approve"`.
    pub fn failure(&self) -> Option<String> {
        self.state.failure()
    }

    /// Model requests received so far.
    pub fn requests(&self) -> u32 {
        self.state.requests()
    }

    /// Every exchange so far, in the order the requests arrived.
    pub fn record(&self) -> Vec<Exchange> {
        self.state.record()
    }

    /// The session's record, for evalhost's agent to write its model records from
    /// ([`crate::agent::AgentConfig::record`]).
    pub fn endpoint_record(&self) -> Arc<dyn crate::agent::EndpointRecord> {
        self.state.clone()
    }

    /// The exchanges completed since the last call of this or of
    /// [`Session::endpoint_record`]'s `take_log_events`, in arrival order.
    pub fn take_unlogged(&self) -> Vec<Exchange> {
        self.state.take_unlogged()
    }

    /// Steps the agent never asked for (a run that ends early leaves some).
    pub fn unused_steps(&self) -> usize {
        self.state.unused_steps()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

#[derive(Default)]
struct Registry {
    next_id: AtomicU64,
    sessions: Mutex<HashMap<u64, Arc<SessionState>>>,
}

impl Registry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<SessionState>>> {
        // Map operations cannot leave it inconsistent, so a poisoned lock is still usable.
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

async fn session_request(
    State(registry): State<Arc<Registry>>,
    Path(params): Path<HashMap<String, String>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let id = params.get("id").map_or("", String::as_str);
    let session = id
        .parse::<u64>()
        .ok()
        .and_then(|id| registry.lock().get(&id).cloned());
    let Some(session) = session else {
        return dialect::error(
            Dialect::Responses,
            StatusCode::NOT_FOUND,
            &format!("no session `{id}` is open on this endpoint (no script is registered)"),
        );
    };
    let prefix = format!("/s/{id}");
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path(), |p| p.as_str())
        .strip_prefix(&prefix)
        .unwrap_or_default()
        .to_owned();
    session.handle(method, path, &headers, body).await
}

async fn not_found() -> Response {
    dialect::error(
        Dialect::Responses,
        StatusCode::NOT_FOUND,
        "not a model endpoint: use POST /s/<id>/v1/responses, /v1/chat/completions or /v1/messages",
    )
}

//! The model endpoint: one loopback HTTP server per suite, answering many runs at once, each
//! through its own session under `/s/<token>` (`token.rs`: the session's number and a
//! 128-bit secret). A session may also be served on a listener of its own
//! ([`Session::serve_on`]), which reaches that session only.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::any;
use axum::serve::ListenerExt;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use super::live::LiveModel;
use super::record::Exchange;
use super::route::{self, Route};
use super::script::Script;
use super::session::{Responder, SessionState};
use super::token::{RandomError, SessionKey, SessionToken, session_id};
use crate::api::Carried;
use crate::api::serve;
use crate::case::ScriptStep;
use crate::wire::Api;

/// Largest request body accepted. A turn's input grows with every tool result (each capped
/// at 64 KiB, at most 16 per turn), so this leaves ample room.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;

/// Why the model server could not start, or a session could not be served on a listener.
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
    /// The key the sessions' secrets are made from could not be made.
    #[error("failed to make the model endpoint's session key")]
    Key {
        /// The random source's error.
        #[source]
        source: RandomError,
    },
    /// A listener handed to [`Session::serve_on`] could not be served.
    #[error("failed to serve a model session on a listener")]
    Listen {
        /// The socket error.
        #[source]
        source: std::io::Error,
    },
}

/// The model endpoint on `127.0.0.1` (ephemeral port), speaking OpenAI Responses, OpenAI Chat
/// Completions and Anthropic Messages, streamed or not.
///
/// One server serves many runs: each run gets its own session through
/// [`ModelServer::script`] (replay) or [`ModelServer::live`], reachable only with its token
/// (in its base URLs). The server stops when this value is dropped.
pub struct ModelServer {
    addr: SocketAddr,
    registry: Arc<Registry>,
    runtime: Handle,
    task: JoinHandle<()>,
}

impl ModelServer {
    /// Bind `127.0.0.1:0` and start serving on the current tokio runtime.
    pub async fn start() -> Result<Self, ModelServerError> {
        let key = SessionKey::new().map_err(|source| ModelServerError::Key { source })?;
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|source| ModelServerError::Bind { source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| ModelServerError::Bind { source })?;
        let registry = Arc::new(Registry::new(key));
        let runtime = Handle::current();
        let task = serve(
            &runtime,
            listener,
            Served {
                registry: Arc::clone(&registry),
                only: None,
            },
        );
        Ok(Self {
            addr,
            registry,
            runtime,
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
        let token = self.registry.key.token(id);
        let state = Arc::new(SessionState::new(responder));
        self.registry.lock().insert(
            id,
            Open {
                token: token.clone(),
                state: Arc::clone(&state),
            },
        );
        let path = format!("/s/{}", token.as_str());
        Session {
            root: format!("http://{}{path}", self.addr),
            openai: format!("http://{}{path}/v1", self.addr),
            path,
            id,
            state,
            registry: Arc::clone(&self.registry),
            runtime: self.runtime.clone(),
            listeners: Mutex::default(),
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One run's session. Dropping it closes the session: its token is refused from then on, and
/// the listeners it was served on ([`Session::serve_on`]) are closed.
pub struct Session {
    id: u64,
    /// `/s/<token>`.
    path: String,
    root: String,
    openai: String,
    state: Arc<SessionState>,
    registry: Arc<Registry>,
    runtime: Handle,
    listeners: Mutex<Vec<JoinHandle<()>>>,
}

impl Session {
    /// The OpenAI-style base URL, e.g. `http://127.0.0.1:PORT/s/7-<secret>/v1`: clients post to
    /// `{base_url}/responses` or `{base_url}/chat/completions` (`OPENAI_BASE_URL`).
    pub fn base_url(&self) -> &str {
        &self.openai
    }

    /// The Anthropic-style base URL, e.g. `http://127.0.0.1:PORT/s/7-<secret>`: clients post
    /// to `{anthropic_base_url}/v1/messages` (`ANTHROPIC_BASE_URL`).
    pub fn anthropic_base_url(&self) -> &str {
        &self.root
    }

    /// The base URLs' path, `/s/<token>` (the Anthropic base URL is the server's address
    /// followed by it; the OpenAI one adds `/v1`): for a base URL on another address, such as
    /// a listener given to [`Session::serve_on`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Serve this session on `listener` as well, until the session is dropped: for a run
    /// that reaches the endpoint some other way than the server's address (a listener in
    /// its own network namespace). Requests on it are served by this session only, and
    /// still need its token in the path (the base URLs' path, [`Session::path`]); a request
    /// on it with another token (another session's, one that is wrong, or none) is refused
    /// with 403 in its API's error shape and recorded in this session as an unserved
    /// exchange (an `endpoint_error` of this run). Call it from within the tokio runtime or
    /// not: the listener is served on the server's runtime.
    pub fn serve_on(&self, listener: std::net::TcpListener) -> Result<(), ModelServerError> {
        let listen = |source| ModelServerError::Listen { source };
        listener.set_nonblocking(true).map_err(listen)?;
        let listener = {
            let _runtime = self.runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(listen)?
        };
        let task = serve(
            &self.runtime,
            listener,
            Served {
                registry: Arc::clone(&self.registry),
                only: Some(self.id),
            },
        );
        self.listeners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(task);
        Ok(())
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
    pub(crate) fn take_unlogged(&self) -> Vec<Exchange> {
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
        for task in self.listeners.get_mut().unwrap_or_else(|e| e.into_inner()) {
            task.abort();
        }
    }
}

/// The open sessions, by number, and the key their secrets are made from.
struct Registry {
    key: SessionKey,
    next_id: AtomicU64,
    sessions: Mutex<HashMap<u64, Open>>,
}

/// An open session: its token and its state.
struct Open {
    token: SessionToken,
    state: Arc<SessionState>,
}

impl Registry {
    fn new(key: SessionKey) -> Self {
        Self {
            key,
            next_id: AtomicU64::new(0),
            sessions: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Open>> {
        // Map operations cannot leave it inconsistent, so a poisoned lock is still usable.
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The open session whose token is `given`.
    fn find(&self, given: &str) -> Option<(u64, Arc<SessionState>)> {
        let id = session_id(given)?;
        let sessions = self.lock();
        let open = sessions.get(&id)?;
        open.token
            .matches(given)
            .then(|| (id, Arc::clone(&open.state)))
    }

    /// Session `id`, when it is open.
    fn get(&self, id: u64) -> Option<Arc<SessionState>> {
        self.lock().get(&id).map(|open| Arc::clone(&open.state))
    }
}

/// What one listener serves: every open session (the server's address), or only one.
#[derive(Clone)]
struct Served {
    registry: Arc<Registry>,
    only: Option<u64>,
}

/// Serve `served` on `listener`, on `runtime`.
fn serve(runtime: &Handle, listener: tokio::net::TcpListener, served: Served) -> JoinHandle<()> {
    let app = Router::new()
        .route("/", any(request))
        .route("/{*path}", any(request))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(served);
    // Events are small writes; without TCP_NODELAY Nagle's algorithm can hold one back
    // for tens of milliseconds, which a suite of a thousand runs would feel.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    runtime.spawn(async move {
        // serve only returns on a listener error; there is no one left to report it to,
        // and every later request then fails loudly on the client side.
        let _ = axum::serve(listener, app).await;
    })
}

/// `/s/<token><rest>` → the token and the rest (`""`, `/`, `/v1/responses?beta=true`, ...).
fn addressed(path: &str) -> Option<(&str, &str)> {
    let after = path.strip_prefix("/s/")?;
    let end = after.find(['/', '?']).unwrap_or(after.len());
    Some(after.split_at(end))
}

async fn request(
    State(served): State<Served>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let full = uri
        .path_and_query()
        .map_or_else(|| uri.path(), |p| p.as_str());
    let addressed = addressed(full);
    let found = addressed.and_then(|(token, _)| served.registry.find(token));
    match (found, served.only) {
        (Some((id, session)), only) if only.is_none_or(|only| only == id) => {
            let rest = addressed.map_or("", |(_, rest)| rest).to_owned();
            session.handle(method, rest, &headers, body).await
        }
        (_, None) => match addressed {
            Some((_, rest)) => refuse(
                &method,
                rest,
                &headers,
                StatusCode::NOT_FOUND,
                "no session is open with this token: a session is reached only with its own \
                 run's base URL, and not after its run has ended",
            ),
            None => not_found(),
        },
        (_, Some(only)) => {
            let rest = addressed.map_or(full, |(_, rest)| rest);
            let message = "this address serves one run's session only, with that session's token \
                 in the path: a request naming another session, a wrong token or none is refused";
            let response = refuse(&method, rest, &headers, StatusCode::FORBIDDEN, message);
            if let Some(session) = served.registry.get(only) {
                let shown = match addressed {
                    Some((_, rest)) => format!("/s/<not this session's token>{rest}"),
                    None => full.to_owned(),
                };
                session.refused(&method, shown, body, StatusCode::FORBIDDEN, message);
            }
            response
        }
    }
}

/// A request refused before it reached a session, answered in the shape of the API its
/// path (`rest`, below the session) looks like.
fn refuse(
    method: &Method,
    rest: &str,
    headers: &HeaderMap,
    status: StatusCode,
    message: &str,
) -> Response {
    let bare = rest.split('?').next().unwrap_or_default();
    let api = match route::route(method, bare, headers) {
        Route::Model(api)
        | Route::Models(api)
        | Route::CountTokens(api)
        | Route::Unserved { api, .. } => api,
        Route::Probe => Api::Responses,
    };
    serve::error(api, status, message)
}

fn not_found() -> Response {
    serve::error(
        Api::Responses,
        StatusCode::NOT_FOUND,
        "not a model endpoint: use POST /s/<token>/v1/responses, /v1/chat/completions or /v1/messages",
    )
}

#[cfg(test)]
mod tests {
    use super::addressed;

    #[test]
    fn a_path_names_its_token_and_the_rest() {
        assert_eq!(addressed("/s/1-ab"), Some(("1-ab", "")));
        assert_eq!(addressed("/s/1-ab/"), Some(("1-ab", "/")));
        assert_eq!(
            addressed("/s/1-ab/v1/messages?beta=true"),
            Some(("1-ab", "/v1/messages?beta=true"))
        );
        assert_eq!(addressed("/s/1-ab?x=1"), Some(("1-ab", "?x=1")));
        assert_eq!(addressed("/s/"), Some(("", "")));
        assert_eq!(addressed("/v1/responses"), None);
    }
}

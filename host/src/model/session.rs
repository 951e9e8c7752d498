//! One run's session on the endpoint: its responder (the case's script, or the live
//! provider), the requests it has counted, and the record of every exchange.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::keep::{Keep, Keeping, kept};
use super::live::LiveModel;
use super::record::{Exchange, Outcome};
use super::retry::RetryKey;
use super::route::{self, Route};
use super::script::Script;
use crate::api::head::Answering;
use crate::api::serve;
use crate::api::{Carried, Reply};
use crate::wire::Api;

/// Model name an answer names when the request names none.
const DEFAULT_MODEL_NAME: &str = "scripted";

/// Who answers a session's model requests.
pub(crate) enum Responder {
    /// Replay: the case's model script.
    Script(Script),
    /// Live: the configured provider, and the session's reasoning passed back to it.
    Live(Arc<LiveModel>, Carried),
}

/// A session: its responder and what crossed it.
pub(crate) struct SessionState {
    responder: Responder,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Model requests counted so far (a retry is not counted again).
    requests: u32,
    /// The last model request: one with its conversation, sent before it was answered, is
    /// a retry of it (`retry.rs`).
    last: Option<LastRequest>,
    /// Requests received so far (of any kind): orders the record.
    arrivals: u64,
    /// The record, each exchange with its arrival number.
    record: Vec<(u64, Exchange)>,
    /// Exchanges of the record already written to the session log.
    logged: usize,
    /// What the record has kept, and counted without keeping (`keep.rs`).
    keeping: Keeping,
}

/// The last model request a session received, so that the agent's retry of it (its
/// conversation sent again before an answer got through: after an error, or while it waits)
/// counts as a retry of request `n` and not as a new request: the script answers it as it
/// answers `n`, and the record says which attempt it is.
struct LastRequest {
    n: u32,
    attempts: u32,
    /// Its API and body, whose retry key is made only when a request comes before it was
    /// answered (the one case a retry key decides: an agent's answered requests are followed
    /// by new ones, and reading a whole conversation costs ~7% of a replay's instructions).
    api: Api,
    body: Bytes,
    /// An attempt was answered: the agent has its answer, and what it sends next is new.
    answered: bool,
}

impl Inner {
    /// `(n, attempt)` of the model request `body` (in `api`): request `n`'s next
    /// attempt when it is the last request's, not answered yet, else a new request.
    fn count(&mut self, api: Api, body: &Bytes) -> (u32, u32) {
        if let Some(last) = &mut self.last
            && !last.answered
            && last.api == api
            && (last.body == *body || RetryKey::of(api, &last.body) == RetryKey::of(api, body))
        {
            last.attempts += 1;
            return (last.n, last.attempts);
        }
        self.requests += 1;
        self.last = Some(LastRequest {
            n: self.requests,
            attempts: 1,
            api,
            body: body.clone(),
            answered: false,
        });
        (self.requests, 1)
    }

    /// Request `n` was answered.
    fn answered(&mut self, n: u32) {
        if let Some(last) = self.last.as_mut().filter(|last| last.n == n) {
            last.answered = true;
        }
    }
}

impl SessionState {
    pub(crate) fn new(responder: Responder) -> Self {
        Self {
            responder,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Answer one request: `path` is below the session (`/v1/responses?beta=true`).
    pub(crate) async fn handle(
        &self,
        method: Method,
        path: String,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Response {
        let arrival = self.arrive();
        let received = Instant::now();
        let bare = path.split('?').next().unwrap_or_default().to_owned();
        match route::route(&method, &bare, headers) {
            Route::Model(api) => {
                let request = Request {
                    arrival,
                    received,
                    method,
                    path,
                    body,
                };
                self.model_request(request, api).await
            }
            Route::Models(api) => serve::models(api, &bare, self.model(None)),
            Route::CountTokens(api) => serve::count_tokens(api, &body),
            Route::Probe => StatusCode::OK.into_response(),
            Route::Unserved {
                api,
                status,
                message,
            } => {
                let response = serve::error(api, status, &message);
                self.keep_unserved(arrival, &method, path, body, status, message);
                response
            }
        }
    }

    async fn model_request(&self, request: Request, api: Api) -> Response {
        let Request {
            arrival,
            received,
            method,
            path,
            body,
        } = request;
        let (n, attempt) = self.lock().count(api, &body);
        let (response, outcome) = match serve::head(api, &path, &body) {
            Err(e) => {
                let message = format!("Request {n} is not a JSON {} request: {e}", api.name());
                if let Responder::Script(script) = &self.responder {
                    script.fail("invalid_request", message.clone());
                }
                let response = serve::error(api, StatusCode::BAD_REQUEST, &message);
                (
                    response,
                    Outcome::Failed {
                        n,
                        attempt,
                        api,
                        message,
                    },
                )
            }
            Ok(head) => {
                let answer = self.answer(n, api, &body).await;
                let ctx = Answering {
                    n,
                    model: self.model(head.model.as_deref()),
                    head: &head,
                };
                match answer {
                    Ok(reply) => (
                        serve::encode(api, &reply, &ctx),
                        Outcome::Answered {
                            n,
                            attempt,
                            api,
                            reply,
                        },
                    ),
                    Err((code, message)) => (
                        serve::failure(api, code, &message, &ctx),
                        Outcome::Failed {
                            n,
                            attempt,
                            api,
                            message,
                        },
                    ),
                }
            }
        };
        if matches!(outcome, Outcome::Answered { .. }) {
            self.lock().answered(n);
        }
        self.keep(
            arrival,
            Exchange {
                method: method.to_string(),
                path,
                body,
                outcome,
                received,
                answered: Instant::now(),
            },
        );
        response
    }

    async fn answer(&self, n: u32, api: Api, body: &[u8]) -> Result<Reply, (&'static str, String)> {
        match &self.responder {
            Responder::Script(script) => {
                script.answer(n, api, body).map_err(|f| (f.code, f.message))
            }
            Responder::Live(live, carried) => {
                let request = serde_json::from_slice(body).unwrap_or(serde_json::Value::Null);
                live.answer(n, api, &request, carried)
                    .await
                    .map_err(|message| ("provider_error", message))
            }
        }
    }

    /// The model an answer names: the provider's live; in replay the one asked for.
    fn model<'a>(&'a self, asked: Option<&'a str>) -> &'a str {
        match &self.responder {
            Responder::Live(live, _) => live.model(),
            Responder::Script(_) => asked.unwrap_or(DEFAULT_MODEL_NAME),
        }
    }

    /// A request refused before it was routed (a listener of this session's own that was sent
    /// another token, `server.rs`): recorded as unserved.
    pub(crate) fn refused(
        &self,
        method: &Method,
        path: String,
        body: Bytes,
        status: StatusCode,
        message: &str,
    ) {
        let arrival = self.arrive();
        self.keep_unserved(arrival, method, path, body, status, message.to_owned());
    }

    /// The next request's arrival number.
    fn arrive(&self) -> u64 {
        let mut inner = self.lock();
        inner.arrivals += 1;
        inner.arrivals
    }

    /// Keep a request that was not served (`endpoint_error`).
    fn keep_unserved(
        &self,
        arrival: u64,
        method: &Method,
        path: String,
        body: Bytes,
        status: StatusCode,
        message: String,
    ) {
        let now = Instant::now();
        self.keep(
            arrival,
            Exchange {
                method: method.to_string(),
                path,
                body,
                outcome: Outcome::Unserved {
                    status: status.as_u16(),
                    message,
                },
                received: now,
                answered: now,
            },
        );
    }

    /// Keep what `keep.rs` says of `exchange` (its body's digest is made outside the lock).
    fn keep(&self, arrival: u64, exchange: Exchange) {
        let keep = self.lock().keeping.admit(exchange.body.len());
        if keep == Keep::Count {
            return;
        }
        let exchange = kept(exchange, keep);
        self.lock().record.push((arrival, exchange));
    }

    /// Every exchange so far, in the order the requests arrived (then the note of those
    /// only counted, if any).
    pub(crate) fn record(&self) -> Vec<Exchange> {
        let inner = self.lock();
        let mut record = inner.record.clone();
        let counted = inner.keeping.counted();
        drop(inner);
        record.sort_by_key(|(arrival, _)| *arrival);
        record
            .into_iter()
            .map(|(_, exchange)| exchange)
            .chain(counted)
            .collect()
    }

    /// The exchanges completed since the last call, in the order their requests arrived
    /// (then the note of those only counted since, if any).
    pub(crate) fn take_unlogged(&self) -> Vec<Exchange> {
        let mut inner = self.lock();
        let from = inner.logged;
        inner.logged = inner.record.len();
        let mut new = inner.record[from..].to_vec();
        let counted = inner.keeping.take_counted();
        drop(inner);
        new.sort_by_key(|(arrival, _)| *arrival);
        new.into_iter()
            .map(|(_, exchange)| exchange)
            .chain(counted)
            .collect()
    }

    pub(crate) fn requests(&self) -> u32 {
        self.lock().requests
    }

    /// The script's first failure (always `None` live: a provider error is in the record).
    pub(crate) fn failure(&self) -> Option<String> {
        match &self.responder {
            Responder::Script(script) => script.failure(),
            Responder::Live(..) => None,
        }
    }

    /// Steps of the script the run never asked for.
    pub(crate) fn unused_steps(&self) -> usize {
        match &self.responder {
            Responder::Script(script) => script.len().saturating_sub(self.requests() as usize),
            Responder::Live(..) => 0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Counters and a list: a panic elsewhere cannot leave them half-updated.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("SessionState")
            .field("requests", &inner.requests)
            .field("record", &inner.record.len())
            .finish()
    }
}

/// A model request as it reached the session.
struct Request {
    /// Its arrival number (orders the record).
    arrival: u64,
    received: Instant,
    method: Method,
    path: String,
    body: Bytes,
}

/// evalhost's own agent writes its model records from its session's record.
impl crate::agent::EndpointRecord for SessionState {
    fn take_log_events(&self) -> Vec<crate::session::Event> {
        self.take_unlogged()
            .iter()
            .flat_map(Exchange::log_events)
            .collect()
    }
}

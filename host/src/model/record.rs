//! The record of a session: every request that reached a run's endpoint and how it was
//! answered, in one type for every API and both responders. External agents' session logs
//! are written from it ([`crate::runner`]), so nothing else keeps a copy of what crossed.

use std::time::Instant;

use axum::body::Bytes;

use crate::api::Reply;
use crate::session::{Event, RequestBody};
use crate::wire::Api;

/// One request that reached a session and what became of it.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The HTTP method, e.g. `POST`.
    pub method: String,
    /// The path below the session, e.g. `/v1/responses` (query string included).
    pub path: String,
    /// The body as received.
    pub body: Bytes,
    /// What became of it.
    pub outcome: Outcome,
    /// When the request reached the session.
    pub received: Instant,
    /// When its answer (or failure) was ready to send: for a model request, after the
    /// responder answered; for any other request, [`Exchange::received`].
    pub answered: Instant,
}

/// How a request was answered.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Model request `n` (1-based) in `api`, answered with `reply`. `attempt` is 1 for the
    /// request, 2 and up for the agent's retries of it (the same body sent again).
    Answered {
        /// 1-based request number.
        n: u32,
        /// 1 for the request, 2 and up for its retries.
        attempt: u32,
        /// The model API the request spoke.
        api: Api,
        /// The answer sent.
        reply: Reply,
    },
    /// Model request `n` (`attempt` as above) in `api` failed: the script was broken
    /// (exhausted, an expectation missed, a body that is not the API) or the provider gave
    /// up.
    Failed {
        /// 1-based request number.
        n: u32,
        /// 1 for the request, 2 and up for its retries.
        attempt: u32,
        /// The model API the request spoke.
        api: Api,
        /// Why it failed.
        message: String,
    },
    /// A request the endpoint does not serve (another path, a method, a WebSocket upgrade),
    /// answered with an HTTP error in the API's shape.
    Unserved {
        /// The HTTP status it was answered with.
        status: u16,
        /// Why it was not served.
        message: String,
    },
}

impl Exchange {
    /// The body as JSON, `null` when it is not.
    pub(crate) fn request_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The session-log records of this exchange, tool results aside (those are the agent's):
    /// `model_request` (`model_retry` for a retry) and `model_response` for an answered
    /// request, `model_request` (`model_retry`) alone for a failed one, `endpoint_error` for a
    /// request the endpoint does not serve. Every session log's model records are written
    /// here, for evalhost's agent and external agents alike.
    pub(crate) fn log_events(&self) -> Vec<Event> {
        let request = |n: u32, attempt: u32| {
            let body = RequestBody::from_received(&self.body);
            match attempt {
                0 | 1 => Event::ModelRequest { n, body },
                _ => Event::ModelRetry { n, attempt, body },
            }
        };
        match &self.outcome {
            Outcome::Answered {
                n, attempt, reply, ..
            } => vec![
                request(*n, *attempt),
                Event::ModelResponse {
                    n: *n,
                    output: reply.output.clone(),
                    input_tokens: reply.input_tokens,
                    output_tokens: reply.output_tokens,
                    cached_input_tokens: reply.cached_input_tokens,
                },
            ],
            Outcome::Failed { n, attempt, .. } => vec![request(*n, *attempt)],
            Outcome::Unserved { status, message } => vec![Event::EndpointError {
                method: self.method.clone(),
                path: self.path.split('?').next().unwrap_or_default().to_owned(),
                status: *status,
                message: message.clone(),
            }],
        }
    }

    /// `POST /v1/responses`: what a report line names.
    pub fn target(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The model request this exchange is an attempt of, `(n, attempt)`; `None` for a request
    /// the endpoint does not serve.
    pub fn attempt(&self) -> Option<(u32, u32)> {
        match self.outcome {
            Outcome::Answered { n, attempt, .. } | Outcome::Failed { n, attempt, .. } => {
                Some((n, attempt))
            }
            Outcome::Unserved { .. } => None,
        }
    }
}

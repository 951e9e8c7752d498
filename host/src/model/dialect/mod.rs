//! The dialects the endpoint speaks: which requests belong to which, what the responder needs
//! from a request (its head), and, per dialect, a codec that puts a [`Reply`] on the wire,
//! streamed or not, and reads tool results back out of the next request.
//!
//! | dialect | request | streamed answer | not streamed |
//! |---|---|---|---|
//! | OpenAI Responses | `POST {base}/v1/responses` | `response.*` events | a `response` object |
//! | OpenAI Chat Completions | `POST {base}/v1/chat/completions` | `chat.completion.chunk`s, `[DONE]` | a `chat.completion` |
//! | Anthropic Messages | `POST {base}/v1/messages` | `message_start` ... `message_stop` | a `message` |

pub(crate) mod anthropic;
pub(crate) mod chat;
mod head;
pub(crate) mod responses;
mod results;
mod to_responses;
mod user_turns;

use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;

pub(crate) use head::RequestHead;
pub use results::ToolResult;
pub(crate) use results::tool_results;
pub(crate) use to_responses::to_responses_request;
pub(crate) use user_turns::trailing_user_texts;

use super::record::Reply;

/// A model API dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    Chat,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
}

impl Dialect {
    /// The dialect's name in messages, e.g. `Chat Completions`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Responses => "Responses",
            Dialect::Chat => "Chat Completions",
            Dialect::Anthropic => "Anthropic Messages",
        }
    }

    /// The id of the `k`-th call of a script (1-based) in this dialect's form: `call_3`,
    /// `toolu_03`.
    pub fn call_id(self, k: usize) -> String {
        match self {
            Dialect::Responses | Dialect::Chat => format!("call_{k}"),
            Dialect::Anthropic => format!("toolu_{k:02}"),
        }
    }
}

/// What a request to a session is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// A model request in this dialect.
    Model(Dialect),
    /// `GET {base}/v1/models` (either API's model list).
    Models(Dialect),
    /// `POST {base}/v1/messages/count_tokens`.
    CountTokens,
    /// A `HEAD` or `GET` probe of the API's root or `/api/hello` (Claude Code checks it).
    Probe,
    /// Anything else, with the status and message it is answered with, in the shape of the
    /// dialect it most looks like.
    Unserved {
        dialect: Dialect,
        status: StatusCode,
        message: String,
    },
}

/// Which of the endpoint's routes `method path` is (the path below the session, without its
/// query string).
pub(crate) fn route(method: &Method, path: &str, headers: &HeaderMap) -> Route {
    let anthropic_headers =
        headers.contains_key("anthropic-version") || headers.contains_key("x-api-key");
    let post = method == Method::POST;
    let probe = method == Method::HEAD || method == Method::GET;
    let model_dialect = match path {
        "/v1/responses" => Some(Dialect::Responses),
        "/v1/chat/completions" => Some(Dialect::Chat),
        "/v1/messages" => Some(Dialect::Anthropic),
        _ => None,
    };
    let guess = model_dialect.unwrap_or(if anthropic_headers || path.contains("messages") {
        Dialect::Anthropic
    } else {
        Dialect::Responses
    });
    let websocket = headers
        .get(axum::http::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if websocket {
        return Route::Unserved {
            dialect: guess,
            status: StatusCode::NOT_FOUND,
            message: format!(
                "WebSocket upgrade to {path} is not served: evalhost's endpoint speaks HTTP; POST {path} instead"
            ),
        };
    }
    match (model_dialect, path) {
        (Some(dialect), _) if post => Route::Model(dialect),
        (None, "/v1/models") if method == Method::GET => Route::Models(if anthropic_headers {
            Dialect::Anthropic
        } else {
            Dialect::Responses
        }),
        (None, "/v1/messages/count_tokens") if post => Route::CountTokens,
        (None, "" | "/" | "/v1" | "/api/hello") if probe => Route::Probe,
        (Some(dialect), _) => Route::Unserved {
            dialect,
            status: StatusCode::METHOD_NOT_ALLOWED,
            message: format!("{method} {path} is not served: the endpoint accepts POST {path}"),
        },
        _ => Route::Unserved {
            dialect: guess,
            status: StatusCode::NOT_FOUND,
            message: format!(
                "{method} {path} is not served: the endpoint serves POST /v1/responses, POST /v1/chat/completions and POST /v1/messages"
            ),
        },
    }
}

/// How to answer one model request: its number, the model it names, and what it asked for.
#[derive(Debug, Clone)]
pub(crate) struct Answering<'a> {
    pub n: u32,
    pub model: &'a str,
    pub head: &'a RequestHead,
}

/// Put `reply` on the wire in `dialect`.
pub(crate) fn encode(dialect: Dialect, reply: &Reply, ctx: &Answering<'_>) -> Response {
    match dialect {
        Dialect::Responses => responses::encode(reply, ctx),
        Dialect::Chat => chat::encode(reply, ctx),
        Dialect::Anthropic => anthropic::encode(reply, ctx),
    }
}

/// A failed model request, answered in `dialect`: a script failure (`code` e.g.
/// `script_exhausted`) or a provider that gave up (`provider_error`).
pub(crate) fn failure(
    dialect: Dialect,
    code: &str,
    message: &str,
    ctx: &Answering<'_>,
) -> Response {
    match dialect {
        Dialect::Responses => responses::failure(code, message, ctx),
        Dialect::Chat | Dialect::Anthropic => {
            let status = if code == "provider_error" {
                StatusCode::BAD_GATEWAY
            } else {
                StatusCode::BAD_REQUEST
            };
            error(dialect, status, message)
        }
    }
}

/// An HTTP error in the dialect's error shape.
pub(crate) fn error(dialect: Dialect, status: StatusCode, message: &str) -> Response {
    match dialect {
        Dialect::Responses | Dialect::Chat => responses::error(status, message),
        Dialect::Anthropic => anthropic::error(status, message),
    }
}

/// Synthetic token counts: bytes divided by this (the rule of Mino's scripted model).
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

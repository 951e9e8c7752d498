//! Which of the endpoint's routes a request to a session takes: a model request of one API,
//! the model list, a token count, a probe, or something the endpoint does not serve (answered
//! in the shape of the API it most looks like). What each API's paths are is its folder's
//! (`crate::api`); the answers are `crate::api::serve`'s.

use axum::http::{HeaderMap, Method, StatusCode};

use crate::api::gemini;
use crate::api::serve::model_api;
use crate::wire::Api;

/// What a request to a session is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// A model request in this API.
    Model(Api),
    /// `GET {base}/v1/models` (either OpenAI's or Anthropic's model list), `GET
    /// {base}/v1beta/models[/{model}]` (Gemini's).
    Models(Api),
    /// `POST {base}/v1/messages/count_tokens` (Anthropic), `POST
    /// {base}/v1beta/models/{model}:countTokens` (Gemini).
    CountTokens(Api),
    /// A `HEAD` or `GET` probe of the API's root or `/api/hello` (Claude Code checks it).
    Probe,
    /// Anything else, with the status and message it is answered with, in the shape of the
    /// API it most looks like.
    Unserved {
        api: Api,
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
    let model_api = model_api(path);
    let gemini_path = gemini::parse_path(path).map(|(_, method)| method);
    let guess = model_api.unwrap_or(if anthropic_headers || path.contains("messages") {
        Api::Anthropic
    } else if gemini_path.is_some()
        || gemini::looks_like(path)
        || headers.contains_key("x-goog-api-key")
    {
        Api::Gemini
    } else {
        Api::Responses
    });
    let websocket = headers
        .get(axum::http::header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if websocket {
        return Route::Unserved {
            api: guess,
            status: StatusCode::NOT_FOUND,
            message: format!(
                "WebSocket upgrade to {path} is not served: evalhost's endpoint speaks HTTP; POST {path} instead"
            ),
        };
    }
    match (model_api, path) {
        (Some(api), _) if post => Route::Model(api),
        (None, "/v1/models") if method == Method::GET => Route::Models(if anthropic_headers {
            Api::Anthropic
        } else {
            Api::Responses
        }),
        (None, "/v1/messages/count_tokens") if post => Route::CountTokens(Api::Anthropic),
        (None, _) if post && gemini_path == Some(gemini::Method::CountTokens) => {
            Route::CountTokens(Api::Gemini)
        }
        (None, _) if method == Method::GET && gemini_path == Some(gemini::Method::Models) => {
            Route::Models(Api::Gemini)
        }
        (None, "" | "/" | "/v1" | "/api/hello") if probe => Route::Probe,
        (Some(api), _) => Route::Unserved {
            api,
            status: StatusCode::METHOD_NOT_ALLOWED,
            message: format!("{method} {path} is not served: the endpoint accepts POST {path}"),
        },
        _ => Route::Unserved {
            api: guess,
            status: StatusCode::NOT_FOUND,
            message: format!(
                "{method} {path} is not served: the endpoint serves POST /v1/responses, POST /v1/chat/completions, POST /v1/messages and POST /v1beta/models/MODEL:generateContent (or :streamGenerateContent)"
            ),
        },
    }
}

//! Live model providers: one real HTTP client, streaming, for every API (OpenAI Responses,
//! OpenAI Chat Completions, Anthropic Messages, Gemini), each spoken by its folder's
//! `client.rs`.
//!
//! In live mode a run's agent talks to the model endpoint (`crate::model`), whose live
//! responder hands each request, as a Responses request, to [`Provider::complete`]: it is
//! translated into the configured provider's API, sent (retrying transient failures with
//! backoff and jitter, honouring `retry-after`), and the reply comes back API-neutral. A
//! request that still fails is answered with the API's failure carrying the provider's
//! error text, so the run is recorded as errored, never as a grader failure.

mod budget;
pub(crate) mod carry;
pub(crate) mod error;
pub mod retry;
mod stream;

pub use budget::CostBudget;
pub use carry::Carried;
pub use error::ProviderError;
pub(crate) use stream::ReplyStream;

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use super::reply::Reply;
use super::responses::wire::ResponsesRequest;
use super::{anthropic, chat, gemini, responses};
use crate::config::{ApiKey, ProviderConfig};
use crate::message::{error_chain, excerpt};
use crate::wire::Api;

/// Most bytes of an HTTP error body quoted in an error.
const ERROR_BODY_EXCERPT: usize = 1024;

/// A configured provider with its HTTP client. Cheap to share behind an `Arc`.
pub struct Provider {
    config: ProviderConfig,
    key: Option<ApiKey>,
    http: reqwest::Client,
    /// `--max-cost`: every attempt checked against it, every answer charged to it.
    budget: Option<std::sync::Arc<CostBudget>>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("config", &self.config)
            .field("key", &self.key)
            .finish()
    }
}

impl Provider {
    /// A client for `config`, sending `key` (read from `config.api_key_env`) when given.
    /// HTTPS uses rustls with the ring provider and the platform's trust roots.
    pub fn new(config: ProviderConfig, key: Option<ApiKey>) -> Result<Self, ProviderError> {
        crate::tls::install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(config.timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| ProviderError::Client {
                message: error_chain(&e),
            })?;
        Ok(Self {
            config,
            key,
            http,
            budget: None,
        })
    }

    /// Send no request once `budget` is spent, and charge every answer to it (`--max-cost`).
    pub fn with_budget(mut self, budget: std::sync::Arc<CostBudget>) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The configuration in use.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Answer one agent request, retrying transient failures as the retry policy allows:
    /// HTTP 408/409/429/5xx, connection errors, cut streams, timeouts, and the same errors
    /// reported inside a stream. `carried` is the conversation's reasoning (one per run
    /// session): the reply's is kept there, and passed back with the calls it preceded.
    pub async fn complete(
        &self,
        request: &ResponsesRequest,
        carried: &Carried,
    ) -> Result<Reply, ProviderError> {
        let policy = self.config.retry;
        let mut retry = 0;
        loop {
            // Every attempt, a retry too, is refused once the budget is spent.
            if let Some(budget) = &self.budget
                && budget.is_spent()
            {
                return Err(ProviderError::BudgetSpent {
                    limit_usd: budget.limit_usd(),
                    spent_usd: budget.spent_usd(),
                });
            }
            let attempt = self.attempt(request, carried).await;
            if let (Some(budget), Ok(reply)) = (&self.budget, &attempt) {
                budget.charge(
                    reply.input_tokens,
                    reply.cached_input_tokens,
                    reply.output_tokens,
                );
            }
            let error = match attempt {
                Ok(mut reply) => {
                    reply.attempts = retry + 1;
                    carried.remember(&reply);
                    return Ok(reply);
                }
                Err(error) => self.redact(error),
            };
            if !error.is_retryable() || retry >= policy.max_retries {
                return Err(if retry == 0 {
                    error
                } else {
                    ProviderError::GaveUp {
                        attempts: retry + 1,
                        last: Box::new(error),
                    }
                });
            }
            tokio::time::sleep(retry::delay(&policy, retry, error.retry_after())).await;
            retry += 1;
        }
    }

    /// One attempt, bounded by the configured timeout.
    async fn attempt(
        &self,
        request: &ResponsesRequest,
        carried: &Carried,
    ) -> Result<Reply, ProviderError> {
        let timeout = self.config.timeout;
        match tokio::time::timeout(timeout, self.exchange(request, carried)).await {
            Ok(result) => result,
            Err(_) => Err(ProviderError::Timeout {
                seconds: timeout.as_secs_f64(),
            }),
        }
    }

    async fn exchange(
        &self,
        request: &ResponsesRequest,
        carried: &Carried,
    ) -> Result<Reply, ProviderError> {
        let config = &self.config;
        let (url, body) = match config.api {
            Api::Responses => (
                responses::client::url(&config.base_url),
                responses::client::body(request, config, carried),
            ),
            Api::Chat => (
                chat::client::url(&config.base_url),
                chat::client::body(request, config),
            ),
            Api::Anthropic => (
                anthropic::client::url(&config.base_url),
                anthropic::client::body(request, config, carried),
            ),
            Api::Gemini => (
                gemini::client::url(&config.base_url, &config.model),
                gemini::client::body(request, config, carried),
            ),
        };
        let mut builder = self
            .http
            .post(&url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(serde_json::to_vec(&body).unwrap_or_default());
        let key = self.key.as_ref().map(ApiKey::expose);
        builder = match config.api {
            Api::Responses | Api::Chat => match key {
                Some(key) => builder.bearer_auth(key),
                None => builder,
            },
            Api::Anthropic => anthropic::client::headers(builder, key),
            Api::Gemini => gemini::client::headers(builder, key),
        };
        let response = builder.send().await.map_err(|e| ProviderError::Transport {
            message: error_chain(&e),
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry::retry_after(response.headers());
            let text = response.text().await.unwrap_or_default();
            return Err(ProviderError::Status {
                status: status.as_u16(),
                body: excerpt(&error_text(&text), ERROR_BODY_EXCERPT),
                retry_after,
            });
        }
        let mut reader = ReplyStream::new(config.api);
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| ProviderError::Stream {
                message: error_chain(&e),
            })?;
            if let Some(reply) = reader.push(&chunk)? {
                return Ok(reply);
            }
        }
        reader.finish()
    }

    /// Never let the key reach an error message, whatever the provider echoes.
    fn redact(&self, error: ProviderError) -> ProviderError {
        let Some(key) = &self.key else {
            return error;
        };
        let text = error.to_string();
        if !text.contains(key.expose()) {
            return error;
        }
        ProviderError::Failed {
            message: text.replace(key.expose(), "<redacted>"),
            transient: error.is_retryable(),
            retry_after: error.retry_after(),
        }
    }
}

/// The provider's message from an error body (`{"error": {"message": ...}}`), else the body.
fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .or_else(|| v["message"].as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::api::responses::wire::ResponsesRequest;

    /// A Codex-like request: a function with parameters, one without, and kinds only the
    /// Responses API has.
    fn codex_like_request() -> ResponsesRequest {
        serde_json::from_value(json!({
            "model": "m",
            "input": [],
            "tools": [
                {"type": "function", "name": "exec_command", "description": "run",
                 "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
                {"type": "function", "name": "list_goals", "description": "goals"},
                {"type": "custom", "name": "apply_patch", "description": "patch",
                 "format": {"type": "grammar", "syntax": "lark", "definition": "start: /.+/"}},
                {"type": "web_search"},
                {"type": "namespace", "name": "mcp", "tools": []}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn chat_and_anthropic_get_only_function_tools_and_a_missing_schema_is_an_empty_object() {
        let request = codex_like_request();
        let chat = crate::api::chat::client::declared_tools(&request);
        let anthropic = crate::api::anthropic::client::declared_tools(&request);
        for (count, text) in [
            (chat.len(), serde_json::to_string(&chat).unwrap()),
            (anthropic.len(), serde_json::to_string(&anthropic).unwrap()),
        ] {
            assert_eq!(count, 2, "{text}");
            assert!(
                text.contains("exec_command") && text.contains("list_goals"),
                "{text}"
            );
            assert!(
                !text.contains("apply_patch") && !text.contains("web_search"),
                "{text}"
            );
            assert!(
                text.contains(r#"{"properties":{},"type":"object"}"#),
                "a function without parameters takes none: {text}"
            );
        }
    }
}

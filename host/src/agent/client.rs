//! Sending one request to a Responses endpoint and reading its stream.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use super::reply::{ModelReply, ReplyCollector};
use super::{AgentConfig, AgentError};
use crate::message::{error_chain, excerpt};
use crate::wire::SseParser;

/// Most bytes of an HTTP error body quoted in the error message.
const ERROR_BODY_EXCERPT: usize = 512;

/// The process's one HTTP client for model endpoints, built on first use.
///
/// Building a client loads the platform's root certificates (hundreds of files read and
/// decoded): once per turn that was the largest single cost of a replay suite. It is built
/// exactly once, also when the first runs start together (they wait for it instead of each
/// building one). One client also keeps connections to the loopback endpoint alive across
/// runs. There is no connect timeout of its own: `send` bounds the whole exchange,
/// connecting included, by the request timeout.
fn shared_http() -> Result<reqwest::Client, AgentError> {
    // A build that fails (no usable TLS backend) fails the same way every time: kept too.
    static HTTP: std::sync::OnceLock<Result<reqwest::Client, String>> = std::sync::OnceLock::new();
    HTTP.get_or_init(|| {
        crate::tls::install_crypto_provider();
        reqwest::Client::builder()
            .build()
            .map_err(|e| error_chain(&e))
    })
    .clone()
    .map_err(|message| AgentError::Client { message })
}

/// An HTTP client for one turn's model endpoint.
pub(crate) struct ModelClient {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl ModelClient {
    pub fn new(config: &AgentConfig) -> Result<Self, AgentError> {
        Ok(Self {
            http: shared_http()?,
            url: format!("{}/responses", config.base_url.trim_end_matches('/')),
            api_key: config.api_key.clone(),
            timeout: config.limits.request_timeout,
        })
    }

    /// Send request `request` (1-based) with this JSON body and wait for the reply.
    pub async fn send(&self, request: u32, body: Vec<u8>) -> Result<ModelReply, AgentError> {
        match tokio::time::timeout(self.timeout, self.exchange(request, body)).await {
            Ok(result) => result,
            Err(_) => Err(AgentError::Timeout {
                request,
                seconds: self.timeout.as_secs_f64(),
            }),
        }
    }

    async fn exchange(&self, request: u32, body: Vec<u8>) -> Result<ModelReply, AgentError> {
        let transport = |e: reqwest::Error| AgentError::Transport {
            request,
            message: error_chain(&e),
        };
        let mut builder = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body);
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        let response = builder.send().await.map_err(transport)?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(AgentError::HttpStatus {
                request,
                status: status.as_u16(),
                body: excerpt(&text, ERROR_BODY_EXCERPT),
            });
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        if !content_type.starts_with("text/event-stream") {
            return Err(AgentError::Malformed {
                request,
                message: format!("expected an event stream, got content type `{content_type}`"),
            });
        }
        let mut stream = response.bytes_stream();
        let mut parser = SseParser::new();
        let mut collector = ReplyCollector::new(request);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(transport)?;
            let events = parser.push(&chunk).map_err(|e| AgentError::Malformed {
                request,
                message: e.to_string(),
            })?;
            for event in events {
                // The reply is decided at the terminal event; whatever follows is ignored,
                // so a service that keeps the connection open cannot stall the turn.
                if let Some(outcome) = collector.event(event) {
                    return outcome;
                }
            }
        }
        if let Some(outcome) = parser.finish().and_then(|event| collector.event(event)) {
            return outcome;
        }
        Err(collector.end())
    }
}

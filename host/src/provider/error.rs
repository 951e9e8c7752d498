//! Why a provider request failed, and whether trying again may help.

use std::time::Duration;

/// Why one provider request failed (after retries, see [`ProviderError::GaveUp`]).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    /// The provider answered with an HTTP error status.
    #[error("HTTP {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The start of the response body (the provider's error text).
        body: String,
        /// What `retry-after` / `retry-after-ms` asked for.
        retry_after: Option<Duration>,
    },
    /// The request could not be sent or no response came (connection refused or reset).
    #[error("connection failed: {message}")]
    Transport {
        /// What went wrong, with its causes.
        message: String,
    },
    /// The stream broke off before its terminal event.
    #[error("the stream broke off: {message}")]
    Stream {
        /// What went wrong.
        message: String,
    },
    /// One attempt did not finish within the configured timeout.
    #[error("no complete answer within {seconds:.1}s")]
    Timeout {
        /// The timeout.
        seconds: f64,
    },
    /// The provider sent something that is not its API's stream.
    #[error("malformed response: {message}")]
    Malformed {
        /// What was wrong.
        message: String,
    },
    /// The provider reported an error inside the stream.
    #[error("the provider reported an error: {message}")]
    Failed {
        /// The provider's message.
        message: String,
        /// Whether the error is transient (e.g. Anthropic's `overloaded_error`).
        transient: bool,
    },
    /// The HTTP client could not be built.
    #[error("failed to set up the provider client: {message}")]
    Client {
        /// The cause.
        message: String,
    },
    /// Every attempt failed; `last` is the final one's error.
    #[error("{last} (gave up after {attempts} attempts)")]
    GaveUp {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's error.
        last: Box<ProviderError>,
    },
}

impl ProviderError {
    /// Whether another attempt may succeed: 408, 409, 429, 5xx, connection errors, streams
    /// cut mid-way, timeouts, and transient in-stream errors.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Status { status, .. } => {
                matches!(status, 408 | 409 | 429) || (500..=599).contains(status)
            }
            ProviderError::Transport { .. }
            | ProviderError::Stream { .. }
            | ProviderError::Timeout { .. } => true,
            ProviderError::Failed { transient, .. } => *transient,
            ProviderError::Malformed { .. }
            | ProviderError::Client { .. }
            | ProviderError::GaveUp { .. } => false,
        }
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// At most `max` bytes of `text`, cut on a character boundary, marked when cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

//! Why a provider request failed, and whether trying again may help.

use std::time::Duration;

use crate::message::excerpt;

/// Why one provider request failed (after retries, see [`ProviderError::GaveUp`]).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
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
    /// The provider reported an error inside the stream (see `reported`).
    #[error("the provider reported an error: {message}")]
    Failed {
        /// The provider's message, with its code.
        message: String,
        /// Whether the error is transient (a rate limit, a server error, an overload), so
        /// retried like the same error over HTTP.
        transient: bool,
        /// The wait the message asks for ("Please try again in 1.5s").
        retry_after: Option<Duration>,
    },
    /// The HTTP client could not be built.
    #[error("failed to set up the provider client: {message}")]
    Client {
        /// The cause.
        message: String,
    },
    /// `--max-cost`: what the suite's requests cost reached the limit, so this one was not
    /// sent ([`super::CostBudget`]).
    #[error(
        "not sent: the suite's --max-cost budget of ${limit_usd} is spent (${spent_usd:.4} so far)"
    )]
    BudgetSpent {
        /// The limit, USD.
        limit_usd: f64,
        /// What was spent, USD.
        spent_usd: f64,
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
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Status { status, .. } => retryable_status(*status),
            ProviderError::Transport { .. }
            | ProviderError::Stream { .. }
            | ProviderError::Timeout { .. } => true,
            ProviderError::Failed { transient, .. } => *transient,
            ProviderError::Malformed { .. }
            | ProviderError::Client { .. }
            | ProviderError::BudgetSpent { .. }
            | ProviderError::GaveUp { .. } => false,
        }
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::Status { retry_after, .. }
            | ProviderError::Failed { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// Codes and types of in-stream errors that are never worth another attempt, even when their
/// text says "try again" (the input is too long, the account is out of quota, ...).
const FATAL: &[&str] = &[
    "context_length_exceeded",
    "insufficient_quota",
    "usage_not_included",
    "invalid_prompt",
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "billing_error",
    "not_found_error",
    "request_too_large",
    "invalid_api_key",
    "model_not_found",
];

/// Codes and types of in-stream errors that mean what HTTP 429, 5xx or 529 mean: OpenAI's
/// (`server_error`, `rate_limit_exceeded`, the nested `too_many_requests`), Anthropic's
/// (`overloaded_error`, `api_error`, `rate_limit_error`, `timeout_error`) and gateways'.
const TRANSIENT: &[&str] = &[
    "server_error",
    "internal_error",
    "internal_server_error",
    "api_error",
    "rate_limit_exceeded",
    "rate_limit_error",
    "too_many_requests",
    "overloaded",
    "overloaded_error",
    "server_overloaded",
    "service_unavailable",
    "service_unavailable_error",
    "timeout",
    "timeout_error",
    "request_timeout",
    "slow_down",
];

/// An error a provider reported inside its stream, classified like the same error over HTTP.
///
/// `value` is the event or chunk: the error object is `value["error"]` when that is an object
/// (Chat Completions' `{"error": {...}}` chunk, the nested `{"type":"error","error":{...}}`
/// event, Anthropic's `error` event, `response.failed`'s `response.error` passed directly),
/// else `value` itself (the Responses API's flat `error` event: `code`, `message`). The
/// message keeps the provider's text and its code (or type): `code: message`.
pub(crate) fn reported(value: &serde_json::Value) -> ProviderError {
    use serde_json::Value;
    let error = match value.get("error") {
        Some(error @ Value::Object(_)) => error,
        _ => value,
    };
    let text = |key: &str| {
        error
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "error")
    };
    let number = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_u64)
            .filter(|n| *n <= 599)
            .map(|n| n as u16)
    };
    // An HTTP-like status: a numeric `code` (gateways, vLLM) or a `status` field.
    let status = number(error, "code")
        .or_else(|| number(error, "status"))
        .or_else(|| number(value, "status"))
        .filter(|s| (100..=599).contains(s));
    let code = text("code");
    let kind = text("type");
    let message = text("message").map(str::to_owned).unwrap_or_default();
    let ids: Vec<&str> = [code, kind].into_iter().flatten().collect();
    let lower = message.to_ascii_lowercase();
    let transient = if ids.iter().any(|id| FATAL.contains(id)) {
        false
    } else if let Some(status) = status {
        retryable_status(status)
    } else {
        ids.iter().any(|id| TRANSIENT.contains(id)) || lower.contains("retry your request")
    };
    let label = code
        .or(kind)
        .map(str::to_owned)
        .or_else(|| status.map(|s| s.to_string()));
    let message = match (label, message.is_empty()) {
        (Some(label), false) => format!("{label}: {message}"),
        (Some(label), true) => label,
        (None, false) => message,
        (None, true) => format!("no message ({})", excerpt(&value.to_string(), 200)),
    };
    ProviderError::Failed {
        retry_after: if transient {
            try_again_in(&lower)
        } else {
            None
        },
        message,
        transient,
    }
}

/// Whether an HTTP status is worth another attempt: 408, 409, 429, 5xx (529 included).
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
}

/// The wait a rate-limit message asks for: "... Please try again in 11.054s." or "in 20ms".
fn try_again_in(lower: &str) -> Option<Duration> {
    let rest = &lower[lower.find("try again in")? + "try again in".len()..];
    let rest = rest.trim_start();
    let digits = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..digits].parse().ok()?;
    let unit = rest[digits..].trim_start();
    let seconds = if unit.starts_with("ms") {
        value / 1000.0
    } else if unit.starts_with('s') {
        value
    } else {
        return None;
    };
    (0.0..1e6)
        .contains(&seconds)
        .then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failed(value: serde_json::Value) -> (String, bool, Option<Duration>) {
        match reported(&value) {
            ProviderError::Failed {
                message,
                transient,
                retry_after,
            } => (message, transient, retry_after),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nested_error_events_keep_message_and_code_and_rate_limits_are_transient() {
        let (message, transient, wait) = failed(json!({
            "type": "error",
            "error": {"type": "too_many_requests", "code": "rate_limit_exceeded",
                      "message": "Rate limit reached for gpt-5. Please try again in 1.5s."},
        }));
        assert_eq!(
            message,
            "rate_limit_exceeded: Rate limit reached for gpt-5. Please try again in 1.5s."
        );
        assert!(transient);
        assert_eq!(wait, Some(Duration::from_millis(1500)));
    }

    #[test]
    fn flat_error_events_and_server_errors() {
        let (message, transient, wait) = failed(json!({
            "type": "error", "code": "server_error", "sequence_number": 4,
            "message": "An error occurred while processing your request. You can retry your request, or contact us through our help center.",
        }));
        assert!(
            message.starts_with("server_error: An error occurred"),
            "{message}"
        );
        assert!(transient);
        assert_eq!(wait, None);
        // No known code, but the text says a retry may help.
        let (_, transient, _) =
            failed(json!({"error": {"message": "Oops. You can retry your request."}}));
        assert!(transient);
    }

    #[test]
    fn fatal_codes_win_over_retry_wording() {
        let (message, transient, _) = failed(json!({"error": {
            "code": "context_length_exceeded",
            "message": "Your input exceeds the context window of this model. Please adjust your input and try again in 1s."}}));
        assert!(
            message.starts_with("context_length_exceeded: "),
            "{message}"
        );
        assert!(!transient);
        let (_, transient, _) = failed(
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
        );
        assert!(!transient);
    }

    #[test]
    fn anthropic_and_gateway_errors_are_classified_like_their_status() {
        let (message, transient, _) = failed(
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
        assert_eq!(message, "overloaded_error: Overloaded");
        assert!(transient);
        // Numeric codes are HTTP statuses (OpenRouter, vLLM).
        let (message, transient, _) =
            failed(json!({"error": {"code": 502, "message": "Provider disconnected"}}));
        assert_eq!(message, "502: Provider disconnected");
        assert!(transient);
        let (_, transient, _) = failed(json!({"error": {"code": 400, "message": "bad tool"}}));
        assert!(!transient);
        let (message, transient, _) = failed(json!({"error": {}}));
        assert_eq!(message, "no message ({\"error\":{}})");
        assert!(!transient);
    }

    #[test]
    fn waits_asked_for_in_the_text() {
        assert_eq!(
            try_again_in("please try again in 20ms."),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            try_again_in("try again in 2 seconds"),
            Some(Duration::from_secs(2))
        );
        assert_eq!(try_again_in("try again in a minute"), None);
        assert_eq!(try_again_in("try again later"), None);
    }
}

//! Waiting between attempts: `retry-after` when the provider asks, otherwise exponential
//! backoff with jitter; always capped.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use reqwest::header::HeaderMap;

use crate::config::RetryPolicy;

/// The wait before retry number `retry` (0-based): the provider's `retry_after` if given,
/// else `base · 2^retry` with equal jitter (half fixed, half random); capped at `max_delay`.
pub(crate) fn delay(policy: &RetryPolicy, retry: u32, retry_after: Option<Duration>) -> Duration {
    if let Some(wait) = retry_after {
        return wait.min(policy.max_delay);
    }
    let backoff = policy
        .base_delay
        .saturating_mul(2u32.saturating_pow(retry.min(20)))
        .min(policy.max_delay);
    let half = backoff / 2;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = SmallRng::seed_from_u64(nanos ^ u64::from(retry).rotate_left(32));
    let jitter = rng.random_range(0..=half.as_millis().min(u64::MAX as u128) as u64);
    half + Duration::from_millis(jitter)
}

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds; an HTTP date is ignored).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e9)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after").map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(400),
            max_delay: Duration::from_secs(2),
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for _ in 0..50 {
            let first = delay(&policy(), 0, None);
            assert!(first >= Duration::from_millis(200) && first <= Duration::from_millis(400));
            let third = delay(&policy(), 2, None);
            assert!(third >= Duration::from_millis(800) && third <= Duration::from_millis(1600));
            let late = delay(&policy(), 30, None);
            assert!(late >= Duration::from_secs(1) && late <= Duration::from_secs(2));
        }
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let wait = delay(&policy(), 0, Some(Duration::from_millis(1500)));
        assert_eq!(wait, Duration::from_millis(1500));
        let wait = delay(&policy(), 0, Some(Duration::from_secs(600)));
        assert_eq!(wait, Duration::from_secs(2));
    }

    #[test]
    fn parses_retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut date = HeaderMap::new();
        date.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&date), None);
        date.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after(&date), None);
    }
}

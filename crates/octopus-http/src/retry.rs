//! Sending one request with retries on rate limits and server errors.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// How hard [`send`] tries.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Retries after a 429, a 5xx, a timeout or a lost connection.
    pub max_retries: u32,
    /// A `retry-after` longer than this is not waited for: the caller gets
    /// the failure, with the delay, at once.
    pub max_retry_wait: Duration,
    /// Deadline of one attempt, from sending to the response's headers (and,
    /// when the caller reads the body whole, to its end).
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_retry_wait: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
        }
    }
}

/// Why a request failed for good.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The provider's HTTP status; `None` when no response came (refused
    /// connection, timeout).
    pub status: Option<u16>,
    /// What went wrong, with the provider's own message when it sent one.
    pub message: String,
    /// When the provider said to come back.
    pub retry_after: Option<Duration>,
    /// Whether a later attempt may succeed (a rate limit, a server error, a
    /// timeout), as opposed to a request the provider will always refuse.
    pub transient: bool,
}

/// Sends what `build` makes until a response with a success status arrives
/// (returned with its body unread, so that it can be streamed), the request
/// fails for good, or the retries run out. A 429 or a 5xx is retried after the
/// `retry-after` the provider sent (or an exponential backoff when it sent
/// none); a timeout or a lost connection likewise. `error_message` reads the
/// provider's message out of an error body.
pub async fn send(
    provider: &str,
    policy: &RetryPolicy,
    build: impl Fn() -> reqwest::RequestBuilder,
    error_message: fn(&str) -> Option<String>,
) -> Result<reqwest::Response, Failure> {
    let mut attempt = 0;
    loop {
        let failure = match build().timeout(policy.timeout).send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status();
                let retry_after = retry_after(response.headers());
                let body = response.text().await.unwrap_or_default();
                let message = error_message(&body).unwrap_or_else(|| crate::excerpt(&body));
                Failure {
                    status: Some(status.as_u16()),
                    transient: status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error(),
                    message: format!("HTTP {}: {message}", status.as_u16()),
                    retry_after,
                }
            }
            Err(error) => Failure {
                status: None,
                transient: error.is_connect() || error.is_timeout(),
                message: describe(&error),
                retry_after: None,
            },
        };
        let wait = failure
            .retry_after
            .unwrap_or_else(|| Duration::from_millis(250 << attempt.min(6)));
        if !failure.transient || attempt >= policy.max_retries || wait > policy.max_retry_wait {
            return Err(failure);
        }
        attempt += 1;
        tracing::warn!(provider, attempt, wait_ms = wait.as_millis() as u64, reason = %failure.message, "provider request retried");
        tokio::time::sleep(wait).await;
    }
}

fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "no answer within the timeout".into()
    } else if error.is_connect() {
        format!("cannot connect: {error}")
    } else {
        format!("request failed: {error}")
    }
}

/// `retry-after-ms` (Azure OpenAI) or `retry-after` in seconds (RFC 9110; the
/// HTTP-date form is rare from these APIs and is treated as absent).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_milliseconds_before_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        headers.insert("retry-after-ms", "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None, "a date is treated as absent");
    }
}

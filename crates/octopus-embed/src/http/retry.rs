//! Sending one request with retries on rate limits and server errors.

use std::time::Duration;

use octopus_core::embedding::EmbedError;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::HttpEmbedderOptions;

/// Sends what `build` makes until it succeeds, fails for good, or runs out of
/// retries. Returns the body of the successful response. `error_message` reads
/// the provider's message out of an error body.
pub async fn send(
    provider: &str,
    options: &HttpEmbedderOptions,
    build: impl Fn() -> reqwest::RequestBuilder,
    error_message: fn(&str) -> Option<String>,
) -> Result<bytes::Bytes, EmbedError> {
    let mut attempt = 0;
    loop {
        let failure = match build().send().await {
            Ok(response) if response.status().is_success() => {
                return response.bytes().await.map_err(|e| EmbedError::Provider {
                    provider: provider.to_owned(),
                    message: format!("reading the response failed: {e}"),
                    retry_after: None,
                });
            }
            Ok(response) => {
                let status = response.status();
                let retry_after = retry_after(response.headers());
                let body = response.text().await.unwrap_or_default();
                let message = error_message(&body).unwrap_or_else(|| truncate(&body));
                Failure {
                    retryable: status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error(),
                    message: format!("HTTP {}: {message}", status.as_u16()),
                    retry_after,
                }
            }
            Err(error) => Failure {
                retryable: error.is_connect() || error.is_timeout(),
                message: format!("request failed: {error}"),
                retry_after: None,
            },
        };
        let wait = failure
            .retry_after
            .unwrap_or_else(|| Duration::from_millis(250 << attempt.min(6)));
        if !failure.retryable || attempt >= options.max_retries || wait > options.max_retry_wait {
            return Err(EmbedError::Provider {
                provider: provider.to_owned(),
                message: failure.message,
                retry_after: failure.retry_after,
            });
        }
        attempt += 1;
        tracing::warn!(provider, attempt, wait_ms = wait.as_millis() as u64, reason = %failure.message, "embedding request retried");
        tokio::time::sleep(wait).await;
    }
}

struct Failure {
    retryable: bool,
    message: String,
    retry_after: Option<Duration>,
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

fn truncate(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".into();
    }
    body.chars().take(300).collect()
}

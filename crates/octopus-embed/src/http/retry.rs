//! Sending one embedding request through the retries every provider client
//! shares ([`octopus_provider_http::send`]), read whole.

use octopus_core::embedding::EmbedError;

use super::HttpEmbedderOptions;

/// Sends what `build` makes with retries; returns the successful body.
pub async fn send(
    provider: &str,
    options: &HttpEmbedderOptions,
    build: impl Fn() -> reqwest::RequestBuilder,
    error_message: fn(&str) -> Option<String>,
) -> Result<bytes::Bytes, EmbedError> {
    let policy = octopus_provider_http::RetryPolicy {
        max_retries: options.max_retries,
        max_retry_wait: options.max_retry_wait,
        timeout: options.timeout,
    };
    let failed = |message: String, retry_after| EmbedError::Provider {
        provider: provider.to_owned(),
        message,
        retry_after,
    };
    let response = octopus_provider_http::send(provider, &policy, build, error_message)
        .await
        .map_err(|failure| failed(failure.message, failure.retry_after))?;
    response
        .bytes()
        .await
        .map_err(|e| failed(format!("reading the response failed: {e}"), None))
}

//! Embedders behind HTTP APIs: OpenAI-compatible `/embeddings` (OpenAI, Azure
//! OpenAI, and the many servers that copy the format) and Ollama's `/api/embed`.
//!
//! Both share the same client behaviour: inputs go in batches of at most
//! `batch_size`; a 429 or a 5xx is retried after the `retry-after` the provider
//! sent (or an exponential backoff when it sent none), up to `max_retries` times;
//! any other error surfaces at once with the provider's own message. Returned
//! vectors are checked against the configured dimension and L2-normalised, so a
//! dot product is a cosine whatever the provider returns.

mod ollama;
mod openai;
mod retry;

use std::time::Duration;

pub use ollama::OllamaEmbedder;
pub use openai::{OpenAiAuth, OpenAiEmbedder};

/// What every HTTP embedder is configured with.
#[derive(Clone, Debug)]
pub struct HttpEmbedderOptions {
    /// The endpoint to POST to, in full: for example
    /// `https://api.openai.com/v1/embeddings` or `http://localhost:11434/api/embed`.
    pub url: String,
    /// The model name sent to the provider.
    pub model: String,
    /// Length of the vectors the model returns; checked on every response.
    pub dimension: usize,
    /// Most inputs in one request.
    pub batch_size: usize,
    /// Retries of one request after a 429, a 5xx or a lost connection.
    pub max_retries: u32,
    /// A `retry-after` longer than this is not waited for: the caller gets the
    /// error, with the delay, at once.
    pub max_retry_wait: Duration,
    /// Timeout of one request.
    pub timeout: Duration,
}

impl HttpEmbedderOptions {
    pub fn new(url: impl Into<String>, model: impl Into<String>, dimension: usize) -> Self {
        Self {
            url: url.into(),
            model: model.into(),
            dimension,
            batch_size: 64,
            max_retries: 3,
            max_retry_wait: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
        }
    }
}

pub use octopus_provider_http::install_tls_provider;

/// An HTTP client for `options`: a read that waits longer than the request's
/// timeout gives up (each request's deadline is set when it is sent).
fn client(
    options: &HttpEmbedderOptions,
) -> Result<reqwest::Client, octopus_core::embedding::EmbedError> {
    octopus_provider_http::client(
        Duration::from_secs(10).min(options.timeout),
        options.timeout,
    )
    .map_err(|e| octopus_core::embedding::EmbedError::Model(e.to_string()))
}

/// Checks the dimension of every vector and scales it to unit length.
fn normalised(
    provider: &str,
    expected: usize,
    vectors: Vec<Vec<f32>>,
) -> Result<Vec<Vec<f32>>, octopus_core::embedding::EmbedError> {
    vectors
        .into_iter()
        .map(|mut vector| {
            if vector.len() != expected {
                return Err(octopus_core::embedding::EmbedError::Provider {
                    provider: provider.to_owned(),
                    message: format!(
                        "returned a vector of {} dimensions; the configured dimension is {expected}",
                        vector.len()
                    ),
                    retry_after: None,
                });
            }
            let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                vector.iter_mut().for_each(|x| *x /= norm);
            }
            Ok(vector)
        })
        .collect()
}

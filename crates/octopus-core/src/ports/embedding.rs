//! The embedding port: texts in, vectors out.

use std::time::Duration;

use async_trait::async_trait;

/// Turns texts into vectors. Implementations: a local BERT-family model on CPU,
/// and OpenAI-compatible or Ollama endpoints.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// Names the model. Vectors of different models are not comparable, so
    /// stores keep them apart by this name.
    fn model(&self) -> &str;

    /// Length of every vector this embedder returns.
    fn dimension(&self) -> usize;

    /// One vector per text, in the order given.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// The most tokens of one input the model reads; the rest is cut off, so
    /// chunks should not be longer. `None` when unknown.
    fn max_input_tokens(&self) -> Option<usize> {
        None
    }

    /// Tokens of `text` as the model counts them (without special tokens), when
    /// the embedder can tell.
    fn count_tokens(&self, _text: &str) -> Option<usize> {
        None
    }

    /// Lets go of memory kept only to make the next calls faster (a local
    /// model's working space, sized by the largest batch it ran), once a
    /// burst of work is over. Nothing by default.
    fn release_spare_memory(&self) {}
}

/// Why embedding failed, and whose fault it is.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The caller's input cannot be embedded.
    #[error("cannot embed this input: {0}")]
    Input(String),

    /// The provider refused or failed; `retry_after` when it said when to retry.
    #[error("embedding provider {provider} failed: {message}")]
    Provider {
        provider: String,
        message: String,
        retry_after: Option<Duration>,
    },

    /// The model could not be loaded or run: a fault on our side.
    #[error("embedding model failed: {0}")]
    Model(String),
}

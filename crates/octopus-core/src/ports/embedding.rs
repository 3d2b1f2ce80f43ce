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

    /// [`Embedder::embed`] for a reader waiting on the vectors: a search's,
    /// a recall's or a turn's query. A local model runs these beside the
    /// batches of stored text rather than queued behind them, where one
    /// batch of 32 messages holds a core for a tenth of a second. By
    /// default, the same as `embed`.
    async fn embed_for_reader(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts).await
    }

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

/// The number format a local model runs in, and how it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct PrecisionChoice {
    pub chosen: &'static str,
    /// Chosen by timing each candidate at load (`precision = "auto"`), or
    /// named by the setting.
    pub by_measurement: bool,
    /// For `auto`, each candidate's fastest run over the calibration texts;
    /// empty when there was one candidate and nothing to time.
    pub timings: Vec<(&'static str, Duration)>,
}

/// An embedder ready to use, and the number format it runs in when it is a
/// local model.
#[derive(Clone)]
pub struct LoadedEmbedder {
    pub embedder: std::sync::Arc<dyn Embedder>,
    pub precision: Option<PrecisionChoice>,
}

/// Where the engine's embedder comes from. Loading may be slow (a local
/// model reads ~90 MB): the engine loads once, on first use, so that a
/// process that never embeds never pays for it.
#[async_trait]
pub trait EmbedderSource: Send + Sync {
    async fn load(&self) -> Result<LoadedEmbedder, EmbedError>;
}

/// An embedder already built is its own source.
#[async_trait]
impl EmbedderSource for std::sync::Arc<dyn Embedder> {
    async fn load(&self) -> Result<LoadedEmbedder, EmbedError> {
        Ok(LoadedEmbedder {
            embedder: std::sync::Arc::clone(self),
            precision: None,
        })
    }
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

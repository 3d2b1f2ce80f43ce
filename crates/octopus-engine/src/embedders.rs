//! The embedder the configuration names, built when first needed.

use std::sync::Arc;

use octopus_core::embedding::{EmbedError, Embedder};
use octopus_embed::http::{HttpEmbedderOptions, OllamaEmbedder, OpenAiAuth, OpenAiEmbedder};

use crate::config::{EmbeddingSettings, HttpEmbedding, LocalEmbedding};
use crate::embedding_stats::EmbeddingStats;

/// Checks what can be checked without loading a model or calling a provider,
/// so that a broken configuration stops the server at start, not at the first
/// ingest. (What is missing is refused when the file is read.)
pub fn check(config: &EmbeddingSettings) -> Result<(), String> {
    match config {
        EmbeddingSettings::Local(_) => local_model_built(),
        EmbeddingSettings::Openai(http) | EmbeddingSettings::Ollama(http) => {
            http_options(http)?;
            api_key(http).map(|_| ())
        }
        EmbeddingSettings::AzureOpenai(http) => {
            http_options(http)?;
            azure_key(http).map(|_| ())
        }
    }
}

/// Builds the embedder; the local model's number format goes in `stats`.
/// Loading the local model reads ~90 MB and takes a moment: call from a
/// blocking thread.
pub fn build(
    config: &EmbeddingSettings,
    stats: &EmbeddingStats,
) -> Result<Arc<dyn Embedder>, EmbedError> {
    let options = |http| http_options(http).map_err(EmbedError::Model);
    Ok(match config {
        EmbeddingSettings::Local(local_settings) => local(local_settings, stats)?,
        EmbeddingSettings::Openai(http) => Arc::new(OpenAiEmbedder::new(
            options(http)?,
            api_key(http)
                .map_err(EmbedError::Model)?
                .map_or(OpenAiAuth::None, OpenAiAuth::Bearer),
        )?),
        EmbeddingSettings::AzureOpenai(http) => Arc::new(OpenAiEmbedder::new(
            options(http)?,
            OpenAiAuth::ApiKey(azure_key(http).map_err(EmbedError::Model)?),
        )?),
        EmbeddingSettings::Ollama(http) => Arc::new(OllamaEmbedder::new(options(http)?)?),
    })
}

#[cfg(feature = "local-embeddings")]
fn local(config: &LocalEmbedding, stats: &EmbeddingStats) -> Result<Arc<dyn Embedder>, EmbedError> {
    let dir = config
        .model_dir
        .clone()
        .unwrap_or_else(octopus_embed::model_dir::default_model_dir);
    use crate::config::EmbeddingPrecision;
    use crate::embedding_stats::PrecisionChoice;
    use octopus_embed::local::{Batching, LocalEmbedder, Precision};
    let named = |precision: Precision| {
        let batching = Batching {
            precision,
            ..Batching::default()
        };
        let embedder = LocalEmbedder::load_with(&dir, batching)?;
        stats.set_precision(PrecisionChoice {
            chosen: precision.as_str(),
            by_measurement: false,
            timings: Vec::new(),
        });
        Ok(Arc::new(embedder) as Arc<dyn Embedder>)
    };
    match config.precision {
        EmbeddingPrecision::F32 => named(Precision::F32),
        EmbeddingPrecision::Bf16 => named(Precision::Bf16),
        EmbeddingPrecision::Int8 => named(Precision::Int8),
        EmbeddingPrecision::Auto => {
            let (embedder, calibration) = LocalEmbedder::load_fastest(&dir, Batching::default())?;
            stats.set_precision(PrecisionChoice {
                chosen: calibration.chosen.as_str(),
                by_measurement: true,
                timings: calibration
                    .timings
                    .iter()
                    .map(|(precision, took)| (precision.as_str(), *took))
                    .collect(),
            });
            Ok(Arc::new(embedder))
        }
    }
}

#[cfg(not(feature = "local-embeddings"))]
fn local(_: &LocalEmbedding, _: &EmbeddingStats) -> Result<Arc<dyn Embedder>, EmbedError> {
    Err(EmbedError::Model(LOCAL_MISSING.into()))
}

#[cfg(not(feature = "local-embeddings"))]
const LOCAL_MISSING: &str = "this build has no local embedding model (cargo feature `local-embeddings` of octopus-engine): set `[embedding] provider` to openai, azure_openai or ollama";

fn local_model_built() -> Result<(), String> {
    #[cfg(not(feature = "local-embeddings"))]
    return Err(LOCAL_MISSING.into());
    #[cfg(feature = "local-embeddings")]
    Ok(())
}

fn http_options(config: &HttpEmbedding) -> Result<HttpEmbedderOptions, String> {
    let url = &config.url;
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(format!(
            "`embedding.url` must start with http:// or https://, not {url:?}"
        ));
    }
    if config.dimension == 0 {
        return Err(
            "`embedding.dimension` must be the length of the model's vectors, not 0".into(),
        );
    }
    let mut options = HttpEmbedderOptions::new(url.clone(), config.model.clone(), config.dimension);
    options.batch_size = config.batch_size.max(1);
    options.max_retries = config.max_retries;
    Ok(options)
}

fn api_key(config: &HttpEmbedding) -> Result<Option<String>, String> {
    let Some(name) = &config.api_key_env else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(key)),
        _ => Err(format!(
            "`embedding.api_key_env` names {name}, which is not set in the environment"
        )),
    }
}

/// Azure OpenAI takes no request without a key.
fn azure_key(config: &HttpEmbedding) -> Result<String, String> {
    api_key(config)?
        .ok_or_else(|| "embedding provider azure_openai needs `embedding.api_key_env`".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_provider_with_unusable_settings_is_refused_at_start() {
        let mut http = HttpEmbedding::new(
            "api.openai.com/v1/embeddings",
            "text-embedding-3-small",
            1536,
        );
        let openai = |http: &HttpEmbedding| check(&EmbeddingSettings::Openai(http.clone()));
        assert!(openai(&http).unwrap_err().contains("must start with http"));
        http.url = "https://api.openai.com/v1/embeddings".into();
        assert_eq!(openai(&http), Ok(()));
        http.dimension = 0;
        assert!(openai(&http).unwrap_err().contains("`embedding.dimension`"));
        http.dimension = 1536;
        http.api_key_env = Some("OCTOPUS_TEST_UNSET_VARIABLE".into());
        assert!(
            openai(&http)
                .unwrap_err()
                .contains("OCTOPUS_TEST_UNSET_VARIABLE")
        );
        http.api_key_env = None;
        let azure = check(&EmbeddingSettings::AzureOpenai(http)).unwrap_err();
        assert!(azure.contains("`embedding.api_key_env`"), "{azure}");
        let local = check(&EmbeddingSettings::default());
        if cfg!(feature = "local-embeddings") {
            assert_eq!(local, Ok(()));
        } else {
            assert!(local.unwrap_err().contains("local-embeddings"));
        }
    }
}

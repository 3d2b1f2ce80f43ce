//! The embedder the configuration names, built when first needed.

use std::sync::Arc;

use octopus_core::embedding::{EmbedError, Embedder};
use octopus_embed::http::{HttpEmbedderOptions, OllamaEmbedder, OpenAiAuth, OpenAiEmbedder};

use crate::config::{EmbeddingProvider, EmbeddingSettings};

/// Checks what can be checked without loading a model or calling a provider,
/// so that a broken configuration stops the server at start, not at the first
/// ingest.
pub fn check(config: &EmbeddingSettings) -> Result<(), String> {
    if config.provider == EmbeddingProvider::Local {
        return local_model_built();
    }
    http_options(config).map(|_| ())?;
    api_key(config).map(|_| ())
}

/// Builds the embedder. Loading the local model reads ~90 MB and takes a
/// moment: call from a blocking thread.
pub fn build(config: &EmbeddingSettings) -> Result<Arc<dyn Embedder>, EmbedError> {
    let options = || http_options(config).map_err(EmbedError::Model);
    let key = || api_key(config).map_err(EmbedError::Model);
    Ok(match config.provider {
        EmbeddingProvider::Local => local(config)?,
        EmbeddingProvider::Openai => Arc::new(OpenAiEmbedder::new(
            options()?,
            key()?.map_or(OpenAiAuth::None, OpenAiAuth::Bearer),
        )?),
        EmbeddingProvider::AzureOpenai => {
            let key = key()?
                .ok_or_else(|| EmbedError::Model("azure_openai needs `api_key_env`".into()))?;
            Arc::new(OpenAiEmbedder::new(options()?, OpenAiAuth::ApiKey(key))?)
        }
        EmbeddingProvider::Ollama => Arc::new(OllamaEmbedder::new(options()?)?),
    })
}

#[cfg(feature = "local-embeddings")]
fn local(config: &EmbeddingSettings) -> Result<Arc<dyn Embedder>, EmbedError> {
    let dir = config
        .model_dir
        .clone()
        .unwrap_or_else(octopus_embed::model_dir::default_model_dir);
    use crate::config::EmbeddingPrecision;
    use octopus_embed::local::{Batching, LocalEmbedder, Precision};
    let precision = match config.precision {
        EmbeddingPrecision::Auto => Precision::fastest_available(),
        EmbeddingPrecision::F32 => Precision::F32,
        EmbeddingPrecision::Bf16 => Precision::Bf16,
    };
    let batching = Batching {
        precision,
        ..Batching::default()
    };
    Ok(Arc::new(LocalEmbedder::load_with(&dir, batching)?))
}

#[cfg(not(feature = "local-embeddings"))]
fn local(_: &EmbeddingSettings) -> Result<Arc<dyn Embedder>, EmbedError> {
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

fn http_options(config: &EmbeddingSettings) -> Result<HttpEmbedderOptions, String> {
    let provider = config.provider.as_str();
    let missing = |field: &str| format!("embedding provider {provider} needs `embedding.{field}`");
    let url = config.url.clone().ok_or_else(|| missing("url"))?;
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(format!(
            "`embedding.url` must start with http:// or https://, not {url:?}"
        ));
    }
    let model = config.model.clone().ok_or_else(|| missing("model"))?;
    let dimension = config
        .dimension
        .filter(|d| *d > 0)
        .ok_or_else(|| missing("dimension"))?;
    let mut options = HttpEmbedderOptions::new(url, model, dimension);
    options.batch_size = config.batch_size.max(1);
    options.max_retries = config.max_retries;
    Ok(options)
}

fn api_key(config: &EmbeddingSettings) -> Result<Option<String>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_provider_without_its_settings_is_refused_at_start() {
        let mut config = EmbeddingSettings {
            provider: EmbeddingProvider::Openai,
            ..EmbeddingSettings::default()
        };
        assert_eq!(
            check(&config).unwrap_err(),
            "embedding provider openai needs `embedding.url`"
        );
        config.url = Some("api.openai.com/v1/embeddings".into());
        assert!(check(&config).unwrap_err().contains("must start with http"));
        config.url = Some("https://api.openai.com/v1/embeddings".into());
        config.model = Some("text-embedding-3-small".into());
        assert!(
            check(&config)
                .unwrap_err()
                .contains("`embedding.dimension`")
        );
        config.dimension = Some(1536);
        assert_eq!(check(&config), Ok(()));
        config.api_key_env = Some("OCTOPUS_TEST_UNSET_VARIABLE".into());
        assert!(
            check(&config)
                .unwrap_err()
                .contains("OCTOPUS_TEST_UNSET_VARIABLE")
        );
        let local = check(&EmbeddingSettings::default());
        if cfg!(feature = "local-embeddings") {
            assert_eq!(local, Ok(()), "local needs nothing");
        } else {
            assert!(local.unwrap_err().contains("local-embeddings"));
        }
    }
}

//! The embedder `[embedding]` names, built when first needed.

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::embedding::{
    EmbedError, Embedder, EmbedderSource, LoadedEmbedder, PrecisionChoice,
};
use octopus_core::embedding_settings::{EmbeddingSettings, HttpEmbedding, LocalEmbedding};

use crate::http::{HttpEmbedderOptions, OllamaEmbedder, OpenAiAuth, OpenAiEmbedder};

/// `[embedding]` settings that cannot work, by name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(pub String);

/// The embedder `settings` name, loaded on a blocking thread when the
/// engine first asks for it.
pub struct ConfiguredEmbedder {
    settings: EmbeddingSettings,
}

impl ConfiguredEmbedder {
    /// Refuses settings [`check`] refuses.
    pub fn new(settings: EmbeddingSettings) -> Result<Self, SettingsError> {
        check(&settings)?;
        Ok(Self { settings })
    }
}

#[async_trait]
impl EmbedderSource for ConfiguredEmbedder {
    async fn load(&self) -> Result<LoadedEmbedder, EmbedError> {
        let settings = self.settings.clone();
        tokio::task::spawn_blocking(move || build(&settings))
            .await
            .map_err(|e| EmbedError::Model(format!("the model loading task failed: {e}")))?
    }
}

/// Checks what can be checked without loading a model or calling a provider,
/// so that a broken configuration stops the server at start, not at the first
/// ingest. (What is missing is refused when the file is read.)
pub fn check(config: &EmbeddingSettings) -> Result<(), SettingsError> {
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

/// Builds the embedder, with the local model's number format. Loading the
/// local model reads ~90 MB and takes a moment: call from a blocking thread.
fn build(config: &EmbeddingSettings) -> Result<LoadedEmbedder, EmbedError> {
    let options = |http| http_options(http).map_err(|e| EmbedError::Model(e.0));
    let embedder: Arc<dyn Embedder> = match config {
        EmbeddingSettings::Local(local_settings) => return local(local_settings),
        EmbeddingSettings::Openai(http) => Arc::new(OpenAiEmbedder::new(
            options(http)?,
            api_key(http)
                .map_err(|e| EmbedError::Model(e.0))?
                .map_or(OpenAiAuth::None, OpenAiAuth::Bearer),
        )?),
        EmbeddingSettings::AzureOpenai(http) => Arc::new(OpenAiEmbedder::new(
            options(http)?,
            OpenAiAuth::ApiKey(azure_key(http).map_err(|e| EmbedError::Model(e.0))?),
        )?),
        EmbeddingSettings::Ollama(http) => Arc::new(OllamaEmbedder::new(options(http)?)?),
    };
    Ok(LoadedEmbedder {
        embedder,
        precision: None,
    })
}

#[cfg(feature = "local")]
fn local(config: &LocalEmbedding) -> Result<LoadedEmbedder, EmbedError> {
    let dir = config
        .model_dir
        .clone()
        .unwrap_or_else(crate::model_dir::default_model_dir);
    use crate::local::{Batching, LocalEmbedder, Precision};
    use octopus_core::embedding_settings::EmbeddingPrecision;
    let named = |precision: Precision| {
        let batching = Batching {
            precision,
            ..Batching::default()
        };
        let embedder = LocalEmbedder::load_with(&dir, batching)?;
        Ok(LoadedEmbedder {
            embedder: Arc::new(embedder),
            precision: Some(PrecisionChoice {
                chosen: precision.as_str(),
                by_measurement: false,
                timings: Vec::new(),
            }),
        })
    };
    match config.precision {
        EmbeddingPrecision::F32 => named(Precision::F32),
        EmbeddingPrecision::Bf16 => named(Precision::Bf16),
        EmbeddingPrecision::Int8 => named(Precision::Int8),
        EmbeddingPrecision::Auto => {
            let (embedder, calibration) = LocalEmbedder::load_fastest(&dir, Batching::default())?;
            Ok(LoadedEmbedder {
                embedder: Arc::new(embedder),
                precision: Some(PrecisionChoice {
                    chosen: calibration.chosen.as_str(),
                    by_measurement: true,
                    timings: calibration
                        .timings
                        .iter()
                        .map(|(precision, took)| (precision.as_str(), *took))
                        .collect(),
                }),
            })
        }
    }
}

#[cfg(not(feature = "local"))]
fn local(_: &LocalEmbedding) -> Result<LoadedEmbedder, EmbedError> {
    Err(EmbedError::Model(LOCAL_MISSING.into()))
}

#[cfg(not(feature = "local"))]
const LOCAL_MISSING: &str = "this build has no local embedding model (cargo feature `local-embeddings` of octopus-app): set `[embedding] provider` to openai, azure_openai or ollama";

fn local_model_built() -> Result<(), SettingsError> {
    #[cfg(not(feature = "local"))]
    return Err(SettingsError(LOCAL_MISSING.into()));
    #[cfg(feature = "local")]
    Ok(())
}

fn http_options(config: &HttpEmbedding) -> Result<HttpEmbedderOptions, SettingsError> {
    let url = &config.url;
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(SettingsError(format!(
            "`embedding.url` must start with http:// or https://, not {url:?}"
        )));
    }
    if config.dimension == 0 {
        return Err(SettingsError(
            "`embedding.dimension` must be the length of the model's vectors, not 0".into(),
        ));
    }
    let mut options = HttpEmbedderOptions::new(url.clone(), config.model.clone(), config.dimension);
    options.batch_size = config.batch_size.max(1);
    options.max_retries = config.max_retries;
    Ok(options)
}

fn api_key(config: &HttpEmbedding) -> Result<Option<String>, SettingsError> {
    let Some(name) = &config.api_key_env else {
        return Ok(None);
    };
    match std::env::var(name) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(key)),
        _ => Err(SettingsError(format!(
            "`embedding.api_key_env` names {name}, which is not set in the environment"
        ))),
    }
}

/// Azure OpenAI takes no request without a key.
fn azure_key(config: &HttpEmbedding) -> Result<String, SettingsError> {
    api_key(config)?.ok_or_else(|| {
        SettingsError("embedding provider azure_openai needs `embedding.api_key_env`".into())
    })
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
        assert!(
            openai(&http)
                .unwrap_err()
                .0
                .contains("must start with http")
        );
        http.url = "https://api.openai.com/v1/embeddings".into();
        assert_eq!(openai(&http), Ok(()));
        http.dimension = 0;
        assert!(
            openai(&http)
                .unwrap_err()
                .0
                .contains("`embedding.dimension`")
        );
        http.dimension = 1536;
        http.api_key_env = Some("OCTOPUS_TEST_UNSET_VARIABLE".into());
        assert!(
            openai(&http)
                .unwrap_err()
                .0
                .contains("OCTOPUS_TEST_UNSET_VARIABLE")
        );
        http.api_key_env = None;
        let azure = check(&EmbeddingSettings::AzureOpenai(http)).unwrap_err();
        assert!(azure.0.contains("`embedding.api_key_env`"), "{azure}");
        let local = check(&EmbeddingSettings::default());
        if cfg!(feature = "local") {
            assert_eq!(local, Ok(()));
        } else {
            assert!(local.unwrap_err().0.contains("local-embeddings"));
        }
    }
}

//! `[embedding]`: which embedder turns text into vectors, each with the
//! options it takes and no others (`octopus-embed` builds it). The local model has a folder and a number
//! format; an HTTP provider has an endpoint, a model, its vectors' length and
//! a key, all required, so that a missing one stops the server at start with
//! its name.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which embedder, with its options. Without `provider`, the local model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "provider",
    rename_all = "snake_case",
    try_from = "serde_json::Value"
)]
pub enum EmbeddingSettings {
    /// In-process, on CPU: nothing leaves the machine.
    Local(LocalEmbedding),
    /// OpenAI's `/v1/embeddings`, or any server that speaks it.
    Openai(HttpEmbedding),
    /// Azure OpenAI: the same format, an `api-key` header (so `api_key_env`
    /// is required).
    AzureOpenai(HttpEmbedding),
    /// Ollama's `/api/embed`.
    Ollama(HttpEmbedding),
}

/// The local model's options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalEmbedding {
    /// A folder with `model.safetensors`, `tokenizer.json` and `config.json`
    /// (and the sentence-transformers configs); the cached all-MiniLM-L6-v2
    /// when absent.
    pub model_dir: Option<PathBuf>,
    /// The number format of the model's dense layers.
    pub precision: EmbeddingPrecision,
    /// Vectors of this many recent query texts kept, so that a text asked
    /// again is not embedded again; 0 keeps none.
    pub query_cache_entries: usize,
}

impl Default for LocalEmbedding {
    fn default() -> Self {
        Self {
            model_dir: None,
            precision: EmbeddingPrecision::default(),
            query_cache_entries: QUERY_CACHE_ENTRIES,
        }
    }
}

/// An embedding provider over HTTP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpEmbedding {
    /// The endpoint, in full (for Azure, the deployment's
    /// `…/embeddings?api-version=…`).
    pub url: String,
    /// The model name sent with each request.
    pub model: String,
    /// The length of the model's vectors.
    pub dimension: usize,
    /// The environment variable holding the API key, so that the key itself
    /// never sits in a configuration file.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Most texts in one request.
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// Retries after a 429, a 5xx or a lost connection.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// As the local model's.
    #[serde(default = "default_query_cache_entries")]
    pub query_cache_entries: usize,
}

const QUERY_CACHE_ENTRIES: usize = 1024;

fn default_batch_size() -> usize {
    64
}

fn default_max_retries() -> u32 {
    3
}

fn default_query_cache_entries() -> usize {
    QUERY_CACHE_ENTRIES
}

impl HttpEmbedding {
    /// An endpoint's settings with the defaults for the rest.
    pub fn new(url: impl Into<String>, model: impl Into<String>, dimension: usize) -> Self {
        Self {
            url: url.into(),
            model: model.into(),
            dimension,
            api_key_env: None,
            batch_size: default_batch_size(),
            max_retries: default_max_retries(),
            query_cache_entries: QUERY_CACHE_ENTRIES,
        }
    }
}

/// The number format the local model's dense layers compute in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbeddingPrecision {
    /// Each format this CPU runs, timed on the same texts when the model
    /// loads: the fastest, f32 on a tie.
    #[default]
    Auto,
    /// f32 always: the reference's vectors to within rounding.
    F32,
    /// bf16 always: the server refuses to start on a CPU without it.
    Bf16,
    /// int8 always: on VNNI where the CPU has it, else on a scalar loop
    /// slower than f32.
    Int8,
}

impl Default for EmbeddingSettings {
    fn default() -> Self {
        Self::Local(LocalEmbedding::default())
    }
}

impl EmbeddingSettings {
    /// The name the configuration file gives the provider.
    pub fn provider(&self) -> &'static str {
        match self {
            Self::Local(_) => "local",
            Self::Openai(_) => "openai",
            Self::AzureOpenai(_) => "azure_openai",
            Self::Ollama(_) => "ollama",
        }
    }

    /// How many recent query vectors are kept.
    pub fn query_cache_entries(&self) -> usize {
        match self {
            Self::Local(local) => local.query_cache_entries,
            Self::Openai(http) | Self::AzureOpenai(http) | Self::Ollama(http) => {
                http.query_cache_entries
            }
        }
    }

    /// Keeps `entries` recent query vectors.
    pub fn set_query_cache_entries(&mut self, entries: usize) {
        match self {
            Self::Local(local) => local.query_cache_entries = entries,
            Self::Openai(http) | Self::AzureOpenai(http) | Self::Ollama(http) => {
                http.query_cache_entries = entries;
            }
        }
    }
}

/// The section as written, read as the enum it names: with no `provider`,
/// the local model.
impl TryFrom<serde_json::Value> for EmbeddingSettings {
    type Error = String;

    fn try_from(mut value: serde_json::Value) -> Result<Self, String> {
        if let Some(section) = value.as_object_mut() {
            section
                .entry("provider")
                .or_insert_with(|| serde_json::Value::from("local"));
        }
        Tagged::deserialize(value)
            .map(Tagged::into)
            .map_err(|error| error.to_string())
    }
}

/// The same enum without the conversion, for serde to read the tag with.
#[derive(Deserialize)]
#[serde(tag = "provider", rename_all = "snake_case")]
enum Tagged {
    Local(LocalEmbedding),
    Openai(HttpEmbedding),
    AzureOpenai(HttpEmbedding),
    Ollama(HttpEmbedding),
}

impl From<Tagged> for EmbeddingSettings {
    fn from(tagged: Tagged) -> Self {
        match tagged {
            Tagged::Local(local) => Self::Local(local),
            Tagged::Openai(http) => Self::Openai(http),
            Tagged::AzureOpenai(http) => Self::AzureOpenai(http),
            Tagged::Ollama(http) => Self::Ollama(http),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<EmbeddingSettings, String> {
        let value: serde_json::Value = toml::from_str(text).map_err(|e| e.to_string())?;
        EmbeddingSettings::try_from(value)
    }

    #[test]
    fn each_provider_takes_its_own_options_and_no_others() {
        assert_eq!(read("").unwrap(), EmbeddingSettings::default());
        assert_eq!(
            read("precision = \"f32\"").unwrap(),
            EmbeddingSettings::Local(LocalEmbedding {
                precision: EmbeddingPrecision::F32,
                ..LocalEmbedding::default()
            })
        );
        let ollama = read(
            "provider = \"ollama\"\nurl = \"http://localhost:11434/api/embed\"\nmodel = \"nomic-embed-text\"\ndimension = 768",
        )
        .unwrap();
        assert_eq!(
            ollama,
            EmbeddingSettings::Ollama(HttpEmbedding::new(
                "http://localhost:11434/api/embed",
                "nomic-embed-text",
                768
            ))
        );
        let missing = read("provider = \"openai\"\nurl = \"https://api.openai.com/v1/embeddings\"")
            .unwrap_err();
        assert!(missing.contains("missing field `model`"), "{missing}");
        let foreign = read("provider = \"local\"\nurl = \"https://api.openai.com\"").unwrap_err();
        assert!(foreign.contains("unknown field `url`"), "{foreign}");
        let foreign = read("provider = \"ollama\"\nurl = \"http://x\"\nmodel = \"m\"\ndimension = 8\nprecision = \"f32\"").unwrap_err();
        assert!(foreign.contains("unknown field `precision`"), "{foreign}");
        let unknown = read("provider = \"cohere\"").unwrap_err();
        assert!(unknown.contains("cohere"), "{unknown}");
    }
}

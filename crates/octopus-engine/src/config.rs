//! The engine's settings.

use std::path::PathBuf;

use octopus_core::message::MessageLimits;
use serde::{Deserialize, Serialize};

/// Where the engine keeps its data and how it guards its inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// The directory holding the SQLite files.
    pub data_dir: PathBuf,
    /// `process`: a commit survives the server being killed (WAL, synchronous =
    /// NORMAL). `power_loss`: it also survives a power cut (every commit fsynced).
    pub durability: DurabilityLevel,
    /// A knowledge collection of at least this many chunks is searched through
    /// an HNSW graph (saved under `data_dir/vectors`); smaller ones exactly.
    pub hnsw_threshold: usize,
    pub limits: Limits,
    pub embedding: EmbeddingConfig,
}

/// Which model embeds text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingConfig {
    pub provider: EmbeddingProvider,
    /// `local`: a folder with `model.safetensors`, `tokenizer.json` and
    /// `config.json` (and the sentence-transformers configs); the cached
    /// all-MiniLM-L6-v2 when absent.
    pub model_dir: Option<PathBuf>,
    /// HTTP providers: the endpoint, in full (for Azure, the deployment's
    /// `…/embeddings?api-version=…`).
    pub url: Option<String>,
    /// HTTP providers: the model name sent with each request.
    pub model: Option<String>,
    /// HTTP providers: the length of the model's vectors.
    pub dimension: Option<usize>,
    /// HTTP providers: the environment variable holding the API key, so the key
    /// itself never sits in a config file.
    pub api_key_env: Option<String>,
    /// HTTP providers: most texts in one request.
    pub batch_size: usize,
    /// HTTP providers: retries after a 429, a 5xx or a lost connection.
    pub max_retries: u32,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        Self {
            provider: EmbeddingProvider::Local,
            model_dir: None,
            url: None,
            model: None,
            dimension: None,
            api_key_env: None,
            batch_size: 64,
            max_retries: 3,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbeddingProvider {
    /// In-process, on CPU: nothing leaves the machine.
    #[default]
    Local,
    /// OpenAI's `/v1/embeddings`, or any server that speaks it.
    Openai,
    /// Azure OpenAI: the same format, an `api-key` header.
    AzureOpenai,
    /// Ollama's `/api/embed`.
    Ollama,
}

impl EmbeddingProvider {
    /// The name the configuration file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Openai => "openai",
            Self::AzureOpenai => "azure_openai",
            Self::Ollama => "ollama",
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("./octopus-data"),
            durability: DurabilityLevel::Process,
            hnsw_threshold: octopus_sqlite::SqliteOptions::new(".").hnsw_threshold,
            limits: Limits::default(),
            embedding: EmbeddingConfig::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DurabilityLevel {
    #[default]
    Process,
    PowerLoss,
}

/// Bounds on what one request may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Bytes of one message's content, tool calls and redacted content together.
    pub max_message_bytes: usize,
    /// Messages in one append.
    pub max_batch_messages: usize,
    /// Tool calls on one message.
    pub max_tool_calls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_bytes: 1 << 20,
            max_batch_messages: 1000,
            max_tool_calls: 128,
        }
    }
}

impl Limits {
    pub fn message_limits(&self) -> MessageLimits {
        MessageLimits {
            max_message_bytes: self.max_message_bytes,
            max_tool_calls: self.max_tool_calls,
        }
    }
}

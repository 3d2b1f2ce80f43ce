//! The engine's error: a domain error, or a failure of the store, a provider
//! or the configuration underneath it.

/// What an engine operation can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A domain outcome: invalid input, not found, conflict, backend failure.
    #[error(transparent)]
    Domain(#[from] octopus_core::Error),

    /// No key, or a key that is unknown or revoked.
    #[error("a valid API key is required: send `Authorization: Bearer <key>`")]
    Unauthenticated,

    /// A tenant key on an admin operation.
    #[error("this operation needs the admin key")]
    AdminOnly,

    /// The tenant is over one of its quotas; the same request may succeed
    /// after `retry_after`. Nothing was written.
    #[error("{message}")]
    Quota {
        message: String,
        retry_after: std::time::Duration,
    },

    /// The agent's chat model could not be called, or failed.
    #[error(transparent)]
    Chat(#[from] octopus_core::chat::ChatError),

    #[error(transparent)]
    Embedding(#[from] octopus_core::embedding::EmbedError),

    /// The configuration cannot work; found when the engine opens.
    #[error("configuration: {0}")]
    Config(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

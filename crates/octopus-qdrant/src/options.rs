//! How to reach Qdrant, and how vector sets map onto its collections.

use std::time::Duration;

/// How Octopus's vector sets (one kind, of one agent, of one tenant) are laid
/// out in Qdrant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QdrantLayout {
    /// One Qdrant collection per kind and dimension (`octopus_knowledge_384`,
    /// `octopus_memory_384`); the set is a payload field indexed as Qdrant's
    /// tenant key, so each set's points are stored together and a search
    /// reads only its own. Qdrant's multitenancy guidance; the default.
    #[default]
    Shared,
    /// One Qdrant collection per set, named as the API names an agent's
    /// collection:
    /// `agent_{agent}_{tenant}` for knowledge, with `_memory` appended for
    /// memories.
    PerSet,
}

/// Where the Qdrant server is and how to talk to it.
#[derive(Clone, Debug)]
pub struct QdrantOptions {
    /// The server's gRPC URL, `http://host:6334` by Qdrant's default ports.
    pub url: String,
    pub api_key: Option<String>,
    /// Longest wait for one request.
    pub timeout: Duration,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    pub layout: QdrantLayout,
    /// Prefixed to every collection name, so that several deployments (or
    /// test runs) can share one server.
    pub prefix: String,
}

impl QdrantOptions {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            api_key: None,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            layout: QdrantLayout::default(),
            prefix: String::new(),
        }
    }
}

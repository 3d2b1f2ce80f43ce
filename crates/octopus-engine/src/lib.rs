//! Octopus's use cases, between the transports (HTTP, CLI) and the storage ports.
//!
//! - [`Octopus`]: the service. Each method is one operation a client can ask for,
//!   taking the caller's tenant, validating input, and calling the stores.
//! - [`keys`]: API keys: minting, hashing, and authenticating a presented key.
//! - [`config`]: the settings the engine runs with. The store, the embedder,
//!   the agents' chat models and the webhook sender are built outside it
//!   (`octopus-app`) and handed to it as ports ([`Ports`]).
//! - [`merge_patch`]: JSON merge patch (RFC 7386), for partial updates.
//! - [`quotas`]: what one tenant may have in flight at once.

mod cache;
pub mod config;
mod embedding_stats;
mod error;
pub mod free_memory;
mod history;
mod job_stats;
pub mod keys;
pub mod merge_patch;
pub mod procedure_matching;
pub mod quotas;
mod service;
mod spool;
pub mod token_counting;
pub mod webhooks;

pub use config::{EngineConfig, Limits};
pub use embedding_stats::{EmbeddingPurpose, EmbeddingStats};
pub use error::{Error, Result};
pub use job_stats::MemoryJobStats;
pub use keys::{Caller, MintedKey};
pub use quotas::Quotas;
pub use service::{Ports, check_config};

/// The start of a model's answer, for a log line.
pub(crate) fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.is_empty() {
        true => "(empty)".into(),
        false => text.chars().take(300).collect(),
    }
}
pub use service::{
    ClientMessage, ClientRole, CompletionRequest, DumpImportReport, ImportInto, ImportReport,
    IngestDocument, IngestReport, KnowledgeQuery, MAX_TOOLS, Octopus, PreparedCompletion,
    PreparedTurn, ProcedureUpdate, ToolResult, TurnInput, TurnReply, WorkingMemory,
};

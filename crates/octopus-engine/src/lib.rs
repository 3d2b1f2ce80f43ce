//! Octopus's use cases, between the transports (HTTP, CLI) and the ports.
//!
//! - [`Octopus`]: the service. Each method is one operation a client can ask
//!   for, taking the caller's tenant, validating input, and calling the
//!   ports. Its state is in `octopus`, its operations in `service/`, a file
//!   per area.
//! - [`Ports`]: what it is handed: the store, the embedder, the agents'
//!   chat models and the webhook sender, built outside it (`octopus-app`).
//! - [`config`]: the settings the engine runs with.
//! - [`keys`]: API keys: minting, hashing, and authenticating a presented key.
//! - [`merge_patch`]: JSON merge patch (RFC 7386), for partial updates.
//! - [`quotas`]: what one tenant may have in flight at once.

mod absent;
mod cache;
pub mod config;
mod embedding_stats;
mod error;
pub mod free_memory;
mod history;
mod job_stats;
pub mod keys;
pub mod merge_patch;
mod octopus;
pub mod procedure_matching;
pub mod quotas;
mod service;
mod spool;
mod tenant_turns;
pub mod token_counting;
pub mod webhooks;
mod work_signal;

pub use config::{EngineConfig, Limits};
pub use embedding_stats::{EmbeddingPurpose, EmbeddingStats};
pub use error::{Error, Result};
pub use job_stats::MemoryJobStats;
pub use keys::{Caller, MintedKey};
pub use octopus::{Octopus, Ports, check_config};
pub use octopus_core::chat::TurnReply;
pub use quotas::Quotas;
pub use service::chat_imports::{ChatStatus, ChatsImport, ChatsImported, ImportedChat};
pub use service::completions::{ClientMessage, ClientRole, CompletionRequest, PreparedCompletion};
pub use service::context::WorkingMemory;
pub use service::conversations::ImportReport;
pub use service::dumps::{ImportInto, ImportReport as DumpImportReport};
pub use service::knowledge::{IngestDocument, IngestReport, KnowledgeQuery};
pub use service::procedures::ProcedureUpdate;
pub use service::profiles::{EpisodeLine, FactGroup, ProfileFact, UserProfile};
pub use service::turns::{MAX_TOOLS, PreparedTurn, ToolResult, TurnInput};

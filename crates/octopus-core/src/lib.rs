//! The domain of Octopus and the ports its storage backends implement.
//!
//! This crate does no IO. It holds:
//! - the entities of the four memories and their tenancy ([`tenant`], [`agent`],
//!   [`conversation`], [`episode`], [`message`], [`procedure`]), with the validation
//!   rules that every entry point shares;
//! - the storage ports ([`store`]): narrow async traits whose doc comments are the
//!   contract every backend must honour (the conformance suite in `octopus-testkit`
//!   checks it);
//! - small pure helpers: token estimates ([`tokens`]), key hashing inputs.
//!
//! Every store method that touches tenant data takes a [`TenantId`]: isolation is
//! part of each signature, not a filter a caller may forget.

#![forbid(unsafe_code)]

pub mod agent;
pub mod appending;
pub mod bounds;
pub mod chat;
pub mod chat_history;
pub mod chunking;
pub mod conversation;
pub mod dates_named;
pub mod dump;
pub mod embedding;
pub mod episode;
pub mod episodic_snippets;
mod error;
pub mod fact;
pub mod forget;
pub mod fusion;
pub mod ids;
pub mod job_turns;
pub mod knowledge;
pub mod memory_rows;
pub mod message;
pub mod page;
pub mod pii;
pub mod procedure;
pub mod recall;
pub mod recall_ranking;
pub mod search;
pub mod speakers;
pub mod store;
pub mod summary;
pub mod tenant;
pub mod tokens;
pub mod vector_lag;
pub mod vectors;
pub mod working_memory;

pub use error::{DomainCode, Error, Result};
pub use ids::{
    AgentId, ApiKeyId, ConversationId, EpisodeId, FactId, MessageId, ProcedureId, TenantId,
};

/// Every instant Octopus stores is UTC, to the microsecond.
pub type Timestamp = chrono::DateTime<chrono::Utc>;

/// The current time at the precision stores keep (microseconds), so that what is
/// written reads back equal.
pub fn now() -> Timestamp {
    to_stored_precision(chrono::Utc::now())
}

/// Drops sub-microsecond digits, which no store keeps.
pub fn to_stored_precision(at: Timestamp) -> Timestamp {
    use chrono::SubsecRound;
    at.trunc_subsecs(6)
}

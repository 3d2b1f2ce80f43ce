//! The domain of Octopus and the ports its backends implement. This crate
//! does no input or output; it is what every other crate agrees on.
//!
//! Its modules, by folder:
//! - `entities/`: what Octopus stores ([`tenant`], [`agent`], [`conversation`],
//!   [`episode`], [`message`], [`knowledge`], [`procedure`], [`fact`]), their
//!   ids and pages, the [`bounds`] of free-form input, and the [`dump`];
//! - `ports/`: the traits storage ([`store`]), vector indexes ([`vectors`]),
//!   embedders ([`embedding`]), chat models ([`chat`]) and the sender of
//!   webhook deliveries ([`webhook_sender`]) implement; their doc
//!   comments are the contract, and the conformance suite in
//!   `octopus-testkit` holds every backend to it;
//! - `store_rules/`: the decisions stores make in their own transactions,
//!   written once ([`appending`], [`memory_jobs`] and the fair claims of
//!   [`job_turns`], [`memory_vectors`] and [`memory_rows`], [`search`],
//!   [`vector_lag`], [`forget`]);
//! - `retrieval/`: what is embedded ([`embedded_text`]), [`chunking`],
//!   [`summary`], [`tokens`], and [`recall`] with its ranking
//!   ([`fusion`], [`recall_ranking`], [`speakers`], [`dates_named`],
//!   [`time_asked`], [`things_named`], [`feedback`], [`sub_questions`]) and
//!   its [`recall_explanation`];
//! - `context/`: working memory ([`working_memory`], [`chat_history`],
//!   [`episodic_snippets`], [`context_explanation`]);
//! - `settings/`: what the engine and an adapter both read of the embedder's
//!   ([`embedding_settings`]) and the chat models' ([`llm_settings`]) settings;
//! - [`pii`]: finding and redacting personal data;
//! - [`chat_exports`]: conversations read from ChatGPT's and Claude's exports.
//!
//! The folders are for reading: each module is reached from the crate's root
//! (`octopus_core::agent`). Every store method that touches tenant data takes
//! a [`TenantId`]: isolation is part of each signature, not a filter a caller
//! may forget.

#![forbid(unsafe_code)]

pub mod chat_exports;
mod error;
pub mod pii;

mod entities;
pub use entities::{
    agent, bounds, conversation, dump, episode, fact, ids, knowledge, message, page, procedure,
    profile_summary, standing_requests, tenant, webhook,
};
mod ports;
pub use ports::{chat, embedding, store, vectors, webhook_sender};
mod store_rules;
pub use store_rules::{
    appending, forget, job_turns, memory_jobs, memory_rows, memory_vectors, search, vector_lag,
};
mod retrieval;
pub use retrieval::{
    chunking, dates_named, embedded_text, feedback, fusion, recall, recall_explanation,
    recall_ranking, repeats, restated, speakers, sub_questions, summary, things_named, time_asked,
    tokens,
};
mod context;
pub use context::{chat_history, context_explanation, episodic_snippets, working_memory};
mod settings;
pub use settings::{embedding as embedding_settings, llm as llm_settings};

pub use error::{DomainCode, Error, ObjectKind, Result};
pub use ids::{
    AgentId, ApiKeyId, ConversationId, EpisodeId, FactId, MessageId, ProcedureId, TenantId,
    WebhookId,
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

/// A text's first words within `most` characters, whitespace collapsed,
/// cut at a word (with `…` when cut; a first word longer than `most` is cut
/// itself); `None` for a text without words.
pub fn words_within(text: &str, most: usize) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || most == 0 {
        return None;
    }
    let mut kept = String::new();
    for (i, word) in words.iter().enumerate() {
        let wanted = kept.chars().count() + usize::from(!kept.is_empty()) + word.chars().count();
        // One character is kept for the `…` of a cut, unless this word ends it.
        let last = i + 1 == words.len();
        if wanted > most || (wanted == most && !last) {
            if kept.is_empty() {
                kept = word.chars().take(most - 1).collect();
            }
            kept.push('…');
            return Some(kept);
        }
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(word);
    }
    Some(kept)
}

/// The start of a text for a log line or an error: trimmed, at most 300
/// characters, and said to be empty when it is.
pub fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.is_empty() {
        true => "(empty)".into(),
        false => text.chars().take(300).collect(),
    }
}

//! Facts: what the agent's model learned about a user during a session or
//! when an episode closed, or a person wrote, kept as memory items of their
//! own. Each fact says where it came
//! from (its episode and messages) and when it held: from `valid_from` (the
//! time of the messages it was learned from, not of the close) until a newer
//! fact replaced it (`superseded_by`, `valid_to`). A replaced fact is kept,
//! so that "where did she live in 2023?" still finds the old address.
//!
//! When a learning brings new facts, the model is also shown the user's current
//! facts that look related, and says for each new fact whether it is new
//! (`add`), replaces one of them (`update`), or says nothing new (`none`), as
//! the leading memory systems do. This module holds the pure part: the
//! request and the reading of its answer, which messages a fact came from,
//! and the queries that read facts back.
//!
//! # How facts are learned, corrected and erased
//!
//! A model's summary of a closed episode names its key facts; each becomes a
//! fact of the episode's user, with the episode and messages it came from and
//! the period it held. With known facts near a new one (by meaning, in the
//! user's memory vectors), the model is asked once more whether each new fact
//! adds, updates (replaces a known one) or repeats one, by number
//! (`fact::RECONCILE_INSTRUCTIONS`, `fact::reconcile_message`). Anything wrong
//! in the answer adds the fact: no answer can lose one. The facts, their vectors
//! and the replaced facts' `valid_to` are written in the summary job's
//! transaction; an episode's facts are learned once.
//!
//! Facts are also learned while an episode is open. An append counts the user
//! messages since the last learning was queued (`episodes.unlearned_user_messages`,
//! `appending::OpenEpisode::learning_due`) and, every
//! `memory.learn_every_messages`, queues a `learn_facts` job in its own
//! transaction. The worker reads the messages after the episode's
//! `facts_learned_through` (`learning::unlearned`), asks the summary model for
//! facts only, decides them as above, and stores them only if
//! `facts_learned_through` is still what it read, moving it to the window's end
//! in the same transaction; otherwise the store answers `Conflict` and the job is
//! tried again from where the other left off. A window is thus learned once
//! however often its job runs, and a crash before the commit leaves the job
//! queued. A close's key facts are stored only while `facts_learned_through` is
//! short of the episode's messages, and move it to the end.
//!
//! A replaced fact is kept. Facts follow their episode through deletion,
//! restore and purge, leave with a forgotten user, and travel in dumps. They are
//! read by their own route, by recall (`kind: "fact"`, by meaning and by words,
//! time-bounded), and in every context's facts block.
//!
//! A person corrects a fact (`FactStore::correct_fact`): a new version,
//! `source: manual`, written by the key's name, replaces it as the model's
//! updates do; its vector is queued for the memory worker, its words are
//! searchable at once. The versions of one fact share a `lineage_id` (its first
//! version's id). Deleting a fact (`FactStore::delete_fact`) removes every
//! version of its lineage with their full-text entries, memory vectors, queued
//! work and words in their episode's key facts, in one transaction that records
//! a `PendingErasure`, then erases the vectors from the index and compacts the
//! files as forgetting a user does, so an interrupted deletion is finished at
//! start. `fact_history` keeps one entry per change (learned, corrected,
//! imported, deleted: who, when, why) and reads the words from the versions
//! while they exist, so a deleted fact's history holds none of them. Histories
//! go with their episode's purge and their user's forget.
//!
//! A person adds a fact by hand (`FactStore::add_fact`): it has no episode
//! (`facts.episode_id` is nullable), so reads that hide the facts of deleted or
//! archived episodes keep it, forgetting finds it by its user, and a dump
//! carries it after every agent. Its memory vector is filed under the fact's own
//! id where others name their episode (`Fact::vector_episode`), which keeps
//! `memory_vectors.episode_id` required and lets a deletion find it the way it
//! finds every other. Such a fact may carry a client's `key` (`facts.key`):
//! a partial unique index over the user, agent, category and key of the
//! versions that hold is the arbiter of a key being taken, so two writers
//! cannot both add one; a correction supersedes the old version before the new
//! one (which keeps the key) is inserted. The LangGraph store reads and writes
//! its items by it.
//!
//! Erasing one message (`EpisodeStore::erase_message`) removes, in one
//! transaction that records a `PendingErasure`, its row, vector and queued
//! work, and each version of a fact that cites it (`message_ids`), spliced out
//! of its lineage: the version it replaced takes over its `valid_to` and
//! `superseded_by`, so it holds again when the erased version held. The
//! episode's summary, key facts and summary vector are dropped, a closed
//! episode's summary is queued again, and `facts_learned_through` goes back to
//! 0 when facts went. The full-text entry and the vector index are erased after
//! the commit, then the files compacted, as for a forgotten user. The episode's
//! `updated_at` moves, and a cached history is only used at the `updated_at` it
//! was read at, so no server serves the erased message from its cache.
//!
//! An agent steers what is learned: `memory.fact_instructions` is appended to
//! the summary's instructions, and with `memory.fact_categories` the model
//! writes each key fact with a category (`summaries::parse_summary` reads both
//! forms), which the fact keeps (`facts.category`); the listing, recall
//! (`fact_category`, applied to the ranked candidates before `top_k`) and the
//! context's facts block (`memory.context_fact_categories`) filter by it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::bounds::{check_chars, check_optional_chars};
use crate::ids::{AgentId, EpisodeId, FactId, MessageId, TenantId};

/// A fact about a user, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Fact {
    pub id: FactId,
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    pub user_id: String,
    /// The episode it was learned in; none for a fact a person added.
    pub episode_id: Option<EpisodeId>,
    /// The messages it was learned from.
    pub message_ids: Vec<MessageId>,
    pub text: String,
    /// When it became true: the time of the messages it came from.
    pub valid_from: DateTime<Utc>,
    /// When a newer fact replaced it; absent while it holds.
    pub valid_to: Option<DateTime<Utc>>,
    /// The fact that replaced it.
    pub superseded_by: Option<FactId>,
    pub created_at: DateTime<Utc>,
    /// Whether the model learned it or a person wrote it.
    #[serde(default)]
    pub source: FactSource,
    /// Who wrote this version: `model` for one the model learned,
    /// `patterns` for a standing request recognised in the user's words,
    /// else the name of the API key that made the change.
    #[serde(default = "by_model")]
    pub changed_by: String,
    /// The category it is filed under: one of the agent's
    /// `memory.fact_categories`, or `instruction` or `preference` for a
    /// user's standing request; absent when none applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The name the client gave a fact it added, by which it reads and
    /// writes it again (a framework's store keys its items so): unique among
    /// the user's facts that hold in the same category, and kept by the
    /// versions that correct it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

fn by_model() -> String {
    MODEL.to_owned()
}

/// The name changes made by the agent's model are recorded under.
pub const MODEL: &str = "model";

/// Where a fact's words came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactSource {
    /// Learned from a conversation: by the agent's model, or, for a
    /// standing instruction or preference, by the shape of the user's words
    /// (see [`crate::standing_requests`]).
    #[default]
    Learned,
    /// A person wrote it (a correction, or a fact added by hand).
    Manual,
}

impl FactSource {
    pub fn as_str(self) -> &'static str {
        match self {
            FactSource::Learned => "learned",
            FactSource::Manual => "manual",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "learned" => Some(FactSource::Learned),
            "manual" => Some(FactSource::Manual),
            _ => None,
        }
    }
}

impl Fact {
    /// The episode its memory vector is filed under, which stores find it
    /// by: the one it was learned in, or for a fact a person added, which
    /// has none, an id of its own (the fact's), which no episode has.
    pub fn vector_episode(&self) -> EpisodeId {
        self.episode_id.unwrap_or(EpisodeId(self.id.0))
    }

    /// Whether it still holds: no newer fact replaced it.
    pub fn is_current(&self) -> bool {
        self.superseded_by.is_none()
    }
}

/// A fact learned from an episode, ready to store with its vector. Its
/// tenant, agent, user and episode are the episode's.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFact {
    pub id: FactId,
    pub text: String,
    pub message_ids: Vec<MessageId>,
    pub valid_from: DateTime<Utc>,
    /// The current fact it replaces: that one gets `valid_to` = this one's
    /// `valid_from` and `superseded_by` = this one. A fact already replaced
    /// (by a close that finished first) is left as it is.
    pub replaces: Option<FactId>,
    pub vector: Vec<f32>,
    /// One of the agent's `memory.fact_categories`, when it names any.
    pub category: Option<String>,
}

impl NewFact {
    /// The fact as stored: learned in `episode`, of its owner, at `now`.
    pub fn learned_in(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user: &str,
        episode: EpisodeId,
        now: DateTime<Utc>,
    ) -> Fact {
        Fact {
            id: self.id,
            tenant_id: tenant,
            agent_id: agent,
            user_id: user.to_owned(),
            episode_id: Some(episode),
            message_ids: self.message_ids.clone(),
            text: self.text.clone(),
            valid_from: self.valid_from,
            valid_to: None,
            superseded_by: None,
            created_at: now,
            source: FactSource::Learned,
            changed_by: MODEL.to_owned(),
            category: self.category.clone(),
            key: None,
        }
    }
}

/// Which facts of one user of one agent to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactFilter {
    pub agent_id: AgentId,
    pub user_id: String,
    /// Replaced facts too, not only those that hold.
    pub include_replaced: bool,
    /// Only facts filed under one of these categories; every fact when empty.
    pub categories: Vec<String>,
    /// Only the facts the client named so.
    pub key: Option<String>,
    pub page: crate::page::Page,
}

/// A keyword search over one user's facts (current and replaced).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactSearchQuery {
    pub agent_id: AgentId,
    pub user_id: String,
    pub text: String,
    pub limit: u32,
}

/// A fact found by its words.
#[derive(Clone, Debug, PartialEq)]
pub struct FactHit {
    pub fact: Fact,
    /// BM25 over the user's facts, higher is better.
    pub score: f64,
}

/// Most characters of a fact's text a person may write.
pub const MAX_FACT_CHARS: usize = 2_000;

/// Most characters of the reason given for a change.
pub const MAX_REASON_CHARS: usize = 500;

/// Most characters of a fact's key.
pub const MAX_KEY_CHARS: usize = 200;

/// What a person writes to correct a fact.
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FactEdit {
    /// The fact as it should read, 1 to 2,000 characters.
    pub text: String,
    /// Since when the corrected words hold; now when absent.
    #[serde(default)]
    pub valid_from: Option<DateTime<Utc>>,
    /// Why, up to 500 characters; kept in the fact's history.
    #[serde(default)]
    pub reason: Option<String>,
}

/// What a person writes to add a fact about a user by hand.
#[derive(Clone, Debug, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFactSpec {
    /// The fact, 1 to 2,000 characters.
    pub text: String,
    /// One of the agent's `memory.fact_categories`, or `instruction` or
    /// `preference` (a standing request, shown first in every context);
    /// none when absent.
    #[serde(default)]
    pub category: Option<String>,
    /// A name of the client's for the fact, up to 200 characters, by which
    /// it is read (`?key=`) and written again: no other fact of the user
    /// that holds in the same category may have it.
    #[serde(default)]
    pub key: Option<String>,
    /// Since when it holds; now when absent.
    #[serde(default)]
    pub valid_from: Option<DateTime<Utc>>,
    /// Why, up to 500 characters; kept in the fact's history.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A fact a person adds: of no episode and no message, `source: manual`.
#[derive(Clone, Debug, PartialEq)]
pub struct FactAddition {
    pub fact: Fact,
    pub reason: Option<String>,
}

impl FactAddition {
    /// What a store answers when another fact that holds has this one's key.
    pub fn key_taken(&self) -> crate::Error {
        crate::Error::conflict(
            crate::DomainCode::FactKeyTaken,
            format!(
                "a fact of user {:?} in category {:?} that holds has the key {:?}: correct it, or delete it first",
                self.fact.user_id,
                self.fact.category.as_deref().unwrap_or(""),
                self.fact.key.as_deref().unwrap_or("")
            ),
        )
    }

    /// Checks what a person wrote: text and reason within bounds, not blank.
    pub fn validate(&self) -> crate::Result<()> {
        check_chars("text", &self.fact.text, 1, MAX_FACT_CHARS)?;
        if let Some(key) = &self.fact.key {
            check_chars("key", key, 1, MAX_KEY_CHARS)?;
        }
        check_became_true(self.fact.valid_from, self.fact.created_at)?;
        check_optional_chars("reason", self.reason.as_deref(), MAX_REASON_CHARS)
    }
}

/// A person's correction of a fact that holds: a new version with `text`,
/// which replaces it from `valid_from`. The corrected version is kept with
/// the period it held, as a replaced fact is.
#[derive(Clone, Debug, PartialEq)]
pub struct FactCorrection {
    /// The version corrected; it must still hold.
    pub fact_id: FactId,
    /// The new version's id.
    pub new_id: FactId,
    pub text: String,
    pub valid_from: DateTime<Utc>,
    pub changed_by: String,
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
}

impl FactCorrection {
    /// Checks what a person wrote: text and reason within bounds, not blank.
    pub fn validate(&self) -> crate::Result<()> {
        check_chars("text", &self.text, 1, MAX_FACT_CHARS)?;
        check_became_true(self.valid_from, self.at)?;
        check_optional_chars("reason", self.reason.as_deref(), MAX_REASON_CHARS)
    }

    /// The new version, as stored: the corrected one's owner and episode,
    /// written by a person, from no message. A correction cannot start
    /// before the version it replaces did: that version would be left
    /// holding for no time at all.
    pub fn version_of(&self, corrected: &Fact) -> crate::Result<Fact> {
        if self.valid_from < corrected.valid_from {
            return Err(crate::Error::conflict(
                crate::DomainCode::CorrectionBeforeFact,
                format!(
                    "{} is before {}, when the version it corrects became true; a correction starts then or later",
                    self.valid_from.to_rfc3339(),
                    corrected.valid_from.to_rfc3339()
                ),
            ));
        }
        Ok(Fact {
            id: self.new_id,
            message_ids: Vec::new(),
            text: self.text.clone(),
            valid_from: self.valid_from,
            valid_to: None,
            superseded_by: None,
            created_at: self.at,
            source: FactSource::Manual,
            changed_by: self.changed_by.clone(),
            ..corrected.clone()
        })
    }
}

/// The earliest date a person may say a fact became true: facts are about
/// the users of an agent, and an earlier date is a mistake in the input.
pub const EARLIEST_VALID_FROM: &str = "1900-01-01T00:00:00Z";

/// [`EARLIEST_VALID_FROM`] as a time.
pub fn earliest_valid_from() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(EARLIEST_VALID_FROM)
        .map(|at| at.with_timezone(&Utc))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// How far past the moment it is written a fact may be said to have become
/// true: clocks of the writer and the server differ by this much at most.
pub const VALID_FROM_CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(5);

/// A `valid_from` a person wrote, within the sane range: not before 1900,
/// and not later than when it is written (a fact that becomes true in the
/// future is a plan, not a fact), allowing for clock skew.
fn check_became_true(valid_from: DateTime<Utc>, written_at: DateTime<Utc>) -> crate::Result<()> {
    if valid_from < earliest_valid_from() {
        return Err(crate::Error::invalid(
            "valid_from",
            format!(
                "{} is before {EARLIEST_VALID_FROM}",
                valid_from.to_rfc3339()
            ),
        ));
    }
    if valid_from > written_at + VALID_FROM_CLOCK_SKEW {
        return Err(crate::Error::invalid(
            "valid_from",
            format!(
                "{} is in the future: a fact holds from when it became true, at the latest now",
                valid_from.to_rfc3339()
            ),
        ));
    }
    Ok(())
}

/// A person's removal of a fact: every version of it, from every store.
#[derive(Clone, Debug, PartialEq)]
pub struct FactDeletion {
    /// Any version of the fact.
    pub fact_id: FactId,
    pub changed_by: String,
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
}

impl FactDeletion {
    pub fn validate(&self) -> crate::Result<()> {
        check_optional_chars("reason", self.reason.as_deref(), MAX_REASON_CHARS)
    }
}

/// What deleting a fact removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FactDeletionReceipt {
    /// The fact's first version: its history is read by any version's id.
    pub fact_id: FactId,
    /// Its versions removed, the current one and those it replaced.
    pub versions: u64,
    /// Their memory vectors removed, in the store and its vector index.
    pub vectors: u64,
    /// No removed word is left on disk now. When false, a reader (an export,
    /// a backup) holds back the last step, and the words leave the files'
    /// logs as soon as it ends, without delaying anyone's writes.
    pub compacted: bool,
}

/// What happened to a fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactAction {
    /// The model learned this version (a new fact, or one replacing an
    /// older version when what it says changed).
    Learned,
    /// A person added the fact by hand.
    Added,
    /// A person corrected the fact: this version replaced the one before.
    Corrected,
    /// The version came in with an import.
    Imported,
    /// A person deleted the fact (every version's words are gone), or
    /// erased the message this version was learned from (its words are).
    Deleted,
}

impl FactAction {
    pub fn as_str(self) -> &'static str {
        match self {
            FactAction::Learned => "learned",
            FactAction::Added => "added",
            FactAction::Corrected => "corrected",
            FactAction::Imported => "imported",
            FactAction::Deleted => "deleted",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "learned" => Some(FactAction::Learned),
            "added" => Some(FactAction::Added),
            "corrected" => Some(FactAction::Corrected),
            "imported" => Some(FactAction::Imported),
            "deleted" => Some(FactAction::Deleted),
            _ => None,
        }
    }
}

/// One change in a fact's history, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FactHistoryEntry {
    /// The version the change wrote (for a deletion, the version that held).
    pub fact_id: FactId,
    pub action: FactAction,
    /// The version's words; absent once the fact was deleted.
    pub text: Option<String>,
    /// `model`, or the name of the API key that made the change.
    pub changed_by: String,
    /// Why, when the person said; absent once the fact was deleted.
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
}

/// Most facts one close adds (the summary's key facts are capped below it).
pub const MAX_FACTS_PER_CLOSE: usize = 20;

/// Most known facts shown to the model beside the new ones.
pub const MAX_RELATED_FACTS: usize = 30;

/// The messages a fact most likely came from: those sharing the most words
/// with it (words of four letters or more), up to three, in order; the
/// user's own messages when any of them shares a word (a fact about the
/// user is theirs; the assistant's echo of it is not its source), else the
/// assistant's. Empty when no message shares such a word.
pub fn sources_by_words(text: &str, messages: &[crate::message::Message]) -> Vec<MessageId> {
    use crate::message::Role;
    let words = |text: &str| -> std::collections::HashSet<String> {
        crate::search::search_terms(text)
            .into_iter()
            .filter(|word| word.chars().count() >= 4)
            .map(str::to_lowercase)
            .collect()
    };
    let fact = words(text);
    let sharing = |role: Role| -> Vec<(usize, &crate::message::Message)> {
        messages
            .iter()
            .filter(|m| m.role == role)
            .map(|m| {
                let said = m.content.as_ref().map(|c| c.text()).unwrap_or_default();
                (words(&said).intersection(&fact).count(), m)
            })
            .filter(|(count, _)| *count > 0)
            .collect()
    };
    let mut shared = sharing(Role::User);
    if shared.is_empty() {
        shared = sharing(Role::Assistant);
    }
    let Some(best) = shared.iter().map(|(count, _)| *count).max() else {
        return Vec::new();
    };
    shared
        .into_iter()
        .filter(|(count, _)| *count == best)
        .take(3)
        .map(|(_, m)| m.id)
        .collect()
}

/// What one new fact does to what is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FactChange {
    /// A fact not known before.
    Add { text: String },
    /// A fact that replaces a known one, which is kept with its period.
    Replace { text: String, replaces: FactId },
    /// Nothing new: a known fact says it already.
    Keep { same_as: FactId },
}

/// The instructions of the request that decides each new fact's change.
pub const RECONCILE_INSTRUCTIONS: &str = "You keep the long-term memory of an assistant about \
one user. Below are facts already known about the user, numbered, and new facts learned in \
the latest conversation, numbered. For each new fact decide: \"add\" when it is not known, \
\"update\" when it replaces a known fact (the user moved, changed a preference, a number \
changed; give that known fact's number in \"replaces\"), or \"none\" when a known fact already \
says it (give its number in \"same_as\"). Answer with one JSON object and nothing else: \
{\"facts\": [{\"new\": 1, \"action\": \"add\"}, {\"new\": 2, \"action\": \"update\", \
\"replaces\": 3}, {\"new\": 3, \"action\": \"none\", \"same_as\": 1}]}, one entry per new fact.";

/// The request's user message: the known facts and the new ones, each
/// numbered from 1 (numbers, not ids, so the model has nothing long to copy).
pub fn reconcile_message(known: &[Fact], new: &[String]) -> String {
    let mut text = String::from("Known facts:\n");
    if known.is_empty() {
        text.push_str("(none)\n");
    }
    for (i, fact) in known.iter().enumerate() {
        text.push_str(&format!(
            "{}. {} (since {})\n",
            i + 1,
            fact.text,
            fact.valid_from.format("%Y-%m-%d")
        ));
    }
    text.push_str("\nNew facts:\n");
    for (i, fact) in new.iter().enumerate() {
        text.push_str(&format!("{}. {fact}\n", i + 1));
    }
    text
}

#[derive(Deserialize)]
struct Answer {
    facts: Vec<Decision>,
}

#[derive(Deserialize)]
struct Decision {
    new: usize,
    action: String,
    #[serde(default)]
    replaces: Option<usize>,
    #[serde(default)]
    same_as: Option<usize>,
}

/// Each new fact's change, in the order of `new`, from the model's answer
/// `text` (its JSON object may sit in prose or a code fence). What the
/// answer leaves out or gets wrong (an unknown number, a known fact replaced
/// twice) makes the fact an `add`: nothing the model says can lose a fact.
/// `None` when the answer holds no such JSON object at all.
pub fn read_changes(text: &str, known: &[Fact], new: &[String]) -> Option<Vec<FactChange>> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let answer: Answer = serde_json::from_str(text.get(start..=end)?).ok()?;
    let mut changes: Vec<FactChange> = new
        .iter()
        .map(|text| FactChange::Add { text: text.clone() })
        .collect();
    let mut replaced = std::collections::HashSet::new();
    let known_at = |number: Option<usize>| {
        number
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| known.get(i))
    };
    for decision in answer.facts {
        let Some(index) = decision.new.checked_sub(1).filter(|i| *i < new.len()) else {
            continue;
        };
        let text = new[index].clone();
        changes[index] = match decision.action.as_str() {
            "update" => match known_at(decision.replaces) {
                Some(old) if replaced.insert(old.id) => FactChange::Replace {
                    text,
                    replaces: old.id,
                },
                _ => FactChange::Add { text },
            },
            "none" => match known_at(decision.same_as) {
                Some(old) => FactChange::Keep { same_as: old.id },
                None => FactChange::Add { text },
            },
            _ => FactChange::Add { text },
        };
    }
    Some(changes)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn known(text: &str) -> Fact {
        let at = Utc.with_ymd_and_hms(2023, 4, 1, 9, 0, 0).unwrap();
        Fact {
            id: FactId::new(),
            tenant_id: TenantId::new(),
            agent_id: AgentId::new(),
            user_id: "dana".into(),
            episode_id: Some(EpisodeId::new()),
            message_ids: vec![MessageId::new()],
            text: text.into(),
            valid_from: at,
            valid_to: None,
            superseded_by: None,
            created_at: at,
            source: FactSource::Learned,
            changed_by: MODEL.to_owned(),
            category: None,
            key: None,
        }
    }

    #[test]
    fn a_fact_comes_from_the_messages_sharing_most_of_its_words() {
        use crate::message::{Message, MessageContent, Role};
        let message = |role: Role, text: &str| Message {
            id: MessageId::new(),
            episode_id: EpisodeId::new(),
            conversation_id: crate::ConversationId::new(),
            role,
            content: Some(MessageContent::Text(text.into())),
            name: None,
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: 1,
            timestamp: Utc::now(),
            ordinal: 0,
            agent_id: None,
            contains_pii: false,
            redacted_content: None,
            embedding_ref: None,
            usage: None,
            created_at: Utc::now(),
        };
        let said = [
            message(Role::User, "Hi there"),
            message(Role::User, "We moved to Paris last month with the dog"),
            message(Role::Assistant, "Paris! How is the dog settling in?"),
            message(Role::Tool, "Paris dog moved"),
        ];
        assert_eq!(
            sources_by_words("Dana moved to Paris with her dog", &said),
            [said[1].id]
        );
        assert_eq!(
            sources_by_words("Dana lives in Paris", &said),
            [said[1].id],
            "the user's message, not the assistant's echo"
        );
        assert_eq!(
            sources_by_words("Paris is exciting", &said[2..]),
            [said[2].id],
            "the assistant's, when no message of the user's says it"
        );
        assert!(sources_by_words("Dana likes tea", &said).is_empty());
    }

    #[test]
    fn the_message_numbers_known_and_new_facts() {
        let message = reconcile_message(
            &[known("Dana lives in Lyon")],
            &["Dana moved to Paris".into()],
        );
        assert_eq!(
            message,
            "Known facts:\n1. Dana lives in Lyon (since 2023-04-01)\n\nNew facts:\n1. Dana moved to Paris\n"
        );
        assert!(reconcile_message(&[], &["x".into()]).contains("(none)"));
    }

    #[test]
    fn each_decision_maps_to_its_change() {
        let lyon = known("Dana lives in Lyon");
        let tea = known("Dana drinks tea");
        let new: Vec<String> = ["Dana moved to Paris", "Dana likes tea", "Dana has a dog"]
            .map(String::from)
            .to_vec();
        let answer = "Here you go:\n```json\n{\"facts\": [{\"new\": 1, \"action\": \"update\", \"replaces\": 1}, \
                      {\"new\": 2, \"action\": \"none\", \"same_as\": 2}, {\"new\": 3, \"action\": \"add\"}]}\n```";
        let changes = read_changes(answer, &[lyon.clone(), tea.clone()], &new).unwrap();
        assert_eq!(
            changes,
            [
                FactChange::Replace {
                    text: new[0].clone(),
                    replaces: lyon.id
                },
                FactChange::Keep { same_as: tea.id },
                FactChange::Add {
                    text: new[2].clone()
                },
            ]
        );
    }

    #[test]
    fn what_the_answer_gets_wrong_adds_the_fact() {
        let lyon = known("Dana lives in Lyon");
        let new: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        // A known number out of range, one known fact replaced twice, an
        // unknown action, and a new fact the answer leaves out.
        let answer = r#"{"facts": [{"new": 1, "action": "update", "replaces": 7},
            {"new": 2, "action": "update", "replaces": 1}, {"new": 3, "action": "update", "replaces": 1},
            {"new": 9, "action": "none", "same_as": 1}, {"new": 4, "action": "merge"}]}"#;
        let changes = read_changes(answer, std::slice::from_ref(&lyon), &new).unwrap();
        assert_eq!(
            changes,
            [
                FactChange::Add { text: "a".into() },
                FactChange::Replace {
                    text: "b".into(),
                    replaces: lyon.id
                },
                FactChange::Add { text: "c".into() },
                FactChange::Add { text: "d".into() },
            ]
        );
        assert_eq!(read_changes("no JSON here", &[lyon], &new), None);
    }
}

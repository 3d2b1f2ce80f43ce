//! The dump: a tenant's data (or one user's) as JSON Lines, one record per
//! line, for export, backup and moving between servers.
//!
//! Order matters: the header, the tenant, agents, then what belongs to them
//! (procedures, knowledge chunks, conversations), each conversation followed by
//! its episodes, each episode by its messages and the facts learned in it
//! (current and replaced), and last an `end` record
//! counting the records before it, so that a cut-off dump is refused instead
//! of half imported.
//!
//! Vectors: knowledge chunks and procedure versions carry theirs, with the
//! model that made them; an import keeps them when its own model is that
//! model, and embeds the text again otherwise. Memory vectors (of messages,
//! summaries and facts) are not carried: an import queues their embedding,
//! as bulk work.
//!
//! Ids: the admin's import restores a dump with its ids (a conflict if one is
//! taken); a tenant's import is a copy with new ids ([`IdMap`]).

use crate::DomainCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::conversation::Conversation;
use crate::episode::Episode;
use crate::knowledge::Chunk;
use crate::message::Message;
use crate::procedure::{Procedure, ProcedureVersion};
use crate::tenant::Tenant;
use crate::{AgentId, ConversationId, EpisodeId, Error, MessageId, Result, TenantId};

pub const DUMP_FORMAT: &str = "octopus-dump";
pub const DUMP_VERSION: u32 = 1;

/// One line of a dump.
// Records stream one at a time, so an agent's size is paid once per line,
// not per element of a collection: boxing it would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DumpRecord {
    Header(DumpHeader),
    Tenant(Tenant),
    Agent(Agent),
    Procedure(DumpedProcedure),
    KnowledgeChunk(DumpedChunk),
    Conversation(Conversation),
    Episode(Episode),
    Message(Message),
    Fact(crate::fact::Fact),
    End(DumpEnd),
}

impl DumpRecord {
    /// The agents the record names that must be this tenant's (the dump's,
    /// imported before it, or one the tenant had): ids are global, so a
    /// record could otherwise reach another tenant's agent. An episode's
    /// agent is checked by its pairing with its conversation, a fact's
    /// through its episode.
    pub fn agents_named(&self) -> Vec<AgentId> {
        match self {
            DumpRecord::Procedure(p) => p.procedure.agent_id.into_iter().collect(),
            DumpRecord::KnowledgeChunk(c) => vec![c.chunk.agent_id],
            DumpRecord::Conversation(c) => vec![c.agent_id],
            DumpRecord::Message(m) => m.agent_id.into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The record's `type`, as its line names it.
    pub fn kind(&self) -> &'static str {
        match self {
            DumpRecord::Header(_) => "header",
            DumpRecord::Tenant(_) => "tenant",
            DumpRecord::Agent(_) => "agent",
            DumpRecord::Procedure(_) => "procedure",
            DumpRecord::KnowledgeChunk(_) => "knowledge_chunk",
            DumpRecord::Conversation(_) => "conversation",
            DumpRecord::Episode(_) => "episode",
            DumpRecord::Message(_) => "message",
            DumpRecord::Fact(_) => "fact",
            DumpRecord::End(_) => "end",
        }
    }

    /// The id of the object the record holds; none for the header and end.
    pub fn id(&self) -> Option<uuid::Uuid> {
        match self {
            DumpRecord::Header(_) | DumpRecord::End(_) => None,
            DumpRecord::Tenant(tenant) => Some(tenant.id.0),
            DumpRecord::Agent(agent) => Some(agent.id.0),
            DumpRecord::Procedure(dumped) => Some(dumped.procedure.id.0),
            DumpRecord::KnowledgeChunk(dumped) => Some(dumped.chunk.id),
            DumpRecord::Conversation(conversation) => Some(conversation.id.0),
            DumpRecord::Episode(episode) => Some(episode.id.0),
            DumpRecord::Message(message) => Some(message.id.0),
            DumpRecord::Fact(fact) => Some(fact.id.0),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DumpHeader {
    /// Always [`DUMP_FORMAT`].
    pub format: String,
    pub version: u32,
    pub exported_at: DateTime<Utc>,
    pub tenant_id: TenantId,
    /// Set when the dump holds one user's conversations only.
    pub user_id: Option<String>,
}

impl DumpHeader {
    pub fn new(tenant_id: TenantId, user_id: Option<String>, exported_at: DateTime<Utc>) -> Self {
        Self {
            format: DUMP_FORMAT.into(),
            version: DUMP_VERSION,
            exported_at,
            tenant_id,
            user_id,
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.format != DUMP_FORMAT {
            return Err(Error::invalid(
                "format",
                format!("not an Octopus dump (expected `{DUMP_FORMAT}`)"),
            ));
        }
        if self.version != DUMP_VERSION {
            return Err(Error::invalid(
                "version",
                format!(
                    "dump version {} is not supported (this server reads {DUMP_VERSION})",
                    self.version
                ),
            ));
        }
        Ok(())
    }
}

/// A procedure with every version, each with the vector it is matched by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DumpedProcedure {
    pub procedure: Procedure,
    pub versions: Vec<DumpedVersion>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DumpedVersion {
    #[serde(flatten)]
    pub version: ProcedureVersion,
    pub embedding: Option<DumpedVector>,
}

/// A knowledge chunk with its vector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DumpedChunk {
    #[serde(flatten)]
    pub chunk: Chunk,
    pub embedding: DumpedVector,
    /// When the agent's knowledge collection was made.
    pub collection_created_at: DateTime<Utc>,
}

/// A vector and the model that made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DumpedVector {
    pub model: String,
    pub vector: Vec<f32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpEnd {
    /// Records before this one, the header included.
    pub records: u64,
}

/// What an import stored, by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ImportCounts {
    pub agents: u64,
    pub procedures: u64,
    pub knowledge_chunks: u64,
    pub conversations: u64,
    pub episodes: u64,
    pub messages: u64,
    #[serde(default)]
    pub facts: u64,
    /// Vectors (of chunks and procedure versions) embedded again because the
    /// dump's model is not this server's.
    pub vectors_embedded_again: u64,
}

/// What an import has stored so far, as its store needs it: the counts it
/// answers with, each imported episode's agent (its messages' work is queued
/// for that agent), the chunks added per knowledge collection, and whether
/// procedures changed (the tenant's revision moves once, at the end).
#[derive(Debug, Default)]
pub struct ImportTally {
    pub counts: ImportCounts,
    pub chunks: std::collections::HashMap<AgentId, i64>,
    pub procedures_changed: bool,
    episode_agents: std::collections::HashMap<EpisodeId, AgentId>,
}

impl ImportTally {
    /// Counts `record`, which the store is storing in the import's
    /// transaction (a failure later undoes the count with the rest).
    pub fn count(&mut self, record: &DumpRecord) {
        let counts = &mut self.counts;
        match record {
            DumpRecord::Header(_) | DumpRecord::End(_) | DumpRecord::Tenant(_) => {}
            DumpRecord::Agent(_) => counts.agents += 1,
            DumpRecord::Procedure(_) => {
                self.procedures_changed = true;
                counts.procedures += 1;
            }
            DumpRecord::KnowledgeChunk(c) => {
                *self.chunks.entry(c.chunk.agent_id).or_default() += 1;
                counts.knowledge_chunks += 1;
            }
            DumpRecord::Conversation(_) => counts.conversations += 1,
            DumpRecord::Episode(e) => {
                self.episode_agents.insert(e.id, e.agent_id);
                counts.episodes += 1;
            }
            DumpRecord::Message(_) => counts.messages += 1,
            DumpRecord::Fact(_) => counts.facts += 1,
        }
    }

    /// The agent of an episode this dump brought, if it did.
    pub fn episode_agent(&self, episode: EpisodeId) -> Option<AgentId> {
        self.episode_agents.get(&episode).copied()
    }
}

/// The order a dump's records must come in, checked record by record as an
/// import reads them: the header first and only first, and an `end` record
/// that counts the records before it. Every store's import follows it.
#[derive(Debug, Default)]
pub struct ImportSequence {
    records: u64,
    /// Each object's id and the record that held it: an id twice in one
    /// dump is the dump's fault, and the error names both lines.
    seen: std::collections::HashMap<uuid::Uuid, u64>,
}

/// What the next record is to an import.
#[derive(Debug, PartialEq, Eq)]
pub enum ImportStep {
    /// A record to store: its number in the dump, from 1.
    Store(u64),
    /// The end, with a count that matches: commit.
    Commit,
}

impl ImportSequence {
    /// Places `record`: to be stored, the end, or out of order (`Invalid`).
    /// The header is checked here too, so a store has nothing of it to do.
    pub fn next(&mut self, record: &DumpRecord) -> Result<ImportStep> {
        if let DumpRecord::End(end) = record {
            if end.records != self.records {
                return Err(Error::invalid(
                    "dump",
                    format!(
                        "the end record counts {} records but {} came before it: the dump is cut or altered; nothing was imported",
                        end.records, self.records
                    ),
                ));
            }
            return Ok(ImportStep::Commit);
        }
        let number = self.records + 1;
        if matches!(record, DumpRecord::Header(_)) != (number == 1) {
            return Err(Error::invalid(
                "dump",
                format!("record {number}: a dump starts with its header, and has one"),
            ));
        }
        if let Some(id) = record.id()
            && let Some(first) = self.seen.insert(id, number)
        {
            return Err(Error::invalid(
                "dump",
                format!(
                    "record {number} ({}): its id {id} is also record {first}'s: the dump holds one object twice; nothing was imported",
                    record.kind()
                ),
            ));
        }
        if let DumpRecord::Header(header) = record {
            header
                .validate()
                .map_err(|e| in_record(e, number, record.kind()))?;
        }
        self.records = number;
        Ok(ImportStep::Store(number))
    }

    /// The error of a dump that ran out before its `end` record.
    pub fn cut(&self) -> Error {
        Error::invalid(
            "dump",
            format!(
                "the dump ends after {} records without its end record: it is cut; nothing was imported",
                self.records
            ),
        )
    }
}

/// Why an import refused record `number` (a `kind`): what the store says
/// about an object of the dump, placed in the dump. Store constraints name
/// their cause with [`import_conflict`] and [`missing_owner`].
pub fn in_record(error: Error, number: u64, kind: &str) -> Error {
    let at = |message: &str| format!("record {number} ({kind}): {message}; nothing was imported");
    match error {
        Error::Invalid { field, message } => Error::invalid(field, at(&message)),
        Error::Conflict { code, message } => Error::conflict(code, at(&message)),
        other => other,
    }
}

/// A record whose id (or name) the store holds already.
pub fn import_conflict() -> Error {
    Error::conflict(
        DomainCode::ImportConflict,
        "this server already holds an object with its id (or name): a dump imported with the admin key keeps its ids, so it goes back only where they are free; to bring it in as a copy with new ids (into its own tenant or another), import it with that tenant's key (`octopus import` with OCTOPUS_API_KEY, or POST /v1/import)",
    )
}

/// A record that belongs to an object the store does not have.
pub fn missing_owner() -> Error {
    Error::invalid(
        "dump",
        "it belongs to an object that neither the dump (before it) nor this tenant has",
    )
}

/// A record that points at something an import cannot find, or pairs
/// objects the dump does not: the import refuses it, and the whole dump with
/// it. Ids are global, so without these checks a record could reach into
/// another tenant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// An agent neither in the dump (before the record) nor this tenant's.
    Agent(AgentId),
    /// A fact of an episode neither in the dump (before it) nor this tenant's.
    FactEpisode(EpisodeId),
    /// A message of an episode neither in the dump (before it) nor this tenant's.
    MessageEpisode(EpisodeId),
    /// An episode whose conversation, agent and user do not belong together.
    EpisodePairing(EpisodeId),
    /// A message whose episode is not in the message's conversation.
    MessageConversation(MessageId),
}

impl Unresolved {
    /// Refuses the record unless what it points at was `found`.
    pub fn unless(self, found: bool) -> Result<()> {
        if found { Ok(()) } else { Err(self.error()) }
    }

    pub fn error(self) -> Error {
        let message = match self {
            Unresolved::Agent(agent) => format!(
                "agent {agent} is neither in the dump (before this record) nor one of this tenant's"
            ),
            Unresolved::FactEpisode(episode) => format!(
                "a fact of episode {episode}, which neither the dump (before it) nor this tenant has"
            ),
            Unresolved::MessageEpisode(episode) => format!(
                "a message of episode {episode}, which neither the dump (before it) nor this tenant has"
            ),
            Unresolved::EpisodePairing(episode) => format!(
                "episode {episode} names a conversation, agent or user the dump does not pair it with"
            ),
            Unresolved::MessageConversation(message) => format!(
                "message {message} names an episode the dump does not put in its conversation"
            ),
        };
        Error::invalid("dump", message)
    }
}

impl DumpedChunk {
    /// Its vector's dimension, which its collection has or is made with: one
    /// the importing store can index, up to `max`.
    pub fn dimension(&self, max: u32) -> Result<u32> {
        crate::knowledge::check_new_dimension("embedding", self.embedding.vector.len(), max)
    }

    /// The chunk as a store inserts it.
    pub fn to_new_chunk(&self) -> crate::knowledge::NewChunk {
        crate::knowledge::NewChunk {
            id: self.chunk.id,
            content: self.chunk.content.clone(),
            embedding: self.embedding.vector.clone(),
            metadata: self.chunk.metadata.clone(),
        }
    }
}

impl DumpedProcedure {
    /// The vector of the version the procedure shows, if it was dumped.
    pub fn shown_embedding(&self) -> Option<&[f32]> {
        self.versions
            .iter()
            .find(|v| v.version.version == self.procedure.version)
            .and_then(|v| v.embedding.as_ref())
            .map(|e| e.vector.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_takes_the_header_first_and_commits_at_a_matching_end() {
        let header =
            || DumpRecord::Header(DumpHeader::new(TenantId::new(), None, chrono::Utc::now()));
        let end = |records| DumpRecord::End(DumpEnd { records });
        let mut sequence = ImportSequence::default();
        assert_eq!(sequence.next(&header()).unwrap(), ImportStep::Store(1));
        assert!(
            sequence
                .next(&header())
                .unwrap_err()
                .to_string()
                .contains("record 2")
        );
        assert!(
            sequence
                .next(&end(2))
                .unwrap_err()
                .to_string()
                .contains("counts 2 records but 1")
        );
        assert!(sequence.cut().to_string().contains("ends after 1 records"));
        assert_eq!(sequence.next(&end(1)).unwrap(), ImportStep::Commit);

        let mut headless = ImportSequence::default();
        assert!(
            headless.next(&end(0)).is_ok(),
            "an end with nothing before it counts"
        );
        let mut headless = ImportSequence::default();
        let tenant = DumpRecord::Tenant(crate::tenant::Tenant {
            id: TenantId::new(),
            name: "t".into(),
            created_at: chrono::Utc::now(),
        });
        assert!(
            headless
                .next(&tenant)
                .unwrap_err()
                .to_string()
                .contains("starts with its header")
        );
    }

    #[test]
    fn a_record_is_named_by_its_type_on_its_line() {
        let end = DumpRecord::End(DumpEnd { records: 3 });
        let line = serde_json::to_value(&end).unwrap();
        assert_eq!(line["type"], end.kind());
        assert_eq!(line["records"], 3);
        let back: DumpRecord = serde_json::from_value(line).unwrap();
        assert_eq!(back, end);
    }

    #[test]
    fn only_this_format_and_version_are_read() {
        let tenant = TenantId::new();
        let header = DumpHeader::new(tenant, None, crate::now());
        assert!(header.validate().is_ok());
        let newer = DumpHeader {
            version: DUMP_VERSION + 1,
            ..header.clone()
        };
        assert!(newer.validate().is_err());
        let other = DumpHeader {
            format: "something-else".into(),
            ..header
        };
        assert!(other.validate().is_err());
    }
}

/// New ids for a dump imported as a copy: each id the dump names (of an
/// agent, procedure, chunk, conversation, episode, message) gets a fresh
/// one, the same wherever it is named, so references within the dump hold.
/// A tenant's import is such a copy: it never meets, and so never reveals,
/// an id another tenant holds.
#[derive(Debug, Default)]
pub struct IdMap {
    ids: std::collections::HashMap<uuid::Uuid, uuid::Uuid>,
    /// Old and new ids of the agents and conversations, for the import's
    /// answer (the ids a client keeps).
    pub agents: std::collections::BTreeMap<AgentId, AgentId>,
    pub conversations: std::collections::BTreeMap<ConversationId, ConversationId>,
}

impl IdMap {
    fn id(&mut self, old: uuid::Uuid) -> uuid::Uuid {
        *self.ids.entry(old).or_insert_with(uuid::Uuid::now_v7)
    }

    fn agent(&mut self, old: AgentId) -> AgentId {
        let new = AgentId(self.id(old.0));
        self.agents.insert(old, new);
        new
    }

    fn conversation(&mut self, old: ConversationId) -> ConversationId {
        let new = ConversationId(self.id(old.0));
        self.conversations.insert(old, new);
        new
    }

    /// `learned:{episode}`, the author of a learned procedure, with the
    /// episode's new id.
    fn author(&mut self, author: &mut Option<String>) {
        let Some(text) = author.as_deref() else {
            return;
        };
        if let Some(episode) = text
            .strip_prefix("learned:")
            .and_then(|id| id.parse::<uuid::Uuid>().ok())
        {
            *author = Some(format!("learned:{}", self.id(episode)));
        }
    }

    /// Each id minted for the copy, with the dump's id it replaced.
    pub fn minted(&self) -> impl Iterator<Item = (uuid::Uuid, uuid::Uuid)> + '_ {
        self.ids.iter().map(|(old, new)| (*new, *old))
    }

    /// The record with its ids replaced.
    pub fn remap(&mut self, record: DumpRecord) -> DumpRecord {
        match record {
            DumpRecord::Agent(mut agent) => {
                agent.id = self.agent(agent.id);
                DumpRecord::Agent(agent)
            }
            DumpRecord::Procedure(mut dumped) => {
                let procedure = &mut dumped.procedure;
                procedure.id = crate::ProcedureId(self.id(procedure.id.0));
                procedure.agent_id = procedure.agent_id.map(|a| self.agent(a));
                self.author(&mut procedure.created_by);
                for version in &mut dumped.versions {
                    self.author(&mut version.version.created_by);
                }
                DumpRecord::Procedure(dumped)
            }
            DumpRecord::KnowledgeChunk(mut dumped) => {
                dumped.chunk.id = self.id(dumped.chunk.id);
                dumped.chunk.agent_id = self.agent(dumped.chunk.agent_id);
                DumpRecord::KnowledgeChunk(dumped)
            }
            DumpRecord::Conversation(mut conversation) => {
                conversation.id = self.conversation(conversation.id);
                conversation.agent_id = self.agent(conversation.agent_id);
                DumpRecord::Conversation(conversation)
            }
            DumpRecord::Episode(mut episode) => {
                episode.id = EpisodeId(self.id(episode.id.0));
                episode.conversation_id = self.conversation(episode.conversation_id);
                episode.agent_id = self.agent(episode.agent_id);
                DumpRecord::Episode(episode)
            }
            DumpRecord::Message(mut message) => {
                message.id = MessageId(self.id(message.id.0));
                message.episode_id = EpisodeId(self.id(message.episode_id.0));
                message.conversation_id = self.conversation(message.conversation_id);
                message.agent_id = message.agent_id.map(|a| self.agent(a));
                // Memory vectors are made again after an import.
                message.embedding_ref = None;
                DumpRecord::Message(message)
            }
            DumpRecord::Fact(mut fact) => {
                fact.id = crate::FactId(self.id(fact.id.0));
                fact.agent_id = self.agent(fact.agent_id);
                fact.episode_id = fact.episode_id.map(|e| EpisodeId(self.id(e.0)));
                for message in &mut fact.message_ids {
                    *message = MessageId(self.id(message.0));
                }
                // The fact that replaced it comes later in the dump: its new
                // id is made now and found again then.
                fact.superseded_by = fact.superseded_by.map(|f| crate::FactId(self.id(f.0)));
                DumpRecord::Fact(fact)
            }
            other => other,
        }
    }
}

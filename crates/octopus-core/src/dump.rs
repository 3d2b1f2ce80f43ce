//! The dump: a tenant's data (or one user's) as JSON Lines, one record per
//! line, for export, backup and moving between servers.
//!
//! Order matters: the header, the tenant, agents, then what belongs to them
//! (procedures, knowledge chunks, conversations), each conversation followed by
//! its episodes, each episode by its messages, and last an `end` record
//! counting the records before it, so that a cut-off dump is refused instead
//! of half imported.
//!
//! Vectors: knowledge chunks and procedure versions carry theirs, with the
//! model that made them; an import keeps them when its own model is that
//! model, and embeds the text again otherwise. Memory vectors (of messages and
//! summaries) are not carried: an import queues their embedding, as bulk work.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::conversation::Conversation;
use crate::episode::Episode;
use crate::knowledge::Chunk;
use crate::message::Message;
use crate::procedure::{Procedure, ProcedureVersion};
use crate::tenant::Tenant;
use crate::{Error, Result, TenantId};

pub const DUMP_FORMAT: &str = "octopus-dump";
pub const DUMP_VERSION: u32 = 1;

/// One line of a dump.
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
    End(DumpEnd),
}

impl DumpRecord {
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
            DumpRecord::End(_) => "end",
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportCounts {
    pub agents: u64,
    pub procedures: u64,
    pub knowledge_chunks: u64,
    pub conversations: u64,
    pub episodes: u64,
    pub messages: u64,
    /// Vectors (of chunks and procedure versions) embedded again because the
    /// dump's model is not this server's.
    pub vectors_embedded_again: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! The domain's errors: what went wrong, in terms every door can answer with
//! a status and a stable code.

use std::fmt;

/// What can go wrong in the domain and its stores.
///
/// The variants say whose fault it is: the caller's input (`Invalid`), a missing or
/// foreign object (`NotFound` — the same for both, so a tenant never learns that
/// another tenant's object exists), a state conflict (`Conflict`, `Gone`), or the
/// backend (`Backend`, whose details are logged and never shown to clients), or a
/// service the backend needs being out of reach for now (`Unavailable`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },

    #[error("{kind} {id} not found")]
    NotFound { kind: ObjectKind, id: String },

    #[error("{message}")]
    Conflict { code: DomainCode, message: String },

    #[error("{message}")]
    Gone { code: DomainCode, message: String },

    #[error("storage backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),

    /// A server the store relies on (`service`, such as `qdrant`) cannot be
    /// reached; what was stored stays stored, and a retry may succeed.
    #[error("{service} is unavailable: {source}")]
    Unavailable {
        service: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Declares `ObjectKind` and its `ALL` from one list of variants and names.
macro_rules! object_kinds {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal,)*) => {
        /// What a request named that does not exist, or not for its tenant
        /// (`Error::NotFound`). The server maps each to an error code of its
        /// own, by an exhaustive match.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ObjectKind {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ObjectKind {
            pub const ALL: &'static [ObjectKind] = &[$(ObjectKind::$variant,)*];

            /// The name messages use ("agent … not found").
            pub fn as_str(self) -> &'static str {
                match self { $(ObjectKind::$variant => $name,)* }
            }
        }
    };
}

object_kinds! {
    Tenant = "tenant",
    ApiKey = "api_key",
    Agent = "agent",
    Conversation = "conversation",
    Episode = "episode",
    Message = "message",
    Fact = "fact",
    Webhook = "webhook",
    Procedure = "procedure",
    /// One version of a procedure.
    ProcedureVersion = "procedure_version",
    /// An agent's knowledge collection, which its first document creates.
    Collection = "collection",
    /// One chunk of a document in a collection.
    Chunk = "chunk",
    /// A document of a collection, by its source.
    Document = "document",
    /// A user of an agent: someone with a conversation or a fact.
    User = "user",
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Declares `DomainCode` and its `ALL` from one list, so that no variant
/// can be left out of `ALL` (the server's test walks it).
macro_rules! domain_codes {
    ($($(#[doc = $doc:literal])* $variant:ident,)*) => {
        /// Which state a request conflicted with (`Error::Conflict`), or which
        /// object it found gone (`Error::Gone`): the reason a client can act
        /// on. The server maps each to an error code of its own, by an
        /// exhaustive match.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum DomainCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl DomainCode {
            pub const ALL: &'static [DomainCode] = &[$(DomainCode::$variant,)*];
        }
    };
}

domain_codes! {
    /// The agent is deactivated.
    AgentInactive,
    /// The conversation's agent was deleted.
    AgentDeleted,
    /// An active agent of the tenant has the name.
    AgentNameTaken,
    /// An active procedure of the same agent (or a shared one) has the name.
    ProcedureNameTaken,
    /// The procedure has no version waiting for a decision.
    NoPendingVersion,
    /// The episode called no tool, so no procedure can be learned from it.
    NoToolCalls,
    /// Only a version that was approved can serve again.
    VersionNotApproved,
    /// The episode is closed already.
    EpisodeClosed,
    /// Only a deleted or archived episode can be purged.
    EpisodeNotDeleted,
    /// The episode is neither deleted nor archived: nothing to restore.
    EpisodeLive,
    /// An object of a dump exists already; nothing was imported.
    ImportConflict,
    /// The embedding model differs from the collection's.
    CollectionMismatch,
    /// A message's speaker names no agent of the tenant.
    SpeakerNotFound,
    /// Tool results were sent, but no tool call of the turn waits for one.
    NoPendingToolCalls,
    /// The tool results do not answer the pending tool calls exactly once each.
    ToolResultsMismatch,
    /// The tenant holds as much as its quota allows.
    TenantLimitReached,
    /// The conversation is deleted.
    ConversationDeleted,
    /// A batch decided from one state of the conversation arrived after
    /// another request had changed it.
    ConversationMoved,
    /// The fact was replaced by a newer version: only the version that
    /// holds can be corrected.
    FactReplaced,
    /// A correction would start before the version it replaces became true,
    /// leaving that version holding for no time.
    CorrectionBeforeFact,
    /// A fact's category is none of its agent's `memory.fact_categories`.
    UnknownFactCategory,
    /// Another fact of the user that holds in the same category has the key.
    FactKeyTaken,
}

impl Error {
    pub fn invalid(field: impl Into<String>, message: impl fmt::Display) -> Self {
        Error::Invalid {
            field: field.into(),
            message: message.to_string(),
        }
    }

    pub fn not_found(kind: ObjectKind, id: impl fmt::Display) -> Self {
        Error::NotFound {
            kind,
            id: id.to_string(),
        }
    }

    pub fn conflict(code: DomainCode, message: impl fmt::Display) -> Self {
        Error::Conflict {
            code,
            message: message.to_string(),
        }
    }

    pub fn gone(code: DomainCode, message: impl fmt::Display) -> Self {
        Error::Gone {
            code,
            message: message.to_string(),
        }
    }

    pub fn backend(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::Backend(Box::new(source))
    }

    pub fn unavailable(
        service: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Unavailable {
            service,
            source: Box::new(source),
        }
    }

    /// Prefixes the field of an `Invalid` error, so that a problem found deep in a
    /// nested value names its full path (`messages[3].content`).
    pub fn within(self, prefix: &str) -> Self {
        match self {
            Error::Invalid { field, message } if field.is_empty() => Error::Invalid {
                field: prefix.to_owned(),
                message,
            },
            Error::Invalid { field, message } => {
                let joiner = if field.starts_with('[') { "" } else { "." };
                Error::Invalid {
                    field: format!("{prefix}{joiner}{field}"),
                    message,
                }
            }
            other => other,
        }
    }
}

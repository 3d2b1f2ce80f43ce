//! Typed identifiers. All are UUIDs; those Octopus mints are UUIDv7, so they sort by
//! creation time, and rows inserted in order land together in an index.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $object:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[derive(utoipa::ToSchema)]
        #[schema(value_type = String, format = Uuid)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// What this id names, for "not found" errors.
            pub const KIND: crate::ObjectKind = crate::ObjectKind::$object;

            /// A new time-ordered id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            pub fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = crate::Error;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self).map_err(|_| {
                    crate::Error::invalid(concat!($kind, "_id"), format!("`{s}` is not a UUID"))
                })
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }
    };
}

uuid_id!(
    /// A tenant: the unit of isolation. Nothing of one tenant is visible to another.
    TenantId,
    "tenant",
    Tenant
);
uuid_id!(
    /// An API key's public id (the secret itself is never stored).
    ApiKeyId,
    "api_key",
    ApiKey
);
uuid_id!(
    /// An agent: a configured assistant with its own memory.
    AgentId,
    "agent",
    Agent
);
uuid_id!(
    /// A conversation: the long-lived thread between one user and one agent.
    ConversationId,
    "conversation",
    Conversation
);
uuid_id!(
    /// An episode: one session of a conversation, from its first message to its close.
    EpisodeId,
    "episode",
    Episode
);
uuid_id!(
    /// One message of an episode.
    MessageId,
    "message",
    Message
);
uuid_id!(
    /// A fact learned about a user: a memory item of its own, with the period
    /// it held true.
    FactId,
    "fact",
    Fact
);

uuid_id!(
    /// An endpoint a tenant registered for events about its memory.
    WebhookId,
    "webhook",
    Webhook
);

uuid_id!(
    /// A named step-by-step procedure (procedural memory).
    ProcedureId,
    "procedure",
    Procedure
);

//! Conversations: the long-lived thread between one user and one agent. A
//! conversation is a sequence of episodes; at most one is open at a time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{AgentId, ConversationId, Error, Result, TenantId};

/// Longest user id accepted: room for an e-mail address or an external
/// system's key, not for a document.
pub const MAX_USER_ID_CHARS: usize = 256;
/// Longest conversation title, in characters.
pub const MAX_TITLE_CHARS: usize = 500;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Conversation {
    pub id: ConversationId,
    #[serde(skip)]
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    /// The caller's own id for the user: an opaque string.
    pub user_id: String,
    pub title: Option<String>,
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// A deleted conversation takes no new messages.
    pub deleted_at: Option<DateTime<Utc>>,
}

/// The fields a caller gives to start a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationSpec {
    pub agent_id: AgentId,
    pub user_id: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
}

impl ConversationSpec {
    pub fn validate(&self) -> Result<()> {
        validate_user_id(&self.user_id)?;
        if let Some(title) = &self.title {
            crate::bounds::check_chars("title", title, 0, MAX_TITLE_CHARS)?;
        }
        crate::bounds::check_json_bytes(
            "metadata",
            &self.metadata,
            crate::bounds::MAX_METADATA_BYTES,
        )
    }
}

pub fn validate_user_id(user_id: &str) -> Result<()> {
    if user_id.is_empty() {
        return Err(Error::invalid("user_id", "must not be empty"));
    }
    crate::bounds::check_no_nul("user_id", user_id)?;
    if user_id.chars().count() > MAX_USER_ID_CHARS {
        return Err(Error::invalid(
            "user_id",
            format!("must be at most {MAX_USER_ID_CHARS} characters"),
        ));
    }
    Ok(())
}

/// Which conversations to list.
#[derive(Clone, Debug, Default)]
pub struct ConversationFilter {
    pub agent_id: Option<AgentId>,
    pub user_id: Option<String>,
    pub include_deleted: bool,
    pub page: crate::page::Page,
}

/// One user of an agent, as its live conversations show them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UserSummary {
    pub user_id: String,
    /// Live conversations between this user and the agent.
    pub conversation_count: u32,
    /// When the newest of them last changed.
    pub last_active_at: DateTime<Utc>,
}

/// Past conversations brought in with their original timestamps: one
/// conversation, one episode per session.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConversationImport {
    pub agent_id: AgentId,
    pub user_id: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub metadata: Map<String, Value>,
    pub sessions: Vec<ImportedSession>,
}

#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportedSession {
    /// In order; each with its original `timestamp`.
    pub messages: Vec<crate::message::NewMessage>,
}

/// Most sessions one import takes.
pub const MAX_IMPORT_SESSIONS: usize = 10_000;
/// Most messages one import takes.
pub const MAX_IMPORT_MESSAGES: usize = 100_000;

impl ConversationImport {
    /// Checks the shape of the import; each message is validated by the caller
    /// against the server's limits.
    /// The conversation the import creates.
    pub fn spec(&self) -> ConversationSpec {
        ConversationSpec {
            agent_id: self.agent_id,
            user_id: self.user_id.clone(),
            title: self.title.clone(),
            metadata: self.metadata.clone(),
        }
    }

    pub fn validate(&self) -> Result<()> {
        self.spec().validate()?;
        if self.sessions.is_empty() || self.sessions.len() > MAX_IMPORT_SESSIONS {
            return Err(Error::invalid(
                "sessions",
                format!("must hold 1 to {MAX_IMPORT_SESSIONS} sessions"),
            ));
        }
        let total: usize = self.sessions.iter().map(|s| s.messages.len()).sum();
        if total > MAX_IMPORT_MESSAGES {
            return Err(Error::invalid(
                "sessions",
                format!("{total} messages; one import takes at most {MAX_IMPORT_MESSAGES}"),
            ));
        }
        for (i, session) in self.sessions.iter().enumerate() {
            if session.messages.is_empty() {
                return Err(Error::invalid(
                    format!("sessions[{i}].messages"),
                    "must not be empty",
                ));
            }
            if let Some(j) = session.messages.iter().position(|m| m.timestamp.is_none()) {
                return Err(Error::invalid(
                    format!("sessions[{i}].messages[{j}].timestamp"),
                    "is required: an import keeps the original times",
                ));
            }
        }
        Ok(())
    }
}

//! Conversations: the long-lived thread between one user and one agent. A
//! conversation is a sequence of episodes; at most one is open at a time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{AgentId, ConversationId, Error, Result, TenantId};

/// Longest user id accepted (seed 002: `NVARCHAR(256)`).
pub const MAX_USER_ID_CHARS: usize = 256;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Conversation {
    pub id: ConversationId,
    #[serde(skip)]
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    /// The caller's own id for the user: an opaque string.
    pub user_id: String,
    pub title: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: Map<String, Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// A deleted conversation takes no new messages.
    pub deleted_at: Option<DateTime<Utc>>,
}

/// The fields a caller gives to start a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConversationSpec {
    pub agent_id: AgentId,
    pub user_id: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub metadata: Map<String, Value>,
}

impl ConversationSpec {
    pub fn validate(&self) -> Result<()> {
        validate_user_id(&self.user_id)?;
        if let Some(title) = &self.title
            && title.chars().count() > 500
        {
            return Err(Error::invalid("title", "must be at most 500 characters"));
        }
        Ok(())
    }
}

pub fn validate_user_id(user_id: &str) -> Result<()> {
    if user_id.is_empty() {
        return Err(Error::invalid("user_id", "must not be empty"));
    }
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
    pub page: crate::store::Page,
}

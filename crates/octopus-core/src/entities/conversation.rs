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
    /// The first words the user said in it (of its first user message, the
    /// redacted copy when there is one), for naming it in a list: at most
    /// [`OPENING_CHARS`] characters, cut at a word. Absent until the user
    /// has said something, and in dumps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening: Option<String>,
}

/// Most characters of a conversation's [`Conversation::opening`].
pub const OPENING_CHARS: usize = 80;

/// A conversation's opening, from its first user message: the redacted
/// copy when there is one, whitespace collapsed, cut at a word within
/// [`OPENING_CHARS`] characters (with `…` when cut); `None` for a message
/// without text.
pub fn opening_of(message: &crate::message::Message) -> Option<String> {
    let text = match &message.redacted_content {
        Some(redacted) => redacted.clone(),
        None => message.content.as_ref()?.text(),
    };
    crate::words_within(&text, OPENING_CHARS)
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

/// One user's conversations with an agent, in numbers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct UserActivity {
    /// Live conversations.
    pub conversations: u32,
    /// Live episodes of those conversations.
    pub episodes: u32,
    /// Messages of those episodes.
    pub messages: u64,
    /// When the first of the conversations began.
    pub first_seen_at: DateTime<Utc>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, MessageContent, Role};
    use crate::{ConversationId, EpisodeId, MessageId};

    fn said(content: &str, redacted: Option<&str>) -> Message {
        Message {
            id: MessageId::new(),
            episode_id: EpisodeId::new(),
            conversation_id: ConversationId::new(),
            ordinal: 0,
            role: Role::User,
            content: Some(MessageContent::Text(content.into())),
            name: None,
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: 1,
            timestamp: Utc::now(),
            agent_id: None,
            contains_pii: redacted.is_some(),
            redacted_content: redacted.map(str::to_owned),
            embedding_ref: None,
            usage: None,
            created_at: Utc::now(),
        }
    }

    #[test]
    fn an_opening_is_the_users_first_words_cut_at_a_word() {
        assert_eq!(
            opening_of(&said("  Where is\n my parcel?  ", None)).as_deref(),
            Some("Where is my parcel?")
        );
        let long = "I would like to know why the parcel I sent to my sister in Lyon last \
                    Tuesday has still not arrived";
        let opening = opening_of(&said(long, None)).unwrap();
        assert_eq!(
            opening,
            "I would like to know why the parcel I sent to my sister in Lyon last Tuesday…"
        );
        assert!(opening.chars().count() <= OPENING_CHARS);
        let word = "a".repeat(200);
        assert_eq!(
            opening_of(&said(&word, None)).unwrap().chars().count(),
            OPENING_CHARS
        );
        assert_eq!(
            opening_of(&said(
                "Mail me at ann@example.com",
                Some("Mail me at [EMAIL]")
            ))
            .as_deref(),
            Some("Mail me at [EMAIL]"),
            "the redacted copy, when there is one"
        );
        assert_eq!(opening_of(&said("   ", None)), None);
    }
}

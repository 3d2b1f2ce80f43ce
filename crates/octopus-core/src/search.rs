//! Full-text search over a tenant's messages.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::{AgentId, ConversationId, Error, Result};

/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: u32 = 200;

#[derive(Clone, Debug)]
pub struct MessageSearchQuery {
    /// Free text; every word is searched for, and hits are ranked by BM25.
    pub text: String,
    pub agent_id: Option<AgentId>,
    pub user_id: Option<String>,
    pub conversation_id: Option<ConversationId>,
    /// Bounds on the message timestamp: `from` inclusive, `to` exclusive.
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    pub limit: u32,
}

impl MessageSearchQuery {
    pub fn validate(&self) -> Result<()> {
        if search_terms(&self.text).is_empty() {
            return Err(Error::invalid("q", "must contain at least one word"));
        }
        if self.limit == 0 || self.limit > MAX_SEARCH_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!("must be between 1 and {MAX_SEARCH_LIMIT}"),
            ));
        }
        Ok(())
    }
}

/// The words of a free-text query: runs of letters and digits. Everything else is
/// a separator, so no user input can form query syntax.
pub fn search_terms(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .take(64)
        .collect()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageHit {
    /// BM25 relevance: higher is better.
    pub score: f64,
    pub agent_id: AgentId,
    pub user_id: String,
    pub message: Message,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_query_syntax() {
        assert_eq!(
            search_terms("\"order\" AND #ORD-8821*"),
            vec!["order", "AND", "ORD", "8821"]
        );
        assert!(search_terms("  ()*: ").is_empty());
    }
}

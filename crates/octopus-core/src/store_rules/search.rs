//! Full-text search over a tenant's messages.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::{AgentId, ConversationId, Error, Result};

/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: u32 = 200;

/// Longest `q`, in characters. A search's words travel in its URL, and an
/// HTTP server reads a request line of at most 64 KiB: 5,000 characters of
/// four-byte UTF-8, percent-encoded, fit with room for the other parameters.
pub const MAX_SEARCH_QUERY_CHARS: usize = 5_000;

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
        crate::bounds::check_chars("q", &self.text, 1, MAX_SEARCH_QUERY_CHARS)?;
        crate::bounds::check_window(self.from, self.to)?;
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

/// Words that carry no topic: function words and question words. Left out of
/// a recall's full-text query, because BM25 over OR-ed terms lets a turn full
/// of "what", "did" and "the" outrank the one that names the topic.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "him", "his", "how", "i", "if", "in", "is", "it", "its", "just",
    "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their",
    "them", "then", "there", "they", "this", "to", "too", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// Whether `word`, in any case, is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS
        .iter()
        .any(|stop| stop.eq_ignore_ascii_case(word))
}

/// The [`search_terms`] that carry a topic; all of them when every one is a
/// stop word, so that a query of stop words alone still finds something.
pub fn topic_terms(text: &str) -> Vec<&str> {
    let terms = search_terms(text);
    let topical: Vec<&str> = terms
        .iter()
        .copied()
        .filter(|term| !is_stop_word(term))
        .collect();
    match topical.is_empty() {
        true => terms,
        false => topical,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
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

    #[test]
    fn topic_terms_leave_out_stop_words_unless_nothing_else_is_left() {
        assert_eq!(
            topic_terms("When did Caroline go to the LGBTQ support group?"),
            vec!["Caroline", "go", "LGBTQ", "support", "group"]
        );
        assert_eq!(topic_terms("What was it?"), vec!["What", "was", "it"]);
        assert!(topic_terms("?!").is_empty());
    }
}

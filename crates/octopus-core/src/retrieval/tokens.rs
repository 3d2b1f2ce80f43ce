//! Token estimates for stored messages.
//!
//! The count kept with each message is an estimate for budgeting and statistics:
//! about four bytes of English text per token, which is what OpenAI's and
//! Anthropic's tokenizers average on prose. Exact per-model counting for the
//! context actually sent to a model lives with working-memory assembly.

use crate::message::{MessageContent, NewMessage};

/// Counts tokens of text.
pub trait TokenCounter: Send + Sync {
    fn count(&self, text: &str) -> u32;

    /// Tokens of a whole message: its text, its tool-call records, and a small
    /// per-message overhead for the role and separators of chat formats.
    fn count_message(&self, message: &NewMessage) -> u32 {
        const PER_MESSAGE_OVERHEAD: u32 = 4;
        let mut total = PER_MESSAGE_OVERHEAD;
        if let Some(content) = &message.content {
            total += match content {
                MessageContent::Text(text) => self.count(text),
                MessageContent::Parts(_) => self.count(&content.text()),
            };
        }
        for call in &message.tool_calls {
            total += self.count(&call.search_text());
        }
        total
    }
}

/// One token for every four bytes, rounded up.
#[derive(Clone, Copy, Debug, Default)]
pub struct ApproximateTokenCounter;

impl TokenCounter for ApproximateTokenCounter {
    fn count(&self, text: &str) -> u32 {
        u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_up_and_counts_empty_as_zero() {
        let counter = ApproximateTokenCounter;
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("abc"), 1);
        assert_eq!(counter.count("abcde"), 2);
    }
}

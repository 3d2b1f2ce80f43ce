//! Working memory: the context of one turn, the current history as the
//! model reads it, and past conversations as dated passages.

pub mod chat_history;
pub mod episodic_snippets;
pub mod working_memory;

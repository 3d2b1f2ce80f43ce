//! Working memory: the context of one turn, the current history as the
//! model reads it, past conversations as dated passages, and why each
//! candidate was kept or left out.

pub mod chat_history;
pub mod context_explanation;
pub mod episodic_snippets;
pub mod working_memory;

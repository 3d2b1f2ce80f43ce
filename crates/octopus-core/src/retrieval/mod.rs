//! Finding what to remember: what is embedded, how documents are chunked
//! and episodes summarised, token counts, and recall: its query, how the
//! retrievers' lists are fused and ranked in context, whom, what and when a
//! question names, which words its best hits add to it, which simpler
//! questions a model splits it into, whether it asks what holds now or
//! what held before, which of two statements of one thing it wants, and
//! which hits say the same words again, and why each hit was returned
//! where it was.

pub mod chunking;
pub mod dates_named;
pub mod embedded_text;
pub mod feedback;
pub mod fusion;
pub mod recall;
pub mod recall_explanation;
pub mod recall_ranking;
pub mod repeats;
pub mod restated;
pub mod speakers;
pub mod sub_questions;
pub mod summary;
pub mod things_named;
pub mod time_asked;
pub mod tokens;

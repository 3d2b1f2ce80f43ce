//! Qdrant as an implementation of the vector port
//! (`octopus_core::vectors::VectorIndex`), for users who run Qdrant already
//! or want vector search scaled out on its own while the relational data
//! stays in SQLite or PostgreSQL.
//!
//! - [`QdrantOptions`]: where the server is, its API key, timeouts, and how
//!   Octopus's vector sets map to Qdrant collections ([`QdrantLayout`]).
//! - `layout`: collection names, point ids and payloads, and how a
//!   [`PointFilter`](octopus_core::vectors::PointFilter) becomes a Qdrant
//!   filter on indexed payload fields.
//! - `versions`: the version of the rows each set's copy in Qdrant reflects,
//!   changed only by compare-and-swap, so that concurrent writers never let
//!   a copy claim a version it does not hold.
//! - `index`: the port itself: follow, reconcile by key, search, erase.
//!
//! As for the other backends, the relational store is the truth; Qdrant
//! holds a copy that can lag (Qdrant down, a crash between the two writes)
//! and is reconciled by key before a search reads it.

#![forbid(unsafe_code)]

mod client;
mod error;
mod index;
mod layout;
mod options;
#[cfg(feature = "testing")]
pub mod testing;
mod versions;

pub use error::Error;
pub use index::QdrantVectors;
pub use options::{QdrantLayout, QdrantOptions};

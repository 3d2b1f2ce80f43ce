//! The operations of the [`Octopus`](crate::Octopus) service, one file per
//! area, each an `impl Octopus` over the state in `crate::octopus`.

mod agents;
mod callers;
pub(crate) mod chat_imports;
pub(crate) mod completions;
pub(crate) mod context;
pub(crate) mod conversations;
pub(crate) mod dumps;
mod embedding;
mod episodes;
mod erasure;
mod facts;
mod import_names;
pub(crate) mod knowledge;
mod learning;
mod memory_jobs;
pub(crate) mod procedures;
pub(crate) mod profile_summaries;
pub(crate) mod profiles;
mod recall;
pub(crate) mod standing_requests;
mod summaries;
mod tenants;
pub(crate) mod transcript;
pub(crate) mod turns;
mod webhooks;

pub(crate) use embedding::QueryVector;

//! The things Octopus stores, with the validation every entry point shares:
//! tenants and their keys, agents, conversations, episodes, messages,
//! knowledge, procedures and facts; their ids, pages of them, the bounds on
//! free-form input, and the dump that carries them.

pub mod agent;
pub mod bounds;
pub mod conversation;
pub mod dump;
pub mod episode;
pub mod fact;
pub mod ids;
pub mod knowledge;
pub mod message;
pub mod page;
pub mod procedure;
pub mod profile_summary;
pub mod standing_requests;
pub mod tenant;
pub mod webhook;

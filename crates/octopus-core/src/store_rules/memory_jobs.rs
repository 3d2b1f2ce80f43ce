//! The durable queue of memory work: the jobs that embed messages, summaries
//! and facts and summarise episodes, how they are claimed fairly, and what
//! each outcome leaves behind.
//!
//! # Queued, leased, derived
//!
//! Appending a message queues its embedding in `memory_jobs`, in the append's
//! transaction; closing an episode (by a call, a timeout, a deleted
//! conversation or an import) queues its summary. A crash loses no work: the
//! next worker claims it. A claim leases jobs (`[worker] job_lease_secs`); live
//! work (appends, closes) is claimed before bulk work (imports), and within a
//! class tenants take turns. A job whose model could not answer stores the
//! stand-in and stays queued with a backoff; one that failed for a
//! configuration fault is parked until the configuration changes.
//!
//! Memory vectors live per (tenant, agent), each carrying its user, episode,
//! kind and time. Deleted and archived episodes are filtered at search time, so
//! restoring needs no re-embedding; purging deletes the vectors.

use crate::episode::{EpisodeSummary, EpisodeWithMessages, SummarySource};
use crate::message::Message;
use crate::{AgentId, EpisodeId, MessageId, TenantId};

/// How soon queued memory work should be done. A live conversation's message
/// must become recallable within seconds, while an import of thousands can
/// wait: live work is claimed before any bulk work, whoever queued it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkClass {
    /// Messages appended to, and episodes closed in, live conversations.
    #[default]
    Live,
    /// Imports, and anything else done in bulk.
    Bulk,
}

/// One tenant's waiting memory work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryQueue {
    pub tenant_id: TenantId,
    /// Jobs waiting, of each class (parked ones not counted).
    pub live: u64,
    pub bulk: u64,
    /// Jobs parked: they cannot succeed as the server is configured.
    pub parked: u64,
    /// When the oldest waiting job was queued; none when all are parked.
    pub oldest_queued_at: Option<crate::Timestamp>,
}

/// What becomes of a summary job whose model did not write the summary
/// (an extractive one stands in meanwhile).
#[derive(Clone, Debug, PartialEq)]
pub enum Followup {
    /// Ask again from this time (a provider down or busy), the error kept.
    RetryAt(crate::Timestamp, String),
    /// The server's configuration is at fault (no API key, a model the
    /// provider does not have): kept aside, neither claimed nor counted as
    /// waiting, until the agent's settings or the server's configuration
    /// change. `configuration` names the configuration it failed under.
    Park {
        reason: String,
        configuration: String,
    },
}

/// Which parked jobs to release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unpark {
    /// An agent's, whose settings changed.
    Agent(TenantId, AgentId),
    /// Every one parked under another configuration than this one.
    NotUnder(String),
}

/// A unit of queued work, claimed by one worker at a time for a lease.
#[derive(Clone, Debug)]
pub struct MemoryJob {
    pub id: i64,
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    /// Failed attempts so far.
    pub attempts: u32,
    pub work: MemoryWork,
}

#[derive(Clone, Debug)]
pub enum MemoryWork {
    /// Embed a stored message.
    EmbedMessage(Message),
    /// Summarise a closed episode when it has no summary, and embed the
    /// summary; with a model's summary, learn its key facts as facts.
    SummariseEpisode(EpisodeWithMessages),
    /// Embed a stored fact (one imported from a dump or corrected).
    EmbedFact(crate::fact::Fact),
    /// Learn facts from the messages of an open episode since its last
    /// learning (after `facts_learned_through`).
    LearnFacts(EpisodeWithMessages),
}

/// What a learning job learned from a window of an episode's messages.
#[derive(Clone, Debug)]
pub struct LearnedFacts {
    pub episode: EpisodeId,
    /// The episode's `facts_learned_through` the window started after: the
    /// facts are stored only if it is still that, so that a window is
    /// learned once however often its job runs.
    pub from: u32,
    /// How many of its messages have now been learned from.
    pub through: u32,
    /// The new facts, with their vectors (and the known facts they replace).
    pub facts: Vec<crate::fact::NewFact>,
}

/// What a summary job made of its episode.
#[derive(Clone, Debug)]
pub struct SummarisedEpisode {
    pub episode: EpisodeId,
    /// A summary generated because the episode had none (or only an
    /// extractive one); it is stored only if the episode still has none,
    /// or an extractive one that a model's summary replaces.
    pub generated: Option<EpisodeSummary>,
    /// Who wrote `generated`.
    pub source: SummarySource,
    /// The vector of the episode's summary.
    pub vector: Vec<f32>,
    /// Keep the job for another attempt (or parked): the summary stored
    /// is a stand-in until the model can write one.
    pub retry: Option<Followup>,
    /// Facts learned from the episode, stored with their vectors (and
    /// the known facts they replace updated) in the job's transaction.
    pub facts: Vec<crate::fact::NewFact>,
}

/// What a worker made of a job.
#[derive(Clone, Debug)]
pub enum JobOutcome {
    MessageEmbedded {
        message: MessageId,
        vector: Vec<f32>,
    },
    EpisodeSummarised(SummarisedEpisode),
    FactEmbedded {
        fact: crate::FactId,
        vector: Vec<f32>,
    },
    FactsLearned(LearnedFacts),
    /// Nothing to embed (too short, or no summary to make).
    Skipped,
}

impl JobOutcome {
    /// What becomes of the job in the queue besides being done: asked
    /// again later, or parked until the configuration changes. `None`: the
    /// job leaves the queue.
    pub fn followup(&self) -> Option<&Followup> {
        match self {
            Self::EpisodeSummarised(summarised) => summarised.retry.as_ref(),
            _ => None,
        }
    }
}

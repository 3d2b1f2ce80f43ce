//! Recall: what an agent remembers of a user, by meaning and by words, in
//! three stages, each a module with the stage's data between them:
//!
//! 1. [`retrieve`]: the query is embedded and searched in the agent's
//!    memory vectors (messages, episode summaries, facts) while the
//!    full-text indexes (messages, facts) are searched for its topic words;
//!    each retriever's hits become a scored list, with what it said of each
//!    memory ([`retrieve::Retrieved`]).
//! 2. [`rank`]: the lists are fused, each candidate ranked in its context
//!    (its neighbouring turns and its episode, see
//!    [`octopus_core::recall_ranking`]), optionally weighted by recency, the
//!    named speaker's and dates' turns and the facts that held at the time
//!    asked about put first, and cut to the hits asked for
//!    ([`rank::Ranked`]).
//! 3. [`read`]: the winners' text is read from SQL, one call each for
//!    their messages' windows, their facts and their episodes.
//!
//! Asked to (`explain`), the stages note why each hit is where it is
//! ([`explain`]): the searches that found it, the fusion, each reordering.
//!
//! The retrieval methods that lost under cross-validation (searching each
//! name on its own, feedback from the best hits, a model's sub-questions,
//! summaries as keys to their episodes) stay, off, in [`experiments`],
//! for the quality benchmarks to measure again.

mod experiments;
mod explain;
mod rank;
mod read;
mod repeats;
mod retrieve;

use octopus_core::recall::{RecallHit, RecallQuery};
use octopus_core::{AgentId, EpisodeId, TenantId};

use super::QueryVector;
use crate::error::Result;
use crate::octopus::Octopus;

impl Octopus {
    /// The memories of `query.user_id` with this agent most relevant to
    /// `query.query`, best first.
    pub async fn recall(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &RecallQuery,
    ) -> Result<Vec<RecallHit>> {
        self.recall_with(
            tenant,
            agent,
            query,
            &QueryVector::new(tenant, &query.query),
            None,
        )
        .await
    }

    /// [`Self::recall`], with the query's vector shared with the caller's
    /// other searches, and leaving out one episode (the current one, whose
    /// turns are in the history).
    pub(crate) async fn recall_with(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &RecallQuery,
        vector: &QueryVector,
        skip_episode: Option<EpisodeId>,
    ) -> Result<Vec<RecallHit>> {
        query.validate()?;
        let agent = self.cached_agent(tenant, agent).await?;
        let retrieved = self
            .retrieve(tenant, &agent, query, vector, skip_episode)
            .await?;
        let ranked = self.rank(tenant, query, retrieved).await?;
        self.read(tenant, query, ranked).await
    }
}

//! The memory worker: takes queued work from the store (message embeddings,
//! episode summaries, facts learned during sessions) and does it off the
//! request path. The queue lives in the database, so work queued before a
//! crash or restart is done after it, by this process or any other on the
//! same data.

use std::time::Duration;

use octopus_core::agent::Agent;
use octopus_core::chat::{ChatError, Fault};
use octopus_core::embedded_text::{embedded_text, worth_embedding};
use octopus_core::embedding::EmbedError;
use octopus_core::episode::{EpisodeSummary, EpisodeWithMessages, SummarySource};
use octopus_core::memory_jobs::{
    Followup, JobOutcome, MemoryJob, MemoryWork, SummarisedEpisode, Unpark,
};
use octopus_core::message::Role;
use octopus_core::summary::{MIN_SUMMARISED_MESSAGES, SUMMARY_TOKENS};
use octopus_core::summary::{Turn, extractive_summary};
use octopus_core::{TenantId, now};

use crate::embedding_stats::EmbeddingPurpose;
use crate::error::Result;
use crate::octopus::Octopus;

/// Jobs claimed, and texts embedded, at once. A live job that arrives while a
/// batch of bulk work is being embedded waits for that batch: at 16 short
/// turns the wait stays a few hundred milliseconds with the local model on
/// two cores (at 32 it was over a second), and batching still pays.
const BATCH: u32 = 16;
/// How often an idle worker looks for work queued by another process.
const POLL: Duration = Duration::from_secs(2);
/// How often vector copies are compared with their rows.
const CATCH_UP: Duration = Duration::from_secs(2);
/// Longest wait before retrying failed work.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Attempts at a model's summary before the extractive one is kept for good.
const MAX_MODEL_SUMMARY_ATTEMPTS: u32 = 12;
/// Longest wait between attempts at a model's summary.
const MAX_MODEL_SUMMARY_BACKOFF: Duration = Duration::from_secs(3600);

/// What one job asks the embedder for.
enum Plan {
    Skip,
    Message(String),
    /// A stored fact's text, to embed.
    Fact(String),
    Summary {
        text: String,
        generated: Option<EpisodeSummary>,
        source: SummarySource,
        /// Ask the model again later, or park the job.
        retry: Option<Followup>,
        /// Facts learned from a model's summary, with their vectors.
        facts: Vec<octopus_core::fact::NewFact>,
    },
    /// A summary the agent's model is to write: asked for all of a batch's
    /// episodes at once, before embedding.
    ByModel(Box<(Agent, EpisodeWithMessages)>),
    /// Facts the agent's model is to learn from the messages of an open
    /// episode not learned from yet, asked with the batch's summaries.
    LearnByModel(Box<(Agent, EpisodeWithMessages)>),
    /// Facts learned, with their vectors.
    Learned(octopus_core::memory_jobs::LearnedFacts),
    /// No model could learn them now: asked again after a backoff, or left
    /// to the episode's close after [`MAX_MODEL_SUMMARY_ATTEMPTS`].
    LearnLater(ChatError),
}

impl Octopus {
    /// Does queued memory work until none is due; returns how many jobs were
    /// done. Work that failed and waits for a retry is not waited for.
    pub async fn run_memory_jobs(&self) -> Result<usize> {
        let mut done = 0;
        loop {
            let batch = self.run_memory_batch().await?;
            if batch == 0 {
                return Ok(done);
            }
            done += batch;
        }
    }

    /// Starts the background worker; it runs until the runtime shuts down.
    /// It first releases the jobs parked under another configuration than
    /// this server's (its keys or `[llm]` changed): they may succeed now.
    pub fn start_memory_worker(&self) -> tokio::task::JoinHandle<()> {
        self.start_vector_catch_up();
        let octopus = self.clone();
        tokio::spawn(async move {
            octopus.unpark_for_this_configuration().await;
            // Woken by other servers' work too, not only by this one's.
            let signal = std::sync::Arc::clone(&octopus.work_signal);
            let wake: std::sync::Arc<dyn Fn() + Send + Sync> =
                std::sync::Arc::new(move || signal.poke());
            if let Err(error) = octopus.store.watch_new_memory_jobs(wake).await {
                tracing::warn!(%error, "cannot listen for other servers' memory work; polling only");
            }
            let mut since_release = 0;
            let mut released_at = std::time::Instant::now();
            loop {
                match octopus.run_memory_batch().await {
                    Ok(0) => {
                        if since_release >= crate::free_memory::BURST {
                            octopus.release_spare_memory().await;
                            (since_release, released_at) = (0, std::time::Instant::now());
                        }
                    }
                    Ok(done) => {
                        tracing::debug!(jobs = done, "memory work done");
                        octopus.work_signal.poke_webhooks();
                        since_release += done;
                        // A backlog that never empties (steady load above
                        // what the model embeds) releases now and then too.
                        if released_at.elapsed() >= crate::free_memory::STEADY {
                            octopus.release_spare_memory().await;
                            (since_release, released_at) = (0, std::time::Instant::now());
                        }
                        continue;
                    }
                    Err(error) => tracing::warn!(%error, "memory worker failed; retrying"),
                }
                let _ = tokio::time::timeout(POLL, octopus.work_signal.memory_work()).await;
            }
        })
    }

    /// Empties the store's caches and the embedder's working space, and
    /// hands freed heap back to the system.
    async fn release_spare_memory(&self) {
        if let Err(error) = self.store.release_spare_memory().await {
            tracing::warn!(%error, "releasing the store's caches failed");
        }
        if let Some(embedder) = self.embedding.loaded.get() {
            embedder.release_spare_memory();
        }
        crate::free_memory::release();
    }

    /// Every [`CATCH_UP`], brings the vector copies left behind their rows up
    /// to date: sets a remote index missed while unreachable, and copies a
    /// lost follow left behind (`MemoryStore::catch_up_vectors`). A task of
    /// its own, so that a long queue of jobs does not hold it up.
    fn start_vector_catch_up(&self) {
        let octopus = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(CATCH_UP).await;
                match octopus.store.catch_up_vectors(now()).await {
                    Ok(0) => {}
                    Ok(sets) => tracing::info!(sets, "vector copies caught up with their rows"),
                    Err(error) => tracing::debug!(%error, "vector copies still behind"),
                }
            }
        });
    }

    /// Releases the jobs parked under another configuration than this
    /// server's.
    pub async fn unpark_for_this_configuration(&self) {
        let which = Unpark::NotUnder(self.chat.configuration().to_owned());
        match self.store.unpark_memory_jobs(&which, now()).await {
            Ok(0) => {}
            Ok(released) => {
                tracing::info!(
                    released,
                    "parked memory jobs released: the configuration changed"
                );
                self.work_signal.poke();
            }
            Err(error) => tracing::warn!(%error, "releasing parked memory jobs failed"),
        }
    }

    /// Refuses a request that would queue `incoming` jobs past the tenant's
    /// quota ([`crate::quotas`]).
    pub(crate) async fn check_memory_quota(&self, tenant: TenantId, incoming: u64) -> Result<()> {
        let queued = match self.quotas.recent_queue(tenant) {
            Some(queued) => queued,
            None => {
                let queued = self.store.tenant_memory_jobs(tenant).await?;
                self.quotas.counted_queue(tenant, queued);
                queued
            }
        };
        self.quotas
            .check_memory_jobs(tenant, queued, incoming, self.embedding_stats.memory_rate())
    }

    /// Jobs queued and not yet done.
    pub async fn pending_memory_jobs(&self) -> Result<u64> {
        Ok(self.store.pending_memory_jobs().await?)
    }

    /// Claims and does one batch; returns how many jobs it claimed.
    async fn run_memory_batch(&self) -> Result<usize> {
        let jobs = self
            .store
            .claim_memory_jobs(BATCH, now(), self.job_lease)
            .await?;
        if jobs.is_empty() {
            return Ok(0);
        }
        self.job_stats.record_claimed(jobs.len());
        let mut plans = Vec::with_capacity(jobs.len());
        let mut redacts = Vec::with_capacity(jobs.len());
        for job in &jobs {
            let (plan, redact) = self.plan(job).await?;
            plans.push(plan);
            redacts.push(redact);
        }
        let mut plans = self.summarise_by_model(&jobs, plans).await;
        // A summary leaves for the embedder redacted when its agent says so.
        for (plan, redact) in plans.iter_mut().zip(redacts) {
            if let Plan::Summary { text, .. } = plan
                && redact
            {
                *text = octopus_core::pii::egress(text).into_owned();
            }
        }
        let texts: Vec<String> = plans
            .iter()
            .filter_map(|plan| match plan {
                Plan::Skip
                | Plan::ByModel(_)
                | Plan::LearnByModel(_)
                | Plan::Learned(_)
                | Plan::LearnLater(_) => None,
                Plan::Message(text) | Plan::Fact(text) | Plan::Summary { text, .. } => {
                    Some(text.clone())
                }
            })
            .collect();
        let embedded = match texts.is_empty() {
            true => Ok((String::new(), Vec::new())),
            false => self.embed_in_background(&texts).await,
        };
        let (model, vectors) = match embedded {
            Ok(embedded) => embedded,
            Err(error) => {
                for job in &jobs {
                    self.retry_later(job, &error).await?;
                }
                return Ok(jobs.len());
            }
        };
        let mut vectors = vectors.into_iter();
        for (job, plan) in jobs.iter().zip(plans) {
            // A closed episode summarised for good may teach its agent a procedure.
            let learn = matches!(
                (&plan, &job.work),
                (Plan::Summary { retry: None, .. }, MemoryWork::SummariseEpisode(e))
                    if e.messages.iter().any(|m| !m.tool_calls.is_empty())
            );
            let outcome = match (plan, &job.work) {
                (Plan::Skip, _) => JobOutcome::Skipped,
                (Plan::Learned(learned), MemoryWork::LearnFacts(_)) => {
                    JobOutcome::FactsLearned(learned)
                }
                (Plan::LearnLater(error), MemoryWork::LearnFacts(_)) => {
                    if error.fault != Fault::Configuration
                        && job.attempts + 1 < MAX_MODEL_SUMMARY_ATTEMPTS
                    {
                        let wait = self.model_backoff(job.attempts);
                        tracing::warn!(job = job.id, retry_in_secs = wait.as_secs(), %error,
                            "facts not learned yet; asking again later");
                        self.store
                            .retry_memory_job(job, &error.to_string(), after(wait))
                            .await?;
                        continue;
                    }
                    tracing::info!(job = job.id, %error, "facts not learned now; the close learns them");
                    JobOutcome::Skipped
                }
                // `embed_counted` returned one vector per text, so each
                // planned job has its own.
                (Plan::Message(_), MemoryWork::EmbedMessage(message)) => match vectors.next() {
                    Some(vector) => JobOutcome::MessageEmbedded {
                        message: message.id,
                        vector,
                    },
                    None => JobOutcome::Skipped,
                },
                (Plan::Fact(_), MemoryWork::EmbedFact(fact)) => match vectors.next() {
                    Some(vector) => JobOutcome::FactEmbedded {
                        fact: fact.id,
                        vector,
                    },
                    None => JobOutcome::Skipped,
                },
                (
                    Plan::Summary {
                        generated,
                        source,
                        retry,
                        facts,
                        ..
                    },
                    MemoryWork::SummariseEpisode(episode),
                ) => match vectors.next() {
                    Some(vector) => JobOutcome::EpisodeSummarised(SummarisedEpisode {
                        episode: episode.episode.id,
                        generated,
                        source,
                        vector,
                        retry,
                        facts,
                    }),
                    None => JobOutcome::Skipped,
                },
                _ => unreachable!("a plan is made from its own job"),
            };
            let stored = match self
                .store
                .complete_memory_job(job, outcome, &model, now())
                .await
            {
                Ok(stored) => stored,
                Err(error) => {
                    tracing::warn!(%error, job = job.id, "memory job not stored; retrying later");
                    self.store
                        .retry_memory_job(job, &error.to_string(), after(backoff(job.attempts)))
                        .await?;
                    continue;
                }
            };
            self.job_stats.record(stored);
            if stored
                && let MemoryWork::EmbedMessage(message) = &job.work
                && let Err(error) = self
                    .note_standing_requests(job.tenant_id, job.agent_id, message)
                    .await
            {
                tracing::warn!(%error, job = job.id, "standing requests in a message not filed");
            }
            // What is known of the user changed: the paragraph about them
            // is written again (when their agent asks for one).
            if stored
                && let MemoryWork::SummariseEpisode(episode) | MemoryWork::LearnFacts(episode) =
                    &job.work
            {
                self.write_profile_summary_in_background(
                    job.tenant_id,
                    episode.episode.agent_id,
                    &episode.episode.user_id,
                );
            }
            if stored
                && learn
                && let MemoryWork::SummariseEpisode(episode) = &job.work
            {
                self.learn_procedure_in_background(
                    job.tenant_id,
                    episode.episode.agent_id,
                    episode.episode.id,
                );
            }
        }
        Ok(jobs.len())
    }

    /// What a job asks of the embedder, by its agent's memory settings. An
    /// agent gone since the job was queued gets nothing embedded.
    /// Also says whether the agent wants what leaves redacted.
    async fn plan(&self, job: &MemoryJob) -> Result<(Plan, bool)> {
        let agent = match self.cached_agent(job.tenant_id, job.agent_id).await {
            Ok(agent) => agent,
            Err(crate::error::Error::Domain(octopus_core::Error::NotFound { .. })) => {
                return Ok((Plan::Skip, false));
            }
            Err(other) => return Err(other),
        };
        let memory = &agent.memory;
        let plan = match &job.work {
            MemoryWork::EmbedMessage(message) => {
                let wanted = memory.embed_messages
                    && worth_embedding(message.role, message.content.as_ref())
                    && message.token_count >= memory.min_embedding_tokens;
                match wanted {
                    true => Plan::Message(embedded_text(message, memory.pii.redacts_outgoing())),
                    false => Plan::Skip,
                }
            }
            MemoryWork::LearnFacts(episode) => match super::learning::unlearned(episode) {
                Some(window) if self.summaries.ask_models => {
                    Plan::LearnByModel(Box::new((agent.clone(), window)))
                }
                _ => Plan::Skip,
            },
            MemoryWork::EmbedFact(fact) => match memory.pii.redacts_outgoing() {
                true => Plan::Fact(octopus_core::pii::egress(&fact.text).into_owned()),
                false => Plan::Fact(fact.text.clone()),
            },
            MemoryWork::SummariseEpisode(episode) => {
                let current = &episode.episode;
                let replaceable = current.summary.is_none()
                    || current.summary_source == Some(SummarySource::Extractive);
                let wanted =
                    memory.summarize_on_close && current.message_count > MIN_SUMMARISED_MESSAGES;
                match (&current.summary, replaceable && wanted) {
                    (_, true) if self.summaries.ask_models => {
                        Plan::ByModel(Box::new((agent.clone(), episode.clone())))
                    }
                    (None, true) => match self.summarise(episode) {
                        Some(generated) => Plan::Summary {
                            text: generated.summary.clone(),
                            generated: Some(generated),
                            source: SummarySource::Extractive,
                            retry: None,
                            facts: Vec::new(),
                        },
                        None => Plan::Skip,
                    },
                    (Some(summary), _) => Plan::Summary {
                        text: summary.clone(),
                        generated: None,
                        source: current.summary_source.unwrap_or(SummarySource::Caller),
                        retry: None,
                        facts: Vec::new(),
                    },
                    (None, false) => Plan::Skip,
                }
            }
        };
        Ok((plan, memory.pii.redacts_outgoing()))
    }

    /// Asks the agents' models for the summaries the batch needs, all at once.
    /// A summary no model could write is extractive for now, asked for again
    /// later (up to [`MAX_MODEL_SUMMARY_ATTEMPTS`] times).
    async fn summarise_by_model(&self, jobs: &[MemoryJob], plans: Vec<Plan>) -> Vec<Plan> {
        let mut asked = tokio::task::JoinSet::new();
        let mut learning = tokio::task::JoinSet::new();
        for (index, plan) in plans.iter().enumerate() {
            if let Plan::LearnByModel(work) = plan {
                let (octopus, work) = (self.clone(), work.clone());
                learning.spawn(async move {
                    let (agent, window) = *work;
                    (index, octopus.learn_from_window(&agent, &window).await)
                });
            }
            if let Plan::ByModel(work) = plan {
                let (octopus, work) = (self.clone(), work.clone());
                asked.spawn(async move {
                    let (agent, episode) = *work;
                    let answer = match octopus.summarise_with_model(&agent, &episode).await {
                        Ok(answer) => answer,
                        Err(error) => return (index, Err(error)),
                    };
                    // Its key facts become the user's facts.
                    let summary = answer.summary;
                    let learned = octopus
                        .learn_facts(&agent, &episode, &summary.key_facts, &answer.categories)
                        .await;
                    (index, learned.map(|facts| (summary, facts)))
                });
            }
        }
        let mut answers = std::collections::HashMap::new();
        while let Some(joined) = asked.join_next().await {
            if let Ok((index, answer)) = joined {
                answers.insert(index, answer);
            }
        }
        let mut learned = std::collections::HashMap::new();
        while let Some(joined) = learning.join_next().await {
            if let Ok((index, answer)) = joined {
                learned.insert(index, answer);
            }
        }
        plans
            .into_iter()
            .enumerate()
            .map(|(index, plan)| {
                if let Plan::LearnByModel(_) = plan {
                    return match learned.remove(&index) {
                        Some(Ok(facts)) => Plan::Learned(facts),
                        Some(Err(error)) => Plan::LearnLater(error),
                        None => Plan::LearnLater(ChatError::new(
                            "worker",
                            Fault::Provider,
                            "the learning task failed",
                        )),
                    };
                }
                let Plan::ByModel(work) = plan else {
                    return plan;
                };
                let (_, episode) = *work;
                match answers.remove(&index) {
                    Some(Ok((summary, facts))) => Plan::Summary {
                        text: summary.summary.clone(),
                        generated: Some(summary),
                        source: SummarySource::Llm,
                        retry: None,
                        facts,
                    },
                    failed => {
                        let (reason, fault) = match failed {
                            Some(Err(error)) => (error.to_string(), Some(error.fault)),
                            _ => ("the summary task failed".to_owned(), None),
                        };
                        self.stand_in_summary(&jobs[index], &episode, reason, fault)
                    }
                }
            })
            .collect()
    }

    /// The extractive summary (the one stored, or a new one), and what then:
    /// a configuration fault (no key, no such model) parks the job until the
    /// agent's settings or the server's change, since asking again would
    /// fail again; anything else is asked again after a backoff.
    fn stand_in_summary(
        &self,
        job: &MemoryJob,
        episode: &EpisodeWithMessages,
        reason: String,
        fault: Option<Fault>,
    ) -> Plan {
        let retry = if fault == Some(Fault::Configuration) {
            tracing::info!(job = job.id, episode = %episode.episode.id, %reason,
                "no model can summarise as configured; an extractive summary stands in, the job parked");
            Some(Followup::Park {
                reason,
                configuration: self.chat.configuration().to_owned(),
            })
        } else {
            (job.attempts + 1 < MAX_MODEL_SUMMARY_ATTEMPTS).then(|| {
                let wait = self.model_backoff(job.attempts);
                tracing::warn!(job = job.id, episode = %episode.episode.id, retry_in_secs = wait.as_secs(), %reason,
                    "no model summary yet; an extractive one stands in");
                Followup::RetryAt(after(wait), reason)
            })
        };
        let stored = episode
            .episode
            .summary
            .clone()
            .filter(|_| episode.episode.summary_source == Some(SummarySource::Extractive));
        match stored {
            Some(text) => Plan::Summary {
                text,
                generated: None,
                source: SummarySource::Extractive,
                retry,
                facts: Vec::new(),
            },
            None => match self.summarise(episode) {
                Some(generated) => Plan::Summary {
                    text: generated.summary.clone(),
                    generated: Some(generated),
                    source: SummarySource::Extractive,
                    retry,
                    facts: Vec::new(),
                },
                None => Plan::Skip,
            },
        }
    }

    /// The wait before asking a model again for a summary or facts it could
    /// not write: doubling from the configured base.
    fn model_backoff(&self, attempts: u32) -> Duration {
        self.summaries
            .retry_base
            .saturating_mul(1u32 << attempts.min(16))
            .min(MAX_MODEL_SUMMARY_BACKOFF)
    }

    /// An extractive summary of an episode long enough to have one.
    fn summarise(&self, episode: &EpisodeWithMessages) -> Option<EpisodeSummary> {
        if episode.episode.message_count <= MIN_SUMMARISED_MESSAGES {
            return None;
        }
        let texts: Vec<(Role, String)> = episode
            .messages
            .iter()
            .map(|m| {
                (
                    m.role,
                    m.content.as_ref().map(|c| c.text()).unwrap_or_default(),
                )
            })
            .collect();
        let turns: Vec<Turn<'_>> = texts
            .iter()
            .map(|(role, text)| Turn { role: *role, text })
            .collect();
        let summary = extractive_summary(&turns, SUMMARY_TOKENS, self.tokens.as_ref());
        (!summary.trim().is_empty()).then(|| EpisodeSummary {
            summary,
            key_facts: Vec::new(),
            embedding: None,
        })
    }

    /// Embeds for background work: one batch at a time with ingestion, so the
    /// queries of live conversations keep a core.
    pub(crate) async fn embed_in_background(
        &self,
        texts: &[String],
    ) -> std::result::Result<(String, Vec<Vec<f32>>), EmbedError> {
        let embedder = self
            .embedder()
            .await
            .map_err(|e| EmbedError::Model(e.to_string()))?;
        let _permit = self
            .embedding
            .ingest_permits
            .acquire()
            .await
            .map_err(|_| EmbedError::Model("the embedder is shutting down".into()))?;
        let vectors = self
            .embed_counted(EmbeddingPurpose::Memory, embedder.as_ref(), texts)
            .await?;
        Ok((embedder.model().to_owned(), vectors))
    }

    async fn retry_later(&self, job: &MemoryJob, error: &EmbedError) -> Result<()> {
        let wait = match error {
            EmbedError::Provider {
                retry_after: Some(after),
                ..
            } => (*after).min(MAX_BACKOFF),
            _ => backoff(job.attempts),
        };
        tracing::warn!(%error, job = job.id, retry_in_secs = wait.as_secs(), "memory job failed");
        Ok(self
            .store
            .retry_memory_job(job, &error.to_string(), after(wait))
            .await?)
    }
}

/// 1 s, 2 s, 4 s… up to [`MAX_BACKOFF`].
fn backoff(attempts: u32) -> Duration {
    Duration::from_secs(1u64 << attempts.min(16)).min(MAX_BACKOFF)
}

fn after(wait: Duration) -> octopus_core::Timestamp {
    now() + chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::MAX)
}

//! Episodic memory for recall on SQLite: the job queue (`memory_jobs`) and the
//! memory vectors of messages, summaries and facts (`memory_vectors`), one vector set
//! per agent and tenant, followed by the vector index as
//! [`vector_sets`](crate::vector_sets) describes.

use octopus_core::DomainCode;
use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::episode::EpisodeWithMessages;
use octopus_core::knowledge::check_dimension;
use octopus_core::memory_jobs::{
    Followup, JobOutcome, LearnedFacts, MemoryJob, MemoryQueue, MemoryWork, SummarisedEpisode,
    Unpark,
};
use octopus_core::memory_vectors::{MemoryVectorFields, MemoryVectorHit, MemoryVectorQuery};
use octopus_core::message::Message;
use octopus_core::recall::MemoryKind;
use octopus_core::store::MemoryStore;
use octopus_core::vectors::{Point, SetState, VectorChange, VectorSet};
use octopus_core::{
    AgentId, EpisodeId, Error as DomainError, FactId, MessageId, Result, TenantId, Timestamp,
};
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use uuid::Uuid;

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::error::{Result as StoreResult, corrupt};
use crate::jobs::{EMBED_FACT, EMBED_MESSAGE, LEARN_FACTS, SUMMARISE_EPISODE};
use crate::messages::{self, columns, message_from_row};
use crate::rows;
use crate::vector_sets::{Committed, VectorTable, record_change};
use crate::vector_sets::{MemoryTable, kind_from_row};

type CollectionKey = (TenantId, AgentId);

/// The agent's memory collection, created for `dimension` and `model` at first
/// use. A collection of other vectors is a `Conflict`: recall compares vectors
/// of one model only.
fn ensure_collection(
    tx: &Transaction<'_>,
    (tenant, agent): CollectionKey,
    dimension: usize,
    model: &str,
    now: i64,
) -> StoreResult<SetState> {
    let existing: Option<(u32, String)> = tx
        .prepare_cached(
            "SELECT dimension, model FROM memory_collections WHERE tenant_id = ?1 AND agent_id = ?2",
        )?
        .query_row([tenant.0.as_bytes(), agent.0.as_bytes()], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    match existing {
        Some((d, m)) if d as usize != dimension || m != model => {
            return Err(DomainError::conflict(
                DomainCode::CollectionMismatch,
                format!(
                    "the agent's memory holds {d}-dimensional vectors of {m}, not {dimension}-dimensional vectors of {model}"
                ),
            )
            .into());
        }
        Some(_) => {}
        None => {
            tx.execute(
                "INSERT INTO memory_collections (tenant_id, agent_id, dimension, model, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    tenant.0.as_bytes(),
                    agent.0.as_bytes(),
                    dimension as i64,
                    model,
                    now
                ],
            )?;
        }
    }
    MemoryTable::state(tx, tenant, agent)?.ok_or_else(|| {
        corrupt(
            "memory collection",
            "missing in the transaction that made it",
        )
    })
}

struct JobRow {
    id: i64,
    tenant: TenantId,
    agent: AgentId,
    kind: String,
    target: Uuid,
    attempts: u32,
}

/// The message of an embedding job, whatever its episode's state; `None` once
/// purged.
fn job_message(conn: &Connection, tenant: TenantId, id: Uuid) -> StoreResult<Option<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM messages m WHERE m.id = ?1 AND m.tenant_id = ?2",
        columns("m")
    ))?;
    Ok(rows::collect(
        &mut stmt,
        [id.as_bytes(), tenant.0.as_bytes()],
        message_from_row,
    )?
    .pop())
}

fn job_episode(
    conn: &Connection,
    tenant: TenantId,
    id: EpisodeId,
) -> StoreResult<Option<EpisodeWithMessages>> {
    let Some(episode) = crate::episodes::get_any_episode(conn, tenant, id)? else {
        return Ok(None);
    };
    let messages = messages::episode_messages(conn, tenant, id)?;
    Ok(Some(EpisodeWithMessages { episode, messages }))
}

/// The episode's user, for a new vector's fields.
fn episode_user(
    conn: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<Option<(String, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT user_id, last_message_at FROM episodes WHERE id = ?1 AND tenant_id = ?2",
        )?
        .query_row([episode.0.as_bytes(), tenant.0.as_bytes()], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?)
}

/// Removes a job; false when it was gone already.
fn delete_job(tx: &Connection, job: i64) -> StoreResult<bool> {
    Ok(tx
        .prepare_cached("DELETE FROM memory_jobs WHERE seq = ?1")?
        .execute([job])?
        > 0)
}

/// Stores a vector in place of any the same memory had (a message's, an
/// episode's summary's, a fact's), as one change. Returns the change and
/// the vector's reference.
fn replace_vector(
    tx: &Connection,
    key: CollectionKey,
    fields: MemoryVectorFields,
    vector: Vec<f32>,
    now: i64,
) -> StoreResult<(VectorChange, Uuid)> {
    let message_id = fields.message_id.map(|m| *m.0.as_bytes());
    let fact_id = fields.fact_id.map(|f| *f.0.as_bytes());
    let removed = rows::collect(
        &mut *tx.prepare_cached(
            "DELETE FROM memory_vectors
             WHERE tenant_id = ?1 AND episode_id = ?2 AND kind = ?3 AND message_id IS ?4 AND fact_id IS ?5
             RETURNING seq",
        )?,
        params![key.0.0.as_bytes(), fields.episode_id.0.as_bytes(), fields.kind.as_str(), message_id, fact_id],
        rows::key,
    )?;
    let id = Uuid::now_v7();
    let seq = tx
        .prepare_cached(
            "INSERT INTO memory_vectors (id, tenant_id, agent_id, user_id, kind, episode_id, message_id, fact_id, at, embedding, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING seq",
        )?
        .query_row(
            params![
                id.as_bytes(),
                key.0.0.as_bytes(),
                key.1.0.as_bytes(),
                fields.user_id,
                fields.kind.as_str(),
                fields.episode_id.0.as_bytes(),
                message_id,
                fact_id,
                micros(fields.at),
                codec::embedding_bytes(&vector),
                now
            ],
            |r| Ok(r.get::<_, i64>(0)? as u64),
        )?;
    let change = VectorChange {
        removed,
        added: vec![Point {
            key: seq,
            vector,
            fields: fields.point_fields(),
        }],
    };
    Ok((change, id))
}

/// Puts a job back in the queue for `not_before`, one attempt more; false
/// when it was gone already.
fn retry_job(conn: &Connection, id: i64, error: &str, not_before: i64) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached(
            "UPDATE memory_jobs SET attempts = attempts + 1, last_error = ?2, due_at = ?3 WHERE seq = ?1",
        )?
        .execute(params![id, error, not_before])?
        > 0)
}

/// Parks a job (due never) under `configuration`; false when it was gone.
fn park_job(
    conn: &Connection,
    id: i64,
    reason: &str,
    configuration: &str,
) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached(
            "UPDATE memory_jobs SET last_error = ?2, parked_under = ?3, due_at = ?4 WHERE seq = ?1",
        )?
        .execute(params![id, reason, configuration, i64::MAX])?
        > 0)
}

/// Stores what a job made and removes the job, in one transaction. A message
/// or episode purged since the job was claimed leaves nothing to store.
/// Returns whether the job was still queued, and the vector change for the
/// index to follow.
fn complete(
    conn: &mut Connection,
    job: &MemoryJobKey,
    outcome: JobOutcome,
    model: &str,
    now: i64,
) -> StoreResult<(bool, Option<Committed>)> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let tenant = job.tenant;
    let queued = match outcome.followup() {
        Some(Followup::RetryAt(not_before, error)) => {
            retry_job(&tx, job.id, error, micros(*not_before))?
        }
        Some(Followup::Park {
            reason,
            configuration,
        }) => park_job(&tx, job.id, reason, configuration)?,
        None => delete_job(&tx, job.id)?,
    };
    if !queued {
        // Done by another worker after this one's lease ran out.
        return Ok((false, None));
    }
    let stored = match outcome {
        JobOutcome::Skipped => None,
        JobOutcome::MessageEmbedded { message, vector } => {
            embed_message(&tx, job, message, vector, model, now)?
        }
        JobOutcome::EpisodeSummarised(summarised) => {
            store_summary(&tx, job, summarised, model, now)?
        }
        JobOutcome::FactEmbedded { fact, vector } => {
            embed_fact(&tx, job, fact, vector, model, now)?
        }
        JobOutcome::FactsLearned(learned) => store_learned(&tx, job, learned, model, now)?,
    };
    let Some((state, change)) = stored else {
        // Its message, episode or fact is gone: nothing to store.
        tx.commit()?;
        return Ok((true, None));
    };
    let set = VectorSet::memory(tenant, job.agent);
    let committed = record_change::<MemoryTable>(&tx, set, state, change)?;
    tx.commit()?;
    Ok((true, Some(committed)))
}

/// The collection's state, and the change to its vectors, of a completed job.
type Stored = Option<(SetState, VectorChange)>;

/// A message's vector, and its embedding reference on the message.
fn embed_message(
    tx: &Transaction<'_>,
    job: &MemoryJobKey,
    message: MessageId,
    vector: Vec<f32>,
    model: &str,
    now: i64,
) -> StoreResult<Stored> {
    let tenant = job.tenant;
    let Some(message) = job_message(tx, tenant, message.0)? else {
        return Ok(None);
    };
    let Some((user_id, _)) = episode_user(tx, tenant, message.episode_id)? else {
        return Ok(None);
    };
    let state = ensure_collection(tx, (tenant, job.agent), vector.len(), model, now)?;
    check_dimension("embedding", &vector, state.dimension)?;
    let fields = MemoryVectorFields::message(&message, user_id);
    let (change, reference) = replace_vector(tx, (tenant, job.agent), fields, vector, now)?;
    tx.prepare_cached("UPDATE messages SET embedding_ref = ?3 WHERE id = ?1 AND tenant_id = ?2")?
        .execute(params![
            message.id.0.as_bytes(),
            tenant.0.as_bytes(),
            reference.to_string()
        ])?;
    Ok(Some((state, change)))
}

/// An episode's summary (when one was generated) and its vector, and the
/// facts learned from it with theirs: each stored, the known fact it
/// replaces closed. An episode's facts are learned once.
fn store_summary(
    tx: &Transaction<'_>,
    job: &MemoryJobKey,
    summarised: SummarisedEpisode,
    model: &str,
    now: i64,
) -> StoreResult<Stored> {
    let (tenant, key) = (job.tenant, (job.tenant, job.agent));
    let episode = summarised.episode;
    let Some((user_id, last_message_at)) = episode_user(tx, tenant, episode)? else {
        return Ok(None);
    };
    let state = ensure_collection(tx, key, summarised.vector.len(), model, now)?;
    check_dimension("embedding", &summarised.vector, state.dimension)?;
    if let Some(generated) = &summarised.generated {
        // A summary the caller set meanwhile wins over ours; a model's
        // replaces the extractive stand-in.
        tx.execute(
            "UPDATE episodes SET summary = ?3, key_facts = ?4, summary_source = ?5
             WHERE id = ?1 AND tenant_id = ?2
               AND (summary IS NULL OR (summary_source = 'extractive' AND ?5 = 'llm'))",
            params![
                episode.0.as_bytes(),
                tenant.0.as_bytes(),
                generated.summary,
                serde_json::to_string(&generated.key_facts).unwrap_or_else(|_| "[]".into()),
                summarised.source.as_str()
            ],
        )?;
    }
    tx.execute(
        "UPDATE episodes SET summary_embedding = ?3 WHERE id = ?1 AND tenant_id = ?2",
        params![
            episode.0.as_bytes(),
            tenant.0.as_bytes(),
            codec::embedding_bytes(&summarised.vector)
        ],
    )?;
    let fields =
        MemoryVectorFields::summary(episode, user_id.clone(), codec::instant(last_message_at)?);
    let (mut change, _) = replace_vector(tx, key, fields, summarised.vector, now)?;
    // A close learns from the messages no learning during the session
    // read; with none left, its key facts are known already.
    let learned_now = tx
        .prepare_cached(
            "UPDATE episodes SET facts_learned_through = message_count
             WHERE id = ?1 AND tenant_id = ?2 AND facts_learned_through < message_count",
        )?
        .execute([episode.0.as_bytes(), tenant.0.as_bytes()])?;
    if learned_now == 0 || summarised.facts.is_empty() {
        return Ok(Some((state, change)));
    }
    let owner = (job.agent, user_id.as_str(), episode);
    let added = insert_learned(tx, tenant, owner, &state, summarised.facts, now)?;
    change.removed.extend(added.removed);
    change.added.extend(added.added);
    Ok(Some((state, change)))
}

/// Facts learned from a window of an open episode's messages, stored if no
/// other job learned from that window meanwhile: `from` is still the
/// episode's `facts_learned_through`. When it is not, the job is tried again
/// (`Conflict`) and learns from where the other left off.
fn store_learned(
    tx: &Transaction<'_>,
    job: &MemoryJobKey,
    learned: LearnedFacts,
    model: &str,
    now: i64,
) -> StoreResult<Stored> {
    let tenant = job.tenant;
    let Some((user_id, _)) = episode_user(tx, tenant, learned.episode)? else {
        return Ok(None);
    };
    let moved = tx
        .prepare_cached(
            "UPDATE episodes SET facts_learned_through = ?4
             WHERE id = ?1 AND tenant_id = ?2 AND facts_learned_through = ?3",
        )?
        .execute(params![
            learned.episode.0.as_bytes(),
            tenant.0.as_bytes(),
            learned.from,
            learned.through
        ])?;
    if moved == 0 {
        return Err(DomainError::conflict(
            DomainCode::ConversationMoved,
            "facts were learned from these messages meanwhile; learning again from there",
        )
        .into());
    }
    let Some(dimension) = learned.facts.first().map(|f| f.vector.len()) else {
        return Ok(None);
    };
    let state = ensure_collection(tx, (tenant, job.agent), dimension, model, now)?;
    let owner = (job.agent, user_id.as_str(), learned.episode);
    let change = insert_learned(tx, tenant, owner, &state, learned.facts, now)?;
    Ok(Some((state, change)))
}

/// Stores facts learned from an episode with their vectors, each closing
/// the known fact it replaces.
fn insert_learned(
    tx: &Transaction<'_>,
    tenant: TenantId,
    (agent, user_id, episode): (AgentId, &str, EpisodeId),
    state: &SetState,
    facts: Vec<octopus_core::fact::NewFact>,
    now: i64,
) -> StoreResult<VectorChange> {
    let mut change = VectorChange::default();
    for new in facts {
        check_dimension("fact embedding", &new.vector, state.dimension)?;
        let fact = new.learned_in(tenant, agent, user_id, episode, codec::instant(now)?);
        if let Some(old) = new.replaces {
            crate::fact_rows::supersede(tx, &fact, old)?;
        }
        crate::fact_rows::insert_fact(tx, &fact, octopus_core::fact::FactAction::Learned, None)?;
        let fields = MemoryVectorFields::fact(&fact);
        let (added, _) = replace_vector(tx, (tenant, agent), fields, new.vector, now)?;
        change.removed.extend(added.removed);
        change.added.extend(added.added);
    }
    Ok(change)
}

/// A stored fact's vector.
fn embed_fact(
    tx: &Transaction<'_>,
    job: &MemoryJobKey,
    fact: FactId,
    vector: Vec<f32>,
    model: &str,
    now: i64,
) -> StoreResult<Stored> {
    let Some(fact) = crate::fact_rows::any_fact(tx, job.tenant, fact)? else {
        return Ok(None);
    };
    let state = ensure_collection(tx, (job.tenant, job.agent), vector.len(), model, now)?;
    check_dimension("embedding", &vector, state.dimension)?;
    let fields = MemoryVectorFields::fact(&fact);
    let (change, _) = replace_vector(tx, (job.tenant, job.agent), fields, vector, now)?;
    Ok(Some((state, change)))
}

/// What completing or retrying a job needs to know of it.
struct MemoryJobKey {
    id: i64,
    tenant: TenantId,
    agent: AgentId,
}

impl From<&MemoryJob> for MemoryJobKey {
    fn from(job: &MemoryJob) -> Self {
        Self {
            id: job.id,
            tenant: job.tenant_id,
            agent: job.agent_id,
        }
    }
}

#[async_trait]
impl MemoryStore for SqliteStore {
    async fn claim_memory_jobs(
        &self,
        limit: u32,
        now: Timestamp,
        lease: std::time::Duration,
    ) -> Result<Vec<MemoryJob>> {
        let now = micros(now);
        let lease_end = now.saturating_add(i64::try_from(lease.as_micros()).unwrap_or(i64::MAX));
        let cursor = self.claim_cursor.get();
        let (jobs, cursor) = self
            .db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let (chosen, cursor) = crate::claims::choose(&tx, now, limit as usize, cursor)?;
                let mut claimed = Vec::with_capacity(chosen.len());
                {
                    let mut lease = tx.prepare_cached(
                        "UPDATE memory_jobs SET due_at = ?2 WHERE seq = ?1
                         RETURNING seq, tenant_id, agent_id, kind, target, attempts",
                    )?;
                    for seq in chosen {
                        claimed.extend(rows::collect(
                            &mut lease,
                            params![seq, lease_end],
                            |row| {
                                Ok(JobRow {
                                    id: row.get("seq")?,
                                    tenant: TenantId(rows::uuid(row, "tenant_id")?),
                                    agent: AgentId(rows::uuid(row, "agent_id")?),
                                    kind: row.get("kind")?,
                                    target: rows::uuid(row, "target")?,
                                    attempts: row.get("attempts")?,
                                })
                            },
                        )?);
                    }
                }
                let mut jobs = Vec::with_capacity(claimed.len());
                for row in claimed {
                    let work = match row.kind.as_str() {
                        EMBED_MESSAGE => {
                            job_message(&tx, row.tenant, row.target)?.map(MemoryWork::EmbedMessage)
                        }
                        SUMMARISE_EPISODE => job_episode(&tx, row.tenant, EpisodeId(row.target))?
                            .map(MemoryWork::SummariseEpisode),
                        EMBED_FACT => {
                            crate::fact_rows::any_fact(&tx, row.tenant, FactId(row.target))?
                                .map(MemoryWork::EmbedFact)
                        }
                        LEARN_FACTS => job_episode(&tx, row.tenant, EpisodeId(row.target))?
                            .map(MemoryWork::LearnFacts),
                        other => return Err(corrupt("memory job kind", other)),
                    };
                    match work {
                        Some(work) => jobs.push(MemoryJob {
                            id: row.id,
                            tenant_id: row.tenant,
                            agent_id: row.agent,
                            attempts: row.attempts,
                            work,
                        }),
                        // Purged since it was queued: nothing left to do.
                        None => {
                            delete_job(&tx, row.id)?;
                        }
                    }
                }
                tx.commit()?;
                Ok((jobs, cursor))
            })
            .await?;
        self.claim_cursor.set(cursor);
        Ok(jobs)
    }

    async fn complete_memory_job(
        &self,
        job: &MemoryJob,
        outcome: JobOutcome,
        model: &str,
        now: Timestamp,
    ) -> Result<bool> {
        let key = MemoryJobKey::from(job);
        let model = model.to_owned();
        let (queued, committed) = self
            .db
            .write(move |conn| complete(conn, &key, outcome, &model, micros(now)))
            .await?;
        self.follow(committed).await?;
        Ok(queued)
    }

    async fn unpark_memory_jobs(&self, which: &Unpark, now: Timestamp) -> Result<u64> {
        let which = which.clone();
        let now = micros(now);
        self.db
            .write(move |conn| {
                let released = match &which {
                    Unpark::Agent(tenant, agent) => conn.execute(
                        "UPDATE memory_jobs SET parked_under = NULL, due_at = ?3, attempts = 0
                         WHERE parked_under IS NOT NULL AND tenant_id = ?1 AND agent_id = ?2",
                        params![tenant.0.as_bytes(), agent.0.as_bytes(), now],
                    )?,
                    Unpark::NotUnder(configuration) => conn.execute(
                        "UPDATE memory_jobs SET parked_under = NULL, due_at = ?2, attempts = 0
                         WHERE parked_under IS NOT NULL AND parked_under <> ?1",
                        params![configuration, now],
                    )?,
                };
                Ok(released as u64)
            })
            .await
    }

    async fn retry_memory_job(
        &self,
        job: &MemoryJob,
        error: &str,
        not_before: Timestamp,
    ) -> Result<()> {
        let (id, error) = (job.id, error.to_owned());
        self.db
            .write(move |conn| Ok(retry_job(conn, id, &error, micros(not_before)).map(drop)?))
            .await
    }

    async fn tenant_memory_jobs(&self, tenant: TenantId) -> Result<u64> {
        self.db
            .read(move |conn| {
                let count: i64 = conn
                    .prepare_cached(
                        "SELECT count(*) FROM memory_jobs WHERE tenant_id = ?1 AND parked_under IS NULL",
                    )?
                    .query_row([tenant.0.as_bytes()], |r| r.get(0))?;
                Ok(count.unsigned_abs())
            })
            .await
    }

    async fn memory_queues(&self) -> Result<Vec<MemoryQueue>> {
        self.db
            .read(|conn| {
                rows::collect(
                    &mut *conn.prepare_cached(
                        "SELECT tenant_id,
                                sum(class = 0 AND parked_under IS NULL) AS live,
                                sum(class = 1 AND parked_under IS NULL) AS bulk,
                                sum(parked_under IS NOT NULL) AS parked,
                                min(CASE WHEN parked_under IS NULL THEN created_at END) AS oldest
                         FROM memory_jobs GROUP BY tenant_id ORDER BY tenant_id",
                    )?,
                    [],
                    |row| {
                        let count = |name: &str| -> StoreResult<u64> {
                            Ok(row.get::<_, i64>(name)?.unsigned_abs())
                        };
                        let oldest: Option<i64> = row.get("oldest")?;
                        Ok(MemoryQueue {
                            tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
                            live: count("live")?,
                            bulk: count("bulk")?,
                            parked: count("parked")?,
                            oldest_queued_at: oldest.map(codec::instant).transpose()?,
                        })
                    },
                )
            })
            .await
    }

    async fn release_spare_memory(&self) -> Result<()> {
        self.db.shrink_caches().await?;
        let indexer = std::sync::Arc::clone(&self.indexer);
        tokio::task::spawn_blocking(move || indexer.shrink_cache())
            .await
            .map_err(crate::error::Error::Task)??;
        self.vectors.release_spare_memory().await;
        Ok(())
    }

    async fn catch_up_vectors(&self, now: Timestamp) -> Result<usize> {
        self.lagging.catch_up(&*self.vectors, self, now).await
    }

    async fn pending_memory_jobs(&self) -> Result<u64> {
        self.db
            .read(|conn| {
                let count: i64 = conn.query_row(
                    "SELECT count(*) FROM memory_jobs WHERE parked_under IS NULL",
                    [],
                    |r| r.get(0),
                )?;
                Ok(count.unsigned_abs())
            })
            .await
    }

    async fn search_memory(
        &self,
        tenant: TenantId,
        query: &MemoryVectorQuery,
    ) -> Result<Vec<MemoryVectorHit>> {
        query.validate()?;
        let (agent, user) = (query.agent_id, query.user_id.clone());
        let found = self
            .db
            .read(move |conn| {
                let Some(state) = MemoryTable::state(conn, tenant, agent)? else {
                    return Ok(None);
                };
                let hidden: Vec<EpisodeId> = rows::collect(
                    &mut *conn.prepare_cached(
                        "SELECT id FROM episodes WHERE tenant_id = ?1 AND agent_id = ?2 AND user_id = ?3
                           AND (deleted_at IS NOT NULL OR archived_at IS NOT NULL)",
                    )?,
                    params![tenant.0.as_bytes(), agent.0.as_bytes(), user],
                    |r| Ok(EpisodeId(rows::uuid(r, "id")?)),
                )?;
                Ok(Some((state, hidden)))
            })
            .await?;
        let Some((state, hidden)) = found else {
            return Ok(Vec::new());
        };
        check_dimension("vector", &query.vector, state.dimension)?;
        let nearest = query.to_nearest(&hidden);
        let scored = self
            .vectors
            .search(VectorSet::memory(tenant, agent), state, &nearest, self)
            .await?;
        self.db
            .read(move |conn| {
                let mut by_key = memory_rows(conn, tenant, scored.iter().map(|s| s.key))?;
                // A vector removed since the index lookup is simply absent.
                scored
                    .iter()
                    .filter_map(|s| by_key.remove(&s.key).map(|row| (s.score, row)))
                    .map(|(score, (kind, episode_id, message_id, fact_id, at))| {
                        Ok(MemoryVectorHit {
                            kind,
                            score,
                            episode_id,
                            message_id,
                            fact_id,
                            at: codec::instant(at)?,
                        })
                    })
                    .collect()
            })
            .await
    }

    async fn message_vectors(
        &self,
        tenant: TenantId,
        messages: &[(EpisodeId, MessageId)],
    ) -> Result<Vec<(MessageId, Vec<f32>)>> {
        // By the episodes' index, then each row checked for its message
        // and tenant.
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        let messages = messages.to_vec();
        self.db
            .read(move |conn| {
                let mut episodes: Vec<EpisodeId> = messages.iter().map(|(e, _)| *e).collect();
                episodes.sort();
                episodes.dedup();
                let wanted: std::collections::HashSet<MessageId> =
                    messages.iter().map(|(_, m)| *m).collect();
                let placeholders = vec!["?"; episodes.len()].join(", ");
                let mut stmt = conn.prepare(&format!(
                    "SELECT message_id, embedding FROM memory_vectors
                     WHERE episode_id IN ({placeholders}) AND kind = 'message' AND +tenant_id = ?"
                ))?;
                let mut values: Vec<rusqlite::types::Value> =
                    episodes.iter().map(|e| rows::blob(&e.0)).collect();
                values.push(rows::blob(&tenant.0));
                let mut found = Vec::new();
                let mut read = stmt.query(rusqlite::params_from_iter(values))?;
                while let Some(row) = read.next()? {
                    let Some(id) = rows::opt_uuid(row, "message_id")?.map(MessageId) else {
                        continue;
                    };
                    if wanted.contains(&id) {
                        let bytes: Vec<u8> = row.get("embedding")?;
                        found.push((id, codec::embedding_from(&bytes)?));
                    }
                }
                Ok(found)
            })
            .await
    }
}

type MemoryRow = (
    MemoryKind,
    EpisodeId,
    Option<MessageId>,
    Option<FactId>,
    i64,
);

/// The memory vectors of `keys`, by key, read in one query.
fn memory_rows(
    conn: &Connection,
    tenant: TenantId,
    keys: impl Iterator<Item = u64>,
) -> StoreResult<HashMap<u64, MemoryRow>> {
    let mut values = vec![rows::blob(&tenant.0)];
    values.extend(keys.map(|k| rusqlite::types::Value::Integer(k as i64)));
    if values.len() == 1 {
        return Ok(HashMap::new());
    }
    let placeholders = vec!["?"; values.len() - 1].join(", ");
    let mut stmt = conn.prepare(&format!(
        // By key, then checked: `+` keeps SQLite off the tenant's whole
        // range of the (tenant, agent) index.
        "SELECT seq, kind, episode_id, message_id, fact_id, at FROM memory_vectors
         WHERE +tenant_id = ? AND seq IN ({placeholders})"
    ))?;
    let found = rows::collect(&mut stmt, rusqlite::params_from_iter(values), |row| {
        let seq: i64 = row.get("seq")?;
        Ok((
            seq as u64,
            (
                kind_from_row(row)?,
                EpisodeId(rows::uuid(row, "episode_id")?),
                rows::opt_uuid(row, "message_id")?.map(MessageId),
                rows::opt_uuid(row, "fact_id")?.map(FactId),
                row.get::<_, i64>("at")?,
            ),
        ))
    })?;
    Ok(found.into_iter().collect())
}

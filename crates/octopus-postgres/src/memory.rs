//! Episodic memory for recall: the queue of embedding and summarising work,
//! shared by every server on the database, and the memory vectors it makes.
//!
//! Claims take rows with `FOR UPDATE SKIP LOCKED` and lease them by moving
//! their `due_at` to the lease's end, so a job is handed to one worker at a
//! time; a worker that dies leaves its jobs to be claimed again when their
//! lease runs out. A job is completed by deleting its row: a second
//! completion (a worker that outlived its lease) finds no row and writes
//! nothing.

use octopus_core::DomainCode;
use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use octopus_core::episode::EpisodeWithMessages;
use octopus_core::knowledge::check_dimension;
use octopus_core::memory_jobs::{
    Followup, JobOutcome, LearnedFacts, MemoryJob, MemoryQueue, MemoryWork, SummarisedEpisode,
    Unpark,
};
use octopus_core::memory_vectors::{MemoryVectorFields, MemoryVectorHit, MemoryVectorQuery};
use octopus_core::store::MemoryStore;
use octopus_core::vectors::{Point, VectorChange, VectorSet};
use octopus_core::{
    AgentId, EpisodeId, Error as DomainError, FactId, MessageId, Result, TenantId, Timestamp,
};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::Postgres;
use uuid::Uuid;

use crate::error::{Result as StoreResult, corrupt};
use crate::jobs::{EMBED_FACT, EMBED_MESSAGE, LEARN_FACTS, SUMMARISE_EPISODE};
use crate::messages::{self, COLUMNS as MESSAGE_COLUMNS, message_from_row};
use crate::rows::{Tx, int, u32_at, u64_at};
use crate::vector_sets::{MemoryTable, key_of, kind_at, owned_by, record_change};
use crate::vectors::{PgVector, embedding_bytes};
use crate::{PostgresStore, domain};

/// The memory collection's state, creating the collection at first use, its
/// row locked until the transaction ends; `Conflict` when it holds vectors of
/// another dimension or model.
async fn ensure_collection(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    agent: AgentId,
    dimension: usize,
    model: &str,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    query(
        "INSERT INTO memory_collections (tenant_id, agent_id, dimension, model, created_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, agent_id) DO NOTHING",
    )
    .bind(tenant.0)
    .bind(agent.0)
    .bind(int(dimension))
    .bind(model)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    let row = query(
        "SELECT dimension, model, version FROM memory_collections
         WHERE tenant_id = $1 AND agent_id = $2 FOR UPDATE",
    )
    .bind(tenant.0)
    .bind(agent.0)
    .fetch_one(&mut **tx)
    .await?;
    let (d, m): (u32, String) = (u32_at(&row, "dimension")?, row.try_get("model")?);
    if d as usize != dimension || m != model {
        return Err(DomainError::conflict(
            DomainCode::CollectionMismatch,
            format!(
                "the agent's memory holds {d}-dimensional vectors of {m}, not {dimension}-dimensional vectors of {model}"
            ),
        )
        .into());
    }
    Ok(())
}

async fn job_message<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: Uuid,
) -> StoreResult<Option<octopus_core::message::Message>> {
    query(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.id = $1 AND m.tenant_id = $2"
    ))
    .bind(id)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .as_ref()
    .map(message_from_row)
    .transpose()
}

async fn job_episode(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    id: EpisodeId,
) -> StoreResult<Option<EpisodeWithMessages>> {
    let Some(episode) = crate::episodes::get_any_episode(&mut **tx, tenant, id, false).await?
    else {
        return Ok(None);
    };
    let messages = messages::episode_messages(&mut **tx, tenant, id).await?;
    Ok(Some(EpisodeWithMessages { episode, messages }))
}

/// Puts a job back for later; false when it was gone already.
async fn retry_job(
    conn: impl Executor<'_, Database = Postgres>,
    id: i64,
    error: &str,
    not_before: DateTime<Utc>,
) -> StoreResult<bool> {
    let updated = query(
        "UPDATE memory_jobs SET attempts = attempts + 1, last_error = $2, due_at = $3 WHERE seq = $1",
    )
    .bind(id)
    .bind(error)
    .bind(not_before)
    .execute(conn)
    .await?;
    Ok(updated.rows_affected() > 0)
}

/// The channel a trigger notifies when memory work is queued
/// (`migrations/0005_job_notifications.sql`).
const JOBS_CHANNEL: &str = "octopus_memory_jobs";

/// Parks a job (due never) under `configuration`; false when it was gone.
async fn park_job(
    conn: impl Executor<'_, Database = Postgres>,
    id: i64,
    reason: &str,
    configuration: &str,
) -> StoreResult<bool> {
    let updated = query(
        "UPDATE memory_jobs SET last_error = $2, parked_under = $3, due_at = 'infinity' WHERE seq = $1",
    )
    .bind(id)
    .bind(reason)
    .bind(configuration)
    .execute(conn)
    .await?;
    Ok(updated.rows_affected() > 0)
}

/// Removes a job; false when it was gone already.
async fn delete_job(conn: impl Executor<'_, Database = Postgres>, id: i64) -> StoreResult<bool> {
    let deleted = query("DELETE FROM memory_jobs WHERE seq = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(deleted.rows_affected() > 0)
}

impl PostgresStore {
    async fn complete(
        &self,
        job: &MemoryJob,
        outcome: JobOutcome,
        model: &str,
        now: Timestamp,
    ) -> StoreResult<bool> {
        let (tenant, agent) = (job.tenant_id, job.agent_id);
        let mut tx = self.pool.begin().await?;
        let still_queued = match outcome.followup() {
            Some(Followup::RetryAt(not_before, error)) => {
                retry_job(&mut *tx, job.id, error, *not_before).await?
            }
            Some(Followup::Park {
                reason,
                configuration,
            }) => park_job(&mut *tx, job.id, reason, configuration).await?,
            None => delete_job(&mut *tx, job.id).await?,
        };
        if !still_queued {
            // Done by another worker after this one's lease ran out.
            return Ok(false);
        }
        let key = (tenant, agent);
        let change = match outcome {
            JobOutcome::Skipped => None,
            JobOutcome::MessageEmbedded { message, vector } => {
                embed_message(&mut tx, key, message, vector, model, now).await?
            }
            JobOutcome::EpisodeSummarised(summarised) => {
                store_summary(&mut tx, key, summarised, model, now).await?
            }
            JobOutcome::FactEmbedded { fact, vector } => {
                embed_fact(&mut tx, key, fact, vector, model, now).await?
            }
            JobOutcome::FactsLearned(learned) => {
                store_learned(&mut tx, key, learned, model, now).await?
            }
        };
        let Some(change) = change else {
            // Its message, episode or fact is gone: nothing to store.
            tx.commit().await?;
            return Ok(true);
        };
        let set = VectorSet::memory(tenant, agent);
        let committed = record_change::<MemoryTable>(&mut tx, set, change).await?;
        tx.commit().await?;
        self.follow(committed).await?;
        Ok(true)
    }
}

/// Stores a vector in place of any the same memory had (a message's, an
/// episode's summary's, a fact's), as one change. Returns the change and
/// the vector's reference.
async fn replace_vector(
    tx: &mut Tx<'_>,
    (tenant, agent): (TenantId, AgentId),
    fields: MemoryVectorFields,
    vector: Vec<f32>,
    now: DateTime<Utc>,
) -> StoreResult<(VectorChange, Uuid)> {
    let message_id = fields.message_id.map(|m| m.0);
    let fact_id = fields.fact_id.map(|f| f.0);
    let removed = query(
        "DELETE FROM memory_vectors
         WHERE tenant_id = $1 AND episode_id = $2 AND kind = $3
           AND message_id IS NOT DISTINCT FROM $4 AND fact_id IS NOT DISTINCT FROM $5
         RETURNING seq",
    )
    .bind(tenant.0)
    .bind(fields.episode_id.0)
    .bind(fields.kind.as_str())
    .bind(message_id)
    .bind(fact_id)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(key_of)
    .collect::<StoreResult<Vec<u64>>>()?;
    let reference = Uuid::now_v7();
    let dimension = u32::try_from(vector.len()).unwrap_or(u32::MAX);
    let inserted = query(
        "INSERT INTO memory_vectors (id, tenant_id, agent_id, user_id, kind, episode_id, message_id, fact_id, at,
                                     dimension, embedding, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING seq",
    )
    .bind(reference)
    .bind(tenant.0)
    .bind(agent.0)
    .bind(&fields.user_id)
    .bind(fields.kind.as_str())
    .bind(fields.episode_id.0)
    .bind(message_id)
    .bind(fact_id)
    .bind(fields.at)
    .bind(int(dimension))
    .bind(PgVector(vector.clone()))
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    let point = Point {
        key: key_of(&inserted)?,
        vector,
        fields: fields.point_fields(),
    };
    let change = VectorChange {
        removed,
        added: vec![point],
    };
    Ok((change, reference))
}

/// The user of an episode and its last message's time; `None` once purged.
async fn episode_user(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<Option<(String, DateTime<Utc>)>> {
    let owner =
        query("SELECT user_id, last_message_at FROM episodes WHERE id = $1 AND tenant_id = $2")
            .bind(episode.0)
            .bind(tenant.0)
            .fetch_optional(&mut **tx)
            .await?;
    owner
        .map(|row| Ok((row.try_get("user_id")?, row.try_get("last_message_at")?)))
        .transpose()
}

/// The collection, made at first use, and a vector of its dimension.
async fn checked_collection(
    tx: &mut Tx<'_>,
    (tenant, agent): (TenantId, AgentId),
    vector: &[f32],
    model: &str,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    ensure_collection(tx, tenant, agent, vector.len(), model, now).await?;
    let dimension = u32::try_from(vector.len()).unwrap_or(u32::MAX);
    check_dimension("embedding", vector, dimension)?;
    Ok(())
}

/// A message's vector, and its embedding reference on the message.
async fn embed_message(
    tx: &mut Tx<'_>,
    key: (TenantId, AgentId),
    message: MessageId,
    vector: Vec<f32>,
    model: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<VectorChange>> {
    let tenant = key.0;
    let Some(message) = job_message(&mut **tx, tenant, message.0).await? else {
        return Ok(None);
    };
    let Some((user_id, _)) = episode_user(tx, tenant, message.episode_id).await? else {
        return Ok(None);
    };
    checked_collection(tx, key, &vector, model, now).await?;
    let fields = MemoryVectorFields::message(&message, user_id);
    let (change, reference) = replace_vector(tx, key, fields, vector, now).await?;
    query("UPDATE messages SET embedding_ref = $3 WHERE id = $1 AND tenant_id = $2")
        .bind(message.id.0)
        .bind(tenant.0)
        .bind(reference.to_string())
        .execute(&mut **tx)
        .await?;
    Ok(Some(change))
}

/// An episode's summary (when one was generated) and its vector, and the
/// facts learned from it with theirs: each stored, the known fact it
/// replaces closed. An episode's facts are learned once.
async fn store_summary(
    tx: &mut Tx<'_>,
    key: (TenantId, AgentId),
    summarised: SummarisedEpisode,
    model: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<VectorChange>> {
    let tenant = key.0;
    let episode = summarised.episode;
    let Some((user_id, last_message_at)) = episode_user(tx, tenant, episode).await? else {
        return Ok(None);
    };
    checked_collection(tx, key, &summarised.vector, model, now).await?;
    if let Some(generated) = &summarised.generated {
        // A summary the caller set meanwhile wins over ours; a model's
        // replaces the extractive stand-in.
        query(
            "UPDATE episodes SET summary = $3, key_facts = $4::text::json, summary_source = $5
             WHERE id = $1 AND tenant_id = $2
               AND (summary IS NULL OR (summary_source = 'extractive' AND $5 = 'llm'))",
        )
        .bind(episode.0)
        .bind(tenant.0)
        .bind(&generated.summary)
        .bind(serde_json::to_string(&generated.key_facts).unwrap_or_else(|_| "[]".into()))
        .bind(summarised.source.as_str())
        .execute(&mut **tx)
        .await?;
    }
    query("UPDATE episodes SET summary_embedding = $3 WHERE id = $1 AND tenant_id = $2")
        .bind(episode.0)
        .bind(tenant.0)
        .bind(embedding_bytes(&summarised.vector))
        .execute(&mut **tx)
        .await?;
    let fields = MemoryVectorFields::summary(episode, user_id.clone(), last_message_at);
    let (mut change, _) = replace_vector(tx, key, fields, summarised.vector, now).await?;
    // A close learns from the messages no learning during the session
    // read; with none left, its key facts are known already.
    let learned_now = query(
        "UPDATE episodes SET facts_learned_through = message_count
         WHERE id = $1 AND tenant_id = $2 AND facts_learned_through < message_count",
    )
    .bind(episode.0)
    .bind(tenant.0)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    if learned_now == 0 {
        return Ok(Some(change));
    }
    let added = insert_learned(tx, key, (&user_id, episode), summarised.facts, now).await?;
    change.removed.extend(added.removed);
    change.added.extend(added.added);
    Ok(Some(change))
}

/// Facts learned from a window of an open episode's messages, stored if no
/// other job learned from that window meanwhile: `from` is still the
/// episode's `facts_learned_through`. When it is not, the job is tried again
/// (`Conflict`) and learns from where the other left off.
async fn store_learned(
    tx: &mut Tx<'_>,
    key: (TenantId, AgentId),
    learned: LearnedFacts,
    model: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<VectorChange>> {
    let tenant = key.0;
    let Some((user_id, _)) = episode_user(tx, tenant, learned.episode).await? else {
        return Ok(None);
    };
    let moved = query(
        "UPDATE episodes SET facts_learned_through = $4
         WHERE id = $1 AND tenant_id = $2 AND facts_learned_through = $3",
    )
    .bind(learned.episode.0)
    .bind(tenant.0)
    .bind(int(learned.from))
    .bind(int(learned.through))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    if moved == 0 {
        return Err(DomainError::conflict(
            DomainCode::ConversationMoved,
            "facts were learned from these messages meanwhile; learning again from there",
        )
        .into());
    }
    let Some(first) = learned.facts.first() else {
        return Ok(None);
    };
    checked_collection(tx, key, &first.vector, model, now).await?;
    let change = insert_learned(tx, key, (&user_id, learned.episode), learned.facts, now).await?;
    Ok(Some(change))
}

/// Stores facts learned from an episode with their vectors, each closing
/// the known fact it replaces.
async fn insert_learned(
    tx: &mut Tx<'_>,
    key: (TenantId, AgentId),
    (user_id, episode): (&str, EpisodeId),
    facts: Vec<octopus_core::fact::NewFact>,
    now: DateTime<Utc>,
) -> StoreResult<VectorChange> {
    let (tenant, agent) = key;
    let mut change = VectorChange::default();
    let mut dimension = None;
    for new in facts {
        let expected =
            *dimension.get_or_insert(u32::try_from(new.vector.len()).unwrap_or(u32::MAX));
        check_dimension("fact embedding", &new.vector, expected)?;
        let fact = new.learned_in(tenant, agent, user_id, episode, now);
        if let Some(old) = new.replaces {
            crate::fact_rows::supersede(tx, &fact, old).await?;
        }
        crate::fact_rows::insert_fact(tx, &fact, octopus_core::fact::FactAction::Learned, None)
            .await?;
        let fields = MemoryVectorFields::fact(&fact);
        let (added, _) = replace_vector(tx, key, fields, new.vector, now).await?;
        change.removed.extend(added.removed);
        change.added.extend(added.added);
    }
    Ok(change)
}

/// A stored fact's vector.
async fn embed_fact(
    tx: &mut Tx<'_>,
    key: (TenantId, AgentId),
    fact: FactId,
    vector: Vec<f32>,
    model: &str,
    now: DateTime<Utc>,
) -> StoreResult<Option<VectorChange>> {
    let Some(fact) = crate::fact_rows::any_fact(&mut **tx, key.0, fact).await? else {
        return Ok(None);
    };
    checked_collection(tx, key, &vector, model, now).await?;
    let fields = MemoryVectorFields::fact(&fact);
    let (change, _) = replace_vector(tx, key, fields, vector, now).await?;
    Ok(Some(change))
}

#[async_trait]
impl MemoryStore for PostgresStore {
    async fn claim_memory_jobs(
        &self,
        limit: u32,
        now: Timestamp,
        lease: std::time::Duration,
    ) -> Result<Vec<MemoryJob>> {
        let lease_end =
            now + chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::MAX / 2);
        domain(async {
            let mut tx = self.pool.begin().await?;
            let (claimed, cursor) = crate::claims::take(
                &mut tx,
                now,
                lease_end,
                limit as usize,
                self.claim_cursor.get(),
            )
            .await?;
            self.claim_cursor.set(cursor);
            let mut jobs = Vec::with_capacity(claimed.len());
            for row in claimed {
                let (id, tenant): (i64, TenantId) =
                    (row.try_get("seq")?, TenantId(row.try_get("tenant_id")?));
                let kind: String = row.try_get("kind")?;
                let target: Uuid = row.try_get("target")?;
                let work = match kind.as_str() {
                    EMBED_MESSAGE => job_message(&mut *tx, tenant, target)
                        .await?
                        .map(MemoryWork::EmbedMessage),
                    SUMMARISE_EPISODE => job_episode(&mut tx, tenant, EpisodeId(target))
                        .await?
                        .map(MemoryWork::SummariseEpisode),
                    EMBED_FACT => crate::fact_rows::any_fact(&mut *tx, tenant, FactId(target))
                        .await?
                        .map(MemoryWork::EmbedFact),
                    LEARN_FACTS => job_episode(&mut tx, tenant, EpisodeId(target))
                        .await?
                        .map(MemoryWork::LearnFacts),
                    other => return Err(corrupt("memory job kind", other)),
                };
                match work {
                    Some(work) => jobs.push(MemoryJob {
                        id,
                        tenant_id: tenant,
                        agent_id: AgentId(row.try_get("agent_id")?),
                        attempts: u32_at(&row, "attempts")?,
                        work,
                    }),
                    None => {
                        delete_job(&mut *tx, id).await?;
                    }
                }
            }
            tx.commit().await?;
            Ok(jobs)
        })
        .await
    }

    async fn complete_memory_job(
        &self,
        job: &MemoryJob,
        outcome: JobOutcome,
        model: &str,
        now: Timestamp,
    ) -> Result<bool> {
        domain(self.complete(job, outcome, model, now)).await
    }

    async fn watch_new_memory_jobs(
        &self,
        wake: std::sync::Arc<dyn Fn() + Send + Sync>,
    ) -> Result<()> {
        let mut listener = domain(async {
            let mut listener = sqlx_postgres::PgListener::connect_with(&self.pool).await?;
            listener.listen(JOBS_CHANNEL).await?;
            Ok(listener)
        })
        .await?;
        tokio::spawn(async move {
            loop {
                match listener.recv().await {
                    Ok(_) => wake(),
                    // The connection was lost and could not be made again:
                    // the worker's poll covers the gap; listen again later.
                    Err(error) => {
                        tracing::warn!(%error, "listening for queued memory work failed; retrying");
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                        let _ = listener.listen(JOBS_CHANNEL).await;
                        // Work may have been queued while no one listened.
                        wake();
                    }
                }
            }
        });
        Ok(())
    }

    async fn unpark_memory_jobs(&self, which: &Unpark, now: Timestamp) -> Result<u64> {
        domain(async {
            let released = match which {
                Unpark::Agent(tenant, agent) => {
                    query(
                        "UPDATE memory_jobs SET parked_under = NULL, due_at = $3, attempts = 0
                         WHERE parked_under IS NOT NULL AND tenant_id = $1 AND agent_id = $2",
                    )
                    .bind(tenant.0)
                    .bind(agent.0)
                    .bind(now)
                    .execute(&self.pool)
                    .await?
                }
                Unpark::NotUnder(configuration) => {
                    query(
                        "UPDATE memory_jobs SET parked_under = NULL, due_at = $2, attempts = 0
                         WHERE parked_under IS NOT NULL AND parked_under <> $1",
                    )
                    .bind(configuration)
                    .bind(now)
                    .execute(&self.pool)
                    .await?
                }
            };
            Ok(released.rows_affected())
        })
        .await
    }

    async fn retry_memory_job(
        &self,
        job: &MemoryJob,
        error: &str,
        not_before: Timestamp,
    ) -> Result<()> {
        domain(async {
            retry_job(&self.pool, job.id, error, not_before)
                .await
                .map(drop)
        })
        .await
    }

    async fn release_spare_memory(&self) -> Result<()> {
        self.vectors.release_spare_memory().await;
        Ok(())
    }

    async fn catch_up_vectors(&self, now: Timestamp) -> Result<usize> {
        self.lagging.catch_up(&*self.vectors, self, now).await
    }

    async fn pending_memory_jobs(&self) -> Result<u64> {
        domain(async {
            let count: i64 =
                query_scalar("SELECT count(*) FROM memory_jobs WHERE parked_under IS NULL")
                    .fetch_one(&self.pool)
                    .await?;
            Ok(count.unsigned_abs())
        })
        .await
    }

    async fn tenant_memory_jobs(&self, tenant: TenantId) -> Result<u64> {
        domain(async {
            let count: i64 = query_scalar(
                "SELECT count(*) FROM memory_jobs WHERE tenant_id = $1 AND parked_under IS NULL",
            )
            .bind(tenant.0)
            .fetch_one(&self.pool)
            .await?;
            Ok(count.unsigned_abs())
        })
        .await
    }

    async fn memory_queues(&self) -> Result<Vec<MemoryQueue>> {
        domain(async {
            let rows = query(
                "SELECT tenant_id,
                        count(*) FILTER (WHERE class = 0 AND parked_under IS NULL) AS live,
                        count(*) FILTER (WHERE class = 1 AND parked_under IS NULL) AS bulk,
                        count(*) FILTER (WHERE parked_under IS NOT NULL) AS parked,
                        min(created_at) FILTER (WHERE parked_under IS NULL) AS oldest
                 FROM memory_jobs GROUP BY tenant_id ORDER BY tenant_id",
            )
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(MemoryQueue {
                        tenant_id: TenantId(row.try_get("tenant_id")?),
                        live: u64_at(row, "live")?,
                        bulk: u64_at(row, "bulk")?,
                        parked: u64_at(row, "parked")?,
                        oldest_queued_at: row.try_get("oldest")?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn search_memory(
        &self,
        tenant: TenantId,
        query_: &MemoryVectorQuery,
    ) -> Result<Vec<MemoryVectorHit>> {
        query_.validate()?;
        domain(async {
            let agent = query_.agent_id;
            let Some(state) =
                crate::vector_sets::state::<MemoryTable>(&self.pool, tenant, agent).await?
            else {
                return Ok(Vec::new());
            };
            check_dimension("vector", &query_.vector, state.dimension)?;
            let hidden: Vec<EpisodeId> = query_scalar::<_, Uuid>(
                "SELECT id FROM episodes WHERE tenant_id = $1 AND agent_id = $2 AND user_id = $3
                   AND (deleted_at IS NOT NULL OR archived_at IS NOT NULL)",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .bind(&query_.user_id)
            .fetch_all(&self.pool)
            .await?
            .into_iter()
            .map(EpisodeId)
            .collect();
            let nearest = query_.to_nearest(&hidden);
            let found = self
                .vectors
                .search(VectorSet::memory(tenant, agent), state, &nearest, self)
                .await?;
            let keys: Vec<i64> = found.iter().map(|n| n.key as i64).collect();
            let rows = query(
                "SELECT seq, tenant_id, agent_id, kind, episode_id, message_id, fact_id, at FROM memory_vectors
                 WHERE seq = ANY($1)",
            )
            .bind(keys)
            .fetch_all(&self.pool)
            .await?;
            let mut by_key = HashMap::with_capacity(rows.len());
            for row in &rows {
                if owned_by(row, tenant, agent)? {
                    by_key.insert(key_of(row)?, row);
                }
            }
            // A vector removed since the index lookup is simply absent.
            found
                .into_iter()
                .filter_map(|n| by_key.remove(&n.key).map(|row| (n.score, row)))
                .map(|(score, row)| {
                    Ok(MemoryVectorHit {
                        kind: kind_at(row)?,
                        score,
                        episode_id: EpisodeId(row.try_get("episode_id")?),
                        message_id: row.try_get::<Option<Uuid>, _>("message_id")?.map(MessageId),
                        fact_id: row.try_get::<Option<Uuid>, _>("fact_id")?.map(FactId),
                        at: row.try_get("at")?,
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
        if messages.is_empty() {
            return Ok(Vec::new());
        }
        domain(async {
            let mut episodes: Vec<Uuid> = messages.iter().map(|(e, _)| e.0).collect();
            episodes.sort();
            episodes.dedup();
            let ids: Vec<Uuid> = messages.iter().map(|(_, m)| m.0).collect();
            // By the episodes' index, then each row checked.
            let rows = query(
                "SELECT message_id, embedding FROM memory_vectors
                 WHERE episode_id = ANY($1) AND kind = 'message' AND tenant_id = $2
                   AND message_id = ANY($3)",
            )
            .bind(episodes)
            .bind(tenant.0)
            .bind(ids)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok((
                        MessageId(row.try_get("message_id")?),
                        row.try_get::<PgVector, _>("embedding")?.0,
                    ))
                })
                .collect()
        })
        .await
    }
}

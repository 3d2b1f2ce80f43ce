//! Dumps: a tenant read out from one snapshot, and written back in one
//! transaction (see `octopus_core::dump` for the format).

use async_trait::async_trait;
use octopus_core::dump::Unresolved;
use octopus_core::dump::{
    self, DumpRecord, DumpedChunk, DumpedProcedure, DumpedVector, DumpedVersion, ImportCounts,
    ImportSequence, ImportStep, ImportTally,
};
use octopus_core::episode::Episode;
use octopus_core::knowledge::{Chunk, ChunkMetadata};
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::Message;
use octopus_core::store::DumpStore;
use octopus_core::{AgentId, EpisodeId, Error as DomainError, Result, TenantId, Timestamp};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;

use crate::error::{Error, Result as StoreResult};
use crate::rows::{Tx, int, u32_at};
use crate::vectors::{PgVector, embedding_bytes};
use crate::{PostgresStore, domain};
use octopus_core::appending::clamp_tokens;

type Sink = Box<dyn FnMut(DumpRecord) -> bool + Send>;

/// The agents a dump holds: live ones, and with a user, only those the user
/// talks to.
const AGENTS: &str = "SELECT id FROM agents WHERE tenant_id = $1 AND deleted_at IS NULL
    AND ($2::text IS NULL OR id IN (SELECT agent_id FROM conversations WHERE tenant_id = $1 AND user_id = $2))";

#[async_trait]
impl DumpStore for PostgresStore {
    async fn export_records(
        &self,
        tenant: TenantId,
        user: Option<String>,
        sink: Sink,
    ) -> Result<u64> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await?;
            // The sink may block (a bounded channel to the reader): it runs
            // on a blocking thread, fed through a channel of its own.
            let (records, mut taken) = tokio::sync::mpsc::channel::<DumpRecord>(64);
            let mut sink = sink;
            let feeding = tokio::task::spawn_blocking(move || {
                while let Some(record) = taken.blocking_recv() {
                    if !sink(record) {
                        return;
                    }
                }
            });
            let mut out = Out { records, sent: 0 };
            let exported = export(&mut tx, tenant, user.as_deref(), &mut out).await;
            let sent = out.sent;
            drop(out);
            // Every record handed over has reached the sink (or it stopped).
            let _ = feeding.await;
            match exported {
                Ok(()) | Err(Stop::Stopped) => {}
                Err(Stop::Failed(error)) => return Err(error),
            }
            tx.commit().await?;
            Ok(sent)
        })
        .await
    }

    async fn import_records(
        &self,
        tenant: TenantId,
        records: Box<dyn Iterator<Item = Result<DumpRecord>> + Send>,
        now: Timestamp,
    ) -> Result<ImportCounts> {
        // The records come from a blocking reader: it runs on a blocking
        // thread and hands them over one at a time.
        let (send, mut receive) = tokio::sync::mpsc::channel(64);
        let reader = tokio::task::spawn_blocking(move || {
            for record in records {
                if send.blocking_send(record).is_err() {
                    return;
                }
            }
        });
        let outcome = domain(async {
            let mut tx = self.pool.begin().await?;
            let mut tally = ImportTally::default();
            let mut sequence = ImportSequence::default();
            while let Some(record) = receive.recv().await {
                let record = record?;
                let number = match sequence.next(&record)? {
                    ImportStep::Commit => {
                        if tally.procedures_changed {
                            crate::procedures::bump(&mut tx, tenant).await?;
                        }
                        // The vector index reconciles at its next search.
                        tx.commit().await?;
                        return Ok(tally.counts);
                    }
                    ImportStep::Store(number) => number,
                };
                let kind = record.kind();
                tally.count(&record);
                store_record(&mut tx, tenant, record, now, &tally)
                    .await
                    .map_err(|e| explain(e, number, kind))?;
            }
            Err(sequence.cut().into())
        })
        .await;
        drop(receive);
        reader.await.map_err(DomainError::backend)?;
        outcome
    }
}

struct Out {
    records: tokio::sync::mpsc::Sender<DumpRecord>,
    sent: u64,
}

enum Stop {
    /// The sink wants no more.
    Stopped,
    Failed(Error),
}

impl<E: Into<Error>> From<E> for Stop {
    fn from(error: E) -> Self {
        Stop::Failed(error.into())
    }
}

impl Out {
    async fn send(&mut self, record: DumpRecord) -> Result<(), Stop> {
        if self.records.send(record).await.is_err() {
            return Err(Stop::Stopped);
        }
        self.sent += 1;
        Ok(())
    }
}

async fn export(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    user: Option<&str>,
    out: &mut Out,
) -> Result<(), Stop> {
    if let Some(row) = query("SELECT id, name, created_at FROM tenants WHERE id = $1")
        .bind(tenant.0)
        .fetch_optional(&mut **tx)
        .await?
    {
        out.send(DumpRecord::Tenant(crate::tenants::tenant_from_row(&row)?))
            .await?;
    }
    let agents = query(&format!(
        "SELECT {} FROM agents WHERE id IN ({AGENTS}) ORDER BY created_at, id",
        crate::agents::COLUMNS
    ))
    .bind(tenant.0)
    .bind(user)
    .fetch_all(&mut **tx)
    .await?;
    for row in &agents {
        out.send(DumpRecord::Agent(crate::agents::agent_from_row(row)?))
            .await?;
    }
    if user.is_none() {
        export_procedures(tx, tenant, out).await?;
        export_chunks(tx, tenant, out).await?;
    }
    let conversations = query(&format!(
        "SELECT * FROM conversations WHERE tenant_id = $1 AND agent_id IN ({AGENTS})
           AND ($2::text IS NULL OR user_id = $2)
         ORDER BY created_at, id"
    ))
    .bind(tenant.0)
    .bind(user)
    .fetch_all(&mut **tx)
    .await?;
    for row in &conversations {
        let conversation = crate::conversations::conversation_from_row(row)?;
        let id = conversation.id;
        out.send(DumpRecord::Conversation(conversation)).await?;
        let episodes = query(&format!(
            "SELECT {} FROM episodes WHERE conversation_id = $1 AND tenant_id = $2 ORDER BY started_at, id",
            crate::episodes::COLUMNS
        ))
        .bind(id.0)
        .bind(tenant.0)
        .fetch_all(&mut **tx)
        .await?;
        for row in &episodes {
            let episode = crate::episodes::episode_from_row(row)?;
            let episode_id = episode.id;
            out.send(DumpRecord::Episode(episode)).await?;
            for message in crate::messages::episode_messages(&mut **tx, tenant, episode_id).await? {
                out.send(DumpRecord::Message(message)).await?;
            }
            for fact in crate::fact_rows::episode_facts(&mut **tx, tenant, episode_id).await? {
                out.send(DumpRecord::Fact(fact)).await?;
            }
        }
    }
    // Facts a person added, of no episode, after every agent they name.
    let added = query(&format!(
        "SELECT {} FROM facts f WHERE f.tenant_id = $1 AND f.episode_id IS NULL
           AND f.agent_id IN ({AGENTS}) AND ($2::text IS NULL OR f.user_id = $2)
         ORDER BY f.seq",
        octopus_sql::columns::FACTS
    ))
    .bind(tenant.0)
    .bind(user)
    .fetch_all(&mut **tx)
    .await?;
    for row in &added {
        out.send(DumpRecord::Fact(crate::fact_rows::fact_from_row(row)?))
            .await?;
    }
    Ok(())
}

async fn export_procedures(tx: &mut Tx<'_>, tenant: TenantId, out: &mut Out) -> Result<(), Stop> {
    let procedures = query(&format!(
        "SELECT {} FROM procedures WHERE tenant_id = $1
           AND (agent_id IS NULL OR agent_id IN ({AGENTS}))
         ORDER BY created_at, id",
        crate::procedures::COLUMNS
    ))
    .bind(tenant.0)
    .bind(Option::<String>::None)
    .fetch_all(&mut **tx)
    .await?;
    for row in &procedures {
        let procedure = crate::procedures::procedure_from_row(row)?;
        let versions = query(&format!(
            "SELECT {} FROM procedure_versions WHERE procedure_id = $1 AND tenant_id = $2 ORDER BY version",
            crate::procedures::VERSION_COLUMNS
        ))
        .bind(procedure.id.0)
        .bind(tenant.0)
        .fetch_all(&mut **tx)
        .await?;
        let versions = versions
            .iter()
            .map(|row| {
                let (version, embedding) = crate::procedures::version_from_row(row)?;
                Ok(DumpedVersion {
                    version,
                    embedding: embedding.map(|vector| DumpedVector {
                        model: String::new(),
                        vector,
                    }),
                })
            })
            .collect::<Result<_, Error>>()?;
        out.send(DumpRecord::Procedure(DumpedProcedure {
            procedure,
            versions,
        }))
        .await?;
    }
    Ok(())
}

async fn export_chunks(tx: &mut Tx<'_>, tenant: TenantId, out: &mut Out) -> Result<(), Stop> {
    let chunks = query(&format!(
        "SELECT c.id, c.agent_id, c.source, c.chunk_index, c.category, c.heading, c.content, c.indexed_at,
                c.embedding, k.model, k.created_at AS collection_created_at
         FROM knowledge_chunks c
         JOIN knowledge_collections k ON k.tenant_id = c.tenant_id AND k.agent_id = c.agent_id
         WHERE c.tenant_id = $1 AND c.agent_id IN ({AGENTS})
         ORDER BY c.agent_id, c.source, c.chunk_index"
    ))
    .bind(tenant.0)
    .bind(Option::<String>::None)
    .fetch_all(&mut **tx)
    .await?;
    for row in &chunks {
        let embedding: PgVector = row.try_get("embedding")?;
        out.send(DumpRecord::KnowledgeChunk(DumpedChunk {
            chunk: Chunk {
                id: row.try_get("id")?,
                agent_id: AgentId(row.try_get("agent_id")?),
                content: row.try_get("content")?,
                metadata: ChunkMetadata {
                    source: row.try_get("source")?,
                    chunk_index: u32_at(row, "chunk_index")?,
                    category: row.try_get("category")?,
                    heading: row.try_get("heading")?,
                    indexed_at: row.try_get("indexed_at")?,
                },
            },
            embedding: DumpedVector {
                model: row.try_get("model")?,
                vector: embedding.0,
            },
            collection_created_at: row.try_get("collection_created_at")?,
        }))
        .await?;
    }
    Ok(())
}

/// The store's refusal of record `number`, in the dump's terms.
fn explain(error: Error, number: u64, kind: &str) -> Error {
    let constraint = match &error {
        Error::Sql(sqlx_core::Error::Database(e)) => e.code().map(|c| c.into_owned()),
        _ => None,
    };
    let error = match (constraint.as_deref(), error) {
        (Some("23505"), _) => dump::import_conflict(),
        (Some("23503"), _) => dump::missing_owner(),
        (_, Error::Domain(domain)) => domain,
        (_, other) => return other,
    };
    dump::in_record(error, number, kind).into()
}

async fn store_record(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    record: DumpRecord,
    now: Timestamp,
    tally: &ImportTally,
) -> StoreResult<()> {
    for agent in record.agents_named() {
        require_agent(tx, tenant, agent).await?;
    }
    match record {
        // Checked by the import's sequence.
        DumpRecord::Header(_) | DumpRecord::End(_) => {}
        DumpRecord::Tenant(t) => {
            query("INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING")
                .bind(tenant.0)
                .bind(&t.name)
                .bind(t.created_at)
                .execute(&mut **tx)
                .await?;
        }
        DumpRecord::Agent(mut agent) => {
            agent.tenant_id = tenant;
            crate::agents::insert_agent(&mut **tx, &agent).await?;
        }
        DumpRecord::Procedure(p) => insert_procedure(tx, tenant, &p).await?,
        DumpRecord::KnowledgeChunk(c) => insert_chunk(tx, tenant, &c).await?,
        DumpRecord::Conversation(mut conversation) => {
            conversation.tenant_id = tenant;
            crate::conversations::insert_conversation(&mut **tx, &conversation).await?;
        }
        DumpRecord::Episode(episode) => {
            insert_episode(tx, tenant, &episode).await?;
            if episode.ended_at.is_some() {
                crate::jobs::queue_summary(tx, tenant, episode.id, now, WorkClass::Bulk).await?;
            }
        }
        DumpRecord::Message(message) => {
            let agent = match tally.episode_agent(message.episode_id) {
                Some(agent) => agent,
                None => episode_agent(tx, tenant, message.episode_id).await?,
            };
            insert_message(tx, tenant, message.clone(), now).await?;
            if octopus_core::embedded_text::worth_embedding(message.role, message.content.as_ref())
            {
                crate::jobs::queue_messages(
                    tx,
                    tenant,
                    agent,
                    &[message.id.0],
                    now,
                    WorkClass::Bulk,
                )
                .await?;
            }
        }
        DumpRecord::Fact(mut fact) => {
            fact.tenant_id = tenant;
            match fact.episode_id {
                // Its owner is its episode's, which must be this tenant's.
                Some(episode) => {
                    let owner = query(
                        "SELECT agent_id, user_id FROM episodes WHERE id = $1 AND tenant_id = $2",
                    )
                    .bind(episode.0)
                    .bind(tenant.0)
                    .fetch_optional(&mut **tx)
                    .await?;
                    let owner = owner.ok_or_else(|| Unresolved::FactEpisode(episode).error())?;
                    fact.agent_id = AgentId(owner.try_get("agent_id")?);
                    fact.user_id = owner.try_get("user_id")?;
                }
                // One a person added: its agent must be this tenant's.
                None => {
                    octopus_core::conversation::validate_user_id(&fact.user_id)?;
                    require_agent(tx, tenant, fact.agent_id).await?;
                }
            }
            crate::fact_rows::insert_fact(
                tx,
                &fact,
                octopus_core::fact::FactAction::Imported,
                None,
            )
            .await?;
            crate::jobs::queue_fact(tx, &fact, now, WorkClass::Bulk).await?;
            // A dump written before facts were learned during sessions says
            // nothing of how far its episodes were learned from: whole, once
            // they have facts.
            if let Some(episode) = fact.episode_id {
                query(
                    "UPDATE episodes SET facts_learned_through = message_count
                     WHERE id = $1 AND tenant_id = $2 AND facts_learned_through = 0",
                )
                .bind(episode.0)
                .bind(tenant.0)
                .execute(&mut **tx)
                .await?;
            }
        }
    }
    Ok(())
}

async fn require_agent(tx: &mut Tx<'_>, tenant: TenantId, agent: AgentId) -> StoreResult<()> {
    let ours: bool = query_scalar(
        "SELECT EXISTS (SELECT 1 FROM agents WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL)",
    )
    .bind(agent.0)
    .bind(tenant.0)
    .fetch_one(&mut **tx)
    .await?;
    Ok(Unresolved::Agent(agent).unless(ours)?)
}

async fn episode_agent(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<AgentId> {
    let agent: Option<uuid::Uuid> =
        query_scalar("SELECT agent_id FROM episodes WHERE id = $1 AND tenant_id = $2")
            .bind(episode.0)
            .bind(tenant.0)
            .fetch_optional(&mut **tx)
            .await?;
    let agent = agent.ok_or_else(|| Unresolved::MessageEpisode(episode).error())?;
    Ok(AgentId(agent))
}

async fn insert_episode(tx: &mut Tx<'_>, tenant: TenantId, e: &Episode) -> StoreResult<()> {
    let matches: bool = query_scalar(
        "SELECT EXISTS (SELECT 1 FROM conversations WHERE id = $1 AND tenant_id = $2 AND agent_id = $3 AND user_id = $4)",
    )
    .bind(e.conversation_id.0)
    .bind(tenant.0)
    .bind(e.agent_id.0)
    .bind(&e.user_id)
    .fetch_one(&mut **tx)
    .await?;
    Unresolved::EpisodePairing(e.id).unless(matches)?;
    query(
        "INSERT INTO episodes (id, tenant_id, conversation_id, agent_id, user_id, started_at, ended_at, end_reason,
                               summary, summary_source, key_facts, message_count, total_input_tokens,
                               total_output_tokens, last_message_at, deleted_at, archived_at, created_at, updated_at,
                               facts_learned_through)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text::json, $12, $13, $14, $15, $16, $17, $18, $19, $20)",
    )
    .bind(e.id.0)
    .bind(tenant.0)
    .bind(e.conversation_id.0)
    .bind(e.agent_id.0)
    .bind(&e.user_id)
    .bind(e.started_at)
    .bind(e.ended_at)
    .bind(e.end_reason.map(|r| r.as_str()))
    .bind(&e.summary)
    .bind(e.summary_source.map(|s| s.as_str()))
    .bind(serde_json::to_string(&e.key_facts).unwrap_or_else(|_| "[]".into()))
    .bind(int(e.message_count))
    .bind(clamp_tokens(e.total_input_tokens))
    .bind(clamp_tokens(e.total_output_tokens))
    .bind(e.last_message_at)
    .bind(e.deleted_at)
    .bind(e.archived_at)
    .bind(e.created_at)
    .bind(e.updated_at)
    .bind(int(e.facts_learned_through.min(e.message_count)))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn insert_message(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    mut m: Message,
    now: Timestamp,
) -> StoreResult<()> {
    let conversation: Option<uuid::Uuid> =
        query_scalar("SELECT conversation_id FROM episodes WHERE id = $1 AND tenant_id = $2")
            .bind(m.episode_id.0)
            .bind(tenant.0)
            .fetch_optional(&mut **tx)
            .await?;
    Unresolved::MessageConversation(m.id).unless(conversation == Some(m.conversation_id.0))?;
    // Vectors are made again by this server: the reference to another's is dropped.
    m.embedding_ref = None;
    m.created_at = m.created_at.min(now);
    let mut rows = crate::messages::MessageRows::default();
    rows.push(&m);
    rows.insert(tx, tenant).await
}

async fn insert_procedure(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    dumped: &DumpedProcedure,
) -> StoreResult<()> {
    let p = &dumped.procedure;
    let shown = dumped.shown_embedding().map(embedding_bytes);
    let inserted = query(
        "INSERT INTO procedures (id, tenant_id, agent_id, name, description, trigger_pattern, steps, embedding,
                                 is_active, is_approved, version, serving_version, latest_version,
                                 created_at, updated_at, created_by, approved_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
    )
    .bind(p.id.0)
    .bind(tenant.0)
    .bind(p.agent_id.map(|a| a.0))
    .bind(&p.name)
    .bind(&p.description)
    .bind(&p.trigger_pattern)
    .bind(crate::procedures::steps_json(&p.steps))
    .bind(shown)
    .bind(p.is_active)
    .bind(p.serving_version.is_some())
    .bind(int(p.version))
    .bind(p.serving_version.map(int))
    .bind(int(p.latest_version))
    .bind(p.created_at)
    .bind(p.updated_at)
    .bind(&p.created_by)
    .bind(&p.approved_by)
    .execute(&mut **tx)
    .await;
    crate::procedures::name_conflict(inserted, &p.name)?;
    for DumpedVersion {
        version: v,
        embedding,
    } in &dumped.versions
    {
        query(
            "INSERT INTO procedure_versions (procedure_id, tenant_id, version, name, description, trigger_pattern,
                                             steps, embedding, status, created_by, created_at, decided_by, decided_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, $9, $10, $11, $12, $13)",
        )
        .bind(p.id.0)
        .bind(tenant.0)
        .bind(int(v.version))
        .bind(&v.name)
        .bind(&v.description)
        .bind(&v.trigger_pattern)
        .bind(crate::procedures::steps_json(&v.steps))
        .bind(embedding.as_ref().map(|e| embedding_bytes(&e.vector)))
        .bind(v.status.as_str())
        .bind(&v.created_by)
        .bind(v.created_at)
        .bind(&v.decided_by)
        .bind(v.decided_at)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Inserts the chunk, creating its collection when needed; returns its
/// dimension.
async fn insert_chunk(tx: &mut Tx<'_>, tenant: TenantId, dumped: &DumpedChunk) -> StoreResult<()> {
    let agent = dumped.chunk.agent_id;
    let dimension = dumped.dimension(crate::knowledge::MAX_DIMENSION)?;
    let (model, made) = (&dumped.embedding.model, dumped.collection_created_at);
    crate::knowledge::ensure_collection(tx, tenant, agent, dimension, model, made).await?;
    let chunk = dumped.to_new_chunk();
    crate::knowledge::insert_chunks(tx, tenant, agent, &[chunk]).await?;
    let set = octopus_core::vectors::VectorSet::knowledge(tenant, agent);
    crate::vector_sets::bump::<crate::vector_sets::KnowledgeTable>(tx, set, 1).await?;
    Ok(())
}

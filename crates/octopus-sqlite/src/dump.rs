//! Dumps: reading a tenant out in dump order from one snapshot, and writing
//! a dump back in one transaction.

use async_trait::async_trait;
use octopus_core::dump::Unresolved;
use octopus_core::dump::{
    self, DumpRecord, DumpedChunk, DumpedProcedure, DumpedVector, DumpedVersion, ImportCounts,
    ImportSequence, ImportStep, ImportTally,
};
use octopus_core::episode::Episode;
use octopus_core::knowledge::Chunk;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::Message;
use octopus_core::store::DumpStore;
use octopus_core::{AgentId, EpisodeId, Result, TenantId, Timestamp};
use rusqlite::{Connection, Transaction, params};

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::error::{Error, Result as StoreResult};
use crate::rows;
use crate::vector_sets::KnowledgeTable;
use crate::vector_sets::VectorTable;

type Sink = Box<dyn FnMut(DumpRecord) -> bool + Send>;

/// The sink asked to stop: not an error, the reader went away.
struct Stopped;

#[async_trait]
impl DumpStore for SqliteStore {
    async fn export_records(
        &self,
        tenant: TenantId,
        user: Option<String>,
        sink: Sink,
    ) -> Result<u64> {
        self.db
            .read(move |conn| {
                let tx = conn.transaction()?;
                let mut out = Out { sink, sent: 0 };
                match export(&tx, tenant, user.as_deref(), &mut out) {
                    Ok(()) | Err(ExportError::Stopped(Stopped)) => Ok(out.sent),
                    Err(ExportError::Store(error)) => Err(error),
                }
            })
            .await
    }

    async fn import_records(
        &self,
        tenant: TenantId,
        records: Box<dyn Iterator<Item = Result<DumpRecord>> + Send>,
        now: Timestamp,
    ) -> Result<ImportCounts> {
        let counts = self
            .db
            .write(move |conn| import(conn, tenant, records, micros(now)))
            .await?;
        // The imported messages are indexed for full-text search as any others.
        self.indexer.wake();
        Ok(counts)
    }
}

struct Out {
    sink: Sink,
    sent: u64,
}

enum ExportError {
    Stopped(Stopped),
    Store(Error),
}

impl<E: Into<Error>> From<E> for ExportError {
    fn from(error: E) -> Self {
        ExportError::Store(error.into())
    }
}

impl Out {
    fn send(&mut self, record: DumpRecord) -> Result<(), ExportError> {
        if !(self.sink)(record) {
            return Err(ExportError::Stopped(Stopped));
        }
        self.sent += 1;
        Ok(())
    }
}

/// The tenant's agents that are not deleted; with `user`, only those the user
/// has conversations with.
const AGENTS: &str = "SELECT id FROM agents WHERE tenant_id = ?1 AND deleted_at IS NULL
    AND (?2 IS NULL OR id IN (SELECT agent_id FROM conversations WHERE tenant_id = ?1 AND user_id = ?2))";

fn export(
    tx: &Transaction<'_>,
    tenant: TenantId,
    user: Option<&str>,
    out: &mut Out,
) -> Result<(), ExportError> {
    let scope = params![tenant.0.as_bytes(), user];
    let tenant_row = rows::collect(
        &mut tx.prepare("SELECT id, name, created_at FROM tenants WHERE id = ?1")?,
        [tenant.0.as_bytes()],
        crate::tenants::tenant_from_row,
    )?;
    for t in tenant_row {
        out.send(DumpRecord::Tenant(t))?;
    }
    let agents = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT {} FROM agents WHERE id IN ({AGENTS}) ORDER BY created_at, id",
            crate::agents::COLUMNS
        ))?,
        scope,
        crate::agents::agent_from_row,
    )?;
    for agent in agents {
        out.send(DumpRecord::Agent(agent))?;
    }
    if user.is_none() {
        export_procedures(tx, tenant, out)?;
        export_chunks(tx, tenant, out)?;
    }
    let conversations = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT * FROM conversations WHERE tenant_id = ?1 AND agent_id IN ({AGENTS})
               AND (?2 IS NULL OR user_id = ?2)
             ORDER BY created_at, id"
        ))?,
        scope,
        crate::conversations::conversation_from_row,
    )?;
    let mut episodes = tx.prepare(&format!(
        "SELECT {} FROM episodes WHERE conversation_id = ?1 AND tenant_id = ?2 ORDER BY started_at, id",
        crate::episodes::COLUMNS
    ))?;
    for conversation in conversations {
        let id = conversation.id;
        out.send(DumpRecord::Conversation(conversation))?;
        let of_conversation = rows::collect(
            &mut episodes,
            [id.0.as_bytes(), tenant.0.as_bytes()],
            crate::episodes::episode_from_row,
        )?;
        for episode in of_conversation {
            let episode_id = episode.id;
            out.send(DumpRecord::Episode(episode))?;
            for message in crate::messages::episode_messages(tx, tenant, episode_id)? {
                out.send(DumpRecord::Message(message))?;
            }
            for fact in crate::fact_rows::episode_facts(tx, tenant, episode_id)? {
                out.send(DumpRecord::Fact(fact))?;
            }
        }
    }
    // Facts a person added, of no episode, after every agent they name.
    let added = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT {} FROM facts f WHERE f.tenant_id = ?1 AND f.episode_id IS NULL
               AND f.agent_id IN ({AGENTS}) AND (?2 IS NULL OR f.user_id = ?2)
             ORDER BY f.seq",
            octopus_sql::columns::FACTS
        ))?,
        scope,
        crate::fact_rows::fact_from_row,
    )?;
    for fact in added {
        out.send(DumpRecord::Fact(fact))?;
    }
    Ok(())
}

fn export_procedures(
    tx: &Transaction<'_>,
    tenant: TenantId,
    out: &mut Out,
) -> Result<(), ExportError> {
    let procedures = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT {} FROM procedures WHERE tenant_id = ?1
               AND (agent_id IS NULL OR agent_id IN ({AGENTS}))
             ORDER BY created_at, id",
            crate::procedures::COLUMNS
        ))?,
        params![tenant.0.as_bytes(), Option::<String>::None],
        crate::procedures::procedure_from_row,
    )?;
    let mut versions = tx.prepare(
        "SELECT * FROM procedure_versions WHERE procedure_id = ?1 AND tenant_id = ?2 ORDER BY version",
    )?;
    for procedure in procedures {
        let versions = rows::collect(
            &mut versions,
            [procedure.id.0.as_bytes(), tenant.0.as_bytes()],
            crate::procedures::version_from_row,
        )?
        .into_iter()
        .map(|(version, embedding)| DumpedVersion {
            version,
            // The model is this server's embedder's: the engine names it.
            embedding: embedding.map(|vector| DumpedVector {
                model: String::new(),
                vector,
            }),
        })
        .collect();
        out.send(DumpRecord::Procedure(DumpedProcedure {
            procedure,
            versions,
        }))?;
    }
    Ok(())
}

fn export_chunks(tx: &Transaction<'_>, tenant: TenantId, out: &mut Out) -> Result<(), ExportError> {
    let mut stmt = tx.prepare(&format!(
        "SELECT c.*, k.model, k.created_at AS collection_created_at FROM knowledge_chunks c
         JOIN knowledge_collections k ON k.tenant_id = c.tenant_id AND k.agent_id = c.agent_id
         WHERE c.tenant_id = ?1 AND c.agent_id IN ({AGENTS})
         ORDER BY c.agent_id, c.source, c.chunk_index"
    ))?;
    let mut rows = stmt.query(params![tenant.0.as_bytes(), Option::<String>::None])?;
    while let Some(row) = rows.next()? {
        let embedding: Vec<u8> = row.get("embedding")?;
        out.send(DumpRecord::KnowledgeChunk(DumpedChunk {
            chunk: Chunk {
                id: rows::uuid(row, "id")?,
                agent_id: AgentId(rows::uuid(row, "agent_id")?),
                content: row.get("content")?,
                metadata: crate::vector_sets::metadata_from_row(row)?,
            },
            embedding: DumpedVector {
                model: row.get("model")?,
                vector: codec::embedding_from(&embedding)?,
            },
            collection_created_at: rows::time(row, "collection_created_at")?,
        }))?;
    }
    Ok(())
}

fn import(
    conn: &mut Connection,
    tenant: TenantId,
    records: Box<dyn Iterator<Item = Result<DumpRecord>> + Send>,
    now: i64,
) -> StoreResult<ImportCounts> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut tally = ImportTally::default();
    let mut sequence = ImportSequence::default();
    for record in records {
        let record = record?;
        let number = match sequence.next(&record)? {
            ImportStep::Commit => {
                finish(&tx, tenant, &tally)?;
                tx.commit()?;
                return Ok(tally.counts);
            }
            ImportStep::Store(number) => number,
        };
        let kind = record.kind();
        tally.count(&record);
        store_record(&tx, tenant, record, now, &tally).map_err(|e| explain(e, number, kind))?;
    }
    Err(sequence.cut().into())
}

/// The store's refusal of record `number`, in the dump's terms.
fn explain(error: Error, number: u64, kind: &str) -> Error {
    let constraint = match &error {
        Error::Sqlite(rusqlite::Error::SqliteFailure(failure, _)) => failure.extended_code,
        _ => 0,
    };
    let error = match (constraint, error) {
        (
            rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY | rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE,
            _,
        ) => dump::import_conflict(),
        (rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY, _) => dump::missing_owner(),
        (_, Error::Domain(domain)) => domain,
        (_, other) => return other,
    };
    dump::in_record(error, number, kind).into()
}

fn store_record(
    tx: &Transaction<'_>,
    tenant: TenantId,
    record: DumpRecord,
    now: i64,
    tally: &ImportTally,
) -> StoreResult<()> {
    for agent in record.agents_named() {
        require_agent(tx, tenant, agent)?;
    }
    match record {
        // Checked by the import's sequence.
        DumpRecord::Header(_) | DumpRecord::End(_) => {}
        DumpRecord::Tenant(t) => {
            // Into an existing tenant, its own name stays.
            tx.execute(
                "INSERT OR IGNORE INTO tenants (id, name, created_at) VALUES (?1, ?2, ?3)",
                params![tenant.0.as_bytes(), t.name, micros(t.created_at)],
            )?;
        }
        DumpRecord::Agent(mut agent) => {
            agent.tenant_id = tenant;
            crate::agents::insert_agent(tx, &agent)?;
            // A taken id or name: `explain` makes it an import conflict.
        }
        DumpRecord::Procedure(p) => insert_procedure(tx, tenant, &p)?,
        DumpRecord::KnowledgeChunk(c) => insert_chunk(tx, tenant, &c)?,
        DumpRecord::Conversation(mut conversation) => {
            conversation.tenant_id = tenant;
            crate::conversations::insert_conversation(tx, &conversation)?;
        }
        DumpRecord::Episode(episode) => {
            insert_episode(tx, tenant, &episode)?;
            if episode.ended_at.is_some() {
                crate::jobs::queue_summary(tx, tenant, episode.id, now, WorkClass::Bulk)?;
            }
        }
        DumpRecord::Message(message) => {
            let agent = match tally.episode_agent(message.episode_id) {
                Some(agent) => agent,
                None => episode_agent(tx, tenant, message.episode_id)?,
            };
            insert_message(tx, tenant, &message, now)?;
            if octopus_core::embedded_text::worth_embedding(message.role, message.content.as_ref())
            {
                crate::jobs::queue_message(tx, tenant, agent, message.id, now, WorkClass::Bulk)?;
            }
        }
        DumpRecord::Fact(mut fact) => {
            fact.tenant_id = tenant;
            match fact.episode_id {
                // Its owner is its episode's, which must be this tenant's.
                Some(episode) => {
                    (fact.agent_id, fact.user_id) = episode_owner(tx, tenant, episode)?;
                }
                // One a person added: its agent must be this tenant's.
                None => {
                    octopus_core::conversation::validate_user_id(&fact.user_id)?;
                    let known: bool = tx.query_row(
                        "SELECT EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND tenant_id = ?2)",
                        [fact.agent_id.0.as_bytes(), tenant.0.as_bytes()],
                        |r| r.get(0),
                    )?;
                    Unresolved::Agent(fact.agent_id).unless(known)?;
                }
            }
            crate::fact_rows::insert_fact(
                tx,
                &fact,
                octopus_core::fact::FactAction::Imported,
                None,
            )?;
            crate::jobs::queue_fact(tx, &fact, now, WorkClass::Bulk)?;
            // A dump written before facts were learned during sessions says
            // nothing of how far its episodes were learned from: whole, once
            // they have facts.
            if let Some(episode) = fact.episode_id {
                tx.prepare_cached(
                    "UPDATE episodes SET facts_learned_through = message_count
                     WHERE id = ?1 AND tenant_id = ?2 AND facts_learned_through = 0",
                )?
                .execute([episode.0.as_bytes(), tenant.0.as_bytes()])?;
            }
        }
    }
    Ok(())
}

/// The agent and user of an episode of this tenant.
fn episode_owner(
    tx: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<(AgentId, String)> {
    let owner: Option<(Vec<u8>, String)> = rows::collect(
        &mut *tx.prepare_cached(
            "SELECT agent_id, user_id FROM episodes WHERE id = ?1 AND tenant_id = ?2",
        )?,
        [episode.0.as_bytes(), tenant.0.as_bytes()],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?
    .pop();
    let (agent, user) = owner.ok_or_else(|| Unresolved::FactEpisode(episode).error())?;
    Ok((AgentId(codec::uuid_from(&agent)?), user))
}

/// Bumps what the imported rows changed: knowledge collections' versions and
/// counts (their indexes reconcile at the next search), procedure revisions.
fn finish(tx: &Transaction<'_>, tenant: TenantId, tally: &ImportTally) -> StoreResult<()> {
    for (agent, added) in &tally.chunks {
        KnowledgeTable::bump_version(tx, tenant, *agent, *added)?;
    }
    if tally.procedures_changed {
        crate::procedures::bump(tx, tenant)?;
    }
    Ok(())
}

/// Ids are global, so a record could name another tenant's agent: it must
/// be one of this tenant's (the dump's, imported before it, or one it had).
fn require_agent(tx: &Connection, tenant: TenantId, agent: AgentId) -> StoreResult<()> {
    let ours: bool = tx
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL)",
        )?
        .query_row([agent.0.as_bytes(), tenant.0.as_bytes()], |r| r.get(0))?;
    Ok(Unresolved::Agent(agent).unless(ours)?)
}

fn episode_agent(tx: &Connection, tenant: TenantId, episode: EpisodeId) -> StoreResult<AgentId> {
    let agent: Option<Vec<u8>> = rows::collect(
        &mut *tx
            .prepare_cached("SELECT agent_id FROM episodes WHERE id = ?1 AND tenant_id = ?2")?,
        [episode.0.as_bytes(), tenant.0.as_bytes()],
        |r| Ok(r.get(0)?),
    )?
    .pop();
    let agent = agent.ok_or_else(|| Unresolved::MessageEpisode(episode).error())?;
    Ok(AgentId(codec::uuid_from(&agent)?))
}

fn insert_episode(tx: &Connection, tenant: TenantId, e: &Episode) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO episodes (id, tenant_id, conversation_id, agent_id, user_id, started_at, ended_at, end_reason,
                               summary, summary_source, key_facts, message_count, total_input_tokens,
                               total_output_tokens, last_message_at, deleted_at, archived_at, created_at, updated_at,
                               facts_learned_through)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
    )?
    .execute(params![
        e.id.0.as_bytes(),
        tenant.0.as_bytes(),
        e.conversation_id.0.as_bytes(),
        e.agent_id.0.as_bytes(),
        e.user_id,
        micros(e.started_at),
        e.ended_at.map(micros),
        e.end_reason.map(|r| r.as_str()),
        e.summary,
        e.summary_source.map(|s| s.as_str()),
        serde_json::to_string(&e.key_facts).unwrap_or_else(|_| "[]".into()),
        e.message_count,
        octopus_core::appending::clamp_tokens(e.total_input_tokens),
        octopus_core::appending::clamp_tokens(e.total_output_tokens),
        micros(e.last_message_at),
        e.deleted_at.map(micros),
        e.archived_at.map(micros),
        micros(e.created_at),
        micros(e.updated_at),
        e.facts_learned_through.min(e.message_count),
    ])?;
    // The episode must belong to the conversation it names, in this tenant.
    let matches: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM conversations
                        WHERE id = ?1 AND tenant_id = ?2 AND agent_id = ?3 AND user_id = ?4)",
        params![
            e.conversation_id.0.as_bytes(),
            tenant.0.as_bytes(),
            e.agent_id.0.as_bytes(),
            e.user_id
        ],
        |r| r.get(0),
    )?;
    Unresolved::EpisodePairing(e.id).unless(matches)?;
    Ok(())
}

fn insert_message(tx: &Connection, tenant: TenantId, m: &Message, now: i64) -> StoreResult<()> {
    let conversation: Option<Vec<u8>> = rows::collect(
        &mut *tx.prepare_cached(
            "SELECT conversation_id FROM episodes WHERE id = ?1 AND tenant_id = ?2",
        )?,
        [m.episode_id.0.as_bytes(), tenant.0.as_bytes()],
        |r| Ok(r.get(0)?),
    )?
    .pop();
    Unresolved::MessageConversation(m.id)
        .unless(conversation.as_deref() == Some(m.conversation_id.0.as_bytes().as_slice()))?;
    tx.prepare_cached(crate::messages::INSERT)?
        .execute(params![
            m.id.0.as_bytes(),
            tenant.0.as_bytes(),
            m.episode_id.0.as_bytes(),
            m.conversation_id.0.as_bytes(),
            m.ordinal,
            m.role.as_str(),
            m.content.as_ref().map(codec::encode_json),
            m.name,
            m.tool_call_id,
            (!m.tool_calls.is_empty()).then(|| codec::encode_json(&m.tool_calls)),
            m.token_count,
            micros(m.timestamp),
            m.agent_id.map(|a| *a.0.as_bytes()),
            m.contains_pii,
            m.redacted_content
                .as_ref()
                .map(|t| codec::encode_payload(t.as_bytes())),
            micros(m.created_at).min(now),
            m.usage
                .map(|u| octopus_core::appending::clamp_tokens(u.input_tokens)),
            m.usage
                .map(|u| octopus_core::appending::clamp_tokens(u.output_tokens)),
        ])?;
    Ok(())
}

fn insert_procedure(
    tx: &Connection,
    tenant: TenantId,
    dumped: &DumpedProcedure,
) -> StoreResult<()> {
    let p = &dumped.procedure;
    let shown = dumped.shown_embedding().map(codec::embedding_bytes);
    let inserted = tx.execute(
        "INSERT INTO procedures (id, tenant_id, agent_id, name, description, trigger_pattern, steps, embedding,
                                 is_active, is_approved, version, serving_version, latest_version,
                                 created_at, updated_at, created_by, approved_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            p.id.0.as_bytes(),
            tenant.0.as_bytes(),
            p.agent_id.map(|a| *a.0.as_bytes()),
            p.name,
            p.description,
            p.trigger_pattern,
            crate::procedures::steps_json(&p.steps),
            shown,
            p.is_active,
            p.serving_version.is_some(),
            p.version,
            p.serving_version,
            p.latest_version,
            micros(p.created_at),
            micros(p.updated_at),
            p.created_by,
            p.approved_by,
        ],
    );
    crate::procedures::name_conflict(inserted, &p.name)?;
    for DumpedVersion {
        version: v,
        embedding,
    } in &dumped.versions
    {
        tx.execute(
            "INSERT INTO procedure_versions (procedure_id, tenant_id, version, name, description, trigger_pattern,
                                             steps, embedding, status, created_by, created_at, decided_by, decided_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                p.id.0.as_bytes(),
                tenant.0.as_bytes(),
                v.version,
                v.name,
                v.description,
                v.trigger_pattern,
                crate::procedures::steps_json(&v.steps),
                embedding.as_ref().map(|e| codec::embedding_bytes(&e.vector)),
                v.status.as_str(),
                v.created_by,
                micros(v.created_at),
                v.decided_by,
                v.decided_at.map(micros),
            ],
        )?;
    }
    Ok(())
}

fn insert_chunk(tx: &Connection, tenant: TenantId, dumped: &DumpedChunk) -> StoreResult<()> {
    let agent = dumped.chunk.agent_id;
    let dimension = dumped.dimension(crate::knowledge::MAX_DIMENSION)?;
    let (model, made) = (&dumped.embedding.model, dumped.collection_created_at);
    crate::knowledge::ensure_collection(tx, tenant, agent, dimension, model, made)?;
    let chunk = dumped.to_new_chunk();
    crate::knowledge::insert_chunks(tx, tenant, agent, &[chunk])?;
    Ok(())
}

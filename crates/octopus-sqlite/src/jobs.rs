//! The memory work queue's writes (`memory_jobs`): what an append, a close or
//! an import queues in its own transaction, for the memory worker to claim
//! ([`MemoryStore`](octopus_core::store::MemoryStore) in `memory.rs`).

use octopus_core::memory_jobs::WorkClass;
use octopus_core::{AgentId, EpisodeId, MessageId, TenantId};
use rusqlite::{Connection, params};

use crate::error::Result as StoreResult;

pub(crate) const EMBED_MESSAGE: &str = "embed_message";
pub(crate) const SUMMARISE_EPISODE: &str = "summarise_episode";
pub(crate) const EMBED_FACT: &str = "embed_fact";
pub(crate) const LEARN_FACTS: &str = "learn_facts";

/// Queues the embedding of a fact (one stored without its vector: from a
/// dump), in the caller's transaction.
pub(crate) fn queue_fact(
    tx: &Connection,
    fact: &octopus_core::fact::Fact,
    now: i64,
    class: WorkClass,
) -> StoreResult<()> {
    let owner = (fact.tenant_id, fact.agent_id);
    queue(tx, owner, EMBED_FACT, fact.id.0.as_bytes(), now, class)
}

/// Queues the embedding of a message, in the caller's transaction.
pub(crate) fn queue_message(
    tx: &Connection,
    tenant: TenantId,
    agent: AgentId,
    message: MessageId,
    now: i64,
    class: WorkClass,
) -> StoreResult<()> {
    queue(
        tx,
        (tenant, agent),
        EMBED_MESSAGE,
        message.0.as_bytes(),
        now,
        class,
    )
}

/// Queues a job of `kind` on `target` for the agent's worker.
fn queue(
    tx: &Connection,
    (tenant, agent): (TenantId, AgentId),
    kind: &str,
    target: &[u8; 16],
    now: i64,
    class: WorkClass,
) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO memory_jobs (tenant_id, agent_id, kind, target, created_at, class) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        tenant.0.as_bytes(),
        agent.0.as_bytes(),
        kind,
        target,
        now,
        class_column(class)
    ])?;
    Ok(())
}

/// Queues the summary (and its embedding) of a closed episode, in the caller's
/// transaction.
pub(crate) fn queue_summary(
    tx: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
    now: i64,
    class: WorkClass,
) -> StoreResult<()> {
    queue_episode_work(tx, tenant, episode, SUMMARISE_EPISODE, now, class)
}

/// Queues the learning of facts from an open episode's latest messages, in
/// the caller's transaction.
pub(crate) fn queue_learning(
    tx: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
    now: i64,
    class: WorkClass,
) -> StoreResult<()> {
    queue_episode_work(tx, tenant, episode, LEARN_FACTS, now, class)
}

fn queue_episode_work(
    tx: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
    kind: &str,
    now: i64,
    class: WorkClass,
) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO memory_jobs (tenant_id, agent_id, kind, target, created_at, class)
         SELECT tenant_id, agent_id, ?3, id, ?4, ?5 FROM episodes WHERE id = ?1 AND tenant_id = ?2",
    )?
    .execute(params![
        episode.0.as_bytes(),
        tenant.0.as_bytes(),
        kind,
        now,
        class_column(class)
    ])?;
    Ok(())
}

/// `memory_jobs.class`: the claim takes the smallest first.
fn class_column(class: WorkClass) -> i64 {
    match class {
        WorkClass::Live => 0,
        WorkClass::Bulk => 1,
    }
}

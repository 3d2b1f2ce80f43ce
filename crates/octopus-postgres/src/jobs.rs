//! The memory work queue's writes (`memory_jobs`): what an append, a close or
//! an import queues in its own transaction, for the memory workers of every
//! server to claim (`memory.rs`).

use chrono::{DateTime, Utc};
use octopus_core::memory_jobs::WorkClass;
use octopus_core::{AgentId, EpisodeId, TenantId};
use sqlx_core::query::query;
use uuid::Uuid;

use crate::error::Result as StoreResult;
use crate::rows::Tx;

pub(crate) const EMBED_MESSAGE: &str = "embed_message";
pub(crate) const SUMMARISE_EPISODE: &str = "summarise_episode";
pub(crate) const LEARN_FACTS: &str = "learn_facts";
pub(crate) const EMBED_FACT: &str = "embed_fact";

/// Queues the embedding of a fact stored without its vector (from a dump).
pub(crate) async fn queue_fact(
    tx: &mut Tx<'_>,
    fact: &octopus_core::fact::Fact,
    now: DateTime<Utc>,
    class: WorkClass,
) -> StoreResult<()> {
    let owner = (fact.tenant_id, fact.agent_id);
    queue(tx, owner, EMBED_FACT, &[fact.id.0], now, class).await
}

fn class_column(class: WorkClass) -> i16 {
    match class {
        WorkClass::Live => 0,
        WorkClass::Bulk => 1,
    }
}

/// Queues the embedding of each of `messages`.
pub(crate) async fn queue_messages(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    agent: AgentId,
    messages: &[Uuid],
    now: DateTime<Utc>,
    class: WorkClass,
) -> StoreResult<()> {
    queue(tx, (tenant, agent), EMBED_MESSAGE, messages, now, class).await
}

/// Queues a job of `kind` on each of `targets`, in their order, for the
/// agent's worker.
async fn queue(
    tx: &mut Tx<'_>,
    (tenant, agent): (TenantId, AgentId),
    kind: &str,
    targets: &[Uuid],
    now: DateTime<Utc>,
    class: WorkClass,
) -> StoreResult<()> {
    if targets.is_empty() {
        return Ok(());
    }
    query(
        "INSERT INTO memory_jobs (tenant_id, agent_id, kind, target, created_at, class)
         SELECT $1, $2, $3, target, $5, $6 FROM UNNEST($4::uuid[]) WITH ORDINALITY AS t (target, n) ORDER BY n",
    )
    .bind(tenant.0)
    .bind(agent.0)
    .bind(kind)
    .bind(targets)
    .bind(now)
    .bind(class_column(class))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Queues the summary (and its embedding) of an episode.
pub(crate) async fn queue_summary(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
    now: DateTime<Utc>,
    class: WorkClass,
) -> StoreResult<()> {
    queue_episode_work(tx, tenant, episode, SUMMARISE_EPISODE, now, class).await
}

/// Queues the learning of facts from an open episode's latest messages.
pub(crate) async fn queue_learning(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
    now: DateTime<Utc>,
    class: WorkClass,
) -> StoreResult<()> {
    queue_episode_work(tx, tenant, episode, LEARN_FACTS, now, class).await
}

async fn queue_episode_work(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
    kind: &str,
    now: DateTime<Utc>,
    class: WorkClass,
) -> StoreResult<()> {
    query(
        "INSERT INTO memory_jobs (tenant_id, agent_id, kind, target, created_at, class)
         SELECT tenant_id, agent_id, $3, id, $4, $5 FROM episodes WHERE id = $1 AND tenant_id = $2",
    )
    .bind(episode.0)
    .bind(tenant.0)
    .bind(kind)
    .bind(now)
    .bind(class_column(class))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

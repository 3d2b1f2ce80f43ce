//! The profile-summary port on PostgreSQL: one row per user and agent,
//! replaced by each new paragraph (forgetting the user removes theirs:
//! `forget.rs`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use octopus_core::profile_summary::ProfileSummary;
use octopus_core::store::ProfileSummaryStore;
use octopus_core::{AgentId, FactId, Result, TenantId};
use sqlx_core::query::query;
use sqlx_core::row::Row;
use uuid::Uuid;

use crate::{PostgresStore, domain};

#[async_trait]
impl ProfileSummaryStore for PostgresStore {
    async fn save_profile_summary(&self, tenant: TenantId, summary: &ProfileSummary) -> Result<()> {
        domain(async {
            let fact_ids: Vec<Uuid> = summary.fact_ids.iter().map(|id| id.0).collect();
            query(
                "INSERT INTO profile_summaries (tenant_id, agent_id, user_id, text, fact_ids, written_at)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (tenant_id, agent_id, user_id) DO UPDATE SET
                     text = excluded.text, fact_ids = excluded.fact_ids,
                     written_at = excluded.written_at",
            )
            .bind(tenant.0)
            .bind(summary.agent_id.0)
            .bind(&summary.user_id)
            .bind(&summary.text)
            .bind(fact_ids)
            .bind(summary.written_at)
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    async fn profile_summary(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<Option<ProfileSummary>> {
        domain(async {
            let row = query(
                "SELECT text, fact_ids, written_at FROM profile_summaries
                 WHERE tenant_id = $1 AND agent_id = $2 AND user_id = $3",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .bind(user_id)
            .fetch_optional(&self.pool)
            .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let fact_ids: Vec<Uuid> = row.try_get("fact_ids")?;
            Ok(Some(ProfileSummary {
                agent_id: agent,
                user_id: user_id.to_owned(),
                text: row.try_get("text")?,
                fact_ids: fact_ids.into_iter().map(FactId).collect(),
                written_at: row.try_get::<DateTime<Utc>, _>("written_at")?,
            }))
        })
        .await
    }
}

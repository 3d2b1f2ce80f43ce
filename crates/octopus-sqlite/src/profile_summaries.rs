//! The profile-summary port on SQLite: one row per user and agent, replaced
//! by each new paragraph (forgetting the user removes theirs: `forget.rs`).

use async_trait::async_trait;
use octopus_core::profile_summary::ProfileSummary;
use octopus_core::store::ProfileSummaryStore;
use octopus_core::{AgentId, FactId, Result, TenantId};
use rusqlite::{OptionalExtension, params};

use crate::SqliteStore;
use crate::codec::{instant, micros};
use crate::error::corrupt;

#[async_trait]
impl ProfileSummaryStore for SqliteStore {
    async fn save_profile_summary(&self, tenant: TenantId, summary: &ProfileSummary) -> Result<()> {
        let summary = summary.clone();
        let fact_ids = serde_json::to_string(&summary.fact_ids).unwrap_or_default();
        self.db
            .write(move |conn| {
                conn.prepare_cached(
                    "INSERT INTO profile_summaries (tenant_id, agent_id, user_id, text, fact_ids, written_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (tenant_id, agent_id, user_id) DO UPDATE SET
                         text = excluded.text, fact_ids = excluded.fact_ids,
                         written_at = excluded.written_at",
                )?
                .execute(params![
                    tenant.0.as_bytes(),
                    summary.agent_id.0.as_bytes(),
                    summary.user_id,
                    summary.text,
                    fact_ids,
                    micros(summary.written_at),
                ])?;
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
        let user_id = user_id.to_owned();
        self.db
            .read(move |conn| {
                let row = conn
                    .prepare_cached(
                        "SELECT text, fact_ids, written_at FROM profile_summaries
                         WHERE tenant_id = ?1 AND agent_id = ?2 AND user_id = ?3",
                    )?
                    .query_row(
                        params![tenant.0.as_bytes(), agent.0.as_bytes(), user_id],
                        |r| {
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, String>(1)?,
                                r.get::<_, i64>(2)?,
                            ))
                        },
                    )
                    .optional()?;
                let Some((text, fact_ids, written_at)) = row else {
                    return Ok(None);
                };
                let fact_ids: Vec<FactId> =
                    serde_json::from_str(&fact_ids).map_err(|e| corrupt("fact_ids", e))?;
                Ok(Some(ProfileSummary {
                    agent_id: agent,
                    user_id,
                    text,
                    fact_ids,
                    written_at: instant(written_at)?,
                }))
            })
            .await
    }
}

//! Full-text search over messages: each row's `tsvector` (English stemming),
//! written with the row, under a GIN index.
//!
//! Ranking is `ts_rank` (term frequency in the message, normalised by the
//! logarithm of its length: flag 1), PostgreSQL's closest to BM25. Unlike
//! BM25 it has no inverse document frequency: a rare word counts no more than
//! a common one.

use async_trait::async_trait;
use octopus_core::search::{MessageHit, MessageSearchQuery, search_terms};
use octopus_core::store::MessageSearch;
use octopus_core::{AgentId, Result, TenantId};
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::row::Row;
use sqlx_postgres::Postgres;

use crate::messages::{self, COLUMNS};
use crate::{PostgresStore, domain};

/// The query's words OR-ed together, as `to_tsquery` reads them. Words are
/// runs of letters and digits ([`search_terms`]), so none is query syntax.
pub(crate) fn any_word(text: &str) -> String {
    search_terms(text).join(" | ")
}

#[async_trait]
impl MessageSearch for PostgresStore {
    async fn search_messages(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
    ) -> Result<Vec<MessageHit>> {
        domain(async {
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "SELECT {COLUMNS}, e.agent_id AS episode_agent_id, e.user_id AS episode_user_id,
                        ts_rank(m.search, q, 1) AS rank
                 FROM to_tsquery('english', "
            ));
            sql.push_bind(any_word(&query.text));
            sql.push(
                ") q, messages m JOIN episodes e ON e.id = m.episode_id
                 WHERE m.search @@ q AND e.deleted_at IS NULL AND e.archived_at IS NULL AND m.tenant_id = ",
            )
            .push_bind(tenant.0)
            .push(" AND e.tenant_id = ")
            .push_bind(tenant.0);
            if let Some(agent) = query.agent_id {
                sql.push(" AND e.agent_id = ").push_bind(agent.0);
            }
            if let Some(user) = &query.user_id {
                sql.push(" AND e.user_id = ").push_bind(user.clone());
            }
            if let Some(conversation) = query.conversation_id {
                sql.push(" AND m.conversation_id = ").push_bind(conversation.0);
            }
            if let Some(from) = query.from {
                sql.push(" AND m.timestamp >= ").push_bind(from);
            }
            if let Some(to) = query.to {
                sql.push(" AND m.timestamp < ").push_bind(to);
            }
            sql.push(" ORDER BY rank DESC, m.id LIMIT ")
                .push_bind(i64::from(query.limit));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter()
                .map(|row| {
                    let rank: f32 = row.try_get("rank")?;
                    Ok(MessageHit {
                        score: f64::from(rank),
                        agent_id: AgentId(row.try_get("episode_agent_id")?),
                        user_id: row.try_get("episode_user_id")?,
                        message: messages::message_from_row(row)?,
                    })
                })
                .collect()
        })
        .await
    }
}

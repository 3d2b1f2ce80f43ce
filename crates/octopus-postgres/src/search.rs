//! Full-text search over messages: each row's `tsvector` (English stemming),
//! written with the row, under a GIN index.
//!
//! Ranking is BM25's idea over PostgreSQL's parts. `ts_rank` alone (term
//! frequency, normalised by the logarithm of the message's length: flag 1)
//! has no inverse document frequency, so a message full of a common word
//! outranked the one with the rare word a question is about: LoCoMo keyword
//! recall@10 was 0.621 against SQLite's BM25 0.728. So each query word's
//! `ts_rank` is weighed by its BM25 IDF, `ln(1 + (N − n + 0.5) / (n + 0.5))`,
//! with `n` the searched user's (or agent's, or tenant's) live messages that
//! contain it and `N` all of them (from their episodes' message counts),
//! counted first in one round trip.
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

/// The words of a query, once each, in order.
pub(crate) fn distinct_words(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    search_terms(text)
        .into_iter()
        .map(str::to_lowercase)
        .filter(|word| seen.insert(word.clone()))
        .collect()
}

/// BM25's inverse document frequency of a word in `n` of `total` documents.
fn idf(n: i64, total: i64) -> f64 {
    let (n, total) = (n as f64, total.max(n) as f64);
    (1.0 + (total - n + 0.5) / (n + 0.5)).ln()
}

/// Appends the conditions on the episodes `e` a search covers: the
/// tenant's live episodes, of the agent and user the query names.
fn push_episode_scope(
    sql: &mut QueryBuilder<'_, Postgres>,
    tenant: TenantId,
    query: &MessageSearchQuery,
) {
    sql.push(" AND e.deleted_at IS NULL AND e.archived_at IS NULL AND e.tenant_id = ")
        .push_bind(tenant.0);
    if let Some(agent) = query.agent_id {
        sql.push(" AND e.agent_id = ").push_bind(agent.0);
    }
    if let Some(user) = &query.user_id {
        sql.push(" AND e.user_id = ").push_bind(user.clone());
    }
}

/// Appends the conditions on the messages `m` (and their episodes `e`) a
/// search covers: those of [`push_episode_scope`], narrowed to the
/// conversation and time range the query names.
fn push_scope(sql: &mut QueryBuilder<'_, Postgres>, tenant: TenantId, query: &MessageSearchQuery) {
    push_episode_scope(sql, tenant, query);
    sql.push(" AND m.tenant_id = ").push_bind(tenant.0);
    if let Some(conversation) = query.conversation_id {
        sql.push(" AND m.conversation_id = ")
            .push_bind(conversation.0);
    }
    if let Some(from) = query.from {
        sql.push(" AND m.timestamp >= ").push_bind(from);
    }
    if let Some(to) = query.to {
        sql.push(" AND m.timestamp < ").push_bind(to);
    }
}

impl PostgresStore {
    /// Each word's IDF among the messages the query searches.
    async fn word_weights(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
        words: &[String],
    ) -> std::result::Result<Vec<f64>, sqlx_core::Error> {
        let mut sql = QueryBuilder::<Postgres>::new(
            "SELECT w.word, (SELECT count(*) FROM messages m JOIN episodes e ON e.id = m.episode_id
                             WHERE m.search @@ to_tsquery('english', w.word)",
        );
        push_scope(&mut sql, tenant, query);
        // All the messages, counted from their episodes' counts: cheap, and
        // exact enough for a weight (it leaves out conversation and time
        // bounds, which rarely change which word is the rarer).
        sql.push(
            ") AS containing, (SELECT coalesce(sum(e.message_count), 0)::int8 FROM episodes e WHERE TRUE",
        );
        push_episode_scope(&mut sql, tenant, query);
        sql.push(") AS total FROM unnest(")
            .push_bind(words.to_vec())
            .push("::text[]) WITH ORDINALITY AS w(word, position) ORDER BY w.position");
        let rows = sql.build().fetch_all(&self.pool).await?;
        rows.iter()
            .map(|row| Ok(idf(row.try_get("containing")?, row.try_get("total")?)))
            .collect()
    }
}

#[async_trait]
impl MessageSearch for PostgresStore {
    async fn search_messages(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
    ) -> Result<Vec<MessageHit>> {
        domain(async {
            let words = distinct_words(&query.text);
            if words.is_empty() {
                return Ok(Vec::new());
            }
            let weights = self.word_weights(tenant, query, &words).await?;
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "SELECT {COLUMNS}, e.agent_id AS episode_agent_id, e.user_id AS episode_user_id, ("
            ));
            for (i, (word, weight)) in words.iter().zip(&weights).enumerate() {
                if i > 0 {
                    sql.push(" + ");
                }
                sql.push_bind(*weight)
                    .push("::float8 * ts_rank(m.search, to_tsquery('english', ")
                    .push_bind(word.clone())
                    .push("), 1)");
            }
            sql.push(") AS rank FROM to_tsquery('english', ");
            sql.push_bind(any_word(&query.text));
            sql.push(") q, messages m JOIN episodes e ON e.id = m.episode_id WHERE m.search @@ q");
            push_scope(&mut sql, tenant, query);
            sql.push(" ORDER BY rank DESC, m.id LIMIT ")
                .push_bind(i64::from(query.limit));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter()
                .map(|row| {
                    Ok(MessageHit {
                        score: row.try_get("rank")?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_words_weigh_more_and_weights_stay_positive() {
        assert!(idf(1, 100) > idf(10, 100));
        assert!(
            idf(100, 100) > 0.0,
            "a word in every message still counts a little"
        );
        assert!(
            idf(5, 3) > 0.0,
            "a total below the count (messages added between the counts)"
        );
        assert_eq!(
            distinct_words("Order, order ORDER refund"),
            ["order", "refund"]
        );
    }
}

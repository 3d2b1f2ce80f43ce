//! Facts learned about users on PostgreSQL: the `facts` rows with their
//! `tsvector` (English stemming, generated with the row), and the reads of
//! [`FactStore`]. Facts are written by a summary job's completion
//! (`memory.rs`) and by imports, and removed with their episode or user.
//!
//! A keyword search ranks as message search does (`search.rs`): each query
//! word's `ts_rank` weighed by its BM25 IDF, counted over the searched
//! user's facts alone, so that no other user or tenant moves the scores.

use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::fact::{
    Fact, FactAction, FactCorrection, FactDeletion, FactDeletionReceipt, FactFilter,
    FactHistoryEntry, FactHit, FactSearchQuery,
};
use octopus_core::store::{Erasure, FactStore};
use octopus_core::{FactId, Result, TenantId};
use sqlx_core::query::query;
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::row::Row;
use sqlx_postgres::Postgres;
use uuid::Uuid;

use crate::error::Result as StoreResult;
use crate::fact_rows::{COLUMNS, IN_USE, IN_USE_WHERE, fact_from_row, insert_fact};
use crate::{PostgresStore, domain};

/// BM25's inverse document frequency of a word in `n` of `total` facts.
fn idf(n: i64, total: i64) -> f64 {
    let (n, total) = (n as f64, total.max(n) as f64);
    (1.0 + (total - n + 0.5) / (n + 0.5)).ln()
}

impl PostgresStore {
    /// Each word's IDF among the user's facts in use.
    async fn fact_word_weights(
        &self,
        tenant: TenantId,
        query_: &FactSearchQuery,
        words: &[String],
    ) -> StoreResult<Vec<f64>> {
        let scope = "f.tenant_id = $1 AND f.agent_id = $2 AND f.user_id = $3";
        let rows = query(&format!(
            "SELECT (SELECT count(*) FROM facts f {IN_USE}
                     WHERE {scope} AND {IN_USE_WHERE} AND f.search @@ to_tsquery('english', w.word)) AS containing,
                    (SELECT count(*) FROM facts f {IN_USE} WHERE {scope} AND {IN_USE_WHERE}) AS total
             FROM unnest($4::text[]) WITH ORDINALITY AS w(word, position) ORDER BY w.position"
        ))
        .bind(tenant.0)
        .bind(query_.agent_id.0)
        .bind(&query_.user_id)
        .bind(words.to_vec())
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok(idf(row.try_get("containing")?, row.try_get("total")?)))
            .collect()
    }
}

#[async_trait]
impl FactStore for PostgresStore {
    async fn list_facts(&self, tenant: TenantId, filter: &FactFilter) -> Result<Vec<Fact>> {
        domain(async {
            let current = if filter.include_replaced {
                ""
            } else {
                "AND f.superseded_by IS NULL"
            };
            query(&format!(
                "SELECT {COLUMNS} FROM facts f {IN_USE}
                 WHERE f.tenant_id = $1 AND f.agent_id = $2 AND f.user_id = $3 {current}
                   AND {IN_USE_WHERE}
                   AND (cardinality($6::text[]) = 0 OR f.category = ANY($6))
                   AND ($7::text IS NULL OR f.key = $7)
                 ORDER BY f.valid_from DESC, f.seq DESC LIMIT $4 OFFSET $5"
            ))
            .bind(tenant.0)
            .bind(filter.agent_id.0)
            .bind(&filter.user_id)
            .bind(i64::from(filter.page.limit))
            .bind(i64::from(filter.page.offset))
            .bind(&filter.categories)
            .bind(&filter.key)
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(fact_from_row)
            .collect()
        })
        .await
    }

    async fn get_facts(&self, tenant: TenantId, ids: &[FactId]) -> Result<Vec<Fact>> {
        domain(async {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let wanted: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
            let found = query(&format!(
                "SELECT {COLUMNS} FROM facts f {IN_USE}
                 WHERE f.tenant_id = $1 AND f.id = ANY($2) AND {IN_USE_WHERE}"
            ))
            .bind(tenant.0)
            .bind(wanted)
            .fetch_all(&self.pool)
            .await?;
            let mut by_id: HashMap<FactId, Fact> = found
                .iter()
                .map(|row| fact_from_row(row).map(|f| (f.id, f)))
                .collect::<StoreResult<_>>()?;
            Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
        })
        .await
    }

    async fn search_facts(
        &self,
        tenant: TenantId,
        query_: &FactSearchQuery,
    ) -> Result<Vec<FactHit>> {
        domain(async {
            let words = crate::search::distinct_words(&query_.text);
            if words.is_empty() {
                return Ok(Vec::new());
            }
            let weights = self.fact_word_weights(tenant, query_, &words).await?;
            let mut sql = QueryBuilder::<Postgres>::new(format!("SELECT {COLUMNS}, ("));
            for (i, (word, weight)) in words.iter().zip(&weights).enumerate() {
                if i > 0 {
                    sql.push(" + ");
                }
                sql.push_bind(*weight)
                    .push("::float8 * ts_rank(f.search, to_tsquery('english', ")
                    .push_bind(word.clone())
                    .push("), 1)");
            }
            sql.push(") AS rank FROM to_tsquery('english', ")
                .push_bind(crate::search::any_word(&query_.text))
                .push(format!(
                    ") q, facts f {IN_USE} WHERE {IN_USE_WHERE} AND f.search @@ q AND f.tenant_id = "
                ))
                .push_bind(tenant.0)
                .push(" AND f.agent_id = ")
                .push_bind(query_.agent_id.0)
                .push(" AND f.user_id = ")
                .push_bind(query_.user_id.clone())
                .push(" ORDER BY rank DESC, f.seq LIMIT ")
                .push_bind(i64::from(query_.limit));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter()
                .map(|row| {
                    Ok(FactHit {
                        score: row.try_get("rank")?,
                        fact: fact_from_row(row)?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn correct_fact(&self, tenant: TenantId, correction: &FactCorrection) -> Result<Fact> {
        correction.validate()?;
        domain(crate::error::retrying(|| {
            self.store_correction(tenant, correction)
        }))
        .await
    }

    async fn add_fact(
        &self,
        tenant: TenantId,
        addition: &octopus_core::fact::FactAddition,
    ) -> Result<Fact> {
        addition.validate()?;
        let mut fact = addition.fact.clone();
        fact.tenant_id = tenant;
        domain(async {
            let mut tx = self.pool.begin().await?;
            let inserted = insert_fact(
                &mut tx,
                &fact,
                FactAction::Added,
                addition.reason.as_deref(),
            )
            .await;
            match inserted {
                // The key's index is the only one a new fact can meet.
                Err(crate::error::Error::Sql(sqlx_core::Error::Database(e)))
                    if e.code().as_deref() == Some("23505") =>
                {
                    return Err(addition.key_taken().into());
                }
                other => other?,
            }
            crate::jobs::queue_fact(
                &mut tx,
                &fact,
                fact.created_at,
                octopus_core::memory_jobs::WorkClass::Live,
            )
            .await?;
            tx.commit().await?;
            Ok(fact)
        })
        .await
    }

    async fn delete_fact(
        &self,
        tenant: TenantId,
        deletion: &FactDeletion,
    ) -> Result<FactDeletionReceipt> {
        deletion.validate()?;
        self.finish_erasures().await?;
        domain(async {
            let (mut receipt, pending, record) =
                crate::error::retrying(|| self.remove_fact(tenant, deletion)).await?;
            self.finish_erasure(tenant, &pending, record).await?;
            receipt.compacted = true;
            Ok(receipt)
        })
        .await
    }

    async fn fact_history(&self, tenant: TenantId, id: FactId) -> Result<Vec<FactHistoryEntry>> {
        domain(self.read_history(tenant, id)).await
    }
}

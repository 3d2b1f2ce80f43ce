//! Facts learned about users on SQLite: [`FactStore`] over the rows of
//! `fact_rows.rs`. Facts are written by a summary job's completion
//! (`memory.rs`) and by imports, corrected and deleted by people
//! (`fact_changes.rs`), and removed with their episode or their user.

use async_trait::async_trait;
use octopus_core::fact::{
    Fact, FactAction, FactCorrection, FactDeletion, FactDeletionReceipt, FactFilter,
    FactHistoryEntry, FactHit, FactSearchQuery,
};
use octopus_core::store::{Erasure, FactStore};
use octopus_core::{FactId, Result, TenantId};

use crate::SqliteStore;
use crate::codec::micros;
use crate::fact_rows::{by_ids, insert_fact, list, search};

#[async_trait]
impl FactStore for SqliteStore {
    async fn list_facts(&self, tenant: TenantId, filter: &FactFilter) -> Result<Vec<Fact>> {
        let filter = filter.clone();
        self.db.read(move |conn| list(conn, tenant, &filter)).await
    }

    async fn get_facts(&self, tenant: TenantId, ids: &[FactId]) -> Result<Vec<Fact>> {
        let ids = ids.to_vec();
        self.db.read(move |conn| by_ids(conn, tenant, &ids)).await
    }

    async fn search_facts(
        &self,
        tenant: TenantId,
        query: &FactSearchQuery,
    ) -> Result<Vec<FactHit>> {
        let query = query.clone();
        self.db.read(move |conn| search(conn, tenant, &query)).await
    }

    async fn correct_fact(&self, tenant: TenantId, correction: &FactCorrection) -> Result<Fact> {
        correction.validate()?;
        let correction = correction.clone();
        self.db
            .write(move |conn| crate::fact_changes::correct(conn, tenant, &correction))
            .await
    }

    async fn add_fact(
        &self,
        tenant: TenantId,
        addition: &octopus_core::fact::FactAddition,
    ) -> Result<Fact> {
        addition.validate()?;
        let mut addition = addition.clone();
        addition.fact.tenant_id = tenant;
        self.db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let fact = &addition.fact;
                match insert_fact(&tx, fact, FactAction::Added, addition.reason.as_deref()) {
                    // The key's index is the only one a new fact can meet.
                    Err(crate::error::Error::Sqlite(rusqlite::Error::SqliteFailure(e, _)))
                        if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
                    {
                        return Err(addition.key_taken().into());
                    }
                    other => other?,
                };
                crate::jobs::queue_fact(
                    &tx,
                    fact,
                    micros(fact.created_at),
                    octopus_core::memory_jobs::WorkClass::Live,
                )?;
                tx.commit()?;
                Ok(addition.fact)
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
        let deletion = deletion.clone();
        let crate::fact_changes::Removed {
            mut receipt,
            pending,
            record,
        } = self
            .db
            .write(move |conn| crate::fact_changes::remove(conn, tenant, &deletion))
            .await?;
        receipt.compacted = self.finish_erasure(tenant, &pending, record).await?;
        Ok(receipt)
    }

    async fn fact_history(&self, tenant: TenantId, id: FactId) -> Result<Vec<FactHistoryEntry>> {
        self.db
            .read(move |conn| crate::fact_changes::history(conn, tenant, id))
            .await
    }
}

//! Taking erased words off the disk without holding anyone up.
//!
//! A deletion overwrites what it removes in the database pages at commit
//! (`secure_delete`), but the write-ahead logs still hold the page versions
//! from before, until a checkpoint copies the log into the file and
//! truncates it. That checkpoint cannot complete while any reader still
//! uses part of the log (an export being read, a backup tool, a long
//! report). Waiting for it on the writer's connection would stop every
//! tenant's writes for as long as that reader lasts, so a checkpoint is
//! tried once, without waiting ([`crate::db::try_checkpoint`]); when a
//! reader holds it back, the store owes one, and a task tries again every
//! [`RETRY`] until both files' logs are empty. The words leave the logs
//! within [`RETRY`] of the last such reader ending; how long they have
//! waited is [`octopus_core::store::Health::erased_words_waiting`].

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use octopus_core::Result;

use crate::SqliteStore;
use crate::db::Db;
use crate::search::{Indexer, merge_step, most_merge_steps};

/// Tries, a few milliseconds apart, before a checkpoint is owed.
const QUICK_TRIES: u32 = 8;

/// How often an owed checkpoint is tried again.
pub(crate) const RETRY: Duration = Duration::from_millis(500);

/// Whether, and since when, a checkpoint is owed.
#[derive(Default)]
pub(crate) struct Compaction {
    owed_since: Mutex<Option<Instant>>,
}

impl Compaction {
    /// How long erased words have waited to leave the logs; `None` when
    /// none wait.
    pub(crate) fn waiting(&self) -> Option<Duration> {
        lock(&self.owed_since).map(|since| since.elapsed())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl SqliteStore {
    /// After a deletion: merges the message index's segments (dropping the
    /// deleted entries' terms) and tries to empty both files' logs. Returns
    /// whether both logs are empty now; when not, they are emptied off the
    /// write path as soon as the readers holding them back are done.
    pub(crate) async fn compact(&self) -> Result<bool> {
        self.indexer.merge().await?;
        self.checkpoint_logs().await
    }

    /// Merges the main file's full-text indexes (knowledge and facts) into
    /// one segment each, which drops the terms of deleted entries, a
    /// bounded number of pages per write so that other writers go on
    /// between steps. Needed when a whole tenant's knowledge went; a fact's
    /// terms leave at once (`secure-delete`), yet a segment that other
    /// entries share can keep a term's text until it is rewritten.
    pub(crate) async fn merge_main_indexes(&self) -> Result<()> {
        for table in ["knowledge_fts", "fact_fts"] {
            let pages: i64 = self
                .db
                .read(move |conn| {
                    Ok(
                        conn.query_row(&format!("SELECT count(*) FROM {table}_data"), [], |r| {
                            r.get(0)
                        })?,
                    )
                })
                .await?;
            for _ in 0..most_merge_steps(pages) {
                let merged = self
                    .db
                    .write(move |conn| merge_step(conn, "main", table))
                    .await?;
                if !merged {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Tries to empty both logs, merging nothing (at start, for words a
    /// crash may have left in them, and after a merge).
    pub(crate) async fn checkpoint_logs(&self) -> Result<bool> {
        let mut done = false;
        // The store's own short reads (a search, the indexer reading new
        // messages) hold a checkpoint back for moments: a few tries, with
        // the writer free between them, see past those.
        for attempt in 1..=QUICK_TRIES {
            done = checkpoint_both(&self.db, &self.indexer).await?;
            if done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5 * u64::from(attempt))).await;
        }
        self.settle(done);
        Ok(done)
    }

    fn settle(&self, done: bool) {
        let mut owed = lock(&self.compaction.owed_since);
        match (done, owed.is_some()) {
            // A complete checkpoint empties what any earlier one left too.
            (true, _) => *owed = None,
            (false, true) => {}
            (false, false) => {
                *owed = Some(Instant::now());
                tracing::info!(
                    "a reader holds back the checkpoint after an erasure; retrying off the write path"
                );
                tokio::spawn(retry(
                    Arc::downgrade(&self.db),
                    Arc::downgrade(&self.indexer),
                    Arc::clone(&self.compaction),
                ));
            }
        }
    }
}

async fn checkpoint_both(db: &Arc<Db>, indexer: &Arc<Indexer>) -> Result<bool> {
    let main = db
        .write(|conn| crate::db::try_checkpoint(conn, "main"))
        .await?;
    let search = indexer.checkpoint().await?;
    Ok(main && search)
}

/// Tries the owed checkpoint every [`RETRY`] until it completes, or until
/// the store is closed (its files then hold no log once the last
/// connection closes).
async fn retry(db: Weak<Db>, indexer: Weak<Indexer>, compaction: Arc<Compaction>) {
    loop {
        tokio::time::sleep(RETRY).await;
        let (Some(db), Some(indexer)) = (db.upgrade(), indexer.upgrade()) else {
            return;
        };
        match checkpoint_both(&db, &indexer).await {
            Ok(true) => {
                let waited = lock(&compaction.owed_since).take();
                tracing::info!(
                    waited_ms = waited.map(|at| at.elapsed().as_millis()),
                    "erased words left the write-ahead logs"
                );
                return;
            }
            Ok(false) => {}
            Err(error) => tracing::warn!(%error, "checkpoint after an erasure failed; retrying"),
        }
    }
}

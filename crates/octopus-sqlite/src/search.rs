//! Full-text search over messages, and the indexer that keeps it current.
//!
//! Appends do not touch the index: maintaining FTS5 in the append transaction
//! would cut append throughput roughly twentyfold (566k to 23k rows a second,
//! measured on a store of 100k messages). Instead, an
//! indexer follows the messages table by its ever-increasing `seq`, in batches, on
//! its own thread and in its own database file. Before a search runs, it catches up
//! on whatever is still pending, so a search sees every message whose append
//! returned before the search began. Under a heavy ingest that catch-up is the
//! price a search pays; appends never pay it.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use octopus_core::message::{MessageContent, ToolCallRecord, message_search_text};
use octopus_core::search::{MessageHit, MessageSearchQuery, search_terms};
use octopus_core::store::MessageSearch;
use octopus_core::{AgentId, Result, TenantId};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::db::{Db, lock};
use crate::error::{Error, Result as StoreResult};
use crate::messages;
use crate::rows::{self, Filters, blob};

/// Messages indexed per transaction: large enough to amortise FTS5's per-commit
/// segment flush, small enough to keep a catch-up's lock short.
const BATCH: usize = 2_000;

/// Pages of the message index one step of a compaction merges.
const MERGE_STEP_PAGES: u32 = 256;

/// How often the indexer looks for messages written by another process.
const IDLE_POLL: Duration = Duration::from_secs(1);

pub(crate) struct Indexer {
    conn: Mutex<Connection>,
    wake: SyncSender<()>,
    /// Async callers take turns here before taking a blocking thread to the
    /// connection's lock, so that concurrent searches wait as tasks.
    turn: tokio::sync::Mutex<()>,
}

impl Indexer {
    /// Starts the indexer's thread; it stops when the indexer is dropped.
    pub fn start(db: &Db) -> StoreResult<Arc<Self>> {
        let (wake, woken) = mpsc::sync_channel(1);
        let indexer = Arc::new(Self {
            conn: Mutex::new(db.open_indexer_connection()?),
            wake,
            turn: tokio::sync::Mutex::new(()),
        });
        let weak = Arc::downgrade(&indexer);
        std::thread::Builder::new()
            .name("octopus-fts-indexer".into())
            .spawn(move || run(weak, woken))
            .map_err(|e| crate::error::corrupt("indexer thread", e))?;
        Ok(indexer)
    }

    /// Empties the indexer connection's page cache (see [`Db::shrink_caches`]).
    pub fn shrink_cache(&self) -> StoreResult<()> {
        crate::db::shrink_cache(&lock(&self.conn))
    }

    /// Tells the indexer that messages were appended.
    pub fn wake(&self) {
        match self.wake.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
        }
    }

    /// Indexes every message appended so far; returns how many it indexed.
    pub fn catch_up(&self) -> StoreResult<usize> {
        let mut conn = lock(&self.conn);
        if !has_pending(&conn)? {
            return Ok(0);
        }
        let mut total = 0;
        loop {
            let indexed = index_batch(&mut conn)?;
            total += indexed;
            if indexed < BATCH {
                return Ok(total);
            }
        }
    }

    /// Drops purged messages from the index. Returns how many of them it held
    /// (a message purged before it was indexed has no entry).
    pub async fn forget(self: &Arc<Self>, seqs: Vec<i64>) -> Result<u64> {
        if seqs.is_empty() {
            return Ok(0);
        }
        self.with_connection(move |conn| {
            let tx = conn.transaction()?;
            let mut held = 0;
            {
                let mut exists =
                    tx.prepare_cached("SELECT count(*) FROM search.message_fts WHERE rowid = ?1")?;
                let mut delete =
                    tx.prepare_cached("DELETE FROM search.message_fts WHERE rowid = ?1")?;
                let mut measured = tx.prepare_cached(
                    "DELETE FROM search.message_lengths WHERE seq = ?1 RETURNING scope, length",
                )?;
                let mut totals = ScopeTotals::default();
                for seq in seqs {
                    let count: i64 = exists.query_row([seq], |r| r.get(0))?;
                    if count > 0 {
                        held += 1;
                        delete.execute([seq])?;
                    }
                    let gone = rows::collect(&mut measured, [seq], |r| {
                        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
                    })?;
                    for (scope, length) in gone {
                        totals.add(&scope, -1, -length);
                    }
                }
                totals.write(&tx)?;
            }
            tx.commit()?;
            Ok(held)
        })
        .await
    }

    /// Merges the index's segments into one, which drops the terms of
    /// deleted entries (the pages they leave are zeroed: `secure_delete`);
    /// the file's log is emptied after (see [`crate::compaction`]). It takes
    /// the indexer's lock, not the writer's, and merges a bounded number of pages at a time (FTS5's `merge` with
    /// a negative size: an `optimize` in steps), giving the lock back
    /// between steps: appends go on meanwhile, and a search that must
    /// catch the index up waits for one step, not the whole merge.
    pub async fn merge(self: &Arc<Self>) -> Result<()> {
        // A bound on the steps, should a step ever report work forever: the
        // index's pages, as many steps as merge them all twice over.
        let pages: i64 = self
            .with_connection(|conn| {
                Ok(
                    conn.query_row("SELECT count(*) FROM search.message_fts_data", [], |r| {
                        r.get(0)
                    })?,
                )
            })
            .await?;
        for _ in 0..most_merge_steps(pages) {
            let merged = self
                .with_connection(|conn| merge_step(conn, "search", "message_fts"))
                .await?;
            if !merged {
                break;
            }
        }
        Ok(())
    }

    /// Tries once to empty the index file's write-ahead log into it (see
    /// [`crate::db::try_checkpoint`]); says whether it completed.
    pub async fn checkpoint(self: &Arc<Self>) -> Result<bool> {
        self.with_connection(|conn| crate::db::try_checkpoint(conn, "search"))
            .await
    }

    /// Runs `work` on the indexer's connection, on a blocking thread: so it
    /// never runs beside an indexing batch.
    async fn with_connection<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    ) -> Result<T> {
        let _turn = self.turn.lock().await;
        let indexer = Arc::clone(self);
        let outcome = tokio::task::spawn_blocking(move || work(&mut lock(&indexer.conn))).await;
        Ok(outcome.map_err(Error::Task)??)
    }

    /// [`Self::catch_up`] for async callers, one at a time.
    pub async fn catch_up_now(self: &Arc<Self>) -> Result<usize> {
        let _turn = self.turn.lock().await;
        let indexer = Arc::clone(self);
        let outcome = tokio::task::spawn_blocking(move || indexer.catch_up()).await;
        Ok(outcome.map_err(Error::Task)??)
    }
}

fn run(indexer: std::sync::Weak<Indexer>, woken: Receiver<()>) {
    loop {
        let Some(indexer) = indexer.upgrade() else {
            return;
        };
        if let Err(error) = indexer.catch_up() {
            tracing::warn!(%error, "full-text indexing failed; will retry");
        }
        drop(indexer);
        match woken.recv_timeout(IDLE_POLL) {
            Ok(()) => {
                // Let a burst of appends land, then index them in one batch.
                std::thread::sleep(Duration::from_millis(20));
                while woken.try_recv().is_ok() {}
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

fn has_pending(conn: &Connection) -> StoreResult<bool> {
    let indexed: i64 = conn.query_row(
        "SELECT last_seq FROM search.index_state WHERE id = 1",
        [],
        |r| r.get(0),
    )?;
    let newest: i64 =
        conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM main.messages", [], |r| {
            r.get(0)
        })?;
    Ok(newest > indexed)
}

/// A message awaiting indexing: its seq, content and tool calls as stored, and
/// its scope tokens.
type PendingRow = (i64, Option<Vec<u8>>, Option<Vec<u8>>, String);

/// FNV-1a of `parts`, in decimal digits, which no tokenizer splits or
/// stems. Stable across processes and versions, as the index is written by
/// one and read by others.
pub(crate) fn fnv(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|part| part.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The token naming the messages of one user with one agent in the index's
/// `scope` column. Two owners sharing a token (one chance in 2^64) would only
/// widen the candidates and the counts behind the scores: the query still
/// filters by owner.
fn scope_token(tenant: TenantId, agent: AgentId, user: &str) -> String {
    fnv(&[tenant.0.as_bytes(), agent.0.as_bytes(), user.as_bytes()]).to_string()
}

/// The token naming every message of one tenant.
fn tenant_token(tenant: TenantId) -> String {
    format!("t{}", fnv(&[tenant.0.as_bytes()]))
}

/// The token naming every message with one agent of one tenant.
fn agent_token(tenant: TenantId, agent: AgentId) -> String {
    format!("a{}", fnv(&[tenant.0.as_bytes(), agent.0.as_bytes()]))
}

/// A message's `scope` column: its tenant's, its agent's and its owner's
/// tokens.
fn scope_column(tenant: TenantId, agent: AgentId, user: &str) -> String {
    format!(
        "{} {} {}",
        tenant_token(tenant),
        agent_token(tenant, agent),
        scope_token(tenant, agent, user)
    )
}

fn index_batch(conn: &mut Connection) -> StoreResult<usize> {
    let tx = conn.transaction()?;
    // Writing first takes the search file's write lock before anything is read, so
    // two processes' indexers serialise instead of indexing the same rows twice.
    tx.execute(
        "UPDATE search.index_state SET last_seq = last_seq WHERE id = 1",
        [],
    )?;
    let after: i64 = tx.query_row(
        "SELECT last_seq FROM search.index_state WHERE id = 1",
        [],
        |r| r.get(0),
    )?;
    let mut select = tx.prepare_cached(
        "SELECT m.seq, m.content, m.tool_calls, e.tenant_id, e.agent_id, e.user_id
         FROM main.messages m JOIN main.episodes e ON e.id = m.episode_id
         WHERE m.seq > ?1 ORDER BY m.seq LIMIT ?2",
    )?;
    let pending: Vec<PendingRow> =
        rows::collect(&mut select, params![after, BATCH as i64], |row| {
            let scope = scope_column(
                TenantId(rows::uuid(row, "tenant_id")?),
                AgentId(rows::uuid(row, "agent_id")?),
                &row.get::<_, String>("user_id")?,
            );
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, scope))
        })?;
    drop(select);
    let Some(&(last, ..)) = pending.last() else {
        return Ok(0);
    };
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO search.message_fts (rowid, text, scope) VALUES (?1, ?2, ?3)",
        )?;
        let mut length = tx.prepare_cached(
            "SELECT octopus_length(message_fts) FROM search.message_fts WHERE rowid = ?1",
        )?;
        let mut measured = tx.prepare_cached(
            "INSERT INTO search.message_lengths (seq, scope, length) VALUES (?1, ?2, ?3)",
        )?;
        let mut totals = ScopeTotals::default();
        for (seq, content, tool_calls, scope) in &pending {
            let content = content
                .as_deref()
                .map(|c| codec::decode_json::<MessageContent>(c, "message content"))
                .transpose()?;
            let calls = tool_calls
                .as_deref()
                .map(|t| codec::decode_json::<Vec<ToolCallRecord>>(t, "tool calls"))
                .transpose()?;
            insert.execute(params![
                seq,
                message_search_text(content.as_ref(), calls.as_deref().unwrap_or(&[])),
                scope
            ])?;
            let tokens = length.query_row([seq], |r| r.get::<_, f64>(0))? as i64;
            measured.execute(params![seq, scope, tokens])?;
            totals.add(scope, 1, tokens);
        }
        totals.write(&tx)?;
    }
    tx.execute(
        "UPDATE search.index_state SET last_seq = ?1 WHERE id = 1",
        [last],
    )?;
    tx.commit()?;
    Ok(pending.len())
}

/// Changes to the scopes' totals (documents, and their total length in
/// tokens), summed over a batch and written at its end.
#[derive(Default)]
struct ScopeTotals(std::collections::HashMap<String, (i64, i64)>);

impl ScopeTotals {
    /// A document of `length` tokens joins (`documents` 1) or leaves (-1)
    /// each scope its `scope` column names.
    fn add(&mut self, scope: &str, documents: i64, length: i64) {
        for token in scope.split(' ') {
            let total = self.0.entry(token.to_owned()).or_default();
            total.0 += documents;
            total.1 += length;
        }
    }

    fn write(self, conn: &Connection) -> StoreResult<()> {
        let mut change = conn.prepare_cached(
            "INSERT INTO search.scope_counts (scope, documents, total_length) VALUES (?1, ?2, ?3)
             ON CONFLICT (scope) DO UPDATE SET documents = documents + excluded.documents,
                                               total_length = total_length + excluded.total_length",
        )?;
        let mut emptied = conn.prepare_cached(
            "DELETE FROM search.scope_counts WHERE scope = ?1 AND documents <= 0",
        )?;
        for (scope, (documents, length)) in self.0 {
            change.execute(params![scope, documents, length])?;
            if documents < 0 {
                emptied.execute([scope])?;
            }
        }
        Ok(())
    }
}

/// The documents of `scope` and their total length, as the indexer keeps them.
fn scope_totals(conn: &Connection, scope: &str) -> StoreResult<(u64, f64)> {
    let found = conn
        .prepare_cached("SELECT documents, total_length FROM search.scope_counts WHERE scope = ?1")?
        .query_row([scope], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .optional()?;
    let (documents, length) = found.unwrap_or((0, 0));
    Ok((documents.max(0).unsigned_abs(), length.max(0) as f64))
}

/// A message the full-text index matched: its seq, and its score.
struct Candidate {
    seq: i64,
    score: f64,
}

/// Every message of `scope` holding any of `words`, scored with BM25 over
/// the scope (IDFs from how many of these candidates hold each word, the
/// average length from the indexer's totals), best first; equal scores in
/// the order of the index.
fn ranked_candidates(
    conn: &Connection,
    scope: &str,
    words: &[&str],
) -> StoreResult<Vec<Candidate>> {
    let (documents, total_length) = scope_totals(conn, scope)?;
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, octopus_hits(message_fts) FROM search.message_fts WHERE message_fts MATCH ?1",
    )?;
    let found: Vec<(i64, f64, Vec<f64>)> =
        rows::collect(&mut stmt, [message_fts_query(scope, words)], |row| {
            let blob = rows::bytes(row, 1)?.unwrap_or_default();
            let (length, hits) = crate::fts_rank::read_hits(blob)
                .ok_or_else(|| crate::error::corrupt("full-text hits", "empty"))?;
            Ok((row.get(0)?, length, hits))
        })?;
    // Phrase 0 is the scope's token, in every candidate and weighed 0.
    let mut idfs = vec![0.0; words.len() + 1];
    for (phrase, idf) in idfs.iter_mut().enumerate().skip(1) {
        let containing = found
            .iter()
            .filter(|(_, _, hits)| hits.get(phrase).is_some_and(|h| *h > 0.0))
            .count();
        *idf = crate::fts_rank::idf(documents, containing as u64);
    }
    let average = if documents == 0 {
        1.0
    } else {
        total_length / documents as f64
    };
    let mut ranked: Vec<Candidate> = found
        .into_iter()
        .map(|(seq, length, hits)| Candidate {
            seq,
            score: crate::fts_rank::bm25_of(&hits, length, average, &idfs),
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(ranked)
}

/// The scope token a search counts its statistics over: the owner's when
/// it names both agent and user, the agent's when it names an agent, else
/// the tenant's.
fn search_scope(query: &MessageSearchQuery, tenant: TenantId) -> String {
    match (query.agent_id, &query.user_id) {
        (Some(agent), Some(user)) => scope_token(tenant, agent, user),
        (Some(agent), None) => agent_token(tenant, agent),
        _ => tenant_token(tenant),
    }
}

/// BM25 statistics counted within one scope of an FTS5 table whose last
/// column holds scope tokens: the average document length, and one IDF per
/// phrase of `scope : "S" AND <column> : ("w1" OR "w2" ...)` in order (the
/// scope's own phrase first, at 0).
pub(crate) struct ScopedStatistics {
    pub average_length: f64,
    pub idfs: Vec<f64>,
}

/// The BM25 counts of scopes whose content has a version (a knowledge
/// collection's), kept while it stays at that version: counting a
/// collection's lengths reads every chunk of it (65 ms a search at 100k
/// chunks), and its words' document counts repeat from search to search.
#[derive(Default)]
pub(crate) struct StatisticsCache {
    state: std::sync::Mutex<CachedCounts>,
}

#[derive(Default)]
struct CachedCounts {
    scopes: std::collections::HashMap<String, CountedScope>,
    /// Words held over every scope: searches choose them, so they are
    /// bounded in all, not per scope.
    words: usize,
}

struct CountedScope {
    version: ContentVersion,
    documents: u64,
    total_length: f64,
    containing: std::collections::HashMap<String, u64>,
}

/// Words the cache holds over every scope; past it, it starts over (a bound
/// on memory, some megabytes, not an eviction policy: far above use).
const MAX_CACHED_WORDS: usize = 100_000;

/// A scope's counts as the cache holds them: documents, their total length,
/// and each word's document count where known.
type Known = (u64, f64, Vec<Option<u64>>);

impl StatisticsCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, CachedCounts> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What is known of `scope` at `version`.
    fn known(&self, scope: &str, version: ContentVersion, words: &[&str]) -> Option<Known> {
        let state = self.lock();
        let counted = state.scopes.get(scope).filter(|c| c.version == version)?;
        let containing = words
            .iter()
            .map(|w| counted.containing.get(*w).copied())
            .collect();
        Some((counted.documents, counted.total_length, containing))
    }

    /// Keeps `scope`'s counts at `version`, replacing those of another.
    fn keep(
        &self,
        scope: &str,
        version: ContentVersion,
        (documents, total_length): (u64, f64),
        words: &[&str],
        containing: &[u64],
    ) {
        let mut state = self.lock();
        if state.words + words.len() > MAX_CACHED_WORDS {
            *state = CachedCounts::default();
        }
        let stale = state
            .scopes
            .get(scope)
            .is_some_and(|counted| counted.version != version);
        if stale && let Some(old) = state.scopes.remove(scope) {
            state.words -= old.containing.len();
        }
        let counted = state
            .scopes
            .entry(scope.to_owned())
            .or_insert_with(|| CountedScope {
                version,
                documents,
                total_length,
                containing: Default::default(),
            });
        let before = counted.containing.len();
        for (word, found) in words.iter().zip(containing) {
            counted.containing.insert((*word).to_owned(), *found);
        }
        let added = counted.containing.len() - before;
        state.words += added;
    }
}

/// A scope's content version: when its collection was made, and its version
/// since (a collection made again starts at version 0 again).
pub(crate) type ContentVersion = (i64, i64);

/// Where a scope's counts may be kept: the cache and the version its content
/// is at, read before counting (a count taken after a change is then filed
/// under the older version, which no search asks for again).
pub(crate) type Cached<'a> = Option<(&'a StatisticsCache, ContentVersion)>;

impl ScopedStatistics {
    /// Counts them with `table` (schema-qualified) and its `column` of
    /// words, or takes them from `cached` when it holds the scope's version.
    pub(crate) fn count(
        conn: &Connection,
        table: &str,
        name: &str,
        scope: &str,
        column: &str,
        words: &[&str],
        cached: Cached<'_>,
    ) -> StoreResult<Self> {
        let known = cached.and_then(|(cache, version)| cache.known(scope, version, words));
        let (documents, total_length, mut containing) = match known {
            Some(known) => known,
            None => {
                let (documents, total_length): (i64, f64) = conn
                    .prepare_cached(&format!(
                        // Materialised: an auxiliary function runs only in the
                        // full-text query's own result, not inside an aggregate.
                        "WITH scoped AS MATERIALIZED (
                             SELECT octopus_length({name}) AS length FROM {table} WHERE {name} MATCH ?1
                         )
                         SELECT count(*), total(length) FROM scoped"
                    ))?
                    .query_row([format!("scope : \"{scope}\"")], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?;
                (
                    documents.unsigned_abs(),
                    total_length,
                    vec![None; words.len()],
                )
            }
        };
        let mut counting = conn.prepare_cached(&format!(
            "SELECT count(*) FROM {table} WHERE {name} MATCH ?1"
        ))?;
        for (word, found) in words.iter().zip(containing.iter_mut()) {
            if found.is_none() {
                let count: i64 = counting.query_row(
                    [format!("scope : \"{scope}\" AND {column} : \"{word}\"")],
                    |r| r.get(0),
                )?;
                *found = Some(count.unsigned_abs());
            }
        }
        let containing: Vec<u64> = containing
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        if let Some((cache, version)) = cached {
            cache.keep(
                scope,
                version,
                (documents, total_length),
                words,
                &containing,
            );
        }
        let mut idfs = Vec::with_capacity(words.len() + 1);
        idfs.push(0.0);
        idfs.extend(
            containing
                .iter()
                .map(|found| crate::fts_rank::idf(documents, *found)),
        );
        Ok(Self {
            average_length: if documents == 0 {
                1.0
            } else {
                total_length / documents as f64
            },
            idfs,
        })
    }

    /// The SQL call ranking a row of `name` by these statistics, higher is
    /// better; its values bound through `filters`.
    pub(crate) fn rank_sql(&self, name: &str, filters: &mut Filters) -> String {
        let mut sql = format!(
            "octopus_bm25({name}, {}",
            filters.bind(Value::Real(self.average_length))
        );
        for idf in &self.idfs {
            sql.push_str(", ");
            sql.push_str(&filters.bind(Value::Real(*idf)));
        }
        sql.push(')');
        sql
    }
}

/// The message index's query: any of the words in the text, within the
/// search's scope.
fn message_fts_query(scope: &str, words: &[&str]) -> String {
    let words: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    format!("scope : \"{scope}\" AND text : ({})", words.join(" OR "))
}

#[async_trait]
impl MessageSearch for SqliteStore {
    async fn search_messages(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
    ) -> Result<Vec<MessageHit>> {
        // Only a search that finds messages still to index takes the
        // indexer's turn (which a compaction holds a step at a time), and
        // reads again once they are.
        if let Some(hits) = self.read_message_hits(tenant, query, true).await? {
            return Ok(hits);
        }
        self.indexer.catch_up_now().await?;
        let hits = self.read_message_hits(tenant, query, false).await?;
        Ok(hits.unwrap_or_default())
    }
}

impl SqliteStore {
    /// The search's hits from the index as it stands; `None`, reading
    /// nothing, when `unless_pending` and messages wait to be indexed.
    async fn read_message_hits(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
        unless_pending: bool,
    ) -> Result<Option<Vec<MessageHit>>> {
        let query = query.clone();
        self.db
            .read(move |conn| {
                if unless_pending && has_pending(conn)? {
                    return Ok(None);
                }
                let words = search_terms(&query.text);
                // Scores from this scope's counts alone: never another tenant's.
                let ranked = ranked_candidates(conn, &search_scope(&query, tenant), &words)?;
                let mut filters = Filters::default();
                filters.push("m.tenant_id = ?", blob(&tenant.0));
                filters.push_plain("e.deleted_at IS NULL AND e.archived_at IS NULL");
                if let Some(agent) = query.agent_id {
                    filters.push("e.agent_id = ?", blob(&agent.0));
                }
                if let Some(user) = &query.user_id {
                    filters.push("e.user_id = ?", Value::Text(user.clone()));
                }
                if let Some(conversation) = query.conversation_id {
                    filters.push("m.conversation_id = ?", blob(&conversation.0));
                }
                if let Some(from) = query.from {
                    filters.push("m.timestamp >= ?", Value::Integer(micros(from)));
                }
                if let Some(to) = query.to {
                    filters.push("m.timestamp < ?", Value::Integer(micros(to)));
                }
                let seqs = filters.bind(Value::Null);
                let sql = format!(
                    "SELECT {}, e.agent_id AS episode_agent_id, e.user_id AS episode_user_id
                     FROM json_each({seqs}) j
                     CROSS JOIN messages m ON m.seq = j.value
                     CROSS JOIN episodes e ON e.id = m.episode_id
                     {}",
                    messages::columns("m"),
                    filters.where_sql()
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                // The episode's columns follow the message's, read by position.
                const EPISODE_AGENT: usize = messages::COLUMN_COUNT;
                // The best candidates are read in rounds until enough pass
                // the filters (a deleted episode, a time range).
                let limit = query.limit as usize;
                let mut hits = Vec::with_capacity(limit);
                if limit == 0 {
                    return Ok(Some(hits));
                }
                for round in ranked.chunks(limit * 2) {
                    let list: Vec<String> = round.iter().map(|c| c.seq.to_string()).collect();
                    let mut params = filters.params.clone();
                    if let Some(last) = params.last_mut() {
                        *last = Value::Text(format!("[{}]", list.join(",")));
                    }
                    let mut read: std::collections::HashMap<i64, MessageHit> =
                        rows::collect(&mut stmt, rusqlite::params_from_iter(params), |row| {
                            Ok((
                                row.get::<_, i64>(0)?,
                                MessageHit {
                                    score: 0.0,
                                    agent_id: AgentId(rows::uuid(row, EPISODE_AGENT)?),
                                    user_id: row.get(EPISODE_AGENT + 1)?,
                                    message: messages::message_from_row(row)?,
                                },
                            ))
                        })?
                        .into_iter()
                        .collect();
                    for candidate in round {
                        if let Some(mut hit) = read.remove(&candidate.seq) {
                            hit.score = candidate.score;
                            hits.push(hit);
                            if hits.len() == limit {
                                return Ok(Some(hits));
                            }
                        }
                    }
                }
                Ok(Some(hits))
            })
            .await
    }
}

/// How many merge steps an FTS5 index of `pages` pages is given: as many
/// as merge them all twice over, a bound should a step ever report work
/// forever.
pub(crate) fn most_merge_steps(pages: i64) -> u64 {
    2 * pages.unsigned_abs() / u64::from(MERGE_STEP_PAGES) + 8
}

/// One step of merging the FTS5 table `table` of the database `schema` into
/// one segment (FTS5's `merge` with a negative size: an `optimize` in
/// steps), which drops the terms of deleted entries; whether it did any work.
pub(crate) fn merge_step(conn: &Connection, schema: &str, table: &str) -> StoreResult<bool> {
    let before = conn.total_changes();
    conn.execute_batch(&format!(
        "INSERT INTO {schema}.{table} ({table}, rank) VALUES ('merge', -{MERGE_STEP_PAGES})"
    ))?;
    // FTS5 writes at least two rows when a step did any work.
    Ok(conn.total_changes() - before >= 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Searches choose the words: however many distinct ones they bring,
    /// across however many collections, the cache holds a bounded number.
    #[test]
    fn the_statistics_cache_holds_a_bounded_number_of_words() {
        let cache = StatisticsCache::default();
        let words: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let counts = vec![1; words.len()];
        for scope in 0..300 {
            cache.keep(&format!("s{scope}"), (0, 0), (10, 100.0), &words, &counts);
            assert!(cache.lock().words <= MAX_CACHED_WORDS);
        }
        let total: usize = cache
            .lock()
            .scopes
            .values()
            .map(|c| c.containing.len())
            .sum();
        assert_eq!(total, cache.lock().words, "the count is of what is held");
        // A newer version replaces the scope's counts and what they held.
        cache.keep("s299", (0, 1), (11, 110.0), &words[..10], &counts[..10]);
        assert_eq!(cache.known("s299", (0, 0), &words[..1]), None);
        assert_eq!(
            cache.known("s299", (0, 1), &words[..2]),
            Some((11, 110.0, vec![Some(1), Some(1)]))
        );
        let total: usize = cache
            .lock()
            .scopes
            .values()
            .map(|c| c.containing.len())
            .sum();
        assert_eq!(total, cache.lock().words);
    }
}

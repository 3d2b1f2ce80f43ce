//! Connections to the two database files, and the bridge from async callers to
//! SQLite's blocking API.
//!
//! - `octopus.sqlite` holds everything relational. One writer connection (SQLite
//!   admits one writer at a time anyway) behind a mutex; readers come from a small
//!   pool and never wait for the writer, thanks to WAL.
//! - Callers wait for a reader or for their turn to write here, as tasks, not
//!   on blocking threads: at most `max_readers` reads and two writes (one
//!   writing, one preparing) hold a thread at once. Unbounded, a burst of
//!   concurrent requests opened a connection (with its own page cache and
//!   map of the file) and a thread (with its own malloc arena) for each,
//!   and the soak's server grew past a gigabyte of its own memory.
//! - `search.sqlite` holds the full-text index, which is derived data. Keeping it in
//!   its own file gives it its own write lock, so indexing never delays an append.
//!   Reader connections attach it as `search`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::migrations;

/// How hard a commit works to survive a crash (`[storage.sqlite] durability`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Durability {
    /// WAL with `synchronous = NORMAL`: a committed write survives the process
    /// being killed at any moment; a power loss may drop the last commits.
    #[default]
    Process,
    /// `synchronous = FULL`: every commit is fsynced and survives a power loss.
    PowerLoss,
}

#[derive(Clone, Debug)]
pub struct SqliteOptions {
    pub data_dir: PathBuf,
    pub durability: Durability,
    /// Reader connections kept open between requests.
    pub max_idle_readers: usize,
    /// Reads running at once; more wait their turn.
    pub max_readers: usize,
}

impl SqliteOptions {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            durability: Durability::default(),
            max_idle_readers: 8,
            max_readers: 8,
        }
    }
}

pub(crate) const MAIN_FILE: &str = "octopus.sqlite";
pub(crate) const SEARCH_FILE: &str = "search.sqlite";

pub(crate) struct Db {
    pub main_path: PathBuf,
    pub search_path: PathBuf,
    options: SqliteOptions,
    writer: Mutex<Connection>,
    idle_readers: Mutex<Vec<Connection>>,
    /// Turns to read and to write (see the module comment).
    reads: tokio::sync::Semaphore,
    writes: tokio::sync::Semaphore,
}

impl Db {
    /// Opens (creating when needed) both files and applies pending migrations.
    pub fn open(options: SqliteOptions) -> Result<Self> {
        std::fs::create_dir_all(&options.data_dir).map_err(|source| Error::DataDir {
            path: options.data_dir.clone(),
            source,
        })?;
        let main_path = options.data_dir.join(MAIN_FILE);
        let search_path = options.data_dir.join(SEARCH_FILE);

        let mut writer = open_connection(&main_path, &options)?;
        migrations::apply(&mut writer, migrations::MAIN)?;
        let mut search = open_connection(&search_path, &options)?;
        migrations::apply(&mut search, migrations::SEARCH)?;
        drop(search);

        Ok(Self {
            main_path,
            search_path,
            reads: tokio::sync::Semaphore::new(options.max_readers.max(1)),
            writes: tokio::sync::Semaphore::new(2),
            options,
            writer: Mutex::new(writer),
            idle_readers: Mutex::new(Vec::new()),
        })
    }

    /// A connection to the main file with the search file attached, for the
    /// full-text indexer.
    pub fn open_indexer_connection(&self) -> Result<Connection> {
        let conn = open_connection(&self.main_path, &self.options)?;
        attach_search(&conn, &self.search_path)?;
        Ok(conn)
    }

    /// Runs `work` on the writer connection, on a blocking thread.
    pub async fn write<T, F>(self: &Arc<Self>, work: F) -> octopus_core::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        self.write_prepared(|| (), |conn, ()| work(conn)).await
    }

    /// Runs `prepare` and then, holding the writer connection, `work` with what
    /// `prepare` made: CPU work such as compression stays outside the lock.
    pub async fn write_prepared<P, T, Prep, F>(
        self: &Arc<Self>,
        prepare: Prep,
        work: F,
    ) -> octopus_core::Result<T>
    where
        T: Send + 'static,
        Prep: FnOnce() -> P + Send + 'static,
        F: FnOnce(&mut Connection, P) -> Result<T> + Send + 'static,
    {
        let _turn = self
            .writes
            .acquire()
            .await
            .map_err(octopus_core::Error::backend)?;
        let db = Arc::clone(self);
        let outcome = tokio::task::spawn_blocking(move || {
            let prepared = prepare();
            work(&mut lock(&db.writer), prepared)
        })
        .await;
        Ok(outcome.map_err(Error::Task)??)
    }

    /// Runs `work` on a reader connection (with `search` attached), on a blocking
    /// thread.
    pub async fn read<T, F>(self: &Arc<Self>, work: F) -> octopus_core::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let _turn = self
            .reads
            .acquire()
            .await
            .map_err(octopus_core::Error::backend)?;
        let db = Arc::clone(self);
        let outcome = tokio::task::spawn_blocking(move || {
            let mut conn = db.take_reader()?;
            let result = work(&mut conn);
            db.return_reader(conn);
            result
        })
        .await;
        Ok(outcome.map_err(Error::Task)??)
    }

    /// Empties the page caches once a burst of work is over: closes the idle
    /// readers (each held up to two caches of `CACHE_KIB`, and its prepared
    /// statements) and empties the writer's cache. Readers are opened again
    /// as requests need them, in well under a millisecond.
    pub async fn shrink_caches(self: &Arc<Self>) -> octopus_core::Result<()> {
        let idle = std::mem::take(&mut *lock(&self.idle_readers));
        drop(idle);
        self.write(|conn| shrink_cache(conn)).await
    }

    fn take_reader(&self) -> Result<Connection> {
        if let Some(conn) = lock(&self.idle_readers).pop() {
            return Ok(conn);
        }
        let conn = open_connection(&self.main_path, &self.options)?;
        conn.pragma_update(None, "query_only", true)?;
        attach_search(&conn, &self.search_path)?;
        conn.pragma_update(None, "cache_size", READER_CACHE_KIB)?;
        conn.pragma_update(Some("search"), "cache_size", READER_CACHE_KIB)?;
        // Searches read through a mapping, served from the OS page cache
        // instead of a `pread` and a copy per page: most of a search's time
        // on a large store otherwise (`octopus-bench context`). Only
        // readers map the files: the writer and the indexer read little
        // beyond their caches, and an idle server's readers are closed, so
        // pages mapped for a burst of work leave its resident memory with
        // them.
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
        conn.pragma_update(Some("search"), "mmap_size", MMAP_BYTES)?;
        Ok(conn)
    }

    fn return_reader(&self, conn: Connection) {
        let mut idle = lock(&self.idle_readers);
        if idle.len() < self.options.max_idle_readers && conn.is_autocommit() {
            idle.push(conn);
        }
    }
}

/// A poisoned lock only means another thread panicked mid-call; SQLite rolled its
/// transaction back, so the connection is still sound.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Pages each connection keeps per file, in KiB (as a negative number, as
/// SQLite takes it). Reads go through the mapping below, so the cache holds
/// mostly the pages the writers changed: `octopus-bench memory` found 19 to
/// 37 MB in SQLite's caches while the worker embedded. A run at 8 MB
/// embedded 125 messages a second against about 160 before, among other
/// changes not yet measured apart, so the caches keep their 32 MB.
const CACHE_KIB: i64 = -32_000;

/// The same for reader connections. They read the files through the
/// mapping below; their cache holds the pages they read from the
/// write-ahead log, which under steady appends is most of what is new. At
/// 32 MB, eight readers' caches of both files grew to half a gigabyte in the
/// soak (`octopus-bench soak`); a page read again comes from the kernel's
/// page cache, a copy away.
const READER_CACHE_KIB: i64 = -2_000;

/// Most of a database file mapped into memory: address space, not RAM.
const MMAP_BYTES: i64 = 1 << 30;

fn open_connection(path: &Path, options: &SqliteOptions) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|source| Error::Open {
        path: path.to_owned(),
        source,
    })?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let synchronous = match options.durability {
        Durability::Process => "NORMAL",
        Durability::PowerLoss => "FULL",
    };
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // Deleted content is overwritten with zeros as it is deleted, in the
    // deleting transaction: a forgotten user's words leave the file then,
    // without rewriting the whole file afterwards (VACUUM held the writer for
    // as long as it copied the database, and built the copy in memory).
    conn.pragma_update(None, "secure_delete", true)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "cache_size", CACHE_KIB)?;
    conn.set_prepared_statement_cache_capacity(64);
    // Plans never depend on the values bound: without this, SQLite
    // compiles a statement again whenever a parameter the planner looked at
    // is bound anew (a bound LIMIT, say), and at a million messages a
    // sixth of the server's time under recall went to compiling statements
    // it had cached (`octopus-bench scale`, profiled).
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    crate::fts_rank::register(&conn)?;
    Ok(conn)
}

/// Frees what the connection's page caches hold, every attached file's.
pub(crate) fn shrink_cache(conn: &Connection) -> Result<()> {
    conn.execute_batch("PRAGMA shrink_memory")?;
    Ok(())
}

fn attach_search(conn: &Connection, search_path: &Path) -> Result<()> {
    conn.execute(
        "ATTACH DATABASE ?1 AS search",
        [search_path.to_string_lossy()],
    )?;
    // Pragmas without a schema name apply to `main` only.
    conn.pragma_update(Some("search"), "secure_delete", true)?;
    conn.pragma_update(Some("search"), "cache_size", CACHE_KIB)?;
    Ok(())
}

/// How long a connection waits for a lock another one holds.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Tries once to checkpoint `schema`'s write-ahead log and truncate it, and
/// says whether it completed. It never waits: a reader that still uses part
/// of the log makes it return false at once (the connection's busy handler
/// is off for the call), so the connection it runs on, the writer's or the
/// indexer's, is held only for the copying. See [`crate::compaction`].
///
/// Without a busy handler the statement itself can fail as busy (another
/// connection resetting the log as it begins); that too is a checkpoint
/// not completed, to try again, not an error.
pub(crate) fn try_checkpoint(conn: &Connection, schema: &str) -> Result<bool, Error> {
    conn.busy_timeout(std::time::Duration::ZERO)?;
    let busy = conn.query_row(
        &format!("PRAGMA {schema}.wal_checkpoint(TRUNCATE)"),
        [],
        |r| r.get::<_, i64>(0),
    );
    conn.busy_timeout(BUSY_TIMEOUT)?;
    match busy {
        Ok(busy) => Ok(busy == 0),
        Err(rusqlite::Error::SqliteFailure(failure, _))
            if matches!(
                failure.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            Ok(false)
        }
        Err(error) => Err(error.into()),
    }
}

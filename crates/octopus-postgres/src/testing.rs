//! For test suites: a database of their own on the test server.
//!
//! `OCTOPUS_TEST_DATABASE_URL` names the server (`scripts/test.sh` starts a
//! throwaway one with `scripts/postgres.sh` and sets it). Each call to
//! [`fresh_database`] creates a new, empty database there.

use sqlx_core::connection::Connection;
use sqlx_core::executor::Executor;

const SERVER_VARIABLE: &str = "OCTOPUS_TEST_DATABASE_URL";

/// The test server's URL (any database on it).
///
/// # Panics
/// When `OCTOPUS_TEST_DATABASE_URL` is not set, with how to set it.
pub fn server_url() -> String {
    std::env::var(SERVER_VARIABLE)
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "{SERVER_VARIABLE} is not set: run `scripts/test.sh`, or start a server with \
                 `scripts/postgres.sh start` and export {SERVER_VARIABLE}=$(scripts/postgres.sh url)"
            )
        })
}

/// Creates an empty database on the test server and returns its URL.
///
/// # Panics
/// When the server is not set or refuses: a test cannot go on without it.
pub async fn fresh_database() -> String {
    fresh_database_on(&server_url()).await
}

/// Creates an empty database on the server `base` (a URL of any database
/// on it) names, and returns its URL.
///
/// # Panics
/// When the server refuses.
pub async fn fresh_database_on(base: &str) -> String {
    let (server, _) = base
        .rsplit_once('/')
        .unwrap_or_else(|| panic!("the URL has no database part: {base}"));
    let name = format!("octopus_test_{}", uuid::Uuid::now_v7().simple());
    let mut admin = sqlx_postgres::PgConnection::connect(&format!("{server}/postgres"))
        .await
        .unwrap_or_else(|e| panic!("connect to the test server's `postgres` database: {e}"));
    admin
        .execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .unwrap_or_else(|e| panic!("create a test database: {e}"));
    admin.close().await.ok();
    format!("{server}/{name}")
}

/// The memory jobs queued in the database `url` names, by sequence number:
/// all of them, or only those a worker holds under a lease now (`due_at`
/// moved past the clock when claimed).
///
/// # Panics
/// When the database refuses.
pub async fn memory_jobs(url: &str, leased_only: bool) -> Vec<i64> {
    use sqlx_core::query_scalar::query_scalar;
    let mut connection = sqlx_postgres::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to the test database: {e}"));
    let sql = if leased_only {
        "SELECT seq FROM memory_jobs WHERE due_at > now() ORDER BY seq"
    } else {
        "SELECT seq FROM memory_jobs ORDER BY seq"
    };
    let seqs = query_scalar(sql)
        .fetch_all(&mut connection)
        .await
        .unwrap_or_else(|e| panic!("read the memory queue: {e}"));
    connection.close().await.ok();
    seqs
}

/// Every vector set's keys in the rows of the database `url` names
/// (memory vectors and knowledge chunks), sorted: what each copy must hold.
///
/// # Panics
/// When the database refuses.
pub async fn vector_row_keys(url: &str) -> KeysBySet {
    keys_by_set(
        url,
        "SELECT 'memory' AS kind, tenant_id, agent_id, seq AS key FROM memory_vectors
         UNION ALL SELECT 'knowledge', tenant_id, agent_id, seq FROM knowledge_chunks
         ORDER BY key",
    )
    .await
}

/// Every set's keys in pgvector's copy (`vector_points`) in the database
/// `url` names, sorted; sets with an empty copy left out.
///
/// # Panics
/// When the database refuses.
pub async fn pgvector_copy_keys(url: &str) -> KeysBySet {
    keys_by_set(
        url,
        "SELECT kind, tenant_id, agent_id, key FROM vector_points ORDER BY key",
    )
    .await
}

/// Keys grouped by their vector set.
pub type KeysBySet = std::collections::BTreeMap<octopus_core::vectors::VectorSet, Vec<u64>>;

/// Runs `sql` (columns `kind`, `tenant_id`, `agent_id`, `key`, by key) and
/// groups the keys by set.
async fn keys_by_set(url: &str, sql: &str) -> KeysBySet {
    use octopus_core::vectors::{VectorKind, VectorSet};
    use octopus_core::{AgentId, TenantId};
    use sqlx_core::row::Row;
    let mut connection = sqlx_postgres::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to the test database: {e}"));
    let rows = sqlx_core::query::query(sql)
        .fetch_all(&mut connection)
        .await
        .unwrap_or_else(|e| panic!("read vector keys: {e}"));
    connection.close().await.ok();
    let mut sets = KeysBySet::new();
    for row in &rows {
        let kind = match row.get::<&str, _>("kind") {
            "memory" => VectorKind::Memory,
            _ => VectorKind::Knowledge,
        };
        let set = VectorSet {
            kind,
            tenant: TenantId(row.get("tenant_id")),
            agent: AgentId(row.get("agent_id")),
        };
        sets.entry(set)
            .or_default()
            .push(row.get::<i64, _>("key").unsigned_abs());
    }
    sets
}

/// The version of a vector set's rows, and of pgvector's copy of it, in the
/// database `url` names (0 for either when it has none).
///
/// # Panics
/// When the database refuses.
pub async fn vector_versions(url: &str, set: octopus_core::vectors::VectorSet) -> (i64, i64) {
    use octopus_core::vectors::VectorKind;
    use sqlx_core::row::Row;
    let collections = match set.kind {
        VectorKind::Knowledge => "knowledge_collections",
        VectorKind::Memory => "memory_collections",
    };
    let mut connection = sqlx_postgres::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to the test database: {e}"));
    let row = sqlx_core::query::query(&format!(
        "SELECT COALESCE((SELECT version FROM {collections}
                          WHERE tenant_id = $1 AND agent_id = $2), 0) AS rows,
                COALESCE((SELECT version FROM vector_sets
                          WHERE tenant_id = $1 AND agent_id = $2 AND kind = $3), 0) AS copy"
    ))
    .bind(set.tenant.0)
    .bind(set.agent.0)
    .bind(set.kind.as_str())
    .fetch_one(&mut connection)
    .await
    .unwrap_or_else(|e| panic!("read the versions: {e}"));
    connection.close().await.ok();
    (row.get("rows"), row.get("copy"))
}

/// Every table of the database `url` names with the bytes it takes on disk,
/// its indexes and TOAST included, largest first.
///
/// # Panics
/// When the server refuses.
pub async fn table_sizes(url: &str) -> Vec<(String, u64)> {
    use sqlx_core::row::Row;
    let mut conn = sqlx_postgres::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    let rows = sqlx_core::query::query(
        "SELECT relname::text AS name, pg_total_relation_size(relid) AS bytes
         FROM pg_statio_user_tables ORDER BY bytes DESC",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap_or_else(|e| panic!("read table sizes: {e}"));
    rows.iter()
        .map(|row| {
            let bytes: i64 = row.try_get("bytes").unwrap_or(0);
            (
                row.try_get("name").unwrap_or_default(),
                bytes.unsigned_abs(),
            )
        })
        .collect()
}

/// Gathers the planner's statistics of every table of the database `url`
/// names, as autovacuum would some minutes after a bulk load: a bench that
/// measures right after filling a store measures it at rest, not with the
/// statistics of its empty tables.
///
/// # Panics
/// When the server refuses.
pub async fn analyze(url: &str) {
    let mut conn = sqlx_postgres::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    sqlx_core::query::query("ANALYZE")
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("analyze: {e}"));
}

/// The tables of the database `url` names with a row whose text (every
/// column, as PostgreSQL prints the row) contains `needle`, ignoring case.
///
/// # Panics
/// When the server refuses.
pub async fn tables_containing(url: &str, needle: &str) -> Vec<String> {
    let mut conn = sqlx_postgres::PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
    let tables: Vec<String> = sqlx_core::query_scalar::query_scalar(
        "SELECT relname::text FROM pg_statio_user_tables ORDER BY relname",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap_or_else(|e| panic!("list tables: {e}"));
    let mut found = Vec::new();
    for table in tables {
        let hit: bool = sqlx_core::query_scalar::query_scalar(&format!(
            "SELECT EXISTS (SELECT 1 FROM \"{table}\" AS r WHERE r::text ILIKE '%' || $1 || '%')"
        ))
        .bind(needle)
        .fetch_one(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("scan {table}: {e}"));
        if hit {
            found.push(table);
        }
    }
    found
}

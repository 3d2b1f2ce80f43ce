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

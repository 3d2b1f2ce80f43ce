//! The connection pool, the schema's migrations, and the checks made at start
//! so that bad configuration stops a server with one clear line.

use std::time::Duration;

use sqlx_core::connection::Connection;
use sqlx_core::executor::Executor;
use sqlx_postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::error::{Error, Result};

#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// `postgres://user:password@host:port/database`.
    pub url: String,
    /// Connections this process keeps open at most.
    pub max_connections: u32,
    /// How long a request waits for a free connection, and a start for the
    /// database to answer.
    pub acquire_timeout: Duration,
}

impl PostgresOptions {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            max_connections: 16,
            acquire_timeout: Duration::from_secs(10),
        }
    }

    /// The URL without its password, for logs and errors.
    pub fn redacted_url(&self) -> String {
        match url_parts(&self.url) {
            Some((scheme, user, rest)) => format!("{scheme}://{user}@{rest}"),
            None => self.url.clone(),
        }
    }
}

/// `scheme`, the user without a password, and what follows the `@`.
fn url_parts(url: &str) -> Option<(&str, &str, &str)> {
    let (scheme, tail) = url.split_once("://")?;
    let (credentials, rest) = tail.rsplit_once('@')?;
    let user = credentials.split(':').next().unwrap_or_default();
    Some((scheme, user, rest))
}

/// The migrations, in order. A migration is applied once, in its own
/// transaction, under an advisory lock, so that servers starting together
/// do not race.
const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_schema", include_str!("../migrations/0001_schema.sql")),
    (
        "0002_vector_index",
        include_str!("../migrations/0002_vector_index.sql"),
    ),
    (
        "0003_pending_erasures",
        include_str!("../migrations/0003_pending_erasures.sql"),
    ),
    (
        "0004_parked_jobs",
        include_str!("../migrations/0004_parked_jobs.sql"),
    ),
    (
        "0005_job_notifications",
        include_str!("../migrations/0005_job_notifications.sql"),
    ),
    ("0006_facts", include_str!("../migrations/0006_facts.sql")),
    (
        "0007_memory_job_turns",
        include_str!("../migrations/0007_memory_job_turns.sql"),
    ),
    (
        "0008_memory_searched_from_rows",
        include_str!("../migrations/0008_memory_searched_from_rows.sql"),
    ),
    (
        "0009_fact_history",
        include_str!("../migrations/0009_fact_history.sql"),
    ),
    (
        "0010_fact_categories",
        include_str!("../migrations/0010_fact_categories.sql"),
    ),
    (
        "0011_learning_during_sessions",
        include_str!("../migrations/0011_learning_during_sessions.sql"),
    ),
    (
        "0012_manual_facts",
        include_str!("../migrations/0012_manual_facts.sql"),
    ),
    (
        "0013_webhooks",
        include_str!("../migrations/0013_webhooks.sql"),
    ),
    (
        "0014_fact_keys",
        include_str!("../migrations/0014_fact_keys.sql"),
    ),
    (
        "0015_one_pii_setting",
        include_str!("../migrations/0015_one_pii_setting.sql"),
    ),
    (
        "0016_profile_summaries",
        include_str!("../migrations/0016_profile_summaries.sql"),
    ),
];

/// The advisory lock that serialises migrations: "octopus" in ASCII.
const MIGRATION_LOCK: i64 = 0x006f_6374_6f70_7573;

pub(crate) async fn connect(options: &PostgresOptions) -> Result<PgPool> {
    let target = options.redacted_url();
    let connect_options: PgConnectOptions =
        options.url.parse().map_err(|source| Error::Connect {
            target: target.clone(),
            source,
        })?;
    // The server's NOTICEs ("text-search query contains only stop words",
    // for every question made of stop words) would each be a log line: only
    // warnings and errors come back.
    let connect_options = connect_options
        .application_name("octopus")
        .options([("client_min_messages", "warning")]);
    let pool = PgPoolOptions::new()
        .max_connections(options.max_connections)
        .acquire_timeout(options.acquire_timeout)
        .after_connect(|conn, _| {
            Box::pin(async move {
                // Filtered vector searches keep walking the HNSW graph until
                // they have enough rows that pass the filter (pgvector 0.8).
                conn.execute("SET hnsw.iterative_scan = relaxed_order")
                    .await?;
                // Candidates a search keeps: enough for a top 50, so that most
                // searches need no `SET LOCAL` (and no transaction around it).
                conn.execute(
                    format!("SET hnsw.ef_search = {}", crate::vectors::DEFAULT_EF_SEARCH).as_str(),
                )
                .await?;
                Ok(())
            })
        })
        .connect_lazy_with(connect_options.clone());

    let mut conn = sqlx_postgres::PgConnection::connect_with(&connect_options)
        .await
        .map_err(|source| Error::Connect { target, source })?;
    migrate(&mut conn).await?;
    conn.close().await?;
    Ok(pool)
}

async fn migrate(conn: &mut sqlx_postgres::PgConnection) -> Result<()> {
    sqlx_core::query::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *conn)
        .await?;
    let outcome = apply(conn).await;
    sqlx_core::query::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *conn)
        .await?;
    outcome
}

async fn apply(conn: &mut sqlx_postgres::PgConnection) -> Result<()> {
    // pgvector first: without it the schema cannot be created, and the
    // error should say so rather than name a type.
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        .await
        .map_err(Error::NoPgvector)?;
    conn.execute(
        "CREATE TABLE IF NOT EXISTS octopus_migrations (
             version bigint PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    )
    .await?;
    let applied: i64 = sqlx_core::query_scalar::query_scalar(
        "SELECT COALESCE(max(version), 0) FROM octopus_migrations",
    )
    .fetch_one(&mut *conn)
    .await?;
    let pending = octopus_sql::pending_migrations(applied, MIGRATIONS.len())
        .map_err(octopus_sql::MigrationError::from)?;
    for (index, (name, sql)) in MIGRATIONS.iter().enumerate().skip(pending.start) {
        let mut tx = conn.begin().await?;
        let failed = |source| octopus_sql::MigrationError::Failed { name, source };
        tx.execute(*sql).await.map_err(failed)?;
        sqlx_core::query::query("INSERT INTO octopus_migrations (version, name) VALUES ($1, $2)")
            .bind(index as i64 + 1)
            .bind(*name)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await?;
        tracing::info!(migration = name, "applied migration");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_reaches_a_log() {
        let options = PostgresOptions::new("postgres://octopus:s3cret@db.internal:5432/octopus");
        assert_eq!(
            options.redacted_url(),
            "postgres://octopus@db.internal:5432/octopus"
        );
        assert!(!options.redacted_url().contains("s3cret"));
    }
}

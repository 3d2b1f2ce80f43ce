//! The PostgreSQL store's errors, and how they become domain errors.

/// Failures inside the PostgreSQL backend. They reach callers as
/// [`octopus_core::Error::Backend`], except the outcomes the trait contract
/// names (not found, conflicts), which are mapped where they happen.
use octopus_core::DomainCode;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("connect to PostgreSQL at {target}: {source}")]
    Connect {
        target: String,
        source: sqlx_core::Error,
    },

    #[error(
        "the PostgreSQL database has no pgvector extension, and this role may not create it (install pgvector, or run `CREATE EXTENSION vector` as a superuser): {0}"
    )]
    NoPgvector(sqlx_core::Error),

    #[error(transparent)]
    Migration(#[from] octopus_sql::MigrationError<sqlx_core::Error>),

    #[error(transparent)]
    Sql(#[from] sqlx_core::Error),

    #[error(transparent)]
    Corrupt(#[from] octopus_sql::Corrupt),

    /// A domain outcome (not found, conflict, …) decided inside a transaction.
    #[error(transparent)]
    Domain(#[from] octopus_core::Error),
}

pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for octopus_core::Error {
    fn from(error: Error) -> Self {
        match error {
            Error::Domain(domain) => domain,
            // Text PostgreSQL cannot hold (a NUL character): the caller's input.
            Error::Sql(sqlx_core::Error::Database(e))
                if matches!(e.code().as_deref(), Some("22021" | "22P05")) =>
            {
                octopus_core::Error::invalid("text", "must not contain a NUL character")
            }
            // The server cannot be reached (down, restarting, out of
            // connections): what was stored stays stored, a retry may work.
            Error::Sql(
                error @ (sqlx_core::Error::PoolTimedOut
                | sqlx_core::Error::PoolClosed
                | sqlx_core::Error::Io(_)),
            ) => octopus_core::Error::unavailable("postgresql", error),
            Error::Sql(sqlx_core::Error::Database(e))
                if e.code().as_deref().is_some_and(is_unavailable_code) =>
            {
                octopus_core::Error::unavailable("postgresql", sqlx_core::Error::Database(e))
            }
            other => octopus_core::Error::backend(other),
        }
    }
}

impl Error {
    /// A deadlock or a serialization failure: PostgreSQL rolled the whole
    /// transaction back to let another go on, and running it again may work.
    pub(crate) fn is_transient_conflict(&self) -> bool {
        matches!(self, Error::Sql(sqlx_core::Error::Database(e))
            if matches!(e.code().as_deref(), Some("40P01" | "40001")))
    }
}

/// SQLSTATEs of a server that is shutting down, starting, or out of
/// connections (classes 08 and 57P, and 53300).
fn is_unavailable_code(code: &str) -> bool {
    code.starts_with("08") || code.starts_with("57P") || code == "53300"
}

pub(crate) fn corrupt(what: &'static str, detail: impl std::fmt::Display) -> Error {
    octopus_sql::corrupt(what, detail).into()
}

/// A unique index is the arbiter of a name being taken, so that two
/// concurrent writes cannot both win: its violation becomes the domain's
/// `Conflict` with `code`.
pub(crate) fn unique_conflict<T>(
    outcome: std::result::Result<T, sqlx_core::Error>,
    code: DomainCode,
    message: impl FnOnce() -> String,
) -> Result<T> {
    match outcome {
        Err(sqlx_core::Error::Database(e)) if e.code().as_deref() == Some("23505") => {
            Err(octopus_core::Error::conflict(code, message()).into())
        }
        other => Ok(other?),
    }
}

/// Runs `work` again when PostgreSQL rolled it back to break a deadlock. A
/// memory worker completing a summary locks its job, its episode, then
/// facts; forgetting a user locks their episodes, then jobs; a person's
/// change to a fact locks the facts first. When two meet, one is rolled
/// back, and an erasure or a person's change must not be the one lost.
pub(crate) async fn retrying<T, Work, Fut>(mut work: Work) -> Result<T>
where
    Work: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut attempt = 0;
    loop {
        match work().await {
            Err(error) if error.is_transient_conflict() && attempt < 5 => {
                attempt += 1;
                tracing::warn!(%error, attempt, "an erasure or a change met another transaction; again");
                tokio::time::sleep(std::time::Duration::from_millis(20 << attempt)).await;
            }
            done => return done,
        }
    }
}

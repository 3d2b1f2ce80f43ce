//! The SQLite store's errors, and how they become domain errors.

use std::path::PathBuf;

/// Failures inside the SQLite backend. They reach callers as
/// [`octopus_core::Error::Backend`], except constraint violations that the trait
/// contract names (those are mapped where they happen).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("open database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },

    #[error("create data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error(transparent)]
    Migration(#[from] octopus_sql::MigrationError<rusqlite::Error>),

    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),

    #[error("a blocking database task failed: {0}")]
    Task(#[from] tokio::task::JoinError),

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
            Error::Sqlite(rusqlite::Error::SqliteFailure(code, _))
                if code.code == rusqlite::ErrorCode::DatabaseBusy =>
            {
                octopus_core::Error::backend(Error::Sqlite(rusqlite::Error::SqliteFailure(
                    code, None,
                )))
            }
            other => octopus_core::Error::backend(other),
        }
    }
}

pub(crate) fn corrupt(what: &'static str, detail: impl std::fmt::Display) -> Error {
    octopus_sql::corrupt(what, detail).into()
}

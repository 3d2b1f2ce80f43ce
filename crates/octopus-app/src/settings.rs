//! `[storage]` and `[vectors]`: which backends hold Octopus's data, and each
//! backend's own settings.

use std::path::PathBuf;

pub use octopus_sqlite::Durability;
use serde::{Deserialize, Serialize};

/// `[storage]`: the database, this server's data directory, and each
/// backend's own table (`[storage.sqlite]`, `[storage.postgres]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StorageSettings {
    pub backend: StorageBackend,
    /// This server's own files: the database with the `sqlite` backend, and
    /// the graphs the `embedded` vector indexes save.
    pub data_dir: PathBuf,
    pub sqlite: SqliteSettings,
    pub postgres: PostgresSettings,
}

impl Default for StorageSettings {
    fn default() -> Self {
        Self {
            backend: StorageBackend::default(),
            data_dir: PathBuf::from("./octopus-data"),
            sqlite: SqliteSettings::default(),
            postgres: PostgresSettings::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageBackend {
    /// SQLite files in the data directory: one process, no server to run.
    #[default]
    Sqlite,
    /// A PostgreSQL database, shared by any number of servers.
    Postgres,
}

/// `[storage.sqlite]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SqliteSettings {
    /// `process`: a commit survives the server being killed (WAL, synchronous =
    /// NORMAL). `power_loss`: it also survives a power cut (every commit fsynced).
    pub durability: Durability,
}

/// `[storage.postgres]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PostgresSettings {
    /// `postgres://user:password@host:port/database`; the environment's
    /// `OCTOPUS_DATABASE_URL` takes precedence.
    pub url: String,
    /// Connections this server keeps open at most.
    pub max_connections: u32,
    /// Seconds to wait for the database at start, and for a free connection.
    pub connect_timeout_secs: u64,
}

impl Default for PostgresSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            max_connections: 16,
            connect_timeout_secs: 10,
        }
    }
}

/// `[vectors]`: where vector search runs, and each backend's own settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VectorSettings {
    /// Unset: the storage backend's own (embedded with SQLite, pgvector with
    /// PostgreSQL).
    pub backend: Option<VectorBackend>,
    pub embedded: EmbeddedVectorSettings,
    pub qdrant: QdrantSettings,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorBackend {
    /// In this process, derived from the database's rows.
    #[default]
    Embedded,
    /// In PostgreSQL, with pgvector's HNSW index: needs the PostgreSQL storage
    /// backend.
    Pgvector,
    /// On a Qdrant server (`[vectors.qdrant]`), with either storage backend.
    Qdrant,
}

/// `[vectors.embedded]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddedVectorSettings {
    /// A collection of at least this many vectors is searched through an HNSW
    /// graph (saved under `data_dir/vectors`); smaller ones exactly.
    pub hnsw_threshold: usize,
}

impl Default for EmbeddedVectorSettings {
    fn default() -> Self {
        Self {
            hnsw_threshold: octopus_vector::DEFAULT_HNSW_THRESHOLD,
        }
    }
}

/// `[vectors.qdrant]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QdrantSettings {
    /// The server's gRPC URL (Qdrant's port 6334 by default), such as
    /// `http://127.0.0.1:6334`; the environment's `OCTOPUS_QDRANT_URL`
    /// takes precedence.
    pub url: String,
    /// The environment variable holding the API key, when the server wants one.
    pub api_key_env: Option<String>,
    /// Seconds to wait for one request.
    pub timeout_secs: u64,
    /// Seconds to wait for a connection.
    pub connect_timeout_secs: u64,
    /// `shared`: one Qdrant collection per kind and dimension, the tenant and
    /// agent an indexed payload field (Qdrant's multitenancy guidance).
    /// `per_set`: one collection per agent and tenant (`agent_{agent}_{tenant}`).
    pub layout: QdrantLayout,
    /// Prefixed to every collection name, for several deployments on one server.
    pub collection_prefix: String,
}

impl Default for QdrantSettings {
    fn default() -> Self {
        Self {
            url: String::new(),
            api_key_env: None,
            timeout_secs: 10,
            connect_timeout_secs: 3,
            layout: QdrantLayout::default(),
            collection_prefix: String::new(),
        }
    }
}

/// How vector sets map to Qdrant collections; named here, where a build
/// without Qdrant still reads the file that names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QdrantLayout {
    #[default]
    Shared,
    PerSet,
}

//! The backends the configuration names, built in one place. A new storage
//! or vector backend is a variant of `StorageBackend` or `VectorBackend`, a
//! crate behind a cargo feature, and an arm here; it must pass
//! `octopus_testkit::store_conformance_tests!`.

use std::sync::Arc;

use octopus_core::store::Store;
use octopus_sqlite::{Durability, SqliteOptions, SqliteStore};

use crate::config::{DurabilityLevel, EngineConfig, StorageBackend, VectorBackend};
use crate::{Error, Result};

/// Opens the store `config` names, applying its migrations. Blocks.
pub(crate) fn open_store(config: &EngineConfig) -> Result<Arc<dyn Store>> {
    match config.storage.backend {
        StorageBackend::Sqlite => {
            let mut options = SqliteOptions::new(&config.data_dir);
            options.durability = match config.storage.sqlite.durability {
                DurabilityLevel::Process => Durability::Process,
                DurabilityLevel::PowerLoss => Durability::PowerLoss,
            };
            match config.vectors.backend {
                VectorBackend::Embedded => {
                    options.hnsw_threshold = config.vectors.embedded.hnsw_threshold;
                }
            }
            let store = SqliteStore::open(options).map_err(|e| Error::OpenStore(Box::new(e)))?;
            Ok(Arc::new(store))
        }
    }
}

//! Configuration: compiled-in defaults < TOML file < environment < flags.
//!
//! clap reads each flag's environment variable itself (`env = …`), so the
//! overrides handed to [`Config::load`] already hold environment-over-flag
//! precedence; the file sits beneath both.

use std::path::{Path, PathBuf};

use anyhow::Context;
use octopus_app::AppConfig;
use octopus_app::settings::{
    Durability, StorageBackend, StorageSettings, VectorBackend, VectorSettings,
};
use octopus_core::embedding_settings::EmbeddingSettings;
use octopus_core::llm_settings::LlmSettings;
use octopus_engine::{EngineConfig, Limits, Quotas};
use octopus_server::ServerSettings;
use serde::Deserialize;

/// The whole configuration, as `config/octopus.toml` lays it out.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub admin_key: Option<String>,
    pub server: ServerSettings,
    pub storage: StorageSettings,
    pub vectors: VectorSettings,
    pub limits: Limits,
    pub quotas: Quotas,
    pub embedding: EmbeddingSettings,
    pub llm: LlmSettings,
    pub worker: octopus_engine::config::WorkerSettings,
    pub recall: octopus_core::recall_ranking::RankingWeights,
    pub webhooks: octopus_engine::webhooks::WebhookSettings,
    pub log: LogSettings,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    pub filter: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            filter: "info".into(),
        }
    }
}

/// Values from the environment or flags; `None` leaves the file's value.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub admin_key: Option<String>,
    pub listen: Option<String>,
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL URL: selects the PostgreSQL backend.
    pub database_url: Option<String>,
    /// A Qdrant gRPC URL: selects Qdrant for vectors.
    pub qdrant_url: Option<String>,
    pub durability: Option<Durability>,
    pub log: Option<String>,
}

const DEFAULT_FILE: &str = "config/octopus.toml";

impl Config {
    /// Reads `file` (or `./config/octopus.toml` when it exists) and applies
    /// `overrides`.
    pub fn load(file: Option<&Path>, overrides: Overrides) -> anyhow::Result<Self> {
        let default_file = Path::new(DEFAULT_FILE);
        let file = file.or_else(|| default_file.exists().then_some(default_file));
        let mut config = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("read config file {}", path.display()))?;
                Self::parse(&text)
                    .with_context(|| format!("parse config file {}", path.display()))?
            }
            None => Config::default(),
        };
        config.apply(overrides)?;
        Ok(config)
    }

    pub fn parse(text: &str) -> anyhow::Result<Self> {
        Ok(toml::from_str(text)?)
    }

    /// Applies the environment's and the flags' settings. A database or
    /// Qdrant URL given empty or without its scheme is refused: it is a
    /// script's failure (`OCTOPUS_DATABASE_URL=$(scripts/postgres.sh start)`
    /// when the script failed), and serving on another backend instead
    /// would hide it.
    fn apply(&mut self, overrides: Overrides) -> anyhow::Result<()> {
        if let Some(key) = overrides.admin_key.filter(|k| !k.is_empty()) {
            self.admin_key = Some(key);
        }
        if let Some(listen) = overrides.listen {
            self.server.listen = listen;
        }
        if let Some(dir) = overrides.data_dir {
            self.storage.data_dir = dir;
        }
        if let Some(url) = overrides.database_url {
            check_url(
                "OCTOPUS_DATABASE_URL (--database-url)",
                &url,
                &["postgres://", "postgresql://"],
                "a postgres:// URL, or leave it unset to keep the data in SQLite",
            )?;
            self.storage.backend = StorageBackend::Postgres;
            self.storage.postgres.url = url;
        }
        if let Some(url) = overrides.qdrant_url {
            check_url(
                "OCTOPUS_QDRANT_URL (--qdrant-url)",
                &url,
                &["http://", "https://"],
                "Qdrant's gRPC URL, such as http://127.0.0.1:6334, or leave it unset",
            )?;
            self.vectors.backend = Some(VectorBackend::Qdrant);
            self.vectors.qdrant.url = url;
        }
        if let Some(durability) = overrides.durability {
            self.storage.sqlite.durability = durability;
        }
        if let Some(filter) = overrides.log {
            self.log.filter = filter;
        }
        Ok(())
    }

    /// What the process runs with: its backends and the engine's settings.
    pub fn app(&self) -> AppConfig {
        AppConfig {
            storage: self.storage.clone(),
            vectors: self.vectors.clone(),
            engine: EngineConfig {
                limits: self.limits,
                quotas: self.quotas.clone(),
                embedding: self.embedding.clone(),
                llm: self.llm.clone(),
                worker: self.worker.clone(),
                recall: self.recall,
                webhooks: self.webhooks.clone(),
            },
        }
    }
}

/// Refuses a URL that is empty or does not start with one of `schemes`.
fn check_url(what: &str, url: &str, schemes: &[&str], wanted: &str) -> anyhow::Result<()> {
    if url.trim().is_empty() {
        anyhow::bail!("{what} is set but empty: give {wanted}");
    }
    if !schemes.iter().any(|scheme| url.starts_with(scheme)) {
        anyhow::bail!(
            "{what} must start with {}: give {wanted}",
            schemes.join(" or ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_file_holds_exactly_the_defaults() {
        let reference = include_str!("../../../config/octopus.toml");
        assert_eq!(Config::parse(reference).unwrap(), Config::default());
    }

    #[test]
    fn overrides_beat_the_file_and_the_file_beats_defaults() {
        let mut config = Config::parse(
            "[server]\nlisten = \"0.0.0.0:9000\"\n[storage]\ndata_dir = \"/srv/octopus\"",
        )
        .unwrap();
        assert_eq!(config.server.listen, "0.0.0.0:9000");
        assert_eq!(
            config.server.max_body_bytes,
            ServerSettings::default().max_body_bytes
        );
        config
            .apply(Overrides {
                listen: Some("127.0.0.1:1".into()),
                ..Overrides::default()
            })
            .unwrap();
        assert_eq!(config.server.listen, "127.0.0.1:1");
        assert_eq!(config.storage.data_dir, PathBuf::from("/srv/octopus"));
    }

    #[test]
    fn a_tenant_may_have_quotas_of_its_own() {
        let config = Config::parse(
            "[quotas]\nmax_queued_memory_jobs = 10\n\
             [quotas.tenants.0190f5c2-7d4e-7c3a-9b1e-4a2f6c8d0e1f]\nmax_concurrent_ingests = 5\n",
        )
        .unwrap();
        assert_eq!(config.quotas.max_queued_memory_jobs, 10);
        let tenant = config.quotas.tenants.values().next().expect("the override");
        assert_eq!(tenant.max_concurrent_ingests, Some(5));
        assert_eq!(
            tenant.max_queued_memory_jobs, None,
            "unset: the default holds"
        );
    }

    #[test]
    fn backends_are_named_and_an_unknown_one_is_refused_by_name() {
        let config = Config::parse(
            "[storage]\nbackend = \"sqlite\"\n[storage.sqlite]\ndurability = \"power_loss\"\n\
             [vectors.embedded]\nhnsw_threshold = 500",
        )
        .unwrap();
        let app = config.app();
        assert_eq!(app.storage.sqlite.durability, Durability::PowerLoss);
        assert_eq!(app.vectors.embedded.hnsw_threshold, 500);
        let error = Config::parse("[storage]\nbackend = \"oracle\"").unwrap_err();
        let message = format!("{error:#}");
        assert!(
            message.contains("oracle") && message.contains("sqlite"),
            "{message}"
        );
    }

    #[test]
    fn an_empty_or_schemeless_database_or_qdrant_url_is_refused() {
        for (database_url, qdrant_url, expected) in [
            (
                Some(""),
                None,
                "OCTOPUS_DATABASE_URL (--database-url) is set but empty",
            ),
            (
                Some("localhost:5432/octopus"),
                None,
                "must start with postgres://",
            ),
            (None, Some("127.0.0.1:6334"), "must start with http://"),
            (
                None,
                Some(" "),
                "OCTOPUS_QDRANT_URL (--qdrant-url) is set but empty",
            ),
        ] {
            let error = Config::default()
                .apply(Overrides {
                    database_url: database_url.map(str::to_owned),
                    qdrant_url: qdrant_url.map(str::to_owned),
                    ..Overrides::default()
                })
                .unwrap_err();
            assert!(format!("{error:#}").contains(expected), "{error:#}");
        }
        let mut config = Config::default();
        config
            .apply(Overrides {
                database_url: Some("postgresql://u@h/db".into()),
                ..Overrides::default()
            })
            .unwrap();
        assert_eq!(config.storage.backend, StorageBackend::Postgres);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let error = Config::parse("[server]\nlisen = \"x\"").unwrap_err();
        assert!(format!("{error:#}").contains("lisen"), "{error:#}");
    }
}

//! The engine over a real SQLite store.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use chrono::{Duration, TimeZone, Utc};
use octopus_app::AppConfig;
use octopus_app::settings::{StorageBackend, VectorBackend};
use octopus_core::message::{NewMessage, Role};
use octopus_engine::{Caller, EngineConfig, Error, Octopus};
use serde_json::json;

mod context;
#[cfg(feature = "postgres-tests")]
mod dumps;
mod egress;
mod model_access;
mod procedures;
mod query_cache;
mod query_turns;
mod recall;
mod turns;

/// The default limits, but live messages may carry the fixtures' fixed
/// dates, months in the past.
fn fixture_limits() -> octopus_engine::Limits {
    octopus_engine::Limits {
        max_live_message_age_secs: 10 * 365 * 86_400,
        ..octopus_engine::Limits::default()
    }
}

/// Embeddings from the fake Ollama server at `url` (`fake_providers::serve`).
/// The agents' models under `settings`, reading keys through `env`.
fn chat_models(
    settings: &octopus_core::llm_settings::LlmSettings,
    env: octopus_llm::EnvReader,
) -> std::sync::Arc<octopus_llm::AgentModels> {
    std::sync::Arc::new(octopus_llm::AgentModels::new(settings, env))
}

fn fake_ollama_embedding(url: &str) -> octopus_core::embedding_settings::EmbeddingSettings {
    octopus_core::embedding_settings::EmbeddingSettings::Ollama(
        octopus_core::embedding_settings::HttpEmbedding::new(
            format!("{url}/api/embed"),
            "nomic-embed-text",
            octopus_testkit::fake_providers::DIMENSION,
        ),
    )
}

/// Where a test's data lives: SQLite files in a temporary directory, or a
/// fresh database on the PostgreSQL test server (`octopus_postgres::testing`).
pub struct Place {
    dir: tempfile::TempDir,
    database_url: Option<String>,
    /// On PostgreSQL: vectors searched by an index in each engine, derived
    /// from the rows, instead of pgvector.
    embedded_vectors: bool,
}

impl Place {
    pub fn sqlite() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            database_url: None,
            embedded_vectors: false,
        }
    }

    #[cfg(feature = "postgres-tests")]
    pub async fn postgres() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            database_url: Some(octopus_postgres::testing::fresh_database().await),
            embedded_vectors: false,
        }
    }

    /// PostgreSQL, with each engine's vector index derived from its rows.
    #[cfg(feature = "postgres-tests")]
    pub async fn postgres_with_embedded_vectors() -> Self {
        Self {
            embedded_vectors: true,
            ..Self::postgres().await
        }
    }

    /// The backends of this place, with `engine`'s settings.
    fn config(&self, mut engine: EngineConfig) -> AppConfig {
        same_vectors(&mut engine);
        let mut config = AppConfig::in_dir(self.dir.path(), engine);
        if let Some(url) = &self.database_url {
            config.storage.backend = StorageBackend::Postgres;
            config.storage.postgres.url = url.clone();
            if self.embedded_vectors {
                config.vectors.backend = Some(VectorBackend::Embedded);
            }
        }
        config
    }

    /// An engine over this place's data, as a server process would open it,
    /// with the fixtures' limits and what `adjust` changes.
    pub async fn open_with(&self, adjust: impl FnOnce(&mut EngineConfig)) -> Octopus {
        let mut engine = EngineConfig {
            limits: fixture_limits(),
            ..EngineConfig::default()
        };
        adjust(&mut engine);
        octopus_app::connect(&self.config(engine)).await.unwrap()
    }
}

/// An engine over SQLite in `dir`, as a server process would open it.
/// An engine with the default settings but the fixtures' limits.
fn open_with_fixture_limits(dir: &std::path::Path) -> Octopus {
    open_in(
        dir,
        EngineConfig {
            limits: fixture_limits(),
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

fn open_in(dir: &std::path::Path, mut engine: EngineConfig) -> octopus_app::Result<Octopus> {
    same_vectors(&mut engine);
    octopus_app::open(&AppConfig::in_dir(dir, engine))
}

/// The same vectors from every engine a test opens: `auto` chooses the
/// local model's number format by timing, which other work on the machine
/// sways, and two engines would then disagree on scores.
fn same_vectors(engine: &mut EngineConfig) {
    if let octopus_core::embedding_settings::EmbeddingSettings::Local(local) = &mut engine.embedding
    {
        local.precision = octopus_core::embedding_settings::EmbeddingPrecision::F32;
    }
}

fn open() -> (Octopus, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = EngineConfig {
        limits: crate::fixture_limits(),
        ..EngineConfig::default()
    };
    (open_in(dir.path(), config).unwrap(), dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_key_is_minted_once_and_a_configured_one_replaces_it() {
    let (octopus, dir) = open();
    let minted = octopus
        .ensure_admin_key(None)
        .await
        .unwrap()
        .expect("first start mints a key");
    assert_eq!(
        octopus.ensure_admin_key(None).await.unwrap(),
        None,
        "printed only once"
    );
    assert_eq!(octopus.authenticate(&minted).await.unwrap(), Caller::Admin);

    // A restart remembers the minted key by its hash.
    drop(octopus);
    let reopened = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    assert_eq!(reopened.ensure_admin_key(None).await.unwrap(), None);
    assert_eq!(reopened.authenticate(&minted).await.unwrap(), Caller::Admin);

    reopened
        .ensure_admin_key(Some("oct_configured"))
        .await
        .unwrap();
    assert_eq!(
        reopened.authenticate("oct_configured").await.unwrap(),
        Caller::Admin
    );
    assert!(matches!(
        reopened.authenticate(&minted).await,
        Err(Error::Unauthenticated)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_edit_applies_to_the_next_append() {
    let (octopus, _dir) = open();
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(
        json!({"name": "a", "llm": {"provider": "ollama", "model": "llama3"}}),
    )
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "u"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
    let at = |minutes: i64| {
        Utc.with_ymd_and_hms(2026, 5, 1, 9, 0, 0).unwrap() + Duration::minutes(minutes)
    };
    let say = |minutes: i64| NewMessage {
        timestamp: Some(at(minutes)),
        ..NewMessage::text(Role::User, "hello")
    };

    let first = octopus
        .append_messages(tenant, conversation, vec![say(0)])
        .await
        .unwrap();
    // 20 minutes later is within the default 30-minute idle timeout: same episode.
    let second = octopus
        .append_messages(tenant, conversation, vec![say(20)])
        .await
        .unwrap();
    assert_eq!(first[0].episode_id, second[0].episode_id);

    // Shorten the timeout; the cached agent must not hide the change.
    octopus
        .update_agent(
            tenant,
            agent.id,
            &json!({"memory": {"episode_idle_timeout_secs": 600}}),
        )
        .await
        .unwrap();
    let third = octopus
        .append_messages(tenant, conversation, vec![say(40)])
        .await
        .unwrap();
    assert_ne!(
        third[0].episode_id, second[0].episode_id,
        "20 idle minutes exceed the new 10-minute timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_is_refused_at_once() {
    let (octopus, _dir) = open();
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let (key, secret) = octopus.create_api_key(tenant, "k").await.unwrap();
    assert_eq!(
        octopus.authenticate(&secret).await.unwrap(),
        Caller::Tenant(tenant)
    );
    octopus.revoke_api_key(tenant, key.id).await.unwrap();
    assert!(matches!(
        octopus.authenticate(&secret).await,
        Err(Error::Unauthenticated)
    ));
}

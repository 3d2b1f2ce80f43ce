//! A server on a fresh data directory, and a client that speaks JSON to it.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use octopus_app::AppConfig;
use octopus_engine::EngineConfig;
use octopus_server::{ServerSettings, app};
use serde_json::{Value, json};
use tower::ServiceExt;

pub const ADMIN_KEY: &str = "oct_test_admin_key";

pub struct TestServer {
    pub app: Router,
    /// The engine behind `app`, for what no route does (the memory worker).
    pub octopus: octopus_engine::Octopus,
    _dir: tempfile::TempDir,
}

/// What a response carried.
pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The `code` of an error body.
    pub fn code(&self) -> &str {
        self.body["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error body: {}", self.body))
    }
}

impl TestServer {
    pub async fn start() -> Self {
        Self::with_config(ServerSettings::default()).await
    }

    /// A server on a fresh database of the PostgreSQL test server.
    #[cfg(feature = "postgres-tests")]
    pub async fn on_postgres() -> Self {
        let url = octopus_postgres::testing::fresh_database().await;
        Self::with_backends(ServerSettings::default(), |app| {
            app.storage.backend = octopus_app::settings::StorageBackend::Postgres;
            app.storage.postgres.url = url;
        })
        .await
    }

    /// A server on SQLite with its vectors on the Qdrant test server, under
    /// collections of its own.
    #[cfg(feature = "qdrant-tests")]
    pub async fn on_qdrant() -> Self {
        let options = octopus_qdrant::testing::fresh_options(octopus_qdrant::QdrantLayout::Shared);
        Self::with_backends(ServerSettings::default(), |app| {
            app.vectors.backend = Some(octopus_app::settings::VectorBackend::Qdrant);
            app.vectors.qdrant.url = options.url;
            app.vectors.qdrant.collection_prefix = options.prefix;
        })
        .await
    }

    pub async fn with_config(config: ServerSettings) -> Self {
        Self::with_engine(config, |_| {}).await
    }

    /// A server whose engine settings `adjust` changes from the defaults.
    pub async fn with_engine(
        config: ServerSettings,
        adjust: impl FnOnce(&mut EngineConfig),
    ) -> Self {
        Self::with_backends(config, |app| adjust(&mut app.engine)).await
    }

    /// A server whose backends and engine settings `adjust` changes from the
    /// defaults (SQLite in a fresh directory).
    pub async fn with_backends(
        config: ServerSettings,
        adjust: impl FnOnce(&mut AppConfig),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut app_config = AppConfig::in_dir(dir.path(), EngineConfig::default());
        // Live messages may carry the fixtures' fixed dates, months past.
        app_config.engine.limits.max_live_message_age_secs = 10 * 365 * 86_400;
        // The same vectors from every server a test starts: `auto` chooses
        // the number format by timing, which other work on the machine sways.
        if let octopus_core::embedding_settings::EmbeddingSettings::Local(local) =
            &mut app_config.engine.embedding
        {
            local.precision = octopus_core::embedding_settings::EmbeddingPrecision::F32;
        }
        adjust(&mut app_config);
        let octopus = octopus_app::connect(&app_config).await.unwrap();
        octopus.ensure_admin_key(Some(ADMIN_KEY)).await.unwrap();
        Self {
            app: app(octopus.clone(), &config),
            octopus,
            _dir: dir,
        }
    }

    /// Sends a request with a raw JSON body.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Reply {
        self.raw_as(method, path, key, "application/json", body)
            .await
    }

    /// Sends a request with a raw body of `content_type`.
    pub async fn raw_as(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        content_type: &str,
        body: Option<Vec<u8>>,
    ) -> Reply {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(key) = key {
            request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
        }
        let request = match body {
            Some(bytes) => request
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(bytes)),
            None => request.body(Body::empty()),
        }
        .unwrap();
        self.send(request).await
    }

    /// Sends a request as built, reading a JSON (or JSON Lines) answer.
    pub async fn send(&self, request: Request<Body>) -> Reply {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let ndjson = headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"application/x-ndjson"));
        let body = if bytes.is_empty() {
            Value::Null
        } else if ndjson {
            Value::String(String::from_utf8(bytes.to_vec()).unwrap())
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| panic!("{status}: body is not JSON: {bytes:?}"))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn call(&self, method: Method, path: &str, key: &str, body: Option<Value>) -> Reply {
        self.raw(
            method,
            path,
            Some(key),
            body.map(|b| serde_json::to_vec(&b).unwrap()),
        )
        .await
    }

    /// [`call`](Self::call) with headers of the caller's.
    pub async fn call_with_headers(
        &self,
        method: Method,
        path: &str,
        key: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Reply {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {key}"))
            .header(header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
        self.send(request.body(body).unwrap()).await
    }

    /// Sends and insists on `expected`, returning the body.
    pub async fn ok(
        &self,
        method: Method,
        path: &str,
        key: &str,
        body: Option<Value>,
        expected: StatusCode,
    ) -> Value {
        let reply = self.call(method.clone(), path, key, body).await;
        assert_eq!(reply.status, expected, "{method} {path}: {}", reply.body);
        reply.body
    }

    /// A server whose operator trusts a loopback chat provider (every
    /// provider's wire format, `octopus_testkit::fake_chat`), with no
    /// retries; the provider and its URL.
    pub async fn with_fake_chat() -> (
        Self,
        std::sync::Arc<octopus_testkit::fake_chat::ChatProvider>,
        String,
    ) {
        Self::with_fake_chat_and(|_| {}).await
    }

    /// [`with_fake_chat`](Self::with_fake_chat), with the engine's settings
    /// changed by `adjust`.
    pub async fn with_fake_chat_and(
        adjust: impl FnOnce(&mut EngineConfig),
    ) -> (
        Self,
        std::sync::Arc<octopus_testkit::fake_chat::ChatProvider>,
        String,
    ) {
        use octopus_testkit::fake_chat::{self, ChatProvider};
        let fake = std::sync::Arc::new(ChatProvider::default());
        let url = fake_chat::serve(std::sync::Arc::clone(&fake)).await;
        let server = Self::with_engine(Default::default(), |engine| {
            engine.llm.max_retries = 0;
            engine.llm.allowed_base_urls = vec![url.clone()];
            adjust(engine);
        })
        .await;
        (server, fake, url)
    }

    /// Two servers sharing one fresh PostgreSQL database, both calling the
    /// same loopback chat provider: what a load balancer spreads a tenant's
    /// requests over.
    #[cfg(feature = "postgres-tests")]
    pub async fn pair_on_postgres_with_fake_chat() -> (
        [Self; 2],
        std::sync::Arc<octopus_testkit::fake_chat::ChatProvider>,
        String,
    ) {
        use octopus_testkit::fake_chat::{self, ChatProvider};
        let fake = std::sync::Arc::new(ChatProvider::default());
        let url = fake_chat::serve(std::sync::Arc::clone(&fake)).await;
        let database = octopus_postgres::testing::fresh_database().await;
        let one = || {
            let (url, database) = (url.clone(), database.clone());
            Self::with_backends(ServerSettings::default(), move |app| {
                app.storage.backend = octopus_app::settings::StorageBackend::Postgres;
                app.storage.postgres.url = database;
                app.engine.llm.max_retries = 0;
                app.engine.llm.allowed_base_urls = vec![url];
            })
        };
        let first = one().await;
        let second = one().await;
        ([first, second], fake, url)
    }

    /// An agent named `support` whose model is the loopback Ollama at
    /// `url` (`memory` its memory settings), and a conversation of user
    /// `dana` with it; returns their ids.
    pub async fn chat_agent(&self, key: &str, url: &str, memory: Value) -> (String, String) {
        let agent = self
            .ok(
                Method::POST,
                "/v1/agents",
                key,
                Some(
                    json!({"name": "support", "system_prompt": "Be brief.", "memory": memory,
                    "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url}}),
                ),
                StatusCode::CREATED,
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let conversation = self.conversation(key, &agent, "dana").await;
        (agent, conversation)
    }

    /// A new conversation of `user` with `agent`; its id.
    pub async fn conversation(&self, key: &str, agent: &str, user: &str) -> String {
        self.ok(
            Method::POST,
            "/v1/conversations",
            key,
            Some(json!({"agent_id": agent, "user_id": user})),
            StatusCode::CREATED,
        )
        .await["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Every message of a conversation: its episodes oldest first, each in
    /// order.
    pub async fn conversation_messages(&self, key: &str, conversation: &str) -> Vec<Value> {
        let episodes = self
            .ok(
                Method::GET,
                &format!("/v1/episodes?conversation_id={conversation}"),
                key,
                None,
                StatusCode::OK,
            )
            .await;
        let mut messages = Vec::new();
        for episode in episodes["items"].as_array().unwrap().iter().rev() {
            let id = episode["id"].as_str().unwrap();
            let episode = self
                .ok(
                    Method::GET,
                    &format!("/v1/episodes/{id}"),
                    key,
                    None,
                    StatusCode::OK,
                )
                .await;
            messages.extend(episode["messages"].as_array().unwrap().iter().cloned());
        }
        messages
    }

    /// A tenant with an API key; returns (tenant id, key).
    pub async fn tenant(&self, name: &str) -> (String, String) {
        let tenant = self
            .ok(
                Method::POST,
                "/v1/tenants",
                ADMIN_KEY,
                Some(json!({"name": name})),
                StatusCode::CREATED,
            )
            .await;
        let id = tenant["id"].as_str().unwrap().to_owned();
        let key = self
            .ok(
                Method::POST,
                &format!("/v1/tenants/{id}/keys"),
                ADMIN_KEY,
                Some(json!({"name": "test"})),
                StatusCode::CREATED,
            )
            .await;
        (id, key["key"].as_str().unwrap().to_owned())
    }

    /// A new agent named `name` (see [`agent_body`]); returns its id.
    pub async fn agent(&self, key: &str, name: &str) -> String {
        let agent = self
            .ok(
                Method::POST,
                "/v1/agents",
                key,
                Some(agent_body(name)),
                StatusCode::CREATED,
            )
            .await;
        agent["id"].as_str().unwrap().to_owned()
    }
}

/// Everything one tenant owns in a typical test: an agent, a conversation, an
/// episode with two messages.
pub struct Seeded {
    pub key: String,
    pub tenant: String,
    pub agent: String,
    pub conversation: String,
    pub episode: String,
    pub message: String,
    /// An approved procedure of the agent.
    pub procedure: String,
    /// A fact about alice, of the episode.
    pub fact: String,
    /// A webhook of the tenant's, for fact.added.
    pub webhook: String,
}

pub async fn seed(server: &TestServer, name: &str) -> Seeded {
    let (tenant, key) = server.tenant(name).await;
    let agent = server.agent(&key, "support").await;
    let conversation = server
        .ok(
            Method::POST,
            "/v1/conversations",
            &key,
            Some(json!({"agent_id": agent, "user_id": "alice"})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let appended = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            &key,
            Some(json!({"messages": [
                {"role": "user", "content": format!("{name} secret roadmap")},
                {"role": "assistant", "content": "Noted."}
            ]})),
            StatusCode::CREATED,
        )
        .await;
    let procedure = server
        .ok(
            Method::POST,
            "/v1/procedures",
            &key,
            Some(
                json!({"agent_id": agent, "name": format!("{name} escalation"),
                        "trigger_pattern": "(?i)escalate",
                        "steps": [{"instruction": format!("{name} secret roadmap step")}]}),
            ),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .ok(
            Method::POST,
            &format!("/v1/procedures/{procedure}/approve"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    let episode = appended["messages"][0]["episode_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let fact = seed_fact(
        server,
        &tenant,
        &episode,
        &format!("{name} secret roadmap fact"),
    )
    .await;
    let webhook = server
        .ok(
            Method::POST,
            "/v1/webhooks",
            &key,
            Some(json!({"url": format!("https://hooks.example.com/{name}"), "events": ["fact.added"]})),
            StatusCode::CREATED,
        )
        .await["webhook"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    Seeded {
        fact,
        webhook,
        procedure,
        key,
        tenant,
        agent,
        conversation,
        episode,
        message: appended["messages"][0]["id"].as_str().unwrap().to_owned(),
    }
}

/// A fact about the episode's user with `text`, brought in the way a
/// model's would be kept: a dump holding it alone, imported with the admin
/// key into the episode's tenant. Returns its id.
pub async fn seed_fact(server: &TestServer, tenant: &str, episode: &str, text: &str) -> String {
    seed_fact_from(server, tenant, episode, &[], text).await
}

/// [`seed_fact`], the fact learned from `messages`.
pub async fn seed_fact_from(
    server: &TestServer,
    tenant: &str,
    episode: &str,
    messages: &[&str],
    text: &str,
) -> String {
    let id = uuid::Uuid::now_v7().to_string();
    let at = "2026-01-01T00:00:00Z";
    let dump = [
        json!({"type": "header", "format": "octopus-dump", "version": 1, "exported_at": at,
               "tenant_id": tenant, "user_id": null}),
        json!({"type": "fact", "id": id, "tenant_id": tenant,
               "agent_id": "00000000-0000-7000-8000-000000000000", "user_id": "alice",
               "episode_id": episode, "message_ids": messages, "text": text, "valid_from": at,
               "valid_to": null, "superseded_by": null, "created_at": at}),
        json!({"type": "end", "records": 2}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let reply = server
        .raw_as(
            Method::POST,
            "/v1/import",
            Some(ADMIN_KEY),
            "application/x-ndjson",
            Some(dump.into_bytes()),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    id
}

pub fn agent_body(name: &str) -> Value {
    json!({
        "name": name,
        "system_prompt": "You are a helpful support agent.",
        "llm": {"provider": "openai", "model": "gpt-4o-mini"}
    })
}

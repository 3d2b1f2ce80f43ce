//! Starting and stopping `octopus serve` as a child process.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

pub const ADMIN_KEY: &str = "oct_durability_admin";

pub struct Server {
    child: Child,
    pub url: String,
    http: reqwest::Client,
}

impl Server {
    /// Starts the binary on a free port over `data_dir` and waits until it listens.
    pub fn start(data_dir: &Path) -> Server {
        Self::start_with(data_dir, None)
    }

    /// Like [`start`](Self::start), with a configuration file.
    pub fn start_with(data_dir: &Path, config: Option<&Path>) -> Server {
        Self::start_on(data_dir, config, None)
    }

    /// A server whose operator trusts a loopback chat provider (a tenant's
    /// URL could not reach loopback), the provider, and its URL.
    pub async fn with_loopback_chat(
        dir: &Path,
    ) -> (
        Server,
        std::sync::Arc<octopus_testkit::fake_chat::ChatProvider>,
        String,
    ) {
        use octopus_testkit::fake_chat::{self, ChatProvider};
        let fake = std::sync::Arc::new(ChatProvider::default());
        let url = fake_chat::serve(std::sync::Arc::clone(&fake)).await;
        let config = dir.join("octopus.toml");
        std::fs::write(&config, format!("[llm]\nallowed_base_urls = [\"{url}\"]\n")).unwrap();
        (
            Self::start_with(&dir.join("data"), Some(&config)),
            fake,
            url,
        )
    }

    /// Like [`start_with`](Self::start_with), on the PostgreSQL database
    /// `database_url` names when there is one.
    pub fn start_on(data_dir: &Path, config: Option<&Path>, database_url: Option<&str>) -> Server {
        Self::start_with_env(data_dir, config, database_url, &[])
    }

    /// Like [`start_on`](Self::start_on), with these variables in the
    /// server's environment.
    pub fn start_with_env(
        data_dir: &Path,
        config: Option<&Path>,
        database_url: Option<&str>,
        env: &[(&str, &str)],
    ) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_octopus"));
        command.envs(env.iter().copied());
        match database_url {
            Some(url) => command.env("OCTOPUS_DATABASE_URL", url),
            None => command.env_remove("OCTOPUS_DATABASE_URL"),
        };
        if let Some(config) = config {
            command.arg("serve").arg("--config").arg(config);
        } else {
            command.arg("serve");
        }
        let mut child = command
            .args([
                "--listen",
                "127.0.0.1:0",
                "--log",
                "warn",
                "--admin-key",
                ADMIN_KEY,
            ])
            .arg("--data-dir")
            .arg(data_dir)
            .env_remove("OCTOPUS_CONFIG")
            .env_remove("OCTOPUS_QDRANT_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start octopus serve");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("octopus exited before listening")
                .unwrap();
            if let Some(url) = line.strip_prefix("Octopus listening on ") {
                break url.trim().to_owned();
            }
        };
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        octopus_embed::http::install_tls_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .unwrap();
        Server { child, url, http }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill_hard(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// The server's resident memory now, in bytes (`VmRSS`).
    pub fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("read the server's /proc status");
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .expect("VmRSS in /proc status");
        kib * 1024
    }

    /// Sends the signal `name` (`STOP`, `CONT`, …) to the server.
    #[cfg_attr(not(feature = "postgres-tests"), allow(dead_code))]
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
    }

    pub fn client(&self) -> reqwest::Client {
        self.http.clone()
    }

    pub async fn call(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{method} {path}: {status} {value}");
        value
    }

    /// A tenant named `name` and a key of it: (tenant id, key).
    pub async fn tenant(&self, name: &str) -> (String, String) {
        use reqwest::Method;
        let tenant = self
            .call(
                ADMIN_KEY,
                Method::POST,
                "/v1/tenants",
                Some(json!({"name": name})),
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let key = self
            .call(
                ADMIN_KEY,
                Method::POST,
                &format!("/v1/tenants/{tenant}/keys"),
                Some(json!({"name": "k"})),
            )
            .await["key"]
            .as_str()
            .unwrap()
            .to_owned();
        (tenant, key)
    }

    /// A tenant named `name`, a key, and an agent: (tenant id, key, agent id).
    pub async fn tenant_with_agent(&self, name: &str) -> (String, String, String) {
        use reqwest::Method;
        let (tenant, key) = self.tenant(name).await;
        // Fixtures dated an hour back must not be swept closed as idle.
        let agent = json!({"name": "a", "llm": {"provider": "ollama", "model": "llama3"},
                           "memory": {"episode_idle_timeout_secs": 86_400}});
        let agent = self
            .call(&key, Method::POST, "/v1/agents", Some(agent))
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        (tenant, key, agent)
    }

    /// A tenant key, an agent, and `n` conversations: (key, agent, conversations).
    pub async fn seed(&self, n: usize) -> (String, String, Vec<String>) {
        use reqwest::Method;
        let (_, key, agent) = self.tenant_with_agent("load").await;
        let mut conversations = Vec::new();
        for i in 0..n {
            let body = json!({"agent_id": agent, "user_id": format!("user{i}")});
            conversations.push(
                self.call(&key, Method::POST, "/v1/conversations", Some(body))
                    .await["id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        (key, agent, conversations)
    }

    /// Every message of a conversation, in order: episodes oldest first, then ordinal.
    pub async fn conversation_messages(&self, key: &str, conversation: &str) -> Vec<Value> {
        use reqwest::Method;
        let episodes = self
            .call(
                key,
                Method::GET,
                &format!("/v1/episodes?conversation_id={conversation}&limit=1000"),
                None,
            )
            .await;
        let mut ids: Vec<(String, String)> = episodes["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["started_at"].as_str().unwrap().to_owned(),
                    e["id"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        ids.sort();
        let mut messages = Vec::new();
        for (_, id) in ids {
            let episode = self
                .call(key, Method::GET, &format!("/v1/episodes/{id}"), None)
                .await;
            messages.extend(episode["messages"].as_array().unwrap().iter().cloned());
        }
        messages
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

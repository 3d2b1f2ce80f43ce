//! The soak driver's own calls to the server: setting up the tenants, the
//! imports and forgets it makes beside wrk's load, the memory queue, exports.

use serde_json::{Value, json};

use super::{ADMIN_KEY, Options};

/// One tenant of the soak: its key, its agent, and its users' conversations.
pub(super) struct SoakTenant {
    pub key: String,
    pub agent: String,
    pub conversations: Vec<(String, String)>,
}

pub(super) struct Api {
    pub http: reqwest::Client,
    pub url: String,
}

impl Api {
    async fn call(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(format!("{method} {path}: {status} {value}"));
        }
        Ok(value)
    }

    pub async fn create_tenants(&self, options: &Options) -> Result<Vec<SoakTenant>, String> {
        use reqwest::Method;
        let mut tenants = Vec::new();
        for t in 0..options.tenants {
            let tenant = self
                .call(
                    ADMIN_KEY,
                    Method::POST,
                    "/v1/tenants",
                    Some(json!({"name": format!("soak-{t}")})),
                )
                .await?;
            let id = tenant["id"].as_str().unwrap_or_default();
            let key = self
                .call(
                    ADMIN_KEY,
                    Method::POST,
                    &format!("/v1/tenants/{id}/keys"),
                    Some(json!({"name": "soak"})),
                )
                .await?["key"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let agent = json!({"name": "assistant", "llm": {"provider": "ollama", "model": "llama3"},
                               "memory": {"episode_idle_timeout_secs": 86_400}});
            let agent = self
                .call(&key, Method::POST, "/v1/agents", Some(agent))
                .await?["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let mut conversations = Vec::new();
            for u in 0..options.users_per_tenant {
                let user = format!("user-{u}");
                let body = json!({"agent_id": agent, "user_id": user});
                let conversation = self
                    .call(&key, Method::POST, "/v1/conversations", Some(body))
                    .await?["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                conversations.push((user, conversation));
            }
            tenants.push(SoakTenant {
                key,
                agent,
                conversations,
            });
        }
        Ok(tenants)
    }

    /// Imports `import_messages` messages for `user`, in sessions of 20 a
    /// day apart; the status, or `None` when no answer came.
    /// Imports `count` messages for `user`, in sessions of 20.
    pub async fn import(
        &self,
        tenant: &SoakTenant,
        user: &str,
        count: usize,
        options: &Options,
    ) -> Option<u16> {
        let sessions: Vec<Value> = (0..count.div_ceil(20))
            .map(|s| {
                let messages: Vec<Value> = (0..20.min(count - s * 20))
                    .map(|m| {
                        let n = s * 20 + m;
                        json!({
                            "role": if m % 2 == 0 { "user" } else { "assistant" },
                            "content": options.texts[n % options.texts.len()],
                            "timestamp": format!("2025-01-{:02}T{:02}:{m:02}:00Z", 1 + s % 28, (s / 28) % 24),
                        })
                    })
                    .collect();
                json!({"messages": messages})
            })
            .collect();
        let body = json!({"agent_id": tenant.agent, "user_id": user, "sessions": sessions});
        self.status(
            &tenant.key,
            reqwest::Method::POST,
            "/v1/conversations/import",
            Some(body),
        )
        .await
    }

    pub async fn forget(&self, tenant: &SoakTenant, user: &str) -> Option<u16> {
        self.status(
            &tenant.key,
            reqwest::Method::DELETE,
            &format!("/v1/users/{user}"),
            None,
        )
        .await
    }

    async fn status(
        &self,
        key: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Option<u16> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.ok()?;
        let status = response.status().as_u16();
        response.bytes().await.ok()?;
        Some(status)
    }

    /// Memory jobs waiting in all, and the oldest one's age, from `/metrics`.
    pub async fn queue(&self) -> Option<(u64, f64)> {
        let response = self
            .http
            .get(format!("{}/metrics", self.url))
            .bearer_auth(ADMIN_KEY)
            .send()
            .await
            .ok()?;
        let text = response.text().await.ok()?;
        let value = |line: &str| line.rsplit(' ').next()?.parse::<f64>().ok();
        let mut queued = 0.0;
        let mut oldest: f64 = 0.0;
        for line in text.lines() {
            if line.starts_with("octopus_memory_jobs_queued{") {
                queued += value(line)?;
            } else if line.starts_with("octopus_memory_job_oldest_age_seconds{") {
                oldest = oldest.max(value(line)?);
            }
        }
        Some((queued as u64, oldest))
    }

    pub async fn export(&self, key: &str) -> Result<String, String> {
        let response = self
            .http
            .get(format!("{}/v1/export", self.url))
            .bearer_auth(key)
            .send()
            .await
            .map_err(|e| format!("export: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("export: {}", response.status()));
        }
        response.text().await.map_err(|e| format!("export: {e}"))
    }
}

//! The soak driver's own calls to the server: setting up the tenants, the
//! imports and forgets it makes beside wrk's load, the memory queue, exports.

use octopus_client::Client;
use octopus_client::operations as op;
use serde_json::{Value, json};

use super::Options;

/// One tenant of the soak: its key, its agent, and its users' conversations.
pub(super) struct SoakTenant {
    pub key: String,
    pub agent: String,
    pub conversations: Vec<(String, String)>,
}

pub(super) struct Api {
    /// The server, with the admin key.
    pub admin: Client,
}

impl Api {
    pub async fn create_tenants(
        &self,
        options: &Options,
    ) -> Result<Vec<SoakTenant>, octopus_client::Error> {
        let mut tenants = Vec::new();
        for t in 0..options.tenants {
            let tenant = self
                .admin
                .call(op::CREATE_TENANT)
                .json(&json!({"name": format!("soak-{t}")}))
                .send()
                .await?;
            let id = tenant["id"].as_str().unwrap_or_default();
            let key = self
                .admin
                .call(op::CREATE_API_KEY)
                .param(id)
                .json(&json!({"name": "soak"}))
                .send()
                .await?["key"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let api = self.admin.with_key(&key);
            let agent = json!({"name": "assistant", "llm": {"provider": "ollama", "model": "llama3"},
                               "memory": {"episode_idle_timeout_secs": 86_400}});
            let agent = api.call(op::CREATE_AGENT).json(&agent).send().await?["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let mut conversations = Vec::new();
            for u in 0..options.users_per_tenant {
                let user = format!("user-{u}");
                let body = json!({"agent_id": agent, "user_id": user});
                let conversation =
                    api.call(op::CREATE_CONVERSATION).json(&body).send().await?["id"]
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
        let call = self
            .admin
            .call(op::IMPORT_CONVERSATION)
            .key(&tenant.key)
            .json(&body);
        status(call).await
    }

    pub async fn forget(&self, tenant: &SoakTenant, user: &str) -> Option<u16> {
        status(
            self.admin
                .call(op::FORGET_USER)
                .key(&tenant.key)
                .param(user),
        )
        .await
    }

    /// Memory jobs waiting in all, and the oldest one's age, from `/metrics`.
    pub async fn queue(&self) -> Option<(u64, f64)> {
        let text = self.admin.call(op::METRICS).text().await.ok()?;
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

    pub async fn export(&self, key: &str) -> Result<String, octopus_client::Error> {
        self.admin.call(op::EXPORT_DUMP).key(key).text().await
    }
}

/// The status a call was answered with; `None` when no answer came.
async fn status(call: octopus_client::Call<'_>) -> Option<u16> {
    match call.open().await {
        Ok(response) => {
            let status = response.status().as_u16();
            response.bytes().await.ok()?;
            Some(status)
        }
        Err(error) => error.status(),
    }
}

//! Webhooks: the endpoints a tenant registers, their delivery logs, and the
//! dispatcher that sends what the outbox holds (see [`crate::webhooks`]).

use octopus_core::store::Page;
use octopus_core::webhook::{Attempt, CreatedWebhook, Delivery, NewWebhook, Webhook, WebhookInfo};
use octopus_core::{Error as DomainError, TenantId, WebhookId, now};

use super::Octopus;
use crate::Result;
use crate::webhooks::signing;

/// Deliveries claimed, and sent at once, per round.
const BATCH: u32 = 16;
/// How often the dispatcher looks for due deliveries: a delivery leaves
/// within this of its change, and an idle poll is one indexed read.
const POLL: std::time::Duration = std::time::Duration::from_millis(250);
/// How often the log is pruned.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

impl Octopus {
    /// Registers an endpoint; the answer holds its secret, shown this once.
    pub async fn create_webhook(
        &self,
        tenant: TenantId,
        new: NewWebhook,
    ) -> Result<CreatedWebhook> {
        new.validate()?;
        self.webhooks
            .check_url(&new.url)
            .map_err(|problem| DomainError::invalid("url", problem))?;
        let webhook = Webhook {
            id: WebhookId::new(),
            tenant_id: tenant,
            url: new.url.clone(),
            events: new.event_set(),
            description: new.description.clone(),
            secret: signing::new_secret(),
            created_at: octopus_core::to_stored_precision(now()),
            failing_since: None,
            disabled_at: None,
            disabled_reason: None,
        };
        self.store.create_webhook(&webhook).await?;
        tracing::info!(tenant_id = %tenant, webhook_id = %webhook.id, "webhook registered");
        Ok(CreatedWebhook {
            webhook: webhook.info(),
            secret: webhook.secret,
        })
    }

    pub async fn list_webhooks(&self, tenant: TenantId) -> Result<Vec<WebhookInfo>> {
        let webhooks = self.store.list_webhooks(tenant).await?;
        Ok(webhooks.iter().map(Webhook::info).collect())
    }

    pub async fn get_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<WebhookInfo> {
        Ok(self.store.get_webhook(tenant, id).await?.info())
    }

    /// Deletes the endpoint and its log; nothing more is sent to it.
    pub async fn delete_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<()> {
        Ok(self.store.delete_webhook(tenant, id).await?)
    }

    /// Lets a disabled endpoint receive what is written from now on.
    pub async fn enable_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<WebhookInfo> {
        Ok(self.store.enable_webhook(tenant, id).await?.info())
    }

    /// The endpoint's deliveries, newest first.
    pub async fn webhook_deliveries(
        &self,
        tenant: TenantId,
        id: WebhookId,
        page: Page,
    ) -> Result<Vec<Delivery>> {
        Ok(self.store.list_deliveries(tenant, id, page).await?)
    }

    /// Sends the deliveries due now, one round; returns how many it tried.
    pub async fn deliver_webhooks(&self) -> Result<usize> {
        let due = self
            .store
            .claim_deliveries(BATCH, now(), self.webhooks.settings().lease())
            .await?;
        let mut sending = tokio::task::JoinSet::new();
        for delivery in due {
            let octopus = self.clone();
            sending.spawn(async move {
                let outcome = octopus.webhooks.attempt(&delivery, now()).await;
                tracing::debug!(webhook_id = %delivery.webhook_id, ?outcome, "webhook attempt");
                let attempt = Attempt {
                    tenant_id: delivery.tenant_id,
                    webhook_id: delivery.webhook_id,
                    event_id: delivery.event_id,
                    at: octopus_core::to_stored_precision(now()),
                    outcome,
                };
                octopus.store.record_attempt(&attempt).await
            });
        }
        let mut tried = 0;
        while let Some(recorded) = sending.join_next().await {
            tried += 1;
            match recorded {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!(%error, "recording a webhook attempt failed"),
                Err(error) => tracing::warn!(%error, "a webhook attempt stopped"),
            }
        }
        Ok(tried)
    }

    /// Starts the dispatcher; it runs until the runtime shuts down. Every
    /// server sharing the data may run one: a claim leases what it takes.
    pub fn start_webhook_dispatcher(&self) -> tokio::task::JoinHandle<()> {
        let octopus = self.clone();
        tokio::spawn(async move {
            let mut pruned_at: Option<std::time::Instant> = None;
            loop {
                match octopus.deliver_webhooks().await {
                    Ok(0) => {}
                    Ok(_) => continue,
                    Err(error) => tracing::warn!(%error, "webhook dispatcher failed; retrying"),
                }
                if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                    octopus.prune_deliveries().await;
                    pruned_at = Some(std::time::Instant::now());
                }
                tokio::time::sleep(POLL).await;
            }
        })
    }

    async fn prune_deliveries(&self) {
        let days = self.webhooks.settings().keep_deliveries_days;
        // However many days are asked for, the cut-off is a date: at worst 1970.
        let before = chrono::Duration::try_days(i64::try_from(days).unwrap_or(i64::MAX))
            .and_then(|kept| now().checked_sub_signed(kept))
            .unwrap_or(chrono::DateTime::UNIX_EPOCH);
        match self.store.prune_deliveries(before).await {
            Ok(0) => {}
            Ok(pruned) => tracing::info!(pruned, "old webhook deliveries pruned from the log"),
            Err(error) => tracing::warn!(%error, "pruning the webhook log failed"),
        }
    }
}

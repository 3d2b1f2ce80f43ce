//! Webhooks: the endpoints a tenant registers, their delivery logs, and the
//! dispatcher that sends what the outbox holds (see [`crate::webhooks`]).

use std::collections::HashMap;

use octopus_core::store::Page;
use octopus_core::webhook::{
    Attempt, CreatedWebhook, Delivery, DeliveryClaim, DueDelivery, NewWebhook, Webhook, WebhookInfo,
};
use octopus_core::{Error as DomainError, TenantId, WebhookId, now};

use crate::error::Result;
use crate::octopus::Octopus;
use crate::webhooks::in_flight::InFlight;
use crate::webhooks::signing;

/// Deliveries one round of [`Octopus::deliver_webhooks`] claims.
const ROUND: u32 = 16;
/// How often the dispatcher looks for due deliveries when nothing woke it:
/// changes this process commits wake it at once; other servers' changes,
/// and retries coming due, are found within this.
const POLL: std::time::Duration = std::time::Duration::from_millis(500);
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

    /// Sends the deliveries due now, one round, and waits for them all;
    /// returns how many it tried. For tests and tools: a server runs the
    /// dispatcher ([`Self::start_webhook_dispatcher`]) instead.
    pub async fn deliver_webhooks(&self) -> Result<usize> {
        let due = self
            .store
            .claim_deliveries(&DeliveryClaim::any(
                ROUND,
                now(),
                self.webhooks.settings().lease(),
            ))
            .await?;
        let tried = due.len();
        let mut sending = tokio::task::JoinSet::new();
        for delivery in due {
            sending.spawn(self.clone().send_delivery(delivery));
        }
        while let Some(ended) = sending.join_next().await {
            if let Err(failure) = ended {
                tracing::warn!(%failure, "a webhook attempt stopped");
            }
        }
        Ok(tried)
    }

    /// Starts the dispatcher; it runs until the runtime shuts down. Every
    /// server sharing the data may run one: a claim leases what it takes.
    ///
    /// Deliveries are sent concurrently, each in a task of its own, up to
    /// the caps of [`crate::webhooks::in_flight`]: an endpoint or tenant at
    /// its cap is left out of claims until one of its deliveries ends, so
    /// a silent endpoint holds only its own slots, never a round that
    /// everyone waits on. It wakes when a change commits in this process,
    /// and polls for other servers' changes.
    pub fn start_webhook_dispatcher(&self) -> tokio::task::JoinHandle<()> {
        let octopus = self.clone();
        tokio::spawn(async move { octopus.dispatch_webhooks().await })
    }

    async fn dispatch_webhooks(&self) {
        let lease = self.webhooks.settings().lease();
        let mut in_flight = InFlight::default();
        let mut sending = tokio::task::JoinSet::new();
        let mut sent_to: HashMap<tokio::task::Id, (WebhookId, TenantId)> = HashMap::new();
        let mut pruned_at: Option<std::time::Instant> = None;
        loop {
            // Claims until the free slots are taken or nothing more is due.
            while in_flight.free() > 0 {
                let claim = in_flight.next_claim(now(), lease);
                let due = match self.store.claim_deliveries(&claim).await {
                    Ok(due) => due,
                    Err(error) => {
                        tracing::warn!(%error, "claiming webhook deliveries failed; retrying");
                        break;
                    }
                };
                let all_there_was = due.len() < claim.limit as usize;
                for delivery in due {
                    in_flight.start(&delivery);
                    let ids = (delivery.webhook_id, delivery.tenant_id);
                    let task = sending.spawn(self.clone().send_delivery(delivery));
                    sent_to.insert(task.id(), ids);
                }
                if all_there_was {
                    break;
                }
            }
            if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                self.prune_deliveries().await;
                pruned_at = Some(std::time::Instant::now());
            }
            tokio::select! {
                Some(ended) = sending.join_next_with_id(), if !sending.is_empty() => {
                    let id = match ended {
                        Ok((id, ())) => id,
                        Err(failure) => {
                            tracing::warn!(%failure, "a webhook attempt stopped");
                            failure.id()
                        }
                    };
                    if let Some((webhook, tenant)) = sent_to.remove(&id) {
                        in_flight.finish(webhook, tenant);
                    }
                }
                () = self.work_signal.deliveries() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Sends one delivery and records how it went.
    async fn send_delivery(self, delivery: DueDelivery) {
        let outcome = self.webhooks.attempt(&delivery, now()).await;
        tracing::debug!(tenant_id = %delivery.tenant_id, webhook_id = %delivery.webhook_id, ?outcome, "webhook attempt");
        let attempt = Attempt {
            tenant_id: delivery.tenant_id,
            webhook_id: delivery.webhook_id,
            event_id: delivery.event_id,
            at: octopus_core::to_stored_precision(now()),
            outcome,
        };
        if let Err(error) = self.store.record_attempt(&attempt).await {
            tracing::warn!(%error, tenant_id = %delivery.tenant_id, "recording a webhook attempt failed");
        }
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

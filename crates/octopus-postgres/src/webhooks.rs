//! The webhook port on PostgreSQL: endpoints, the outbox written in the
//! transactions of the changes it reports, and the claims and attempts of
//! the dispatchers (any number of servers: a claim takes its rows
//! `FOR UPDATE SKIP LOCKED` and leases them).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use octopus_core::store::{Page, WebhookStore};
use octopus_core::webhook::{
    self, Attempt, AttemptOutcome, ChangeEvent, Delivery, DeliveryClaim, DeliveryState,
    DueDelivery, EventType, MAX_WEBHOOKS_PER_TENANT, Webhook, message_id, too_many_webhooks,
};
use octopus_core::{Error as DomainError, Result, TenantId, Timestamp, WebhookId};
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::PgRow;

use crate::error::{Result as StoreResult, corrupt};
use crate::rows::{Tx, u32_at};
use crate::{PostgresStore, domain};

const COLUMNS: &str = "id, tenant_id, url, events, description, secret, created_at, failing_since, disabled_at, disabled_reason";

/// Writes `event` to the outbox in `tx`: one pending delivery for each
/// enabled endpoint of its tenant subscribed to its type; nothing when
/// there is none.
pub(crate) async fn record(tx: &mut Tx<'_>, event: &ChangeEvent) -> StoreResult<()> {
    query(
        "INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, agent_id,
                                         user_id, payload, created_at, next_attempt_at)
         SELECT tenant_id, id, $2, $3, $4, $5, $6, $7, $7 FROM webhooks
         WHERE tenant_id = $1 AND disabled_at IS NULL AND $3 = ANY (events)",
    )
    .bind(event.tenant_id.0)
    .bind(event.id)
    .bind(event.event_type.as_str())
    .bind(event.agent_id.map(|a| a.0))
    .bind(&event.user_id)
    .bind(event.payload())
    .bind(event.at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn webhook_from_row(row: &PgRow) -> StoreResult<Webhook> {
    let events: Vec<String> = row.try_get("events")?;
    let events = events
        .iter()
        .map(|name| EventType::parse(name).ok_or_else(|| corrupt("webhook event", name)))
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Webhook {
        id: WebhookId(row.try_get("id")?),
        tenant_id: TenantId(row.try_get("tenant_id")?),
        url: row.try_get("url")?,
        events,
        description: row.try_get("description")?,
        secret: row.try_get("secret")?,
        created_at: row.try_get("created_at")?,
        failing_since: row.try_get("failing_since")?,
        disabled_at: row.try_get("disabled_at")?,
        disabled_reason: row.try_get("disabled_reason")?,
    })
}

fn delivery_from_row(row: &PgRow) -> StoreResult<Delivery> {
    let event_type: String = row.try_get("event_type")?;
    let state: String = row.try_get("state")?;
    let status: Option<i32> = row.try_get("last_status")?;
    let pending = state == "pending";
    Ok(Delivery {
        message_id: message_id(row.try_get("event_id")?),
        webhook_id: WebhookId(row.try_get("webhook_id")?),
        event_type: EventType::parse(&event_type)
            .ok_or_else(|| corrupt("webhook event", &event_type))?,
        user_id: row.try_get("user_id")?,
        state: DeliveryState::parse(&state).ok_or_else(|| corrupt("delivery state", &state))?,
        attempts: u32_at(row, "attempts")?,
        last_status: status.and_then(|s| u16::try_from(s).ok()),
        last_error: row.try_get("last_error")?,
        created_at: row.try_get("created_at")?,
        last_attempt_at: row.try_get("last_attempt_at")?,
        next_attempt_at: match pending {
            true => row.try_get("next_attempt_at")?,
            false => None,
        },
        delivered_at: row.try_get("delivered_at")?,
    })
}

impl PostgresStore {
    async fn webhook(&self, tenant: TenantId, id: WebhookId) -> StoreResult<Webhook> {
        let row = query(&format!(
            "SELECT {COLUMNS} FROM webhooks WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant.0)
        .bind(id.0)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| DomainError::not_found(WebhookId::KIND, id))?;
        webhook_from_row(&row)
    }

    async fn claim(&self, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
        let lease_until = webhook::lease_end(claim.now, claim.lease);
        let skip_webhooks: Vec<uuid::Uuid> = claim.skip_webhooks.iter().map(|id| id.0).collect();
        let skip_tenants: Vec<uuid::Uuid> = claim.skip_tenants.iter().map(|id| id.0).collect();
        let rows = query(
            "UPDATE webhook_deliveries d SET leased_until = $3
             FROM (SELECT d.seq FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                   WHERE d.state = 'pending' AND d.next_attempt_at <= $1
                     AND (d.leased_until IS NULL OR d.leased_until <= $1)
                     AND w.disabled_at IS NULL
                     AND NOT (d.webhook_id = ANY($4)) AND NOT (d.tenant_id = ANY($5))
                     AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                                     WHERE e.webhook_id = d.webhook_id
                                       AND e.user_id IS NOT DISTINCT FROM d.user_id
                                       AND e.state = 'pending' AND e.seq < d.seq)
                   ORDER BY d.seq LIMIT $2
                   FOR UPDATE OF d SKIP LOCKED) due, webhooks w
             WHERE d.seq = due.seq AND w.id = d.webhook_id
             RETURNING d.seq, d.tenant_id, d.webhook_id, d.event_id, d.payload, d.attempts, w.url, w.secret, w.failing_since",
        )
        .bind(claim.now)
        .bind(i64::from(claim.limit))
        .bind(lease_until)
        .bind(skip_webhooks)
        .bind(skip_tenants)
        .fetch_all(&self.pool)
        .await?;
        let mut due = rows
            .iter()
            .map(|row| {
                Ok((
                    row.try_get::<i64, _>("seq")?,
                    DueDelivery {
                        tenant_id: TenantId(row.try_get("tenant_id")?),
                        webhook_id: WebhookId(row.try_get("webhook_id")?),
                        event_id: row.try_get("event_id")?,
                        url: row.try_get("url")?,
                        secret: row.try_get("secret")?,
                        payload: row.try_get("payload")?,
                        attempts: u32_at(row, "attempts")?,
                        failing_since: row.try_get("failing_since")?,
                    },
                ))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        due.sort_by_key(|(seq, _)| *seq);
        Ok(due.into_iter().map(|(_, due)| due).collect())
    }

    async fn record(&self, attempt: &Attempt) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        let (state, status, error, next, delivered): (_, _, _, Option<DateTime<Utc>>, _) =
            match &attempt.outcome {
                AttemptOutcome::Delivered { status } => (
                    DeliveryState::Delivered,
                    Some(*status),
                    None,
                    None,
                    Some(attempt.at),
                ),
                AttemptOutcome::Failed {
                    status,
                    error,
                    retry_at,
                } => (
                    DeliveryState::Pending,
                    *status,
                    Some(error.as_str()),
                    Some(*retry_at),
                    None,
                ),
                AttemptOutcome::Disable { status, error, .. } => (
                    DeliveryState::Failed,
                    *status,
                    Some(error.as_str()),
                    None,
                    None,
                ),
            };
        let recorded = query(
            "UPDATE webhook_deliveries
             SET state = $4, attempts = attempts + 1, last_status = $5, last_error = $6,
                 last_attempt_at = $7, next_attempt_at = $8, delivered_at = $9, leased_until = NULL
             WHERE tenant_id = $1 AND webhook_id = $2 AND event_id = $3 AND state = 'pending'",
        )
        .bind(attempt.tenant_id.0)
        .bind(attempt.webhook_id.0)
        .bind(attempt.event_id)
        .bind(state.as_str())
        .bind(status.map(i32::from))
        .bind(error)
        .bind(attempt.at)
        .bind(next)
        .bind(delivered)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if recorded == 0 {
            return Ok(());
        }
        let (tenant, webhook) = (attempt.tenant_id.0, attempt.webhook_id.0);
        match &attempt.outcome {
            AttemptOutcome::Delivered { .. } => {
                query("UPDATE webhooks SET failing_since = NULL WHERE tenant_id = $1 AND id = $2")
                    .bind(tenant)
                    .bind(webhook)
                    .execute(&mut *tx)
                    .await?;
            }
            AttemptOutcome::Failed { .. } => {
                query(
                    "UPDATE webhooks SET failing_since = coalesce(failing_since, $3)
                     WHERE tenant_id = $1 AND id = $2",
                )
                .bind(tenant)
                .bind(webhook)
                .bind(attempt.at)
                .execute(&mut *tx)
                .await?;
            }
            AttemptOutcome::Disable { reason, .. } => {
                query(
                    "UPDATE webhooks SET failing_since = coalesce(failing_since, $3), disabled_at = $3,
                                         disabled_reason = $4
                     WHERE tenant_id = $1 AND id = $2",
                )
                .bind(tenant)
                .bind(webhook)
                .bind(attempt.at)
                .bind(reason)
                .execute(&mut *tx)
                .await?;
                query(
                    "UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, leased_until = NULL,
                            last_error = coalesce(last_error, 'the endpoint was disabled')
                     WHERE tenant_id = $1 AND webhook_id = $2 AND state = 'pending'",
                )
                .bind(tenant)
                .bind(webhook)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}

#[async_trait]
impl WebhookStore for PostgresStore {
    async fn create_webhook(&self, webhook: &Webhook) -> Result<()> {
        domain(async {
            let events: Vec<&str> = webhook.events.iter().map(|e| e.as_str()).collect();
            let mut tx = self.pool.begin().await?;
            // Registrations of one tenant queue on a lock of their own, so
            // each counts what the ones before it inserted.
            query("SELECT pg_advisory_xact_lock(hashtextextended('webhooks of ' || $1::text, 0))")
                .bind(webhook.tenant_id.0)
                .execute(&mut *tx)
                .await?;
            let inserted = query(&format!(
                "INSERT INTO webhooks ({COLUMNS})
                 SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
                 WHERE (SELECT count(*) FROM webhooks WHERE tenant_id = $2) < $11"
            ))
            .bind(webhook.id.0)
            .bind(webhook.tenant_id.0)
            .bind(&webhook.url)
            .bind(events)
            .bind(&webhook.description)
            .bind(&webhook.secret)
            .bind(webhook.created_at)
            .bind(webhook.failing_since)
            .bind(webhook.disabled_at)
            .bind(&webhook.disabled_reason)
            .bind(MAX_WEBHOOKS_PER_TENANT as i64)
            .execute(&mut *tx)
            .await?;
            if inserted.rows_affected() == 0 {
                return Err(too_many_webhooks().into());
            }
            tx.commit().await?;
            Ok(())
        })
        .await
    }

    async fn list_webhooks(&self, tenant: TenantId) -> Result<Vec<Webhook>> {
        domain(async {
            let rows = query(&format!(
                "SELECT {COLUMNS} FROM webhooks WHERE tenant_id = $1 ORDER BY created_at, id"
            ))
            .bind(tenant.0)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(webhook_from_row).collect()
        })
        .await
    }

    async fn get_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook> {
        domain(self.webhook(tenant, id)).await
    }

    async fn delete_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<()> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            let deleted = query("DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2")
                .bind(tenant.0)
                .bind(id.0)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if deleted == 0 {
                return Err(DomainError::not_found(WebhookId::KIND, id).into());
            }
            query("DELETE FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2")
                .bind(tenant.0)
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(())
        })
        .await
    }

    async fn enable_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook> {
        domain(async {
            query(
                "UPDATE webhooks SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
                 WHERE tenant_id = $1 AND id = $2",
            )
            .bind(tenant.0)
            .bind(id.0)
            .execute(&self.pool)
            .await?;
            self.webhook(tenant, id).await
        })
        .await
    }

    async fn list_deliveries(
        &self,
        tenant: TenantId,
        webhook: WebhookId,
        page: Page,
    ) -> Result<Vec<Delivery>> {
        domain(async {
            self.webhook(tenant, webhook).await?;
            let rows = query(
                "SELECT * FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2
                 ORDER BY seq DESC LIMIT $3 OFFSET $4",
            )
            .bind(tenant.0)
            .bind(webhook.0)
            .bind(i64::from(page.limit))
            .bind(i64::from(page.offset))
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(delivery_from_row).collect()
        })
        .await
    }

    async fn claim_deliveries(&self, claim: &DeliveryClaim) -> Result<Vec<DueDelivery>> {
        domain(self.claim(claim)).await
    }

    async fn record_attempt(&self, attempt: &Attempt) -> Result<()> {
        domain(self.record(attempt)).await
    }

    async fn prune_deliveries(&self, before: Timestamp) -> Result<u64> {
        domain(async {
            Ok(
                query(
                    "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < $1",
                )
                .bind(before)
                .execute(&self.pool)
                .await?
                .rows_affected(),
            )
        })
        .await
    }
}

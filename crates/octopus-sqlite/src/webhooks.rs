//! The webhook port on SQLite: endpoints, the outbox written in the
//! transactions of the changes it reports, and the claims and attempts of
//! the dispatcher.

use async_trait::async_trait;
use octopus_core::store::{Page, WebhookStore};
use octopus_core::webhook::{
    self, Attempt, AttemptOutcome, ChangeEvent, Delivery, DeliveryClaim, DeliveryState,
    DueDelivery, EventType, MAX_WEBHOOKS_PER_TENANT, Webhook, message_id, too_many_webhooks,
};
use octopus_core::{Error as DomainError, Result, TenantId, Timestamp, WebhookId};
use rusqlite::{Connection, Row, params};

use crate::SqliteStore;
use crate::codec::micros;
use crate::error::{Result as StoreResult, corrupt};
use crate::rows;

const COLUMNS: &str = "id, tenant_id, url, events, description, secret, created_at, failing_since, disabled_at, disabled_reason";

/// Writes `event` to the outbox in `tx`: one pending delivery for each
/// enabled endpoint of its tenant subscribed to its type; nothing when
/// there is none.
pub(crate) fn record(tx: &Connection, event: &ChangeEvent) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, agent_id,
                                         user_id, payload, created_at, next_attempt_at)
         SELECT tenant_id, id, ?2, ?3, ?4, ?5, ?6, ?7, ?7 FROM webhooks
         WHERE tenant_id = ?1 AND disabled_at IS NULL AND instr(events, ?8) > 0",
    )?
    .execute(params![
        event.tenant_id.0.as_bytes(),
        event.id.as_bytes(),
        event.event_type.as_str(),
        event.agent_id.map(|a| *a.0.as_bytes()),
        event.user_id,
        event.payload(),
        micros(event.at),
        format!(",{},", event.event_type.as_str()),
    ])?;
    Ok(())
}

fn events_column(events: &[EventType]) -> String {
    let names: Vec<&str> = events.iter().map(|e| e.as_str()).collect();
    format!(",{},", names.join(","))
}

fn webhook_from_row(row: &Row<'_>) -> StoreResult<Webhook> {
    let events: String = row.get("events")?;
    let events = events
        .split(',')
        .filter(|name| !name.is_empty())
        .map(|name| EventType::parse(name).ok_or_else(|| corrupt("webhook event", name)))
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Webhook {
        id: WebhookId(rows::uuid(row, "id")?),
        tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
        url: row.get("url")?,
        events,
        description: row.get("description")?,
        secret: row.get("secret")?,
        created_at: rows::time(row, "created_at")?,
        failing_since: rows::opt_time(row, "failing_since")?,
        disabled_at: rows::opt_time(row, "disabled_at")?,
        disabled_reason: row.get("disabled_reason")?,
    })
}

fn delivery_from_row(row: &Row<'_>) -> StoreResult<Delivery> {
    let event_type: String = row.get("event_type")?;
    let state: String = row.get("state")?;
    let status: Option<i64> = row.get("last_status")?;
    Ok(Delivery {
        message_id: message_id(rows::uuid(row, "event_id")?),
        webhook_id: WebhookId(rows::uuid(row, "webhook_id")?),
        event_type: EventType::parse(&event_type)
            .ok_or_else(|| corrupt("webhook event", &event_type))?,
        user_id: row.get("user_id")?,
        state: DeliveryState::parse(&state).ok_or_else(|| corrupt("delivery state", &state))?,
        attempts: u32::try_from(rows::count(row, "attempts")?).unwrap_or(u32::MAX),
        last_status: status.and_then(|s| u16::try_from(s).ok()),
        last_error: row.get("last_error")?,
        created_at: rows::time(row, "created_at")?,
        last_attempt_at: rows::opt_time(row, "last_attempt_at")?,
        next_attempt_at: match state.as_str() {
            "pending" => rows::opt_time(row, "next_attempt_at")?,
            _ => None,
        },
        delivered_at: rows::opt_time(row, "delivered_at")?,
    })
}

fn get_webhook(conn: &Connection, tenant: TenantId, id: WebhookId) -> StoreResult<Webhook> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM webhooks WHERE tenant_id = ?1 AND id = ?2"
    ))?
    .query_row(params![tenant.0.as_bytes(), id.0.as_bytes()], |row| {
        Ok(webhook_from_row(row))
    })
    .map_err(|error| -> crate::error::Error {
        match error {
            rusqlite::Error::QueryReturnedNoRows => {
                DomainError::not_found(WebhookId::KIND, id).into()
            }
            other => other.into(),
        }
    })?
}

fn claim_due(conn: &mut Connection, claim: &DeliveryClaim) -> StoreResult<Vec<DueDelivery>> {
    use rusqlite::types::Value;
    let now = micros(claim.now);
    let lease_until = micros(webhook::lease_end(claim.now, claim.lease));
    // The skipped ids as parameters after the first two: `?3, ?4, …`.
    let mut values = vec![Value::Integer(now), Value::Integer(i64::from(claim.limit))];
    let mut placeholders = |ids: Vec<Vec<u8>>| {
        let first = values.len() + 1;
        let count = ids.len();
        values.extend(ids.into_iter().map(Value::Blob));
        (first..first + count)
            .map(|n| format!("?{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let skip_webhooks = placeholders(
        claim
            .skip_webhooks
            .iter()
            .map(|id| id.0.as_bytes().to_vec())
            .collect(),
    );
    let skip_tenants = placeholders(
        claim
            .skip_tenants
            .iter()
            .map(|id| id.0.as_bytes().to_vec())
            .collect(),
    );
    // Deferred: a claim that finds nothing (the dispatcher's usual poll)
    // writes nothing. This connection is the only writer.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Deferred)?;
    let due = {
        let mut stmt = tx.prepare_cached(&format!(
            "SELECT d.seq, d.tenant_id, d.webhook_id, d.event_id, d.payload, d.attempts, w.url, w.secret, w.failing_since
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
             WHERE d.state = 'pending' AND d.next_attempt_at <= ?1
               AND (d.leased_until IS NULL OR d.leased_until <= ?1)
               AND w.disabled_at IS NULL
               AND d.webhook_id NOT IN ({skip_webhooks}) AND d.tenant_id NOT IN ({skip_tenants})
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                               WHERE e.webhook_id = d.webhook_id AND e.user_id IS d.user_id
                                 AND e.state = 'pending' AND e.seq < d.seq)
             ORDER BY d.seq LIMIT ?2"
        ))?;
        rows::collect(&mut stmt, rusqlite::params_from_iter(values), |row| {
            Ok((
                row.get::<_, i64>("seq")?,
                DueDelivery {
                    tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
                    webhook_id: WebhookId(rows::uuid(row, "webhook_id")?),
                    event_id: rows::uuid(row, "event_id")?,
                    url: row.get("url")?,
                    secret: row.get("secret")?,
                    payload: row.get("payload")?,
                    attempts: u32::try_from(rows::count(row, "attempts")?).unwrap_or(u32::MAX),
                    failing_since: rows::opt_time(row, "failing_since")?,
                },
            ))
        })?
    };
    for (seq, _) in &due {
        tx.prepare_cached("UPDATE webhook_deliveries SET leased_until = ?2 WHERE seq = ?1")?
            .execute(params![seq, lease_until])?;
    }
    tx.commit()?;
    Ok(due.into_iter().map(|(_, due)| due).collect())
}

fn record_attempt(conn: &mut Connection, attempt: &Attempt) -> StoreResult<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let at = micros(attempt.at);
    let (state, status, error, next, delivered) = match &attempt.outcome {
        AttemptOutcome::Delivered { status } => (
            DeliveryState::Delivered,
            Some(*status),
            None,
            None,
            Some(at),
        ),
        AttemptOutcome::Failed {
            status,
            error,
            retry_at,
        } => (
            DeliveryState::Pending,
            *status,
            Some(error.as_str()),
            Some(micros(*retry_at)),
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
    let recorded = tx
        .prepare_cached(
            "UPDATE webhook_deliveries
             SET state = ?4, attempts = attempts + 1, last_status = ?5, last_error = ?6,
                 last_attempt_at = ?7, next_attempt_at = ?8, delivered_at = ?9, leased_until = NULL
             WHERE tenant_id = ?1 AND webhook_id = ?2 AND event_id = ?3 AND state = 'pending'",
        )?
        .execute(params![
            attempt.tenant_id.0.as_bytes(),
            attempt.webhook_id.0.as_bytes(),
            attempt.event_id.as_bytes(),
            state.as_str(),
            status,
            error,
            at,
            next,
            delivered,
        ])?;
    if recorded == 0 {
        return Ok(());
    }
    let (tenant, webhook) = (
        attempt.tenant_id.0.as_bytes(),
        attempt.webhook_id.0.as_bytes(),
    );
    match &attempt.outcome {
        AttemptOutcome::Delivered { .. } => {
            tx.execute(
                "UPDATE webhooks SET failing_since = NULL WHERE tenant_id = ?1 AND id = ?2",
                params![tenant, webhook],
            )?;
        }
        AttemptOutcome::Failed { .. } => {
            tx.execute(
                "UPDATE webhooks SET failing_since = coalesce(failing_since, ?3)
                 WHERE tenant_id = ?1 AND id = ?2",
                params![tenant, webhook, at],
            )?;
        }
        AttemptOutcome::Disable { reason, .. } => {
            tx.execute(
                "UPDATE webhooks SET failing_since = coalesce(failing_since, ?3), disabled_at = ?3,
                                     disabled_reason = ?4
                 WHERE tenant_id = ?1 AND id = ?2",
                params![tenant, webhook, at, reason],
            )?;
            tx.execute(
                "UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, leased_until = NULL,
                        last_error = coalesce(last_error, 'the endpoint was disabled')
                 WHERE tenant_id = ?1 AND webhook_id = ?2 AND state = 'pending'",
                params![tenant, webhook],
            )?;
        }
    }
    tx.commit()?;
    Ok(())
}

#[async_trait]
impl WebhookStore for SqliteStore {
    async fn create_webhook(&self, webhook: &Webhook) -> Result<()> {
        let webhook = webhook.clone();
        self.db
            .write(move |conn| {
                // One statement counts and inserts: the connection is the only
                // writer, so no other registration comes between.
                let inserted = conn.execute(
                    &format!(
                        "INSERT INTO webhooks ({COLUMNS})
                         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
                         WHERE (SELECT count(*) FROM webhooks WHERE tenant_id = ?2) < ?11"
                    ),
                    params![
                        webhook.id.0.as_bytes(),
                        webhook.tenant_id.0.as_bytes(),
                        webhook.url,
                        events_column(&webhook.events),
                        webhook.description,
                        webhook.secret,
                        micros(webhook.created_at),
                        webhook.failing_since.map(micros),
                        webhook.disabled_at.map(micros),
                        webhook.disabled_reason,
                        MAX_WEBHOOKS_PER_TENANT as i64,
                    ],
                )?;
                match inserted {
                    0 => Err(too_many_webhooks().into()),
                    _ => Ok(()),
                }
            })
            .await
    }

    async fn list_webhooks(&self, tenant: TenantId) -> Result<Vec<Webhook>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM webhooks WHERE tenant_id = ?1 ORDER BY created_at, id"
                ))?;
                rows::collect(&mut stmt, [tenant.0.as_bytes()], webhook_from_row)
            })
            .await
    }

    async fn get_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook> {
        self.db
            .read(move |conn| get_webhook(conn, tenant, id))
            .await
    }

    async fn delete_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<()> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                let ids = params![tenant.0.as_bytes(), id.0.as_bytes()];
                if tx.execute("DELETE FROM webhooks WHERE tenant_id = ?1 AND id = ?2", ids)? == 0 {
                    return Err(DomainError::not_found(WebhookId::KIND, id).into());
                }
                tx.execute(
                    "DELETE FROM webhook_deliveries WHERE tenant_id = ?1 AND webhook_id = ?2",
                    ids,
                )?;
                tx.commit()?;
                Ok(())
            })
            .await
    }

    async fn enable_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook> {
        self.db
            .write(move |conn| {
                conn.execute(
                    "UPDATE webhooks SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
                     WHERE tenant_id = ?1 AND id = ?2",
                    params![tenant.0.as_bytes(), id.0.as_bytes()],
                )?;
                get_webhook(conn, tenant, id)
            })
            .await
    }

    async fn list_deliveries(
        &self,
        tenant: TenantId,
        webhook: WebhookId,
        page: Page,
    ) -> Result<Vec<Delivery>> {
        self.db
            .read(move |conn| {
                get_webhook(conn, tenant, webhook)?;
                let mut stmt = conn.prepare_cached(
                    "SELECT * FROM webhook_deliveries WHERE tenant_id = ?1 AND webhook_id = ?2
                     ORDER BY seq DESC LIMIT ?3 OFFSET ?4",
                )?;
                rows::collect(
                    &mut stmt,
                    params![
                        tenant.0.as_bytes(),
                        webhook.0.as_bytes(),
                        page.limit,
                        page.offset
                    ],
                    delivery_from_row,
                )
            })
            .await
    }

    async fn claim_deliveries(&self, claim: &DeliveryClaim) -> Result<Vec<DueDelivery>> {
        let claim = claim.clone();
        self.db.write(move |conn| claim_due(conn, &claim)).await
    }

    async fn record_attempt(&self, attempt: &Attempt) -> Result<()> {
        let attempt = attempt.clone();
        self.db
            .write(move |conn| record_attempt(conn, &attempt))
            .await
    }

    async fn prune_deliveries(&self, before: Timestamp) -> Result<u64> {
        self.db
            .write(move |conn| {
                let pruned = conn.execute(
                    "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ?1",
                    [micros(before)],
                )?;
                Ok(pruned as u64)
            })
            .await
    }
}

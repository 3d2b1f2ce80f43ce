//! Webhooks: endpoints a tenant registers to hear that its memory changed,
//! and the events and deliveries the stores keep for them.
//!
//! An event is written to the outbox in the same transaction as the change
//! it reports, one delivery per enabled endpoint subscribed to its type, so
//! a change that commits is announced (after a crash too) and one that
//! rolls back is not. Events are thin: they carry ids and kinds, never the
//! words of a message or a fact, so erasing those words never has to chase
//! copies through the outbox; a receiver reads what it needs through the API.
//!
//! # The outbox
//!
//! A change that other systems may want to hear of (a fact's version stored or
//! deleted, a message erased, an episode closed, a procedure version pending, a
//! user forgotten) writes a `ChangeEvent` (`octopus_core::webhook`) in its own
//! transaction, where the store makes the change: the fact history's writer,
//! the close (`closing.rs`), the erasure, the procedure version's insert, the
//! forget. `webhooks::record` inserts one `webhook_deliveries` row per enabled
//! endpoint of the tenant subscribed to the event's type (one `INSERT …
//! SELECT`; none without such an endpoint), so an event exists exactly when
//! its change committed. Payloads carry ids, never words, so erasures never
//! chase them; a forget deletes its user's rows. The dispatcher claims, with a
//! lease, each endpoint-and-user's oldest pending delivery only, so one user's
//! events leave in order and a failing one holds back those after it; every
//! attempt is recorded on the row, which is the delivery log.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::bounds::{MAX_URL_CHARS, check_no_nul};
use crate::{AgentId, Error, Result, TenantId, Timestamp, WebhookId};

/// What happened. The names are those the API and the payloads use.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
pub enum EventType {
    /// A fact was learned, added by hand or imported.
    #[serde(rename = "fact.added")]
    FactAdded,
    /// A new version of a fact replaced the one that held (a correction, or
    /// the model learning that what it said changed).
    #[serde(rename = "fact.updated")]
    FactUpdated,
    /// A fact, or the version learned from an erased message, was deleted.
    #[serde(rename = "fact.deleted")]
    FactDeleted,
    /// One message was erased.
    #[serde(rename = "message.erased")]
    MessageErased,
    /// An episode closed (by its client, by idling, with its conversation,
    /// or imported closed).
    #[serde(rename = "episode.closed")]
    EpisodeClosed,
    /// A procedure version waits for a person's approval.
    #[serde(rename = "procedure.pending")]
    ProcedurePending,
    /// A user was forgotten.
    #[serde(rename = "user.forgotten")]
    UserForgotten,
}

impl EventType {
    pub const ALL: [EventType; 7] = [
        EventType::FactAdded,
        EventType::FactUpdated,
        EventType::FactDeleted,
        EventType::MessageErased,
        EventType::EpisodeClosed,
        EventType::ProcedurePending,
        EventType::UserForgotten,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::FactAdded => "fact.added",
            EventType::FactUpdated => "fact.updated",
            EventType::FactDeleted => "fact.deleted",
            EventType::MessageErased => "message.erased",
            EventType::EpisodeClosed => "episode.closed",
            EventType::ProcedurePending => "procedure.pending",
            EventType::UserForgotten => "user.forgotten",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Endpoints one tenant may register.
pub const MAX_WEBHOOKS_PER_TENANT: usize = 20;

/// The refusal of an endpoint past [`MAX_WEBHOOKS_PER_TENANT`].
pub fn too_many_webhooks() -> crate::Error {
    crate::Error::conflict(
        crate::DomainCode::TenantLimitReached,
        format!("a tenant may register {MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first"),
    )
}
/// A webhook's `description`.
pub const MAX_DESCRIPTION_CHARS: usize = 500;

/// A registered endpoint. `secret` signs its deliveries (Standard Webhooks:
/// `whsec_` and the base64 of the key); it is shown once, when created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    pub id: WebhookId,
    pub tenant_id: TenantId,
    pub url: String,
    /// The event types it receives, in the order of [`EventType::ALL`].
    pub events: Vec<EventType>,
    pub description: Option<String>,
    pub secret: String,
    pub created_at: Timestamp,
    /// Since when every delivery to it has failed; none while it succeeds.
    pub failing_since: Option<Timestamp>,
    /// Set when it stopped receiving: it answered 410 Gone, or failed too
    /// long. Nothing is delivered to a disabled endpoint.
    pub disabled_at: Option<Timestamp>,
    pub disabled_reason: Option<String>,
}

/// An endpoint as the API shows it: everything but its secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct WebhookInfo {
    pub id: WebhookId,
    pub url: String,
    pub events: Vec<EventType>,
    pub description: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Whether deliveries are sent to it.
    pub enabled: bool,
    /// Since when every delivery to it has failed; absent while it succeeds.
    pub failing_since: Option<DateTime<Utc>>,
    pub disabled_at: Option<DateTime<Utc>>,
    /// Why it was disabled: it answered 410 Gone, or failed too long.
    pub disabled_reason: Option<String>,
}

/// An endpoint just registered, with its signing secret: shown this once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CreatedWebhook {
    pub webhook: WebhookInfo,
    /// `whsec_` and the base64 of a 32-byte key. Verify each delivery's
    /// `webhook-signature` with it, as the Standard Webhooks libraries do.
    pub secret: String,
}

impl Webhook {
    pub fn info(&self) -> WebhookInfo {
        WebhookInfo {
            id: self.id,
            url: self.url.clone(),
            events: self.events.clone(),
            description: self.description.clone(),
            created_at: self.created_at,
            enabled: self.disabled_at.is_none(),
            failing_since: self.failing_since,
            disabled_at: self.disabled_at,
            disabled_reason: self.disabled_reason.clone(),
        }
    }
}

/// What a tenant asks for when it registers an endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhook {
    /// Where events are POSTed: an `http` or `https` URL.
    pub url: String,
    /// The event types to receive; at least one.
    pub events: Vec<EventType>,
    #[serde(default)]
    pub description: Option<String>,
}

impl NewWebhook {
    /// Refuses a URL that is not `http(s)` or too long, an empty list of
    /// events, and an over-long description. Where the URL may point is the
    /// engine's question (the operator's outbound rules).
    pub fn validate(&self) -> Result<()> {
        check_no_nul("url", &self.url)?;
        if self.url.chars().count() > MAX_URL_CHARS {
            return Err(Error::invalid(
                "url",
                format!("is longer than {MAX_URL_CHARS} characters"),
            ));
        }
        let parsed = url_scheme_and_host(&self.url)
            .ok_or_else(|| Error::invalid("url", "must be an absolute http or https URL"))?;
        if !matches!(parsed.0.as_str(), "http" | "https") || parsed.1.is_empty() {
            return Err(Error::invalid(
                "url",
                "must be an absolute http or https URL",
            ));
        }
        if self.events.is_empty() {
            return Err(Error::invalid(
                "events",
                format!(
                    "name at least one event type: {}",
                    EventType::ALL.map(EventType::as_str).join(", ")
                ),
            ));
        }
        if let Some(description) = &self.description {
            check_no_nul("description", description)?;
            if description.chars().count() > MAX_DESCRIPTION_CHARS {
                return Err(Error::invalid(
                    "description",
                    format!("is longer than {MAX_DESCRIPTION_CHARS} characters"),
                ));
            }
        }
        Ok(())
    }

    /// The event types, each once, in the order of [`EventType::ALL`].
    pub fn event_set(&self) -> Vec<EventType> {
        let mut events = self.events.clone();
        events.sort();
        events.dedup();
        events
    }
}

/// The scheme and host of `url`, lower-cased; `None` when it is not
/// `scheme://host…`. (The full parse is the engine's, which owns `url`.)
fn url_scheme_and_host(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    Some((scheme.to_ascii_lowercase(), host.to_owned()))
}

/// A change to announce, built where the change is made and written by the
/// store in the change's own transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeEvent {
    /// The message id of every delivery of it (`msg_` and this).
    pub id: Uuid,
    pub tenant_id: TenantId,
    pub event_type: EventType,
    /// Whose memory changed: deliveries for one user go out in order.
    pub user_id: Option<String>,
    pub agent_id: Option<AgentId>,
    /// The event's `data`: ids and kinds, no words.
    pub data: serde_json::Value,
    pub at: Timestamp,
}

impl ChangeEvent {
    pub fn new(
        tenant_id: TenantId,
        event_type: EventType,
        agent_id: Option<AgentId>,
        user_id: Option<&str>,
        data: serde_json::Value,
        at: Timestamp,
    ) -> Self {
        Self {
            id: Uuid::now_v7(),
            tenant_id,
            event_type,
            user_id: user_id.map(str::to_owned),
            agent_id,
            data,
            at,
        }
    }

    /// The body every endpoint receives, as the Standard Webhooks
    /// specification shapes it: `type`, `timestamp` and `data`.
    pub fn payload(&self) -> String {
        let mut data = self.data.clone();
        if let serde_json::Value::Object(fields) = &mut data {
            if let Some(agent) = self.agent_id {
                fields
                    .entry("agent_id")
                    .or_insert_with(|| agent.to_string().into());
            }
            if let Some(user) = &self.user_id {
                fields
                    .entry("user_id")
                    .or_insert_with(|| user.clone().into());
            }
        }
        serde_json::json!({
            "type": self.event_type.as_str(),
            "timestamp": self.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "data": data,
        })
        .to_string()
    }
}

/// The events a change to a fact announces: `fact.added` for the first
/// version of a fact, `fact.updated` for a later one (its `lineage_id`, the
/// first version's id, is the same in every event about the fact).
pub fn fact_changed(fact: &crate::fact::Fact, lineage: Uuid, at: Timestamp) -> ChangeEvent {
    let event_type = match lineage == fact.id.0 {
        true => EventType::FactAdded,
        false => EventType::FactUpdated,
    };
    fact_event(event_type, fact, lineage, &fact.changed_by, at)
}

/// The event of a fact deleted by `changed_by`; `fact` is the version that
/// held.
pub fn fact_deleted(
    fact: &crate::fact::Fact,
    lineage: Uuid,
    changed_by: &str,
    at: Timestamp,
) -> ChangeEvent {
    fact_event(EventType::FactDeleted, fact, lineage, changed_by, at)
}

fn fact_event(
    event_type: EventType,
    fact: &crate::fact::Fact,
    lineage: Uuid,
    changed_by: &str,
    at: Timestamp,
) -> ChangeEvent {
    ChangeEvent::new(
        fact.tenant_id,
        event_type,
        Some(fact.agent_id),
        Some(&fact.user_id),
        serde_json::json!({
            "fact_id": fact.id,
            "lineage_id": lineage,
            "episode_id": fact.episode_id,
            "category": fact.category,
            "source": fact.source,
            "changed_by": changed_by,
        }),
        at,
    )
}

/// The event of one message erased by `changed_by`.
pub fn message_erased(
    tenant: TenantId,
    message: crate::MessageId,
    episode: crate::EpisodeId,
    (agent, user): (AgentId, &str),
    changed_by: &str,
    at: Timestamp,
) -> ChangeEvent {
    ChangeEvent::new(
        tenant,
        EventType::MessageErased,
        Some(agent),
        Some(user),
        serde_json::json!({
            "message_id": message,
            "episode_id": episode,
            "changed_by": changed_by,
        }),
        at,
    )
}

/// The event of an episode that closed.
pub struct ClosedEpisode<'a> {
    pub tenant: TenantId,
    pub episode: crate::EpisodeId,
    pub conversation: crate::ConversationId,
    pub agent: AgentId,
    pub user: &'a str,
    pub reason: &'a str,
    pub message_count: u64,
}

impl ClosedEpisode<'_> {
    pub fn event(&self, at: Timestamp) -> ChangeEvent {
        ChangeEvent::new(
            self.tenant,
            EventType::EpisodeClosed,
            Some(self.agent),
            Some(self.user),
            serde_json::json!({
                "episode_id": self.episode,
                "conversation_id": self.conversation,
                "reason": self.reason,
                "message_count": self.message_count,
            }),
            at,
        )
    }
}

/// The event of a procedure version waiting for approval.
pub fn procedure_pending(
    tenant: TenantId,
    procedure: crate::ProcedureId,
    agent: Option<AgentId>,
    version: u32,
    at: Timestamp,
) -> ChangeEvent {
    ChangeEvent::new(
        tenant,
        EventType::ProcedurePending,
        agent,
        None,
        serde_json::json!({ "procedure_id": procedure, "version": version }),
        at,
    )
}

/// The event of a user forgotten (with one agent, or all).
pub fn user_forgotten(
    tenant: TenantId,
    user: &str,
    agent: Option<AgentId>,
    at: Timestamp,
) -> ChangeEvent {
    ChangeEvent::new(
        tenant,
        EventType::UserForgotten,
        agent,
        Some(user),
        serde_json::json!({ "agent_id": agent }),
        at,
    )
}

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not delivered yet: due at `next_attempt_at`.
    Pending,
    /// The endpoint answered 2xx.
    Delivered,
    /// Given up: the endpoint was disabled before it answered 2xx.
    Failed,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// One event for one endpoint, as the delivery log shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Delivery {
    /// The `webhook-id` header of every attempt: `msg_` and the event's id.
    pub message_id: String,
    pub webhook_id: WebhookId,
    pub event_type: EventType,
    pub user_id: Option<String>,
    pub state: DeliveryState,
    pub attempts: u32,
    /// The HTTP status of the last attempt; none when it got no answer.
    pub last_status: Option<u16>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// The message id of an event's deliveries.
pub fn message_id(event: Uuid) -> String {
    format!("msg_{}", event.simple())
}

/// The event id behind a message id.
pub fn event_of(message_id: &str) -> Option<Uuid> {
    message_id
        .strip_prefix("msg_")
        .and_then(|id| Uuid::parse_str(id).ok())
}

/// What a dispatcher asks the outbox for: up to `limit` deliveries due at
/// `now`, leased for `lease`, none to the endpoints or tenants it already
/// has enough deliveries of in flight (those wait for a later claim).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryClaim {
    pub limit: u32,
    pub now: Timestamp,
    pub lease: std::time::Duration,
    pub skip_webhooks: Vec<WebhookId>,
    pub skip_tenants: Vec<TenantId>,
}

impl DeliveryClaim {
    /// Up to `limit` deliveries due at `now`, of any endpoint.
    pub fn any(limit: u32, now: Timestamp, lease: std::time::Duration) -> Self {
        Self {
            limit,
            now,
            lease,
            skip_webhooks: Vec::new(),
            skip_tenants: Vec::new(),
        }
    }
}

/// A delivery due now, with what sending it takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueDelivery {
    pub tenant_id: TenantId,
    pub webhook_id: WebhookId,
    pub event_id: Uuid,
    pub url: String,
    pub secret: String,
    pub payload: String,
    pub attempts: u32,
    /// Since when every delivery to the endpoint has failed.
    pub failing_since: Option<Timestamp>,
}

/// What one attempt came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// A 2xx answer: delivered, and the endpoint is healthy again.
    Delivered { status: u16 },
    /// No 2xx answer: tried again at `retry_at`.
    Failed {
        status: Option<u16>,
        error: String,
        retry_at: Timestamp,
    },
    /// No 2xx answer, and the endpoint is disabled for `reason` (it
    /// answered 410 Gone, or failed too long): this delivery and every one
    /// pending for it are given up.
    Disable {
        status: Option<u16>,
        error: String,
        reason: String,
    },
}

/// When a claim made at `now` for `lease` lets go of what it took.
pub fn lease_end(now: Timestamp, lease: std::time::Duration) -> Timestamp {
    chrono::Duration::from_std(lease)
        .ok()
        .and_then(|lease| now.checked_add_signed(lease))
        .unwrap_or(now)
}

/// One attempt at a due delivery, to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub tenant_id: TenantId,
    pub webhook_id: WebhookId,
    pub event_id: Uuid,
    pub at: Timestamp,
    pub outcome: AttemptOutcome,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(url: &str, events: Vec<EventType>) -> NewWebhook {
        NewWebhook {
            url: url.into(),
            events,
            description: None,
        }
    }

    #[test]
    fn event_names_round_trip_through_serde_and_parse() {
        for event in EventType::ALL {
            let json = serde_json::to_string(&event).unwrap();
            assert_eq!(json, format!("\"{}\"", event.as_str()));
            assert_eq!(EventType::parse(event.as_str()), Some(event));
        }
        assert_eq!(EventType::parse("fact.changed"), None);
    }

    #[test]
    fn a_webhook_needs_an_http_url_and_an_event() {
        let all = vec![EventType::FactAdded];
        assert!(
            new("https://hooks.example.com/octopus", all.clone())
                .validate()
                .is_ok()
        );
        for url in ["ftp://example.com", "example.com/hook", "https://", ""] {
            let refused = new(url, all.clone()).validate().unwrap_err();
            assert!(
                matches!(refused, Error::Invalid { ref field, .. } if field == "url"),
                "{url}"
            );
        }
        let refused = new("https://example.com", Vec::new())
            .validate()
            .unwrap_err();
        assert!(matches!(refused, Error::Invalid { ref field, .. } if field == "events"));
    }

    #[test]
    fn events_are_kept_once_each_in_a_fixed_order() {
        let asked = new(
            "https://example.com",
            vec![
                EventType::UserForgotten,
                EventType::FactAdded,
                EventType::UserForgotten,
            ],
        );
        assert_eq!(
            asked.event_set(),
            vec![EventType::FactAdded, EventType::UserForgotten]
        );
    }

    #[test]
    fn the_payload_names_its_type_time_and_whose_memory_changed() {
        let agent = AgentId::new();
        let event = ChangeEvent::new(
            TenantId::new(),
            EventType::FactDeleted,
            Some(agent),
            Some("dana"),
            serde_json::json!({"fact_id": "f"}),
            chrono::DateTime::UNIX_EPOCH,
        );
        let body: serde_json::Value = serde_json::from_str(&event.payload()).unwrap();
        assert_eq!(body["type"], "fact.deleted");
        assert_eq!(body["timestamp"], "1970-01-01T00:00:00.000000Z");
        assert_eq!(body["data"]["fact_id"], "f");
        assert_eq!(body["data"]["user_id"], "dana");
        assert_eq!(body["data"]["agent_id"], agent.to_string());
        assert_eq!(event_of(&message_id(event.id)), Some(event.id));
    }
}

//! The contract of the webhook outbox: endpoints are a tenant's own; every
//! change writes one delivery per enabled endpoint subscribed to its type,
//! in the change's transaction (a change that fails writes none); claims
//! hand out each user's deliveries in order, a failing one holding back
//! those after it; a disabled endpoint gives up what it had and gets
//! nothing new; forgetting a user takes that user's deliveries.

use std::time::Duration;

use octopus_core::episode::{CloseEpisode, EndReason};
use octopus_core::forget::ForgetUser;
use octopus_core::message::MessageErasure;
use octopus_core::store::{Page, Store};
use octopus_core::webhook::{
    Attempt, AttemptOutcome, DeliveryClaim, DeliveryState, DueDelivery, EventType, Webhook,
};
use octopus_core::{TenantId, WebhookId, now};

use crate::Backend;
use crate::fact_changes::{addition, correction, deletion};
use crate::fixtures::{World, assert_not_found, at, tenant};

const LEASE: Duration = Duration::from_secs(60);

fn endpoint(tenant: TenantId, url: &str, events: &[EventType]) -> Webhook {
    Webhook {
        id: WebhookId::new(),
        tenant_id: tenant,
        url: url.into(),
        events: events.to_vec(),
        description: Some("audit".into()),
        secret: "whsec_dGVzdC1zZWNyZXQtb2YtMjQtYnl0ZXMh".into(),
        created_at: octopus_core::to_stored_precision(now()),
        failing_since: None,
        disabled_at: None,
        disabled_reason: None,
    }
}

pub(crate) async fn registered(
    store: &dyn Store,
    tenant: TenantId,
    events: &[EventType],
) -> Webhook {
    let webhook = endpoint(tenant, "https://hooks.example.com/octopus", events);
    store.create_webhook(&webhook).await.unwrap();
    webhook
}

/// The event types of an endpoint's deliveries, oldest first.
async fn logged(store: &dyn Store, tenant: TenantId, webhook: WebhookId) -> Vec<EventType> {
    let mut deliveries = store
        .list_deliveries(tenant, webhook, Page::default())
        .await
        .unwrap();
    deliveries.reverse();
    deliveries.iter().map(|d| d.event_type).collect()
}

/// Everything due far enough ahead that every delivery is.
async fn claim_all(store: &dyn Store) -> Vec<DueDelivery> {
    store
        .claim_deliveries(&DeliveryClaim::any(
            100,
            now() + chrono::Duration::hours(1),
            LEASE,
        ))
        .await
        .unwrap()
}

/// Claims and delivers until nothing is due; returns the bodies sent to
/// `webhook`, in the order they were claimed.
async fn deliver_all(store: &dyn Store, webhook: WebhookId) -> Vec<serde_json::Value> {
    let mut bodies = Vec::new();
    loop {
        let due = claim_all(store).await;
        if due.is_empty() {
            return bodies;
        }
        for delivery in &due {
            if delivery.webhook_id == webhook {
                bodies.push(payload(delivery));
            }
            let sent = attempt(delivery, AttemptOutcome::Delivered { status: 200 });
            store.record_attempt(&sent).await.unwrap();
        }
    }
}

fn payload(due: &DueDelivery) -> serde_json::Value {
    serde_json::from_str(&due.payload).unwrap()
}

fn attempt(due: &DueDelivery, outcome: AttemptOutcome) -> Attempt {
    Attempt {
        tenant_id: due.tenant_id,
        webhook_id: due.webhook_id,
        event_id: due.event_id,
        at: octopus_core::to_stored_precision(now()),
        outcome,
    }
}

pub async fn endpoints_are_registered_read_and_deleted_per_tenant(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let other = World::create(&*store, "globex").await;
    let webhook = registered(&*store, acme.tenant, &[EventType::FactAdded]).await;
    assert_eq!(
        store.get_webhook(acme.tenant, webhook.id).await.unwrap(),
        webhook
    );
    assert_eq!(
        store.list_webhooks(acme.tenant).await.unwrap(),
        std::slice::from_ref(&webhook)
    );
    assert!(store.list_webhooks(other.tenant).await.unwrap().is_empty());
    assert_not_found(store.get_webhook(other.tenant, webhook.id).await);
    assert_not_found(store.delete_webhook(other.tenant, webhook.id).await);
    assert_not_found(
        store
            .list_deliveries(other.tenant, webhook.id, Page::default())
            .await,
    );
    // Reopened, it is all there.
    let reopened = backend.open().await;
    assert_eq!(
        reopened.get_webhook(acme.tenant, webhook.id).await.unwrap(),
        webhook
    );

    store
        .add_fact(acme.tenant, &addition(&acme, "alice", "Alice likes tea"))
        .await
        .unwrap();
    assert_eq!(
        logged(&*store, acme.tenant, webhook.id).await,
        [EventType::FactAdded]
    );
    store.delete_webhook(acme.tenant, webhook.id).await.unwrap();
    assert_not_found(store.get_webhook(acme.tenant, webhook.id).await);
    assert!(
        claim_all(&*store).await.is_empty(),
        "its deliveries went with it"
    );
}

/// Registrations sent at once are counted one after another: a tenant ends
/// with exactly its cap of endpoints, the rest refused, whatever their
/// interleaving; another tenant's count is its own.
pub async fn registrations_sent_at_once_never_pass_the_tenants_cap(backend: &impl Backend) {
    use octopus_core::webhook::MAX_WEBHOOKS_PER_TENANT;
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let other = World::create(&*store, "globex").await;
    let mut registering = tokio::task::JoinSet::new();
    for _ in 0..2 * MAX_WEBHOOKS_PER_TENANT {
        let store = store.clone();
        let webhook = endpoint(
            acme.tenant,
            "https://hooks.example.com/octopus",
            &[EventType::FactAdded],
        );
        registering.spawn(async move { store.create_webhook(&webhook).await });
    }
    let (mut accepted, mut refused) = (0, 0);
    while let Some(outcome) = registering.join_next().await {
        match outcome.unwrap() {
            Ok(()) => accepted += 1,
            Err(octopus_core::Error::Conflict {
                code: octopus_core::DomainCode::TenantLimitReached,
                ..
            }) => refused += 1,
            Err(error) => panic!("{error:?}"),
        }
    }
    assert_eq!(
        (accepted, refused),
        (MAX_WEBHOOKS_PER_TENANT, MAX_WEBHOOKS_PER_TENANT)
    );
    assert_eq!(
        store.list_webhooks(acme.tenant).await.unwrap().len(),
        MAX_WEBHOOKS_PER_TENANT
    );
    registered(&*store, other.tenant, &[EventType::FactAdded]).await;
    assert_eq!(store.list_webhooks(other.tenant).await.unwrap().len(), 1);
}

/// A claim leaves out the endpoints and tenants it names (a dispatcher's
/// own that have enough in flight); a later claim takes what they wait with.
pub async fn a_claim_leaves_out_the_endpoints_and_tenants_it_names(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let globex = World::create(&*store, "globex").await;
    let slow = registered(&*store, acme.tenant, &[EventType::FactAdded]).await;
    let fine = registered(&*store, acme.tenant, &[EventType::FactAdded]).await;
    let theirs = registered(&*store, globex.tenant, &[EventType::FactAdded]).await;
    for world in [&acme, &globex] {
        store
            .add_fact(world.tenant, &addition(world, "alice", "Alice likes tea"))
            .await
            .unwrap();
    }
    let later = now() + chrono::Duration::hours(1);
    let first = store
        .claim_deliveries(&DeliveryClaim {
            skip_webhooks: vec![slow.id],
            skip_tenants: vec![globex.tenant],
            ..DeliveryClaim::any(100, later, LEASE)
        })
        .await
        .unwrap();
    let claimed: Vec<WebhookId> = first.iter().map(|d| d.webhook_id).collect();
    assert_eq!(claimed, [fine.id]);
    let rest = claim_all(&*store).await;
    let mut claimed: Vec<WebhookId> = rest.iter().map(|d| d.webhook_id).collect();
    claimed.sort();
    let mut expected = vec![slow.id, theirs.id];
    expected.sort();
    assert_eq!(claimed, expected);
}

pub async fn every_change_writes_one_delivery_per_subscribed_endpoint(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let globex = World::create(&*store, "globex").await;
    let facts = registered(
        &*store,
        acme.tenant,
        &[
            EventType::FactAdded,
            EventType::FactUpdated,
            EventType::FactDeleted,
        ],
    )
    .await;
    let everything = registered(&*store, acme.tenant, &EventType::ALL).await;

    let said = acme
        .say(&*store, at(9, 0), &["I moved to Paris", "bye"])
        .await;
    let added = store
        .add_fact(
            acme.tenant,
            &addition(&acme, "alice", "Alice lives in Lyon"),
        )
        .await
        .unwrap();
    let fixed = store
        .correct_fact(acme.tenant, &correction(added.id, "Alice lives in Paris"))
        .await
        .unwrap();
    store
        .delete_fact(acme.tenant, &deletion(fixed.id))
        .await
        .unwrap();
    store
        .erase_message(
            acme.tenant,
            &MessageErasure {
                message_id: said[1].id,
                changed_by: "privacy-desk".into(),
                reason: None,
                at: now(),
            },
        )
        .await
        .unwrap();
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    };
    store
        .close_episode(acme.tenant, said[0].episode_id, close, at(9, 5))
        .await
        .unwrap();
    let procedure = octopus_core::ProcedureId::new();
    let version = crate::procedures::version("refund", "Check the receipt", "ana");
    store
        .create_procedure(acme.tenant, procedure, Some(acme.agent), version, now())
        .await
        .unwrap();
    store
        .forget_user(
            acme.tenant,
            &ForgetUser {
                user_id: "bob".into(),
                agent_id: None,
            },
        )
        .await
        .unwrap();
    // Another tenant's change reaches none of acme's endpoints; a change
    // that fails writes nothing.
    store
        .add_fact(
            globex.tenant,
            &addition(&globex, "alice", "Alice likes tea"),
        )
        .await
        .unwrap();
    let replaced = correction(added.id, "Alice lives in Nice");
    assert!(store.correct_fact(acme.tenant, &replaced).await.is_err());

    use EventType::*;
    assert_eq!(
        logged(&*store, acme.tenant, facts.id).await,
        [FactAdded, FactUpdated, FactDeleted]
    );
    assert_eq!(
        logged(&*store, acme.tenant, everything.id).await,
        [
            FactAdded,
            FactUpdated,
            FactDeleted,
            MessageErased,
            EpisodeClosed,
            ProcedurePending,
            UserForgotten
        ]
    );
    let bodies = deliver_all(&*store, everything.id).await;
    assert_eq!(bodies.len(), 7, "each user's, one after the other");
    let added_event = bodies
        .iter()
        .find(|body| body["type"] == "fact.added")
        .expect("fact.added is due");
    assert_eq!(added_event["data"]["fact_id"], added.id.to_string());
    assert_eq!(added_event["data"]["user_id"], "alice");
    let erased = bodies
        .iter()
        .find(|body| body["type"] == "message.erased")
        .expect("message.erased is due");
    assert_eq!(erased["data"]["message_id"], said[1].id.to_string());
    assert_eq!(erased["data"]["changed_by"], "privacy-desk");
    let pending = bodies
        .iter()
        .find(|body| body["type"] == "procedure.pending")
        .expect("procedure.pending is due");
    assert_eq!(pending["data"]["procedure_id"], procedure.to_string());
    assert_eq!(pending["data"]["version"], 1);
    // Events carry ids, not words.
    for body in &bodies {
        let text = body.to_string();
        assert!(!text.contains("Lyon") && !text.contains("Paris"), "{text}");
    }
}

pub async fn each_users_deliveries_are_claimed_in_order(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let webhook = registered(&*store, acme.tenant, &[EventType::FactAdded]).await;
    for text in ["Alice likes tea", "Alice likes jazz"] {
        store
            .add_fact(acme.tenant, &addition(&acme, "alice", text))
            .await
            .unwrap();
    }
    store
        .add_fact(acme.tenant, &addition(&acme, "bob", "Bob likes chess"))
        .await
        .unwrap();
    let fact_of = |due: &DueDelivery| payload(due)["data"]["user_id"].as_str().unwrap().to_owned();

    // One per user: alice's first, and bob's.
    let first = claim_all(&*store).await;
    assert_eq!(
        first.iter().map(fact_of).collect::<Vec<_>>(),
        ["alice", "bob"]
    );
    assert!(
        claim_all(&*store).await.is_empty(),
        "claimed ones are leased"
    );
    // Alice's first fails: it is due again, and her second waits behind it.
    let alice = &first[0];
    store
        .record_attempt(&attempt(
            &first[1],
            AttemptOutcome::Delivered { status: 204 },
        ))
        .await
        .unwrap();
    let retry = AttemptOutcome::Failed {
        status: Some(503),
        error: "HTTP 503".into(),
        retry_at: now(),
    };
    store.record_attempt(&attempt(alice, retry)).await.unwrap();
    let again = claim_all(&*store).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].event_id, alice.event_id);
    assert_eq!(again[0].attempts, 1);
    assert!(again[0].failing_since.is_some(), "the endpoint is failing");
    store
        .record_attempt(&attempt(
            &again[0],
            AttemptOutcome::Delivered { status: 200 },
        ))
        .await
        .unwrap();
    let next = claim_all(&*store).await;
    assert_eq!(next.len(), 1);
    assert_ne!(next[0].event_id, alice.event_id, "her second, at last");
    assert_eq!(next[0].failing_since, None, "a success clears the failure");

    let log = store
        .list_deliveries(acme.tenant, webhook.id, Page::default())
        .await
        .unwrap();
    let delivered = log
        .iter()
        .find(|d| d.message_id.ends_with(&alice.event_id.simple().to_string()))
        .unwrap();
    assert_eq!(delivered.state, DeliveryState::Delivered);
    assert_eq!(delivered.attempts, 2);
    assert_eq!(delivered.last_status, Some(200));
    assert!(delivered.delivered_at.is_some());
    // Pruning leaves what is pending.
    assert_eq!(
        store
            .prune_deliveries(now() + chrono::Duration::hours(1))
            .await
            .unwrap(),
        2
    );
    assert_eq!(logged(&*store, acme.tenant, webhook.id).await.len(), 1);
}

pub async fn a_disabled_endpoint_gives_up_and_gets_nothing_new(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let webhook = registered(&*store, acme.tenant, &[EventType::FactAdded]).await;
    for text in ["Alice likes tea", "Alice likes jazz"] {
        store
            .add_fact(acme.tenant, &addition(&acme, "alice", text))
            .await
            .unwrap();
    }
    let due = claim_all(&*store).await;
    let gone = AttemptOutcome::Disable {
        status: Some(410),
        error: "HTTP 410 Gone".into(),
        reason: "the endpoint answered 410 Gone".into(),
    };
    store.record_attempt(&attempt(&due[0], gone)).await.unwrap();
    let disabled = store.get_webhook(acme.tenant, webhook.id).await.unwrap();
    assert!(disabled.disabled_at.is_some());
    assert_eq!(
        disabled.disabled_reason.as_deref(),
        Some("the endpoint answered 410 Gone")
    );
    let log = store
        .list_deliveries(acme.tenant, webhook.id, Page::default())
        .await
        .unwrap();
    assert!(
        log.iter().all(|d| d.state == DeliveryState::Failed),
        "{log:?}"
    );
    store
        .add_fact(acme.tenant, &addition(&acme, "alice", "Alice likes chess"))
        .await
        .unwrap();
    assert_eq!(
        logged(&*store, acme.tenant, webhook.id).await.len(),
        2,
        "nothing new"
    );
    assert!(claim_all(&*store).await.is_empty());

    let enabled = store.enable_webhook(acme.tenant, webhook.id).await.unwrap();
    assert_eq!((enabled.disabled_at, enabled.failing_since), (None, None));
    store
        .add_fact(acme.tenant, &addition(&acme, "alice", "Alice likes go"))
        .await
        .unwrap();
    assert_eq!(
        claim_all(&*store).await.len(),
        1,
        "what comes after is delivered"
    );
    let other = tenant("globex");
    store.create_tenant(&other).await.unwrap();
    assert_not_found(store.enable_webhook(other.id, webhook.id).await);
}

pub async fn forgetting_a_user_takes_their_deliveries_and_announces_it(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let webhook = registered(
        &*store,
        acme.tenant,
        &[EventType::FactAdded, EventType::UserForgotten],
    )
    .await;
    for (user, text) in [("alice", "Alice likes tea"), ("bob", "Bob likes chess")] {
        store
            .add_fact(acme.tenant, &addition(&acme, user, text))
            .await
            .unwrap();
    }
    store
        .forget_user(
            acme.tenant,
            &ForgetUser {
                user_id: "alice".into(),
                agent_id: None,
            },
        )
        .await
        .unwrap();
    let log = store
        .list_deliveries(acme.tenant, webhook.id, Page::default())
        .await
        .unwrap();
    let kept: Vec<(EventType, Option<&str>)> = log
        .iter()
        .rev()
        .map(|d| (d.event_type, d.user_id.as_deref()))
        .collect();
    assert_eq!(
        kept,
        [
            (EventType::FactAdded, Some("bob")),
            (EventType::UserForgotten, Some("alice"))
        ]
    );
}

//! Rules for the paragraphs written about users: each is its user's with
//! one agent, replaced by the next, read by no other user, agent or tenant,
//! kept across reopening, and gone when the user is forgotten or the
//! tenant deleted.

use octopus_core::FactId;
use octopus_core::forget::ForgetUser;
use octopus_core::profile_summary::ProfileSummary;

use crate::Backend;
use crate::fixtures::{self, World};

fn summary(agent: octopus_core::AgentId, user: &str, text: &str) -> ProfileSummary {
    ProfileSummary {
        agent_id: agent,
        user_id: user.into(),
        text: text.into(),
        fact_ids: vec![FactId::new(), FactId::new()],
        written_at: fixtures::at(9, 30),
    }
}

pub async fn a_profile_summary_is_its_users_alone_until_forgotten(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let other = World::create(&*store, "globex").await;
    let sales = fixtures::agent(world.tenant, "sales");
    store.create_agent(&sales).await.unwrap();

    let first = summary(world.agent, "alice", "Alice lives in Lyon.");
    store
        .save_profile_summary(world.tenant, &first)
        .await
        .unwrap();
    let read = |tenant, agent, user: &'static str| {
        let store = store.clone();
        async move { store.profile_summary(tenant, agent, user).await.unwrap() }
    };
    assert_eq!(read(world.tenant, world.agent, "alice").await, Some(first));
    // The next one takes its place.
    let second = ProfileSummary {
        written_at: fixtures::at(10, 0),
        ..summary(world.agent, "alice", "Alice moved to Paris.")
    };
    store
        .save_profile_summary(world.tenant, &second)
        .await
        .unwrap();
    assert_eq!(
        read(world.tenant, world.agent, "alice").await,
        Some(second.clone())
    );
    // Nobody else's.
    assert_eq!(read(world.tenant, world.agent, "bob").await, None);
    assert_eq!(read(world.tenant, sales.id, "alice").await, None);
    assert_eq!(read(other.tenant, world.agent, "alice").await, None);
    assert_eq!(read(other.tenant, other.agent, "alice").await, None);
    // Kept across reopening.
    let reopened = backend.open().await;
    assert_eq!(
        reopened
            .profile_summary(world.tenant, world.agent, "alice")
            .await
            .unwrap(),
        Some(second)
    );

    // Forgetting alice with one agent leaves her paragraph with another,
    // and another tenant's alice.
    let with_sales = summary(sales.id, "alice", "Alice buys in bulk.");
    store
        .save_profile_summary(world.tenant, &with_sales)
        .await
        .unwrap();
    let theirs = summary(other.agent, "alice", "Globex's Alice.");
    store
        .save_profile_summary(other.tenant, &theirs)
        .await
        .unwrap();
    let forget = |agent| ForgetUser {
        user_id: "alice".into(),
        agent_id: agent,
    };
    store
        .forget_user(world.tenant, &forget(Some(world.agent)))
        .await
        .unwrap();
    assert_eq!(read(world.tenant, world.agent, "alice").await, None);
    assert_eq!(
        read(world.tenant, sales.id, "alice").await,
        Some(with_sales)
    );
    store
        .forget_user(world.tenant, &forget(None))
        .await
        .unwrap();
    assert_eq!(read(world.tenant, sales.id, "alice").await, None);
    assert_eq!(
        read(other.tenant, other.agent, "alice").await,
        Some(theirs.clone())
    );

    // Deleting the tenant takes every one of its users'.
    let bob = summary(world.agent, "bob", "Bob works nights.");
    store
        .save_profile_summary(world.tenant, &bob)
        .await
        .unwrap();
    store.delete_tenant(world.tenant).await.unwrap();
    assert_eq!(read(world.tenant, world.agent, "bob").await, None);
    assert_eq!(read(other.tenant, other.agent, "alice").await, Some(theirs));
}

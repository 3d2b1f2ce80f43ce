//! Full-text search over messages: ranked by BM25 in the searcher's own
//! scope, filtered, and current with every acknowledged append.

use octopus_core::message::Role;
use octopus_core::search::MessageSearchQuery;

use crate::Backend;
use crate::fixtures::{self, World, batch, search, text};

pub async fn search_ranks_by_bm25_and_filters(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    world
        .say(
            &*store,
            fixtures::at(9, 0),
            &[
                "The invoice for March is attached.",
                "Invoice, invoice, invoice: the invoice total changed.",
                "Nothing to see here.",
            ],
        )
        .await;
    let hits = store
        .search_messages(world.tenant, &search("invoice"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert!(
        hits[0]
            .message
            .search_text()
            .starts_with("Invoice, invoice"),
        "denser match ranks first"
    );
    assert!(hits[0].score > hits[1].score, "scores fall with rank");
    assert_eq!(
        (hits[0].agent_id, hits[0].user_id.as_str()),
        (world.agent, "alice")
    );

    // Stemming: "invoices" finds "invoice"; punctuation in the query is not syntax.
    assert_eq!(
        store
            .search_messages(world.tenant, &search("\"invoices\" OR ("))
            .await
            .unwrap()
            .len(),
        2
    );

    // Filters: another user of the same agent, and time bounds.
    let bob = fixtures::conversation(world.tenant, world.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let records = vec![text(
        Role::User,
        "bob's invoice question",
        fixtures::at(15, 0),
    )];
    store
        .append_messages(world.tenant, batch(bob.id, records))
        .await
        .unwrap();
    let only_bob = MessageSearchQuery {
        user_id: Some("bob".into()),
        ..search("invoice")
    };
    let hits = store
        .search_messages(world.tenant, &only_bob)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].user_id, "bob");
    let by_conversation = MessageSearchQuery {
        conversation_id: Some(world.conversation),
        ..search("invoice")
    };
    assert_eq!(
        store
            .search_messages(world.tenant, &by_conversation)
            .await
            .unwrap()
            .len(),
        2
    );
    let afternoon = MessageSearchQuery {
        from: Some(fixtures::at(12, 0)),
        to: Some(fixtures::at(18, 0)),
        ..search("invoice")
    };
    assert_eq!(
        store
            .search_messages(world.tenant, &afternoon)
            .await
            .unwrap()
            .len(),
        1
    );
    let other_agent = MessageSearchQuery {
        agent_id: Some(fixtures::agent(world.tenant, "x").id),
        ..search("invoice")
    };
    assert!(
        store
            .search_messages(world.tenant, &other_agent)
            .await
            .unwrap()
            .is_empty()
    );
    let top_one = MessageSearchQuery {
        limit: 1,
        ..search("invoice")
    };
    assert_eq!(
        store
            .search_messages(world.tenant, &top_one)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A word few messages contain says more about a message than one most
/// contain: BM25's inverse document frequency.
pub async fn search_weighs_rare_words_above_common_ones(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    world
        .say(
            &*store,
            fixtures::at(9, 0),
            &[
                "Our order shipped today.",
                "The order is late, order status unknown, order again?",
                "Another order question.",
                "A refund was requested for the blender.",
                "Where is my order now?",
            ],
        )
        .await;
    let hits = store
        .search_messages(world.tenant, &search("order refund"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 5, "every message with either word");
    assert!(
        hits[0].message.search_text().starts_with("A refund"),
        "the one message with the rare word first, whatever the common word's count: {:?}",
        hits.iter()
            .map(|h| h.message.search_text())
            .collect::<Vec<_>>()
    );
}

pub async fn search_sees_every_acknowledged_message(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    for round in 0..5 {
        let word = format!("needle{round}");
        world
            .say(&*store, fixtures::at(9, round), &[word.as_str()])
            .await;
        // No pause: the search must catch the index up itself.
        let hits = store
            .search_messages(world.tenant, &search(&word))
            .await
            .unwrap();
        assert_eq!(
            hits.len(),
            1,
            "message `{word}` was acknowledged but not found"
        );
    }
}

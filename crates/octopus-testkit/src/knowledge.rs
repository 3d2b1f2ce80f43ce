//! The knowledge-store contract, rule by rule.

use chrono::{TimeZone, Utc};
use octopus_core::DomainCode;
use octopus_core::knowledge::{ChunkFilter, ChunkMetadata, NewChunk, VectorQuery};
use octopus_core::store::Page;
use octopus_core::{AgentId, Error, TenantId};
use uuid::Uuid;

use crate::Backend;
use crate::fixtures::{self, World};

/// The dimension of the knowledge rules' vectors.
pub const DIM: u32 = 8;

/// A unit vector pointing mostly along `axis`, tilted by `tilt` towards the next axis.
pub fn direction(axis: usize, tilt: f32) -> Vec<f32> {
    let mut v = vec![0.0; DIM as usize];
    v[axis % DIM as usize] = 1.0;
    v[(axis + 1) % DIM as usize] = tilt;
    let norm = (1.0 + tilt * tilt).sqrt();
    v.iter().map(|x| x / norm).collect()
}

pub fn chunk(source: &str, index: u32, content: &str, embedding: Vec<f32>) -> NewChunk {
    NewChunk {
        id: Uuid::now_v7(),
        content: content.into(),
        embedding,
        metadata: ChunkMetadata {
            source: source.into(),
            chunk_index: index,
            category: None,
            heading: None,
            indexed_at: Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap(),
        },
    }
}

/// A search for the 10 chunks nearest `vector`, whatever their score.
pub fn query(vector: Vec<f32>) -> VectorQuery {
    VectorQuery {
        vector,
        top_k: 10,
        min_score: -1.0,
        filter: ChunkFilter::default(),
    }
}

async fn with_collection(
    store: &dyn octopus_core::store::Store,
    name: &str,
) -> (TenantId, AgentId) {
    let world = World::create(store, name).await;
    store
        .create_collection(world.tenant, world.agent, DIM, "test-model")
        .await
        .unwrap();
    (world.tenant, world.agent)
}

pub async fn collections_are_created_once_per_agent(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    assert_eq!(
        store.collection(world.tenant, world.agent).await.unwrap(),
        None
    );
    let created = store
        .create_collection(world.tenant, world.agent, DIM, "m")
        .await
        .unwrap();
    assert_eq!(
        created.name,
        format!("agent_{}_{}", world.agent, world.tenant)
    );
    assert_eq!((created.dimension, created.chunk_count), (DIM, 0));
    let again = store
        .create_collection(world.tenant, world.agent, DIM, "m")
        .await
        .unwrap();
    assert_eq!(again, created, "creating it again is a no-op");
    match store
        .create_collection(world.tenant, world.agent, 16, "m")
        .await
    {
        Err(Error::Conflict {
            code: DomainCode::CollectionMismatch,
            ..
        }) => {}
        other => panic!("expected collection_mismatch, got {other:?}"),
    }
    let stranger = World::create(&*store, "globex").await;
    assert!(matches!(
        store
            .create_collection(stranger.tenant, world.agent, DIM, "m")
            .await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(
        store
            .collection(stranger.tenant, world.agent)
            .await
            .unwrap(),
        None
    );
}

pub async fn search_returns_the_nearest_chunks_first(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let chunks = vec![
        chunk("a.md", 0, "exactly on axis 0", direction(0, 0.0)),
        chunk("a.md", 1, "near axis 0", direction(0, 0.3)),
        chunk("b.md", 0, "on axis 3", direction(3, 0.0)),
    ];
    store.store_chunks(tenant, agent, chunks).await.unwrap();
    let hits = store
        .search_chunks(tenant, agent, &query(direction(0, 0.0)))
        .await
        .unwrap();
    let contents: Vec<&str> = hits.iter().map(|h| h.chunk.content.as_str()).collect();
    assert_eq!(
        contents,
        vec!["exactly on axis 0", "near axis 0", "on axis 3"]
    );
    assert!((hits[0].score - 1.0).abs() < 1e-5);
    assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
    assert_eq!(hits[1].chunk.metadata.source, "a.md");
    assert_eq!(hits[1].chunk.metadata.chunk_index, 1);

    let top_one = VectorQuery {
        top_k: 1,
        ..query(direction(0, 0.0))
    };
    assert_eq!(
        store
            .search_chunks(tenant, agent, &top_one)
            .await
            .unwrap()
            .len(),
        1
    );
    let close_only = VectorQuery {
        min_score: 0.5,
        ..query(direction(0, 0.0))
    };
    assert_eq!(
        store
            .search_chunks(tenant, agent, &close_only)
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        store
            .collection(tenant, agent)
            .await
            .unwrap()
            .unwrap()
            .chunk_count,
        3
    );
}

pub async fn filters_narrow_the_search(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let mut policy = chunk(
        "handbook.md",
        0,
        "refunds within 30 days",
        direction(1, 0.0),
    );
    policy.metadata.category = Some("policy".into());
    let mut faq = chunk("faq.md", 0, "how do refunds work", direction(1, 0.1));
    faq.metadata.category = Some("faq".into());
    faq.metadata.indexed_at = Utc.with_ymd_and_hms(2026, 9, 1, 0, 0, 0).unwrap();
    store
        .store_chunks(tenant, agent, vec![policy, faq])
        .await
        .unwrap();

    let search = |filter: ChunkFilter| {
        let store = store.clone();
        async move {
            let q = VectorQuery {
                filter,
                ..query(direction(1, 0.0))
            };
            store
                .search_chunks(tenant, agent, &q)
                .await
                .unwrap()
                .into_iter()
                .map(|h| h.chunk.content)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        search(ChunkFilter {
            category: Some("faq".into()),
            ..ChunkFilter::default()
        })
        .await,
        vec!["how do refunds work"]
    );
    assert_eq!(
        search(ChunkFilter {
            source: Some("handbook.md".into()),
            ..ChunkFilter::default()
        })
        .await,
        vec!["refunds within 30 days"]
    );
    let august = Utc.with_ymd_and_hms(2026, 8, 1, 0, 0, 0).unwrap();
    assert_eq!(
        search(ChunkFilter {
            indexed_from: Some(august),
            ..ChunkFilter::default()
        })
        .await,
        vec!["how do refunds work"]
    );
    assert_eq!(
        search(ChunkFilter {
            indexed_to: Some(august),
            ..ChunkFilter::default()
        })
        .await,
        vec!["refunds within 30 days"]
    );
    assert!(
        search(ChunkFilter {
            category: Some("manual".into()),
            ..ChunkFilter::default()
        })
        .await
        .is_empty()
    );
}

pub async fn wrong_dimension_is_refused_and_writes_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let batch = vec![
        chunk("a.md", 0, "fine", direction(0, 0.0)),
        chunk("a.md", 1, "too short", vec![1.0, 0.0]),
    ];
    match store.store_chunks(tenant, agent, batch).await {
        Err(Error::Invalid { field, .. }) => assert_eq!(field, "chunks[1].embedding"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_eq!(
        store
            .collection(tenant, agent)
            .await
            .unwrap()
            .unwrap()
            .chunk_count,
        0
    );
    let short_query = query(vec![1.0; 3]);
    assert!(matches!(
        store.search_chunks(tenant, agent, &short_query).await,
        Err(Error::Invalid { .. })
    ));
}

pub async fn replacing_a_source_leaves_no_duplicates(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let v1 = vec![
        chunk("guide.md", 0, "old intro", direction(2, 0.0)),
        chunk("guide.md", 1, "old body", direction(2, 0.2)),
    ];
    store
        .replace_source(tenant, agent, "guide.md", v1)
        .await
        .unwrap();
    store
        .store_chunks(
            tenant,
            agent,
            vec![chunk("other.md", 0, "unrelated", direction(2, 0.1))],
        )
        .await
        .unwrap();
    let v2 = vec![chunk("guide.md", 0, "new intro", direction(2, 0.0))];
    store
        .replace_source(tenant, agent, "guide.md", v2)
        .await
        .unwrap();

    let hits = store
        .search_chunks(tenant, agent, &query(direction(2, 0.0)))
        .await
        .unwrap();
    let contents: Vec<&str> = hits.iter().map(|h| h.chunk.content.as_str()).collect();
    assert_eq!(contents, vec!["new intro", "unrelated"]);
    assert_eq!(
        store
            .collection(tenant, agent)
            .await
            .unwrap()
            .unwrap()
            .chunk_count,
        2
    );
}

pub async fn deleted_chunks_are_not_found(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let doomed = chunk("a.md", 0, "delete me", direction(4, 0.0));
    let id = doomed.id;
    store
        .store_chunks(
            tenant,
            agent,
            vec![doomed, chunk("a.md", 1, "keep me", direction(4, 0.5))],
        )
        .await
        .unwrap();
    store.delete_chunk(tenant, agent, id).await.unwrap();
    let hits = store
        .search_chunks(tenant, agent, &query(direction(4, 0.0)))
        .await
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.chunk.content.as_str())
            .collect::<Vec<_>>(),
        vec!["keep me"]
    );
    assert!(matches!(
        store.delete_chunk(tenant, agent, id).await,
        Err(Error::NotFound { .. })
    ));
}

pub async fn knowledge_is_isolated_per_agent_and_tenant(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let finance = fixtures::agent(tenant, "finance");
    store.create_agent(&finance).await.unwrap();
    store
        .create_collection(tenant, finance.id, DIM, "test-model")
        .await
        .unwrap();
    let (other_tenant, other_agent) = with_collection(&*store, "globex").await;

    store
        .store_chunks(
            tenant,
            agent,
            vec![chunk("hr.md", 0, "salary bands", direction(5, 0.0))],
        )
        .await
        .unwrap();
    store
        .store_chunks(
            tenant,
            finance.id,
            vec![chunk("fin.md", 0, "quarterly numbers", direction(5, 0.0))],
        )
        .await
        .unwrap();
    store
        .store_chunks(
            other_tenant,
            other_agent,
            vec![chunk("x.md", 0, "globex secrets", direction(5, 0.0))],
        )
        .await
        .unwrap();

    let hits = store
        .search_chunks(tenant, agent, &query(direction(5, 0.0)))
        .await
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.chunk.content.as_str())
            .collect::<Vec<_>>(),
        vec!["salary bands"]
    );
    assert!(hits.iter().all(|h| h.chunk.agent_id == agent));
    // Another tenant naming this agent reaches nothing.
    assert!(matches!(
        store
            .search_chunks(other_tenant, agent, &query(direction(5, 0.0)))
            .await,
        Err(Error::NotFound { .. })
    ));
    let stray = chunk("x.md", 1, "intrusion", direction(5, 0.0));
    assert!(matches!(
        store.store_chunks(other_tenant, agent, vec![stray]).await,
        Err(Error::NotFound { .. })
    ));
    let own = store
        .search_chunks(tenant, agent, &query(direction(5, 0.0)))
        .await
        .unwrap();
    assert_eq!(own.len(), 1);
}

pub async fn chunks_survive_reopening_and_a_second_store_sees_them(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    store
        .store_chunks(
            tenant,
            agent,
            vec![chunk("a.md", 0, "first", direction(6, 0.0))],
        )
        .await
        .unwrap();
    // Warm this store's index, then write through a second store on the same data.
    assert_eq!(
        store
            .search_chunks(tenant, agent, &query(direction(6, 0.0)))
            .await
            .unwrap()
            .len(),
        1
    );
    let second = backend.open().await;
    second
        .store_chunks(
            tenant,
            agent,
            vec![chunk("a.md", 1, "second", direction(6, 0.1))],
        )
        .await
        .unwrap();
    let seen = store
        .search_chunks(tenant, agent, &query(direction(6, 0.0)))
        .await
        .unwrap();
    assert_eq!(
        seen.len(),
        2,
        "the first store's index follows the second store's write"
    );
    drop(store);
    drop(second);

    let reopened = backend.open().await;
    let hits = reopened
        .search_chunks(tenant, agent, &query(direction(6, 0.0)))
        .await
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.chunk.content.as_str())
            .collect::<Vec<_>>(),
        vec!["first", "second"]
    );
}

fn words(text: &str) -> octopus_core::knowledge::KeywordQuery {
    octopus_core::knowledge::KeywordQuery {
        text: text.into(),
        top_k: 10,
        filter: ChunkFilter::default(),
    }
}

pub async fn keyword_search_follows_every_change(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let finance = fixtures::agent(tenant, "finance");
    store.create_agent(&finance).await.unwrap();
    store
        .create_collection(tenant, finance.id, DIM, "test-model")
        .await
        .unwrap();

    let mut dense = chunk(
        "a.md",
        0,
        "Invoice invoice invoice: the invoice total.",
        direction(0, 0.0),
    );
    dense.metadata.heading = Some("Billing".into());
    let sparse = chunk(
        "b.md",
        0,
        "Attach the invoice to the claim.",
        direction(1, 0.0),
    );
    let doomed = chunk("c.md", 0, "An old invoice policy.", direction(2, 0.0));
    let doomed_id = doomed.id;
    store
        .store_chunks(tenant, agent, vec![dense, sparse, doomed])
        .await
        .unwrap();
    store
        .store_chunks(
            tenant,
            finance.id,
            vec![chunk("f.md", 0, "invoice ledger", direction(3, 0.0))],
        )
        .await
        .unwrap();

    let hits = store
        .keyword_search_chunks(tenant, agent, &words("invoices"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 3, "stemmed, and only this agent's chunks");
    assert_eq!(
        hits[0].chunk.metadata.source, "a.md",
        "the denser match ranks first"
    );
    assert!(hits[0].score > hits[1].score);
    let by_heading = store
        .keyword_search_chunks(tenant, agent, &words("billing"))
        .await
        .unwrap();
    assert_eq!(by_heading.len(), 1, "headings are searchable too");

    let filtered = octopus_core::knowledge::KeywordQuery {
        filter: ChunkFilter {
            source: Some("b.md".into()),
            ..ChunkFilter::default()
        },
        ..words("invoice")
    };
    assert_eq!(
        store
            .keyword_search_chunks(tenant, agent, &filtered)
            .await
            .unwrap()
            .len(),
        1
    );

    store.delete_chunk(tenant, agent, doomed_id).await.unwrap();
    store
        .replace_source(
            tenant,
            agent,
            "b.md",
            vec![chunk("b.md", 0, "Attach the receipt.", direction(1, 0.0))],
        )
        .await
        .unwrap();
    let hits = store
        .keyword_search_chunks(tenant, agent, &words("invoice"))
        .await
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.chunk.metadata.source.as_str())
            .collect::<Vec<_>>(),
        vec!["a.md"]
    );
    assert_eq!(
        store
            .keyword_search_chunks(tenant, agent, &words("receipt"))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(matches!(
        store
            .keyword_search_chunks(tenant, agent, &words("?!"))
            .await,
        Err(Error::Invalid { .. })
    ));
}

/// A collection whose matches are outranked by another collection's many
/// denser ones still gets its own best matches, filtered or not: a store
/// that ranks the whole index first must look further when the top of it
/// belongs to others.
pub async fn keyword_search_finds_a_collection_outranked_by_another(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let crowd = fixtures::agent(tenant, "crowd");
    store.create_agent(&crowd).await.unwrap();
    store
        .create_collection(tenant, crowd.id, DIM, "test-model")
        .await
        .unwrap();
    let crowded: Vec<NewChunk> = (0..60)
        .map(|i| {
            let text = format!("Invoice invoice invoice number {i}.");
            chunk("crowd.md", i, &text, direction(i as usize, 0.0))
        })
        .collect();
    store.store_chunks(tenant, crowd.id, crowded).await.unwrap();
    let mine = vec![
        chunk(
            "a.md",
            0,
            "A long note that mentions one invoice among many other words of text.",
            direction(0, 0.0),
        ),
        chunk(
            "b.md",
            0,
            "Another note with an invoice in it, and words besides.",
            direction(1, 0.0),
        ),
    ];
    store.store_chunks(tenant, agent, mine).await.unwrap();

    let two = octopus_core::knowledge::KeywordQuery {
        top_k: 2,
        ..words("invoice")
    };
    let hits = store
        .keyword_search_chunks(tenant, agent, &two)
        .await
        .unwrap();
    let mut sources: Vec<&str> = hits
        .iter()
        .map(|h| h.chunk.metadata.source.as_str())
        .collect();
    sources.sort();
    assert_eq!(sources, vec!["a.md", "b.md"]);
    let only_b = octopus_core::knowledge::KeywordQuery {
        filter: ChunkFilter {
            source: Some("b.md".into()),
            ..ChunkFilter::default()
        },
        ..two
    };
    let hits = store
        .keyword_search_chunks(tenant, agent, &only_b)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].chunk.metadata.source, "b.md");
}

/// Scores depend only on the searcher's own data: another tenant writing
/// the same words (messages and knowledge) moves none of a tenant's search
/// scores, tenant-wide, per agent, per user or in its collection. A shared
/// statistic would be a signal from one tenant to another.
pub async fn one_tenants_data_never_moves_anothers_scores(backend: &impl Backend) {
    use octopus_core::search::MessageSearchQuery;
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    store
        .create_collection(acme.tenant, acme.agent, DIM, "test-model")
        .await
        .unwrap();
    acme.say(
        &*store,
        Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap(),
        &[
            "We went hiking and ate an apple at the top",
            "The apple orchard tour is on Sunday",
            "Hiking boots need new laces",
            "Nothing to do with it",
        ],
    )
    .await;
    store
        .store_chunks(
            acme.tenant,
            acme.agent,
            vec![
                chunk(
                    "a.md",
                    0,
                    "Hiking trails near the office.",
                    direction(0, 0.0),
                ),
                chunk(
                    "b.md",
                    0,
                    "Apple pie recipe for the party.",
                    direction(1, 0.0),
                ),
                chunk("c.md", 0, "Parking rules.", direction(2, 0.0)),
            ],
        )
        .await
        .unwrap();
    let searches = [
        (None, None),
        (Some(acme.agent), None),
        (Some(acme.agent), Some("alice".to_owned())),
    ];
    let scores = |store: std::sync::Arc<dyn octopus_core::store::Store>| {
        let searches = searches.clone();
        async move {
            let mut all = Vec::new();
            for (agent_id, user_id) in searches {
                let query = MessageSearchQuery {
                    text: "hiking apple".into(),
                    agent_id,
                    user_id,
                    conversation_id: None,
                    from: None,
                    to: None,
                    limit: 10,
                };
                let hits = store.search_messages(acme.tenant, &query).await.unwrap();
                all.push(
                    hits.iter()
                        .map(|h| (h.message.id, h.score))
                        .collect::<Vec<_>>(),
                );
            }
            let chunks = store
                .keyword_search_chunks(acme.tenant, acme.agent, &words("hiking apple"))
                .await
                .unwrap();
            let chunks: Vec<_> = chunks.iter().map(|h| (h.chunk.id, h.score)).collect();
            (all, chunks)
        }
    };
    let before = scores(store.clone()).await;
    assert_eq!(before.0[0].len(), 3, "three of acme's messages match");
    assert_eq!(before.1.len(), 2, "two of acme's chunks match");

    // Another tenant writes the same words, many times over.
    let globex = World::create(&*store, "globex").await;
    store
        .create_collection(globex.tenant, globex.agent, DIM, "test-model")
        .await
        .unwrap();
    let texts: Vec<String> = (0..60)
        .map(|i| format!("Hiking day {i}: hiking again, and an apple"))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    globex
        .say(
            &*store,
            Utc.with_ymd_and_hms(2026, 6, 2, 9, 0, 0).unwrap(),
            &texts,
        )
        .await;
    let chunks = (0..30)
        .map(|i| {
            chunk(
                &format!("g{i}.md"),
                0,
                "Hiking hiking hiking with an apple",
                direction(i % 3, 0.1),
            )
        })
        .collect();
    store
        .store_chunks(globex.tenant, globex.agent, chunks)
        .await
        .unwrap();

    let after = scores(store.clone()).await;
    assert_eq!(after, before, "acme's scores did not move");
}

/// Keyword scores follow the collection's changes: after chunks are added
/// and one deleted, every score equals that of a collection that held the
/// same chunks all along. (A store that keeps a collection's statistics
/// between searches must drop them when it changes.)
pub async fn keyword_scores_follow_the_collections_changes(backend: &impl Backend) {
    let store = backend.open().await;
    let changed = World::create(&*store, "changed").await;
    let fresh = World::create(&*store, "fresh").await;
    for world in [&changed, &fresh] {
        store
            .create_collection(world.tenant, world.agent, DIM, "test-model")
            .await
            .unwrap();
    }
    let first = || {
        vec![
            chunk(
                "a.md",
                0,
                "Hiking trails near the office.",
                direction(0, 0.0),
            ),
            chunk(
                "b.md",
                0,
                "Apple pie recipe for the party.",
                direction(1, 0.0),
            ),
            chunk("c.md", 0, "Parking rules.", direction(2, 0.0)),
        ]
    };
    let more = || {
        vec![
            chunk("d.md", 0, "Hiking boots, hiking socks.", direction(0, 0.1)),
            chunk(
                "e.md",
                0,
                "An apple a day on every hike.",
                direction(1, 0.1),
            ),
        ]
    };
    let scores = |world: &World| {
        let store = store.clone();
        let (tenant, agent) = (world.tenant, world.agent);
        async move {
            let hits = store
                .keyword_search_chunks(tenant, agent, &words("hiking apple"))
                .await
                .unwrap();
            let mut scored: Vec<(String, uuid::Uuid, f32)> = hits
                .iter()
                .map(|h| (h.chunk.metadata.source.clone(), h.chunk.id, h.score))
                .collect();
            scored.sort_by(|a, b| a.0.cmp(&b.0));
            scored
        }
    };
    let sources = |scored: &[(String, uuid::Uuid, f32)]| -> Vec<(String, f32)> {
        scored
            .iter()
            .map(|(s, _, score)| (s.clone(), *score))
            .collect()
    };
    store
        .store_chunks(changed.tenant, changed.agent, first())
        .await
        .unwrap();
    // Searched once before the change: a store that keeps statistics
    // between searches has them now.
    let before = scores(&changed).await;
    assert_eq!(before.len(), 2, "{before:?}");

    store
        .store_chunks(changed.tenant, changed.agent, more())
        .await
        .unwrap();
    store
        .store_chunks(fresh.tenant, fresh.agent, [first(), more()].concat())
        .await
        .unwrap();
    let grown = scores(&changed).await;
    assert_eq!(
        sources(&grown),
        sources(&scores(&fresh).await),
        "after an addition"
    );

    for (world, scored) in [(&changed, &grown), (&fresh, &scores(&fresh).await)] {
        let e = scored.iter().find(|(s, ..)| s == "e.md").unwrap().1;
        store
            .delete_chunk(world.tenant, world.agent, e)
            .await
            .unwrap();
    }
    let shrunk = scores(&changed).await;
    assert_eq!(
        sources(&shrunk),
        sources(&scores(&fresh).await),
        "after a deletion"
    );
}

pub async fn documents_are_listed_by_source_and_read_in_order(backend: &impl Backend) {
    let store = backend.open().await;
    let (tenant, agent) = with_collection(&*store, "acme").await;
    let (other_tenant, other_agent) = with_collection(&*store, "globex").await;
    // No collection yet: no documents, no error.
    let bare = fixtures::agent(tenant, "bare");
    store.create_agent(&bare).await.unwrap();
    let page = |limit, offset| Page { limit, offset };
    assert_eq!(
        store
            .list_documents(tenant, bare.id, page(10, 0))
            .await
            .unwrap(),
        []
    );

    let mut policy = chunk("policy.md", 1, "refunds take five days", direction(1, 0.0));
    policy.metadata.category = Some("policy".into());
    let mut intro = chunk("policy.md", 0, "our refund policy", direction(1, 0.1));
    intro.metadata.category = Some("policy".into());
    let later = Utc.with_ymd_and_hms(2026, 7, 1, 9, 0, 0).unwrap();
    intro.metadata.indexed_at = later;
    // Stored out of order: a document reads in its chunks' order.
    store
        .store_chunks(
            tenant,
            agent,
            vec![
                policy,
                chunk("faq.md", 0, "how do I pay", direction(2, 0.0)),
                intro,
            ],
        )
        .await
        .unwrap();
    store
        .store_chunks(
            other_tenant,
            other_agent,
            vec![chunk("secret.md", 0, "globex only", direction(3, 0.0))],
        )
        .await
        .unwrap();

    let documents = store
        .list_documents(tenant, agent, page(10, 0))
        .await
        .unwrap();
    let listed: Vec<(&str, Option<&str>, u32)> = documents
        .iter()
        .map(|d| (d.source.as_str(), d.category.as_deref(), d.chunk_count))
        .collect();
    assert_eq!(
        listed,
        [("faq.md", None, 1), ("policy.md", Some("policy"), 2)]
    );
    assert_eq!(documents[1].indexed_at, later, "the newest chunk's time");
    let second_page = store
        .list_documents(tenant, agent, page(1, 1))
        .await
        .unwrap();
    assert_eq!(second_page.len(), 1);
    assert_eq!(second_page[0].source, "policy.md");

    let read = store
        .document_chunks(tenant, agent, "policy.md")
        .await
        .unwrap();
    let texts: Vec<(u32, &str)> = read
        .iter()
        .map(|c| (c.metadata.chunk_index, c.content.as_str()))
        .collect();
    assert_eq!(
        texts,
        [(0, "our refund policy"), (1, "refunds take five days")]
    );
    assert!(read.iter().all(|c| c.agent_id == agent));
    // Another tenant's document is not there, under either tenant's name.
    assert_eq!(
        store
            .document_chunks(tenant, agent, "secret.md")
            .await
            .unwrap(),
        []
    );
    assert_eq!(
        store
            .document_chunks(other_tenant, agent, "policy.md")
            .await
            .unwrap(),
        []
    );
    assert_eq!(
        store
            .list_documents(other_tenant, agent, page(10, 0))
            .await
            .unwrap(),
        []
    );
}

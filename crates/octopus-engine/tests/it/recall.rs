//! Recall through the engine, with the local embedding model and the memory
//! worker doing the queued work.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use octopus_core::llm_settings::LlmSettings;
use octopus_core::message::{NewMessage, Role};
use octopus_core::recall::{MemoryKind, RecallHit, RecallMode, RecallQuery};
use octopus_core::recall_ranking::RankingWeights;
use octopus_core::{AgentId, ConversationId, TenantId};
use octopus_engine::{EngineConfig, Octopus};
use octopus_testkit::counting_store::CountingStore;
use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use serde_json::json;

/// Summaries are extractive here: these tests are about recall and the
/// queue, with no model to call (turns.rs has summaries by model).
fn open(dir: &std::path::Path) -> Octopus {
    let mut config = EngineConfig {
        limits: crate::fixture_limits(),
        ..EngineConfig::default()
    };
    config.llm.summarise_episodes = false;
    crate::open_in(dir, config).unwrap()
}

struct Setup {
    tenant: TenantId,
    agent: AgentId,
}

async fn setup(octopus: &Octopus) -> Setup {
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(
        json!({"name": "companion", "llm": {"provider": "openai", "model": "gpt-4o"}}),
    )
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
    Setup { tenant, agent }
}

async fn conversation(octopus: &Octopus, s: &Setup, user: &str) -> ConversationId {
    let spec = serde_json::from_value(json!({"agent_id": s.agent, "user_id": user})).unwrap();
    octopus
        .create_conversation(s.tenant, spec)
        .await
        .unwrap()
        .id
}

fn day(d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 4, d, 18, 0, 0).unwrap()
}

/// Alternating user and assistant turns, a minute apart from `start`.
async fn talk(
    octopus: &Octopus,
    s: &Setup,
    conversation: ConversationId,
    start: DateTime<Utc>,
    turns: &[&str],
) {
    let messages = turns
        .iter()
        .enumerate()
        .map(|(i, text)| NewMessage {
            timestamp: Some(start + Duration::minutes(i as i64)),
            ..NewMessage::text(
                if i % 2 == 0 {
                    Role::User
                } else {
                    Role::Assistant
                },
                *text,
            )
        })
        .collect();
    octopus
        .append_messages(s.tenant, conversation, messages)
        .await
        .unwrap();
}

fn texts(hits: &[RecallHit]) -> Vec<String> {
    hits.iter()
        .map(|hit| match (&hit.window, &hit.summary, &hit.fact) {
            (Some(window), _, _) => window.message.content.as_ref().unwrap().text(),
            (None, Some(summary), _) => format!("summary: {summary}"),
            (None, None, Some(fact)) => format!("fact: {fact:?}"),
            (None, None, None) => unreachable!(),
        })
        .collect()
}

const PET: &str = "I finally adopted a greyhound from the shelter, his name is Biscuit";

async fn remember_two_evenings(octopus: &Octopus, s: &Setup) -> ConversationId {
    let alice = conversation(octopus, s, "alice").await;
    talk(
        octopus,
        s,
        alice,
        day(1),
        &[
            PET,
            "Congratulations! Greyhounds are gentle and love long naps.",
            "He already sleeps on the sofa all day long",
            "That sounds like a very happy retired racer.",
        ],
    )
    .await;
    // Four days later: the idle timeout closes the first evening's episode.
    talk(
        octopus,
        s,
        alice,
        day(5),
        &[
            "My sister Marta is visiting from Valencia next week",
            "Lovely, do you have plans for her visit?",
            "We will cook paella together on Saturday evening",
        ],
    )
    .await;
    alice
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_finds_memories_by_meaning_and_by_words() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    remember_two_evenings(&octopus, &s).await;
    assert!(octopus.run_memory_jobs().await.unwrap() >= 7);
    assert_eq!(octopus.pending_memory_jobs().await.unwrap(), 0);

    // No word in common with the turn it should find.
    let mut by_meaning = RecallQuery::new("alice", "What kind of dog does she own?");
    by_meaning.mode = RecallMode::Vector;
    by_meaning.top_k = 3;
    let hits = octopus
        .recall(s.tenant, s.agent, &by_meaning)
        .await
        .unwrap();
    assert!(texts(&hits).iter().any(|t| t == PET), "{:?}", texts(&hits));
    assert!(
        hits.iter()
            .all(|h| h.vector_score.is_some() && h.keyword_score.is_none())
    );

    let mut by_words = RecallQuery::new("alice", "Biscuit");
    by_words.mode = RecallMode::Keyword;
    let hits = octopus.recall(s.tenant, s.agent, &by_words).await.unwrap();
    assert_eq!(texts(&hits)[0], PET);
    assert!(hits[0].keyword_score.is_some());
    // Only one turn has the word; the turn after it comes next, on its
    // neighbour's strength, found by neither retriever.
    assert_eq!(
        texts(&hits)[1..],
        ["Congratulations! Greyhounds are gentle and love long naps."]
    );
    assert!(hits[1].keyword_score.is_none() && hits[1].vector_score.is_none());
    assert!(hits[1].score < hits[0].score);

    // Hybrid: both lists agree on the pet turn, so it comes first, with both scores.
    let mut hybrid = RecallQuery::new("alice", "Biscuit the dog");
    hybrid.neighbours = 1;
    let hits = octopus.recall(s.tenant, s.agent, &hybrid).await.unwrap();
    assert_eq!(texts(&hits)[0], PET);
    assert!(hits[0].vector_score.is_some() && hits[0].keyword_score.is_some());
    let window = hits[0].window.as_ref().unwrap();
    assert!(window.before.is_empty());
    assert_eq!(window.after.len(), 1, "one neighbouring turn after the hit");
    assert_eq!(hits[0].at, day(1));

    // The first evening closed by timeout and got an extractive summary.
    let mut summaries = RecallQuery::new("alice", "the greyhound sleeping on the sofa");
    summaries.mode = RecallMode::Vector;
    let hits = octopus.recall(s.tenant, s.agent, &summaries).await.unwrap();
    let summary = hits
        .iter()
        .find(|h| h.kind == MemoryKind::Summary)
        .expect("a summary hit");
    assert!(
        summary.summary.as_ref().unwrap().contains("greyhound"),
        "{summary:?}"
    );

    // Time range: only the second evening.
    let mut later = RecallQuery::new("alice", "family visit and cooking");
    later.from = Some(day(4));
    let hits = octopus.recall(s.tenant, s.agent, &later).await.unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h.at >= day(4)), "{:?}", texts(&hits));

    // Another user of the same agent remembers nothing of Alice's.
    let hits = octopus
        .recall(
            s.tenant,
            s.agent,
            &RecallQuery::new("bob", "greyhound Biscuit"),
        )
        .await
        .unwrap();
    assert!(hits.is_empty(), "{:?}", texts(&hits));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recency_weighting_prefers_the_newer_of_two_like_memories() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let alice = conversation(&octopus, &s, "alice").await;
    talk(
        &octopus,
        &s,
        alice,
        day(1),
        &["My favourite colour is green, like moss"],
    )
    .await;
    talk(
        &octopus,
        &s,
        alice,
        day(20),
        &["My favourite colour is blue, like the sea"],
    )
    .await;
    octopus.run_memory_jobs().await.unwrap();

    let mut query = RecallQuery::new("alice", "favourite colour green");
    query.top_k = 2;
    let plain = texts(&octopus.recall(s.tenant, s.agent, &query).await.unwrap());
    assert!(plain[0].contains("green"), "{plain:?}");
    query.recency_half_life_days = Some(2.0);
    let recent = texts(&octopus.recall(s.tenant, s.agent, &query).await.unwrap());
    assert!(
        recent[0].contains("blue"),
        "19 days is many half-lives: {recent:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_work_survives_a_restart_and_another_process_does_it() {
    queued_work_survives_a_restart(crate::Place::sqlite()).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_queued_work_survives_a_restart_and_another_process_does_it() {
    queued_work_survives_a_restart(crate::Place::postgres().await).await;
}

async fn queued_work_survives_a_restart(place: crate::Place) {
    let open = || place.open_with(|config| config.llm.summarise_episodes = false);
    let (tenant, agent) = {
        // This process stores the conversation and stops before any worker ran.
        let first = open().await;
        let s = setup(&first).await;
        remember_two_evenings(&first, &s).await;
        assert_eq!(
            first.pending_memory_jobs().await.unwrap(),
            8,
            "7 turns and 1 closed episode"
        );
        (s.tenant, s.agent)
    };
    let second = open().await;
    assert_eq!(second.pending_memory_jobs().await.unwrap(), 8);
    let worker = second.start_memory_worker();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while second.pending_memory_jobs().await.unwrap() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker did not drain the queue"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    worker.abort();
    let hits = second
        .recall(
            tenant,
            agent,
            &RecallQuery::new("alice", "paella with my sister"),
        )
        .await
        .unwrap();
    assert!(
        texts(&hits).iter().any(|t| t.contains("paella")),
        "{:?}",
        texts(&hits)
    );
    assert!(hits.iter().any(|h| h.vector_score.is_some()));
}

/// A transcript's turns carry their speaker before the words; the
/// question names one of the two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_speaker_a_question_names_comes_first() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let caroline = conversation(&octopus, &s, "Caroline").await;
    let hers =
        "Caroline: Melanie, the lake was so cold, we swam across the lake twice, what a lake";
    let melanies = "Melanie: We took the kids to the lake last weekend";
    let mut turns = vec![hers, melanies];
    let filler = [
        "Caroline: How is the painting going?",
        "Melanie: Slowly, the sunrise is hard to get right",
        "Caroline: I started a pottery class",
        "Melanie: You will love working with clay",
    ];
    turns.extend(filler.iter().cycle().take(12));
    talk(&octopus, &s, caroline, day(1), &turns).await;
    octopus.run_memory_jobs().await.unwrap();

    let recall = |octopus: Octopus, question: &'static str| {
        let tenant = s.tenant;
        let agent = s.agent;
        async move {
            let mut query = RecallQuery::new("Caroline", question);
            query.mode = RecallMode::Keyword;
            query.top_k = 2;
            texts(&octopus.recall(tenant, agent, &query).await.unwrap())
        }
    };
    // By words alone, her turn says "lake" three times and comes first.
    let unmoved = octopus.clone().with_recall_weights(RankingWeights {
        speaker_first: false,
        date_first: false,
        ..RankingWeights::default()
    });
    let question = "What did Melanie say about the lake?";
    assert_eq!(recall(unmoved, question).await, [hers, melanies]);
    // The question is about Melanie: her turns go first, Caroline's after
    // all of hers that were found (her others, on the episode's strength).
    let first = recall(octopus.clone(), question).await;
    assert_eq!(first[0], melanies);
    assert!(
        first.iter().all(|t| t.starts_with("Melanie: ")),
        "{first:?}"
    );
    // Naming both, or neither with the right capitals, favours no one.
    for question in [
        "What did Caroline and Melanie say about the lake?",
        "what did melanie say about the lake?",
    ] {
        assert_eq!(
            recall(octopus.clone(), question).await,
            [hers, melanies],
            "{question}"
        );
    }
}

/// A question that names a month is about what was said then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turns_of_the_month_a_question_names_come_first() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let ann = conversation(&octopus, &s, "ann").await;
    let april = "The lake was freezing, we swam across the lake and back, what a lake";
    let june = "We had a picnic by the lake with my brother";
    talk(&octopus, &s, ann, day(1), &[april, "Brave of you!"]).await;
    let june_evening = Utc.with_ymd_and_hms(2026, 6, 20, 18, 0, 0).unwrap();
    talk(&octopus, &s, ann, june_evening, &[june, "Sounds lovely"]).await;
    octopus.run_memory_jobs().await.unwrap();

    let recall = |weights: RankingWeights, question: &'static str| {
        let octopus = octopus.clone().with_recall_weights(weights);
        let (tenant, agent) = (s.tenant, s.agent);
        async move {
            let mut query = RecallQuery::new("ann", question);
            query.mode = RecallMode::Keyword;
            query.top_k = 2;
            texts(&octopus.recall(tenant, agent, &query).await.unwrap())
        }
    };
    let by_words = RankingWeights {
        date_first: false,
        ..RankingWeights::default()
    };
    let by_date = RankingWeights {
        date_first: true,
        ..RankingWeights::default()
    };
    // By words alone, April's turn says "lake" three times and comes first.
    let question = "What did I do at the lake in June?";
    assert_eq!(recall(by_words, question).await[0], april);
    assert_eq!(recall(by_date, question).await[0], june);
    let first = recall(by_date, "What did I do at the lake on June 20, 2026?").await;
    assert_eq!(first[0], june);
    // A year alone, or a month no turn was said in, moves nothing.
    for question in [
        "What did I do at the lake in 2026?",
        "What did I do at the lake in September?",
    ] {
        assert_eq!(recall(by_date, question).await[0], april, "{question}");
    }
}

/// Recalls by words alone, `top_k` hits, with `weights`.
async fn recall_by_words(
    octopus: &Octopus,
    s: &Setup,
    weights: RankingWeights,
    user: &str,
    question: &str,
    top_k: u32,
) -> Vec<String> {
    let mut query = RecallQuery::new(user, question);
    query.mode = RecallMode::Keyword;
    query.top_k = top_k;
    let octopus = octopus.clone().with_recall_weights(weights);
    texts(&octopus.recall(s.tenant, s.agent, &query).await.unwrap())
}

/// A name the question holds is searched for on its own, so the turn that
/// mentions it is not outweighed by turns full of the question's other words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_name_a_question_holds_is_searched_for_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let ann = conversation(&octopus, &s, "ann").await;
    let wordy = "The trip, the trip, we still have to decide the trip and decide the dates";
    let named = "Priya said she would sort it all out";
    let filler = ["Fine", "Dinner was good", "I slept late", "It rained"];
    let mut turns = vec![wordy, "Ok", named];
    turns.extend(filler.iter().cycle().take(12));
    talk(&octopus, &s, ann, day(1), &turns).await;
    octopus.run_memory_jobs().await.unwrap();

    let score_of_named = |weights: RankingWeights| {
        let octopus = octopus.clone().with_recall_weights(weights);
        let (tenant, agent) = (s.tenant, s.agent);
        async move {
            let mut query = RecallQuery::new("ann", "What did Priya decide about the trip?");
            query.mode = RecallMode::Keyword;
            let hits = octopus.recall(tenant, agent, &query).await.unwrap();
            let scores: Vec<(String, f64)> = texts(&hits)
                .into_iter()
                .zip(hits.iter().map(|h| h.score))
                .collect();
            let named_score = scores.iter().find(|(t, _)| t == named).map(|(_, s)| *s);
            let wordy_score = scores.iter().find(|(t, _)| t == wordy).map(|(_, s)| *s);
            (named_score.unwrap(), wordy_score.unwrap())
        }
    };
    let (named_plain, wordy_plain) = score_of_named(RankingWeights::default()).await;
    let by_name = RankingWeights {
        names_searched: true,
        ..RankingWeights::default()
    };
    let (named_by_name, wordy_by_name) = score_of_named(by_name).await;
    // The name's own search adds to the turn that mentions it, and closes
    // on the turn that only repeats the question's other words.
    assert!(named_by_name > named_plain, "{named_plain} {named_by_name}");
    assert!(
        wordy_by_name - named_by_name < wordy_plain - named_plain,
        "{wordy_plain} {named_plain} {wordy_by_name} {named_by_name}"
    );
}

/// The words the best hits share are searched for again: a turn that
/// shares none of the question's words is found through them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_the_best_hits_share_find_a_turn_without_the_questions_words() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let ann = conversation(&octopus, &s, "ann").await;
    let unasked = "This morning: running along the river again, ten kilometres";
    let turns = [
        "I relax best by the river after running",
        "Nice",
        "Running by the river is how I relax",
        "Cool",
        "The weather was grey all week",
        "Shame",
        unasked,
        "Impressive",
    ];
    talk(&octopus, &s, ann, day(1), &turns).await;
    octopus.run_memory_jobs().await.unwrap();

    let question = "How do I relax?";
    let plain = recall_by_words(&octopus, &s, RankingWeights::default(), "ann", question, 8).await;
    assert!(!plain.iter().any(|t| t == unasked), "{plain:?}");
    let fed_back = RankingWeights {
        feedback: true,
        ..RankingWeights::default()
    };
    let found = recall_by_words(&octopus, &s, fed_back, "ann", question, 8).await;
    assert!(found.iter().any(|t| t == unasked), "{found:?}");
    // The turns that say "relax" still lead.
    assert!(found[..2].iter().all(|t| t.contains("relax")), "{found:?}");
}

/// The words the best hits by meaning share are the user's own for what
/// the question asks ("martial arts" is "karate" and "dojo" here): searched
/// for, they lift a turn about something else that holds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_the_best_hits_by_meaning_share_lift_a_turn_in_the_users_own_words() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let lee = conversation(&octopus, &s, "lee").await;
    let parking = "Parking by the dojo costs five euros an evening now";
    let turns = [
        "I signed up for karate classes at the dojo downtown",
        "Good luck!",
        "Karate at the dojo was tough today, my legs hurt",
        "Rest well.",
        "I finally got my yellow belt in karate",
        "Congratulations!",
        "The weather was grey all week",
        "Shame.",
        "I bought a new laptop for work",
        "Nice.",
        parking,
        "Good to know.",
        "My sister visited on Sunday",
        "Lovely.",
    ];
    talk(&octopus, &s, lee, day(1), &turns).await;
    octopus.run_memory_jobs().await.unwrap();
    let rank = |weights: RankingWeights| {
        let octopus = octopus.clone().with_recall_weights(weights);
        let (tenant, agent) = (s.tenant, s.agent);
        async move {
            let mut query = RecallQuery::new("lee", "What martial arts has Lee done?");
            query.top_k = 14;
            query.include_summaries = false;
            let found = texts(&octopus.recall(tenant, agent, &query).await.unwrap());
            found
                .iter()
                .position(|t| t == parking)
                .unwrap_or(found.len())
        }
    };
    let plain = rank(RankingWeights::default()).await;
    let fed_back = rank(RankingWeights {
        meaning_feedback: true,
        ..RankingWeights::default()
    })
    .await;
    assert!(
        fed_back < plain,
        "the parking turn at {plain}, then {fed_back}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_recall_queries_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let mut query = RecallQuery::new("alice", "dogs");
    query.neighbours = 50;
    let error = octopus.recall(s.tenant, s.agent, &query).await.unwrap_err();
    assert!(error.to_string().contains("neighbours"), "{error}");
    let other_tenant = octopus.create_tenant("globex").await.unwrap().id;
    let error = octopus
        .recall(other_tenant, s.agent, &RecallQuery::new("alice", "dogs"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not found"), "{error}");
}

/// An embedder that breaks its contract: one vector short of what it is asked.
struct ShortEmbedder;

#[async_trait::async_trait]
impl octopus_core::embedding::Embedder for ShortEmbedder {
    fn model(&self) -> &str {
        "short"
    }

    fn dimension(&self) -> usize {
        4
    }

    async fn embed(
        &self,
        texts: &[String],
    ) -> Result<Vec<Vec<f32>>, octopus_core::embedding::EmbedError> {
        Ok(texts.iter().skip(1).map(|_| vec![0.5; 4]).collect())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedder_that_returns_too_few_vectors_fails_the_work_and_it_waits_for_a_retry() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path()).with_embedder(std::sync::Arc::new(ShortEmbedder));
    let s = setup(&octopus).await;
    let c = conversation(&octopus, &s, "ann").await;
    talk(
        &octopus,
        &s,
        c,
        day(1),
        &[
            "My sister lives in Lisbon now",
            "Lisbon is lovely in spring",
        ],
    )
    .await;
    octopus.run_memory_jobs().await.unwrap();
    // Nothing was stored as embedded with an empty vector: the jobs are still
    // queued, waiting for a retry.
    assert_eq!(octopus.pending_memory_jobs().await.unwrap(), 2);
    let query = RecallQuery {
        mode: RecallMode::Vector,
        ..RecallQuery::new("ann", "where does my sister live")
    };
    // A query vector missing is an error too, not an empty search.
    let error = octopus.recall(s.tenant, s.agent, &query).await.unwrap_err();
    assert!(
        error.to_string().contains("returned 0 vectors for 1 texts"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archived_episodes_leave_recall_and_context_until_restored_and_purging_removes_them() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "companion", "llm": {"provider": "openai", "model": "gpt-4o"},
        "memory": {"retention_days": 30}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
    let s = Setup { tenant, agent };
    let alice = remember_two_evenings(&octopus, &s).await;
    octopus.run_memory_jobs().await.unwrap();
    let by_alice = octopus_core::episode::EpisodeFilter {
        user_id: Some("alice".into()),
        ..Default::default()
    };
    let episodes = octopus.list_episodes(tenant, &by_alice).await.unwrap();
    // Newest first: the first evening closed (idle), the second is open.
    let first_evening = episodes[1].id;
    assert!(episodes[1].ended_at.is_some() && episodes[0].ended_at.is_none());

    let mut pet = RecallQuery::new("alice", "Biscuit the greyhound");
    pet.neighbours = 0;
    let remembers_the_pet = || async {
        let recalled = octopus.recall(tenant, agent, &pet).await.unwrap();
        let context = octopus
            .build_context(tenant, alice, "What is my dog called?")
            .await
            .unwrap();
        let in_context = context
            .messages
            .iter()
            .any(|m| m.content.contains("Biscuit"));
        (
            texts(&recalled).iter().any(|t| t.contains("Biscuit")),
            in_context,
        )
    };
    assert_eq!(remembers_the_pet().await, (true, true));

    // The clock is ours: a month after the first evening it is archived, and
    // the open second evening is not.
    let month_later = day(1) + Duration::days(31);
    assert_eq!(
        octopus.archive_expired_episodes(month_later).await.unwrap(),
        1
    );
    assert_eq!(remembers_the_pet().await, (false, false));
    let archive = octopus_core::episode::EpisodeFilter {
        archived: true,
        ..by_alice.clone()
    };
    let archived = octopus.list_episodes(tenant, &archive).await.unwrap();
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0].id, first_evening);

    octopus
        .restore_episode(tenant, first_evening)
        .await
        .unwrap();
    assert_eq!(remembers_the_pet().await, (true, true));

    // Archived again a retention period after the restore, then purged.
    let after_restore = octopus_core::now() + Duration::days(31);
    assert_eq!(
        octopus
            .archive_expired_episodes(after_restore)
            .await
            .unwrap(),
        1
    );
    octopus.purge_episode(tenant, first_evening).await.unwrap();
    assert!(
        octopus
            .list_episodes(tenant, &archive)
            .await
            .unwrap()
            .is_empty()
    );
    octopus
        .restore_episode(tenant, first_evening)
        .await
        .unwrap_err();
    let mut by_meaning = RecallQuery::new("alice", "What kind of dog does she own?");
    by_meaning.mode = RecallMode::Vector;
    let recalled = octopus.recall(tenant, agent, &by_meaning).await.unwrap();
    assert!(
        recalled.iter().all(|h| h.episode_id != Some(first_evening)),
        "no vector of the purged episode is left: {:?}",
        texts(&recalled)
    );
}

#[test]
fn recall_weights_outside_zero_to_one_stop_the_engine_naming_the_weight() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = EngineConfig::default();
    config.recall.neighbour = 1.5;
    let error = crate::open_in(dir.path(), config)
        .err()
        .expect("refused")
        .to_string();
    assert!(error.contains("recall.neighbour"), "{error}");
    assert!(
        !dir.path().join("octopus.sqlite").exists(),
        "refused before anything was opened"
    );
}

/// An engine whose agent's model is the loopback fake, with its summary
/// model when given.
async fn with_a_model(
    dir: &std::path::Path,
    summary_model: Option<&str>,
) -> (Octopus, Arc<ChatProvider>, Setup) {
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let settings = LlmSettings {
        max_retries: 0,
        allowed_base_urls: vec![url.clone()],
        summarise_episodes: false,
        ..LlmSettings::default()
    };
    let octopus = open(dir).with_chat_models(crate::chat_models(
        &settings,
        Arc::new(|name| (name == "OPENAI_API_KEY").then(|| "sk-test".to_owned())),
    ));
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "companion",
        "llm": {"provider": "openai", "model": "model-a", "summary_model": summary_model,
                "base_url": format!("{url}/v1")}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
    (octopus, fake, Setup { tenant, agent })
}

/// With sub-questions on, the agent's model rewrites the question into
/// simpler ones, each searched too: a turn that shares no word with the
/// question is found through a sub-question's. When the model fails, the
/// recall is the question's alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_questions_from_the_agents_model_find_what_the_question_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (octopus, fake, s) = with_a_model(dir.path(), Some("model-small")).await;
    let ann = conversation(&octopus, &s, "ann").await;
    let tennis = "Tennis every Saturday morning with Jo";
    let turns = [
        "What do we both enjoy, do you think?",
        "Hard to say",
        tennis,
        "Sounds fun",
        "The weather was grey all week",
        "Shame",
    ];
    talk(&octopus, &s, ann, day(1), &turns).await;
    octopus.run_memory_jobs().await.unwrap();

    let question = "What do Ann and her sister both enjoy?";
    let plain = recall_by_words(&octopus, &s, RankingWeights::default(), "ann", question, 6).await;
    assert!(!plain.iter().any(|t| t == tennis), "{plain:?}");
    let with_sub_questions = RankingWeights {
        sub_questions: true,
        ..RankingWeights::default()
    };
    fake.then(Answer::text(
        "{\"questions\": [\"Which sport does Ann play on Saturday?\", \"Does Ann like tennis?\"]}",
    ));
    let found = recall_by_words(&octopus, &s, with_sub_questions, "ann", question, 6).await;
    assert!(found.iter().any(|t| t == tennis), "{found:?}");
    // The summary model was asked, with the question as the user's message.
    let asked = fake.last_body();
    assert_eq!(asked["model"], "model-small");
    assert_eq!(
        asked["max_tokens"],
        octopus_llm::SUB_QUESTIONS_MAX_OUTPUT_TOKENS
    );
    assert_eq!(asked["messages"][1]["content"], question);
    assert!(
        asked["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("questions"),
        "{asked}"
    );

    // An agent that redacts personal data sends the question redacted.
    let redacting = json!({"memory": {"pii": "redact_outgoing"}});
    octopus
        .update_agent(s.tenant, s.agent, &redacting)
        .await
        .unwrap();
    fake.then(Answer::text("{\"questions\": []}"));
    let mailed = "Did Ann write to ann.lee@example.com about tennis?";
    recall_by_words(&octopus, &s, with_sub_questions, "ann", mailed, 6).await;
    let sent = fake.last_body()["messages"][1]["content"].to_string();
    assert!(!sent.contains("ann.lee@example.com"), "{sent}");
    assert!(sent.contains("tennis"), "{sent}");

    // A model that fails leaves the question's own recall.
    fake.then(Answer::Fail {
        status: 500,
        headers: Vec::new(),
        message: "down".into(),
    });
    let alone = recall_by_words(&octopus, &s, with_sub_questions, "ann", question, 6).await;
    assert_eq!(alone, plain);
}

/// A sub-question is searched by meaning too: its vector's hits join the
/// fusion and raise the turn it is about.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_question_is_searched_by_meaning_too() {
    let dir = tempfile::tempdir().unwrap();
    let (octopus, fake, s) = with_a_model(dir.path(), None).await;
    let ann = conversation(&octopus, &s, "ann").await;
    let tennis = "Tennis every Saturday morning with my sister";
    let turns = [
        "I painted the kitchen walls yellow",
        "Bright!",
        tennis,
        "Sounds fun",
        "We cooked a big curry for friends",
        "Yum",
    ];
    talk(&octopus, &s, ann, day(1), &turns).await;
    octopus.run_memory_jobs().await.unwrap();

    let score_of_tennis = |weights: RankingWeights| {
        let octopus = octopus.clone().with_recall_weights(weights);
        async move {
            let mut query = RecallQuery::new("ann", "What did Ann do last weekend?");
            query.mode = RecallMode::Vector;
            let hits = octopus.recall(s.tenant, s.agent, &query).await.unwrap();
            let at = texts(&hits).iter().position(|t| t == tennis).unwrap();
            hits[at].score
        }
    };
    let plain = score_of_tennis(RankingWeights::default()).await;
    fake.then(Answer::text(
        "{\"questions\": [\"Which racket sport did Ann play?\"]}",
    ));
    let with_sub_question = score_of_tennis(RankingWeights {
        sub_questions: true,
        ..RankingWeights::default()
    })
    .await;
    assert!(with_sub_question > plain, "{plain} {with_sub_question}");
    assert_eq!(fake.received().len(), 1);
}

/// A recall goes to the store once for the episodes of its hits (summaries
/// of three episodes here), at most once for facts, and at most twice for
/// messages (the head of the ranking, then the hits' neighbours), however
/// many hits of each kind it returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recall_reads_its_hits_episodes_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut engine = EngineConfig {
        limits: crate::fixture_limits(),
        ..EngineConfig::default()
    };
    engine.llm.summarise_episodes = false;
    crate::same_vectors(&mut engine);
    let mut counting = None;
    let octopus = octopus_app::open_wrapping(
        &octopus_app::AppConfig::in_dir(dir.path(), engine),
        |store| {
            let store = Arc::new(CountingStore::new(store));
            counting = Some(Arc::clone(&store));
            store
        },
    )
    .unwrap();
    let counting = counting.unwrap();
    let s = setup(&octopus).await;
    let alice = conversation(&octopus, &s, "alice").await;
    // Three evenings about the dog, each closed with the caller's summary
    // and a key fact.
    for (evening, fact) in [
        (1, "Alice's greyhound Biscuit sleeps on the sofa"),
        (3, "Alice walks her greyhound Biscuit by the river"),
        (6, "Alice's greyhound Biscuit was a racing dog"),
    ] {
        talk(
            &octopus,
            &s,
            alice,
            day(evening),
            &[&format!("{fact}, you know"), "Greyhounds are gentle dogs."],
        )
        .await;
        let open = octopus
            .list_episodes(
                s.tenant,
                &octopus_core::episode::EpisodeFilter {
                    conversation_id: Some(alice),
                    ..Default::default()
                },
            )
            .await
            .unwrap()
            .into_iter()
            .find(|episode| episode.ended_at.is_none())
            .unwrap();
        octopus
            .close_episode(
                s.tenant,
                open.id,
                octopus_core::episode::CloseEpisode {
                    reason: octopus_core::episode::EndReason::UserClosed,
                    ended_at: None,
                    summary: Some(octopus_core::episode::EpisodeSummary {
                        summary: format!("Evening {evening}: Alice talked about her greyhound."),
                        key_facts: vec![fact.to_owned()],
                        embedding: None,
                    }),
                },
            )
            .await
            .unwrap();
    }
    octopus.run_memory_jobs().await.unwrap();
    assert_eq!(octopus.pending_memory_jobs().await.unwrap(), 0);

    for neighbours in [0, 1] {
        let mut query = RecallQuery::new("alice", "Alice's greyhound Biscuit");
        query.top_k = 20;
        query.neighbours = neighbours;
        counting.reset();
        let hits = octopus.recall(s.tenant, s.agent, &query).await.unwrap();
        let calls = counting.calls();
        for kind in [MemoryKind::Message, MemoryKind::Summary] {
            let of_kind = hits.iter().filter(|hit| hit.kind == kind).count();
            assert!(of_kind >= 2, "{of_kind} {kind:?} hits: {:?}", texts(&hits));
        }
        assert_eq!(counting.count("get_episode"), 0, "{calls:?}");
        assert_eq!(counting.count("get_episodes"), 1, "{calls:?}");
        assert!(counting.count("get_facts") <= 1, "{calls:?}");
        assert!(counting.count("message_windows") <= 2, "{calls:?}");
        // Every hit's episode and conversation were found in that one read.
        assert!(hits.iter().all(|hit| hit.episode_id.is_some()));
    }
}

/// A value stated twice, weeks apart, without a model to learn facts from
/// it: asked in the present, the later statement leads, though the earlier
/// shares more of the question's words; asked about the past, the earlier.
/// Off (`restated = 0`), they keep the order their scores give.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restated_value_leads_in_the_tense_asked_without_a_model() {
    const OLD: &str = "The dashboard API response time is about 400 ms on average at the moment.";
    const NEW: &str = "After the caching tweaks, the dashboard API now answers in 250 ms.";
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let alice = conversation(&octopus, &s, "alice").await;
    talk(
        &octopus,
        &s,
        alice,
        day(1),
        &[
            OLD,
            "That is acceptable for now.",
            "I also started on the login page",
            "Good.",
        ],
    )
    .await;
    talk(
        &octopus,
        &s,
        alice,
        day(20),
        &[
            NEW,
            "A nice improvement!",
            "The export to CSV works too",
            "Great.",
        ],
    )
    .await;
    octopus.run_memory_jobs().await.unwrap();
    let order = |weights: RankingWeights, question: &'static str| {
        let octopus = octopus.clone().with_recall_weights(weights);
        let (tenant, agent) = (s.tenant, s.agent);
        async move {
            let mut query = RecallQuery::new("alice", question);
            query.top_k = 1;
            query.include_summaries = false;
            texts(&octopus.recall(tenant, agent, &query).await.unwrap())
        }
    };
    let on = RankingWeights {
        restated: 0.6,
        ..RankingWeights::default()
    };
    let off = RankingWeights {
        restated: 0.0,
        ..RankingWeights::default()
    };
    let now = "What is the average response time of the dashboard API?";
    assert_eq!(
        order(off, now).await,
        [OLD],
        "by its words the old one leads"
    );
    assert_eq!(order(on, now).await, [NEW]);
    assert_eq!(
        order(on, "What was the dashboard API response time before?").await,
        [OLD]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_words_said_twice_are_recalled_once_the_newest_with_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let s = setup(&octopus).await;
    let alice = conversation(&octopus, &s, "alice").await;
    let flight = "My flight to Oslo leaves on Friday at nine";
    talk(
        &octopus,
        &s,
        alice,
        day(1),
        &[flight, "Noted, Friday at nine."],
    )
    .await;
    talk(
        &octopus,
        &s,
        alice,
        day(3),
        &[
            "my flight to Oslo leaves on friday at nine.",
            "Noted again.",
        ],
    )
    .await;
    talk(
        &octopus,
        &s,
        alice,
        day(4),
        &["I bought a red scarf for the trip"],
    )
    .await;
    octopus.run_memory_jobs().await.unwrap();
    let search = octopus_core::search::MessageSearchQuery {
        text: "Oslo".into(),
        agent_id: Some(s.agent),
        user_id: Some("alice".into()),
        conversation_id: Some(alice),
        from: None,
        to: None,
        limit: 10,
    };
    let said = octopus.search_messages(s.tenant, &search).await.unwrap();
    assert_eq!(said.len(), 2, "the log keeps every message as said");

    for mode in [RecallMode::Keyword, RecallMode::Vector, RecallMode::Hybrid] {
        let mut query = RecallQuery::new("alice", "When does my flight to Oslo leave?");
        query.mode = mode;
        query.top_k = 3;
        let hits = octopus.recall(s.tenant, s.agent, &query).await.unwrap();
        let flights: Vec<&RecallHit> = hits
            .iter()
            .filter(|hit| hit.text.to_lowercase().contains("flight to oslo"))
            .collect();
        assert_eq!(flights.len(), 1, "{mode:?}: {:?}", texts(&hits));
        assert_eq!(flights[0].times_said, 2, "{mode:?}");
        assert_eq!(
            flights[0].at,
            day(3),
            "{mode:?}: the newest time it was said"
        );
        assert_eq!(
            hits.len(),
            3,
            "{mode:?}: the repeat's place goes to another hit"
        );
        assert!(hits.iter().all(|hit| !hit.text.is_empty()));
        assert!(
            hits.iter()
                .filter(|hit| hit.kind == MemoryKind::Message)
                .all(|hit| hit.text == texts(std::slice::from_ref(hit))[0])
        );
    }
}

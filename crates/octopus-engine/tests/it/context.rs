//! Working memory through the engine: what a turn's context holds, and that
//! it is the same after a restart and from a second server on the same data.

use chrono::{Duration, TimeZone, Utc};
use octopus_core::message::{NewMessage, Role};
use octopus_core::working_memory::{Block, KNOWLEDGE_HEADER};
use octopus_engine::{EngineConfig, IngestDocument, Octopus};

use crate::Place;
use serde_json::json;

fn open(dir: &std::path::Path) -> Octopus {
    crate::open_in(
        dir,
        EngineConfig {
            limits: crate::fixture_limits(),
            ..EngineConfig::default()
        },
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_is_the_same_after_a_restart_and_from_a_second_server() {
    same_context_after_a_restart_and_from_a_second_server(Place::sqlite()).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_the_context_is_the_same_after_a_restart_and_from_a_second_server() {
    same_context_after_a_restart_and_from_a_second_server(Place::postgres().await).await;
}

/// Each server derives its own vector index: the second one's reflects what
/// the first wrote, and the first's catches up with the second's writes.
#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_with_embedded_vectors_the_context_is_the_same_from_a_second_server() {
    same_context_after_a_restart_and_from_a_second_server(
        Place::postgres_with_embedded_vectors().await,
    )
    .await;
}

async fn same_context_after_a_restart_and_from_a_second_server(place: Place) {
    let first = place.open_with(|_| {}).await;
    let tenant = first.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "support", "system_prompt": "You are Acme's support agent.",
        "llm": {"provider": "openai", "model": "gpt-4o"},
        "memory": {"max_working_memory_tokens": 256, "knowledge_min_score": 0.0}
    }))
    .unwrap();
    let agent = first.create_agent(tenant, spec).await.unwrap();
    let document = IngestDocument {
        source: "returns.md".into(),
        text: "# Returns\n\nItems can be returned within 30 days with the receipt. Refunds go to the original card within 5 business days.".into(),
        format: octopus_core::chunking::Format::Markdown,
        category: None,
    };
    first
        .ingest_document(tenant, agent.id, document)
        .await
        .unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "dana"})).unwrap();
    let conversation = first.create_conversation(tenant, spec).await.unwrap().id;
    let at = Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap();
    // A past session about a blender, then today's session, long enough to prune.
    let turn = |i: i64, role, text: &str| NewMessage {
        timestamp: Some(at + Duration::minutes(i)),
        ..NewMessage::text(role, text)
    };
    first
        .append_messages(
            tenant,
            conversation,
            vec![
                turn(
                    0,
                    Role::User,
                    "The blender I bought arrived with a cracked jar",
                ),
                turn(
                    1,
                    Role::Assistant,
                    "Sorry about that! I have sent a replacement jar.",
                ),
            ],
        )
        .await
        .unwrap();
    let today: Vec<NewMessage> = (0..12)
        .map(|i| {
            let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
            turn(24 * 60 + i, role, &format!("Message {i} of today's chat about my delivery address and the courier's schedule"))
        })
        .collect();
    first
        .append_messages(tenant, conversation, today)
        .await
        .unwrap();
    first.run_memory_jobs().await.unwrap();

    let message = "Can I return the blender and get a refund?";
    let before = first
        .build_context(tenant, conversation, message)
        .await
        .unwrap();
    let trace = &before.trace;
    assert_eq!(before.tokenizer, "o200k_base");
    assert!(trace.total_tokens <= 256, "{trace:?}");
    assert_eq!(before.messages[0].content, "You are Acme's support agent.");
    assert_eq!(before.messages.last().unwrap().content, message);
    assert!(before.messages[1].content.starts_with(KNOWLEDGE_HEADER));
    assert!(before.messages[1].content.contains("within 30 days"));
    assert!(
        before
            .messages
            .iter()
            .any(|m| m.content.contains("cracked jar")),
        "the past session is recalled: {:#?}",
        before.messages
    );
    // Knowledge and recall score on scales of their own; pruning compares
    // them on one, where each block's best is 1.
    for block in [&trace.knowledge, &trace.episodic] {
        let best = block.iter().map(|item| item.score).fold(0.0, f64::max);
        assert!((best - 1.0).abs() < 1e-9, "{block:?}");
    }
    assert!(
        trace.pruned.iter().any(|p| p.block == Block::History),
        "a 256-token budget cannot hold 12 turns of history: {trace:?}"
    );
    assert!(
        !before
            .messages
            .iter()
            .any(|m| m.content.starts_with("Message 0 ")),
        "oldest history went first"
    );
    assert!(
        before
            .messages
            .iter()
            .any(|m| m.content.starts_with("Message 11 ")),
        "newest history stays"
    );
    assert!(
        !trace
            .episodic
            .iter()
            .any(|e| e.text.contains("today's chat")),
        "the current episode is history, not a recalled memory"
    );

    // Same data, a second server: the same context.
    let second = place.open_with(|_| {}).await;
    let from_second = second
        .build_context(tenant, conversation, message)
        .await
        .unwrap();
    assert_eq!(from_second.messages, before.messages);
    assert_eq!(from_second.trace, before.trace);

    // A message appended through the second server is in the first's next
    // context: its history cache never serves a stale conversation.
    second
        .append_messages(
            tenant,
            conversation,
            vec![turn(
                24 * 60 + 13,
                Role::User,
                "Also, the courier left a note",
            )],
        )
        .await
        .unwrap();
    let after = first
        .build_context(tenant, conversation, message)
        .await
        .unwrap();
    assert!(
        after
            .messages
            .iter()
            .any(|m| m.content == "Also, the courier left a note")
    );
    assert_eq!(
        after.messages,
        second
            .build_context(tenant, conversation, message)
            .await
            .unwrap()
            .messages
    );

    // A restart: the same again.
    drop((first, second));
    let restarted = place.open_with(|_| {}).await;
    let again = restarted
        .build_context(tenant, conversation, message)
        .await
        .unwrap();
    assert_eq!(again.messages, after.messages);
    assert_eq!(again.trace, after.trace);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_too_small_for_the_essentials_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "terse", "system_prompt": "word ".repeat(300),
        "llm": {"provider": "anthropic", "model": "claude-sonnet-4"},
        "memory": {"max_working_memory_tokens": 256}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "u"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
    let error = octopus
        .build_context(tenant, conversation, "hello")
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("max_working_memory_tokens"),
        "{error}"
    );
    let error = octopus
        .build_context(tenant, conversation, "  ")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("message"), "{error}");
}

/// A long episode of long messages: the context reads its history back only
/// as far as the budget holds (a page past it at most), not the whole
/// episode before pruning it; what it keeps is the newest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_is_read_back_only_as_far_as_the_budget_holds() {
    use octopus_core::working_memory::PruneReason;
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "long", "system_prompt": "You help.",
        "llm": {"provider": "openai", "model": "gpt-4o"},
        "memory": {"max_working_memory_tokens": 4000, "history_max_messages": 1000}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "u"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
    let at = Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap();
    // 300 messages of some 600 tokens each: 45 times the budget.
    let said: Vec<NewMessage> = (0..300)
        .map(|i| {
            let role = if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            };
            NewMessage {
                timestamp: Some(at + Duration::seconds(i)),
                ..NewMessage::text(role, format!("turn{i} {}", "alpha beta gamma ".repeat(200)))
            }
        })
        .collect();
    for batch in said.chunks(100) {
        octopus
            .append_messages(tenant, conversation, batch.to_vec())
            .await
            .unwrap();
    }
    let context = octopus
        .build_context(tenant, conversation, "what now?")
        .await
        .unwrap();
    let history_pruned = context
        .trace
        .pruned
        .iter()
        .filter(|p| p.reason == PruneReason::OldestHistory)
        .count();
    assert!(
        history_pruned <= 24,
        "{history_pruned} history messages were read and pruned: more than the budget's worth and a page"
    );
    let kept: Vec<String> = context
        .messages
        .iter()
        .map(|m| m.content.chars().take(8).collect())
        .collect();
    assert!(
        kept.iter().any(|k| k.starts_with("turn299 ")),
        "the newest is kept: {kept:?}"
    );
    assert!(!kept.iter().any(|k| k.starts_with("turn0 ")), "{kept:?}");
}

/// An operator's ceilings bound what an agent's settings may ask for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_may_not_ask_for_more_memory_than_the_server_allows() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = open(dir.path());
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    for (memory, field) in [
        (
            json!({"max_working_memory_tokens": 4_294_967_295u64}),
            "max_working_memory_tokens",
        ),
        (
            json!({"history_max_messages": 10_000}),
            "history_max_messages",
        ),
    ] {
        let spec = serde_json::from_value(json!({
            "name": "greedy", "system_prompt": "You help.",
            "llm": {"provider": "openai", "model": "gpt-4o"},
            "memory": memory
        }))
        .unwrap();
        let error = octopus.create_agent(tenant, spec).await.unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains(field) && message.contains("[limits]"),
            "{message}"
        );
    }
    assert!(
        octopus
            .list_agents(tenant, Default::default())
            .await
            .unwrap()
            .is_empty(),
        "nothing was stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standing_requests_lead_every_later_context_and_are_corrected_like_facts() {
    standing_requests_lead_later_contexts(Place::sqlite()).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_standing_requests_lead_every_later_context() {
    standing_requests_lead_later_contexts(Place::postgres().await).await;
}

/// An instruction and a preference said once in one conversation are filed
/// as the user's facts (once, however often said) and shown in the context
/// of a later conversation whose question shares no word with them; a
/// correction shows, a deletion removes, and another user never sees them.
async fn standing_requests_lead_later_contexts(place: Place) {
    use octopus_core::fact::{FactEdit, FactFilter};
    use octopus_core::working_memory::FACTS_HEADER;
    const INSTRUCTION: &str = "Always include version numbers when I ask about libraries.";
    let octopus = place.open_with(|_| {}).await;
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "helper", "llm": {"provider": "openai", "model": "gpt-4o"}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let start = |user: &'static str| {
        let octopus = octopus.clone();
        async move {
            let spec =
                serde_json::from_value(json!({"agent_id": agent.id, "user_id": user})).unwrap();
            octopus.create_conversation(tenant, spec).await.unwrap().id
        }
    };
    let first = start("dana").await;
    let at = Utc.with_ymd_and_hms(2026, 6, 1, 9, 0, 0).unwrap();
    let turn = |i: i64, role, text: &str| NewMessage {
        timestamp: Some(at + Duration::minutes(i)),
        ..NewMessage::text(role, text)
    };
    let said = octopus
        .append_messages(
            tenant,
            first,
            vec![
                turn(0, Role::User, INSTRUCTION),
                turn(1, Role::Assistant, "Noted: always with versions."),
                turn(
                    2,
                    Role::User,
                    "I'm keeping the shop small, so I prefer minimal dependencies, how do I start?",
                ),
                turn(3, Role::Assistant, "Start with the standard library."),
                turn(4, Role::User, INSTRUCTION),
            ],
        )
        .await
        .unwrap();
    octopus.run_memory_jobs().await.unwrap();
    let filter = |user: &str| FactFilter {
        agent_id: agent.id,
        user_id: user.to_owned(),
        include_replaced: false,
        categories: vec!["instruction".into(), "preference".into()],
        key: None,
        page: octopus_core::page::Page {
            limit: 10,
            offset: 0,
        },
    };
    let mut held = octopus.list_facts(tenant, &filter("dana")).await.unwrap();
    held.sort_by(|a, b| a.category.cmp(&b.category));
    let summary: Vec<(Option<&str>, &str, &str)> = held
        .iter()
        .map(|f| {
            (
                f.category.as_deref(),
                f.text.as_str(),
                f.changed_by.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Some("instruction"), INSTRUCTION, "patterns"),
            (
                Some("preference"),
                "I prefer minimal dependencies",
                "patterns"
            ),
        ],
        "said twice, filed once"
    );
    assert_eq!(
        held[0].message_ids,
        [said[0].id],
        "its source is the first saying"
    );
    assert_eq!(held[0].valid_from, at);

    let facts_block = |user: &'static str| {
        let octopus = octopus.clone();
        async move {
            let fresh = start(user).await;
            let context = octopus
                .build_context(
                    tenant,
                    fresh,
                    "Which web framework should I pick for the shop?",
                )
                .await
                .unwrap();
            let at = context
                .messages
                .iter()
                .position(|m| m.content.starts_with(FACTS_HEADER));
            if let Some(at) = at {
                assert!(at < context.messages.len() - 1, "ahead of the question");
            }
            at.map(|at| context.messages[at].content.clone())
        }
    };
    let block = facts_block("dana").await.expect("a facts block");
    assert!(block.contains(INSTRUCTION), "{block}");
    assert!(block.contains("standing instruction"), "{block}");
    assert!(block.contains("I prefer minimal dependencies"), "{block}");
    assert_eq!(
        facts_block("erin").await,
        None,
        "another user's are not shown"
    );

    let edit: FactEdit = serde_json::from_value(json!({
        "text": "Always include version numbers and licences when I ask about libraries."
    }))
    .unwrap();
    octopus
        .correct_fact(tenant, held[0].id, edit, "support")
        .await
        .unwrap();
    octopus
        .delete_fact(tenant, held[1].id, None, "support")
        .await
        .unwrap();
    let block = facts_block("dana").await.expect("a facts block");
    assert!(block.contains("and licences"), "{block}");
    assert!(!block.contains(INSTRUCTION), "{block}");
    assert!(!block.contains("minimal dependencies"), "{block}");
}

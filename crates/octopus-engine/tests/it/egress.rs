//! One way out: with the `pii` policy `redact_outgoing`, no PII of a conversation reaches the
//! embedder, the model, or an assembled context, on any path: turns and
//! their history, tool rounds, message and summary embeddings, summaries by
//! the model, recalled snippets, knowledge excerpts, and procedure learning.

use std::sync::Arc;

use octopus_core::chat::ToolSpec;
use octopus_core::episode::{CloseEpisode, EndReason};
use octopus_engine::{EngineConfig, IngestDocument, ToolResult, TurnInput};
use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use octopus_testkit::fake_providers::{self, Provider};
use serde_json::json;

const EMAIL: &str = "dana.secret@example.com";
const PHONE: &str = "+44 20 7946 0958";
const CARD: &str = "4111 1111 1111 1111";
const IBAN: &str = "GB82 WEST 1234 5698 7654 32";

fn leaks(text: &str) -> Vec<&'static str> {
    [EMAIL, PHONE, CARD, IBAN, "7946 0958", "1111 1111"]
        .into_iter()
        .filter(|pii| text.contains(pii))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redact_outgoing_nothing_detected_leaves_by_any_path() {
    let embedder = Arc::new(Provider::default());
    let embed_url = fake_providers::serve(Arc::clone(&embedder)).await;
    let chat = Arc::new(ChatProvider::default());
    let chat_url = fake_chat::serve(Arc::clone(&chat)).await;
    let dir = tempfile::tempdir().unwrap();
    let octopus = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            embedding: crate::fake_ollama_embedding(&embed_url),
            llm: octopus_core::llm_settings::LlmSettings {
                allowed_base_urls: vec![chat_url.clone()],
                ..Default::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "support", "system_prompt": "Be brief.",
        "llm": {"provider": "ollama", "model": "llama3.2", "base_url": chat_url},
        "memory": {"pii": "redact_outgoing", "knowledge_min_score": -1.0, "learn_procedures": true}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
    let document = IngestDocument {
        source: "contacts.md".into(),
        text: format!("# Billing\n\nWrite to {EMAIL} or call {PHONE} about invoices."),
        format: octopus_core::chunking::Format::Markdown,
        category: None,
    };
    octopus
        .ingest_document(tenant, agent, document)
        .await
        .unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent, "user_id": "dana"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;

    // A turn full of PII, a tool round whose result holds more, and a second turn.
    let say = |text: String| TurnInput {
        message: Some(text),
        ..TurnInput::default()
    };
    let tools = vec![ToolSpec {
        name: "lookup".into(),
        description: None,
        parameters: json!({"type": "object"}),
    }];
    // Ollama numbers its tool calls: this one is call_0.
    // Its arguments hold PII too, as a call a client stored may.
    chat.then(Answer::tool_call(
        "call_1",
        "lookup",
        json!({"customer": EMAIL}),
    ));
    let first = octopus
        .turn(
            tenant,
            conversation,
            TurnInput {
                tools: tools.clone(),
                ..say(format!("I am {EMAIL}, card {CARD}, call {PHONE}"))
            },
            None,
        )
        .await
        .unwrap();
    let results = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: "call_0".into(),
            content: json!(format!("IBAN on file: {IBAN}")),
            is_error: false,
            duration_ms: None,
        }],
        tools,
        ..TurnInput::default()
    };
    octopus
        .turn(tenant, conversation, results, None)
        .await
        .unwrap();
    octopus
        .turn(
            tenant,
            conversation,
            say("What do you have on file for me?".into()),
            None,
        )
        .await
        .unwrap();
    // Close: the summary by the model, its embedding, the messages' embeddings,
    // and a procedure learned from the tool calls.
    octopus
        .close_episode(
            tenant,
            first.episode_id,
            CloseEpisode {
                reason: EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
        )
        .await
        .unwrap();
    octopus.run_memory_jobs().await.unwrap();
    octopus
        .propose_procedure(tenant, first.episode_id)
        .await
        .unwrap();

    // A new session: recall of the old one, and the knowledge excerpt.
    let context = octopus
        .build_context(
            tenant,
            conversation,
            &format!("Is {EMAIL} still my billing address?"),
        )
        .await
        .unwrap();
    let assembled: String = context
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        assembled.contains("[EMAIL]"),
        "the placeholders are there: {assembled}"
    );
    assert!(
        leaks(&assembled).is_empty(),
        "the context leaks {:?}: {assembled}",
        leaks(&assembled)
    );

    let sent_to_model: Vec<String> = chat.received().iter().map(|r| r.body.to_string()).collect();
    assert!(
        sent_to_model.len() >= 5,
        "turns, summary, proposal: {}",
        sent_to_model.len()
    );
    for body in &sent_to_model {
        assert!(
            leaks(body).is_empty(),
            "the model was sent {:?}: {body}",
            leaks(body)
        );
    }
    let embedded: Vec<String> = embedder.requests().iter().map(|r| r.to_string()).collect();
    assert!(
        embedded.len() >= 3,
        "knowledge, queries, messages, summary: {}",
        embedded.len()
    );
    for body in &embedded {
        assert!(
            leaks(body).is_empty(),
            "the embedder was sent {:?}: {body}",
            leaks(body)
        );
    }
    // What is stored keeps the original, flagged, with a redacted copy.
    let episode = octopus.get_episode(tenant, first.episode_id).await.unwrap();
    assert!(episode.messages[0].contains_pii);
    assert!(
        episode.messages[0]
            .redacted_content
            .as_deref()
            .unwrap()
            .contains("[CARD]")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_pii_policy_stores_what_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let octopus = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let text = format!("Reach me at {EMAIL} please");
    for (policy, flagged, redacted, content) in [
        (json!({"pii": "off"}), false, None, text.clone()),
        (json!({"pii": "flag"}), true, None, text.clone()),
        (
            json!({}),
            true,
            Some("Reach me at [EMAIL] please"),
            text.clone(),
        ),
        (
            json!({"pii": "redact_stored"}),
            true,
            Some("Reach me at [EMAIL] please"),
            "Reach me at [EMAIL] please".to_owned(),
        ),
    ] {
        let name = format!("agent {policy}");
        let spec = serde_json::from_value(json!({
            "name": name, "llm": {"provider": "ollama", "model": "llama3.2"}, "memory": policy
        }))
        .unwrap();
        let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
        let spec = serde_json::from_value(json!({"agent_id": agent, "user_id": "dana"})).unwrap();
        let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
        let messages: Vec<octopus_core::message::NewMessage> =
            serde_json::from_value(json!([{"role": "user", "content": text},
                {"role": "user", "content": "nothing to see", "contains_pii": true, "redacted_content": "kept as sent"}]))
            .unwrap();
        let stored = octopus
            .append_messages(tenant, conversation, messages)
            .await
            .unwrap();
        let read = octopus
            .get_episode(tenant, stored[0].episode_id)
            .await
            .unwrap()
            .messages;
        assert_eq!(read[0].contains_pii, flagged, "{name}");
        assert_eq!(read[0].redacted_content.as_deref(), redacted, "{name}");
        assert_eq!(read[0].content.as_ref().unwrap().text(), content, "{name}");
        // What the caller marked is kept as it was sent.
        assert_eq!(
            read[1].redacted_content.as_deref(),
            Some("kept as sent"),
            "{name}"
        );
    }
}

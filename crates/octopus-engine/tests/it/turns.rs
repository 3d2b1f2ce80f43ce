//! Turns through the engine, against a loopback provider
//! (`octopus_testkit::fake_chat`): what the model is sent, what is stored,
//! what a failed call leaves, tool rounds, and token totals.

use octopus_core::DomainCode;
use std::sync::{Arc, Mutex};

use octopus_core::chat::{Fault, ToolSpec};
use octopus_core::llm_settings::LlmSettings;
use octopus_core::message::Role;
use octopus_core::{ConversationId, TenantId};
use octopus_engine::{EngineConfig, Error, Octopus, ToolResult, TurnInput};
use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use serde_json::json;

struct Setup {
    octopus: Octopus,
    fake: Arc<ChatProvider>,
    /// The operator's settings, which trust the loopback provider.
    settings: LlmSettings,
    tenant: TenantId,
    conversation: ConversationId,
    _dir: tempfile::TempDir,
}

async fn setup(provider: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let settings = LlmSettings {
        max_retry_wait_secs: 1,
        allowed_base_urls: vec![url.clone()],
        ..LlmSettings::default()
    };
    let octopus = crate::open_with_fixture_limits(dir.path()).with_chat_models(crate::chat_models(
        &settings,
        Arc::new(|name| (name == "OPENAI_API_KEY").then(|| "sk-test".to_owned())),
    ));
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let base_url = match provider {
        "openai" => format!("{url}/v1"),
        _ => url,
    };
    let spec = serde_json::from_value(json!({
        "name": "support", "system_prompt": "You are Acme's support agent.",
        "llm": {"provider": provider, "model": "model-a", "base_url": base_url, "temperature": 0.2}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "dana"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
    Setup {
        octopus,
        fake,
        settings,
        tenant,
        conversation,
        _dir: dir,
    }
}

fn say(text: &str) -> TurnInput {
    TurnInput {
        message: Some(text.into()),
        ..TurnInput::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_sends_the_working_memory_and_stores_the_reply_with_its_usage() {
    let s = setup("openai").await;
    let first = s
        .octopus
        .turn(s.tenant, s.conversation, say("Where is my parcel?"), None)
        .await
        .unwrap();
    assert_eq!(
        first.reply.content.as_ref().unwrap().text(),
        "echo: Where is my parcel?"
    );
    assert_eq!(first.reply.role, Role::Assistant);
    assert_eq!(first.provider, "openai");
    let body = s.fake.last_body();
    assert_eq!(body["model"], "model-a");
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are Acme's support agent."})
    );
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"role": "user", "content": "Where is my parcel?"})
    );
    assert_eq!(
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["content"] == "Where is my parcel?")
            .count(),
        1,
        "the stored user message is not also in the history"
    );

    let second = s
        .octopus
        .turn(
            s.tenant,
            s.conversation,
            say("And when will it arrive?"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(second.episode_id, first.episode_id);
    let body = s.fake.last_body();
    let contents: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        &contents[contents.len() - 3..],
        [
            "Where is my parcel?",
            "echo: Where is my parcel?",
            "And when will it arrive?"
        ],
        "the first exchange is history now"
    );

    let episode = s
        .octopus
        .get_episode(s.tenant, first.episode_id)
        .await
        .unwrap();
    let roles: Vec<Role> = episode.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::User, Role::Assistant]
    );
    let reported = s.fake.reported_usage();
    assert_eq!(reported.len(), 2);
    assert_eq!(
        (
            episode.episode.total_input_tokens,
            episode.episode.total_output_tokens
        ),
        (reported[0].0 + reported[1].0, reported[0].1 + reported[1].1),
        "the episode's totals are the provider's reported usage"
    );
    let usage = episode.messages[3].usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), reported[1]);
    assert_eq!(second.trace.budget, 8000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_keeps_the_user_message_and_the_next_turn_works() {
    let s = setup("ollama").await;
    for _ in 0..3 {
        s.fake.then(Answer::Fail {
            status: 500,
            headers: Vec::new(),
            message: "model runner crashed".into(),
        });
    }
    let error = s
        .octopus
        .turn(s.tenant, s.conversation, say("First question"), None)
        .await
        .unwrap_err();
    let Error::Chat(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        (error.provider.as_str(), error.fault),
        ("ollama", Fault::Provider)
    );
    assert!(error.message.contains("model runner crashed"), "{error}");
    let episodes = s
        .octopus
        .list_episodes(s.tenant, &Default::default())
        .await
        .unwrap();
    assert_eq!(episodes.len(), 1);
    let episode = s
        .octopus
        .get_episode(s.tenant, episodes[0].id)
        .await
        .unwrap();
    assert_eq!(episode.messages.len(), 1, "only the user's message");
    assert_eq!(
        episode.messages[0].content.as_ref().unwrap().text(),
        "First question"
    );
    assert_eq!(
        (
            episode.episode.total_input_tokens,
            episode.episode.total_output_tokens
        ),
        (0, 0)
    );

    let reply = s
        .octopus
        .turn(s.tenant, s.conversation, say("Second try"), None)
        .await
        .unwrap();
    assert_eq!(reply.reply.content.unwrap().text(), "echo: Second try");
    let episode = s
        .octopus
        .get_episode(s.tenant, episodes[0].id)
        .await
        .unwrap();
    assert_eq!(episode.messages.len(), 3);
    let (input, output) = *s.fake.reported_usage().last().unwrap();
    assert_eq!(
        (
            episode.episode.total_input_tokens,
            episode.episode.total_output_tokens
        ),
        (input, output)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_stores_calls_and_results_and_continues_the_turn() {
    let s = setup("openai").await;
    let tools = vec![ToolSpec {
        name: "track_parcel".into(),
        description: Some("Where a parcel is".into()),
        parameters: json!({"type": "object", "properties": {"id": {"type": "string"}}}),
    }];
    s.fake.then(Answer::tool_call(
        "call_1",
        "track_parcel",
        json!({"id": "P-77"}),
    ));
    let input = TurnInput {
        tools: tools.clone(),
        ..say("Where is parcel P-77?")
    };
    let first = s
        .octopus
        .turn(s.tenant, s.conversation, input, None)
        .await
        .unwrap();
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].arguments, json!({"id": "P-77"}));
    assert_eq!(first.reply.tool_calls[0].tool_call_id, "call_1");
    assert!(first.reply.content.is_none());

    // A result for a call that was not made is refused, and stores nothing.
    let wrong = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: "call_9".into(),
            content: json!("?"),
            is_error: false,
            duration_ms: None,
        }],
        tools: tools.clone(),
        ..TurnInput::default()
    };
    let error = s
        .octopus
        .turn(s.tenant, s.conversation, wrong, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Domain(octopus_core::Error::Conflict { code, .. }) if *code == DomainCode::ToolResultsMismatch),
        "{error:?}"
    );

    s.fake.then(Answer::text("It is in Lyon."));
    let results = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: "call_1".into(),
            content: json!({"city": "Lyon"}),
            is_error: false,
            duration_ms: Some(12),
        }],
        tools,
        ..TurnInput::default()
    };
    let second = s
        .octopus
        .turn(s.tenant, s.conversation, results, None)
        .await
        .unwrap();
    assert_eq!(
        second.reply.content.as_ref().unwrap().text(),
        "It is in Lyon."
    );
    assert!(second.tool_calls.is_empty());
    let body = s.fake.last_body();
    let messages = body["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(
        messages[n - 3],
        json!({"role": "user", "content": "Where is parcel P-77?"})
    );
    assert_eq!(messages[n - 2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        messages[n - 1],
        json!({"role": "tool", "content": "{\"city\":\"Lyon\"}", "tool_call_id": "call_1"})
    );

    let episode = s
        .octopus
        .get_episode(s.tenant, first.episode_id)
        .await
        .unwrap();
    let roles: Vec<Role> = episode.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    let tool = &episode.messages[2];
    assert_eq!(tool.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(tool.tool_calls[0].function_name, "track_parcel");
    assert_eq!(tool.tool_calls[0].result, Some(json!({"city": "Lyon"})));
    assert_eq!(tool.tool_calls[0].duration_ms, Some(12));
    let reported = s.fake.reported_usage();
    assert_eq!(
        episode.episode.total_input_tokens,
        reported.iter().map(|u| u.0).sum::<u64>()
    );

    // Nothing is waiting for a result any more.
    let again = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: "call_1".into(),
            content: json!("x"),
            is_error: false,
            duration_ms: None,
        }],
        ..TurnInput::default()
    };
    let error = s
        .octopus
        .turn(s.tenant, s.conversation, again, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Domain(octopus_core::Error::Conflict { code, .. }) if *code == DomainCode::NoPendingToolCalls),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_turn_hands_over_the_text_as_it_arrives() {
    let s = setup("ollama").await;
    s.fake
        .then(Answer::text("Your parcel left Lyon this morning."));
    let pieces = Mutex::new(Vec::<String>::new());
    let sink = |piece: &str| pieces.lock().unwrap().push(piece.to_owned());
    let reply = s
        .octopus
        .turn(s.tenant, s.conversation, say("Where is it?"), Some(&sink))
        .await
        .unwrap();
    let pieces = pieces.into_inner().unwrap();
    assert!(pieces.len() > 3);
    assert_eq!(pieces.concat(), reply.reply.content.unwrap().text());
    assert_eq!(s.fake.last_body()["stream"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_without_a_usable_model_is_refused_before_anything_is_stored() {
    let s = setup("openai").await;
    let s2 = s
        .octopus
        .clone()
        .with_chat_models(crate::chat_models(&s.settings, Arc::new(|_| None)));
    let error = s2
        .turn(s.tenant, s.conversation, say("Hello"), None)
        .await
        .unwrap_err();
    let Error::Chat(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.fault, Fault::Configuration);
    assert!(error.message.contains("OPENAI_API_KEY"));
    let episodes = s
        .octopus
        .list_episodes(s.tenant, &Default::default())
        .await
        .unwrap();
    assert!(episodes.is_empty(), "nothing stored");
    let both = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: "a".into(),
            content: json!(1),
            is_error: false,
            duration_ms: None,
        }],
        ..say("Hi")
    };
    assert!(matches!(
        s.octopus.turn(s.tenant, s.conversation, both, None).await,
        Err(Error::Domain(octopus_core::Error::Invalid { .. }))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_episode_is_summarised_by_the_model_with_key_facts() {
    let s = setup("ollama").await;
    for text in [
        "My order 1182 arrived broken",
        "Please send a new one to Lyon",
    ] {
        s.octopus
            .turn(s.tenant, s.conversation, say(text), None)
            .await
            .unwrap();
    }
    let episodes = s
        .octopus
        .list_episodes(s.tenant, &Default::default())
        .await
        .unwrap();
    let episode = episodes[0].id;
    s.octopus
        .close_episode(
            s.tenant,
            episode,
            octopus_core::episode::CloseEpisode {
                reason: octopus_core::episode::EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
        )
        .await
        .unwrap();
    s.octopus.run_memory_jobs().await.unwrap();
    let closed = s
        .octopus
        .get_episode(s.tenant, episode)
        .await
        .unwrap()
        .episode;
    assert_eq!(
        closed.summary_source,
        Some(octopus_core::episode::SummarySource::Llm)
    );
    let summary = closed.summary.as_deref().unwrap();
    assert!(
        summary.starts_with("LLM summary:") && summary.contains("My order 1182"),
        "{summary}"
    );
    assert_eq!(
        closed.key_facts,
        ["fact one from the model", "fact two from the model"]
    );
    assert!(
        closed.summary_embedding.is_some(),
        "the summary is embedded"
    );
    let request = s.fake.last_body();
    assert!(
        request["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("key_facts")
    );
    assert!(
        request["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("user: My order 1182 arrived broken")
    );
    assert_eq!(s.octopus.pending_memory_jobs().await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_an_extractive_summary_stands_in_until_the_model_answers() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let mut config = EngineConfig {
        limits: crate::fixture_limits(),
        ..EngineConfig::default()
    };
    config.llm.max_retries = 0;
    config.llm.summary_retry_secs = 1;
    config.llm.allowed_base_urls = vec![url.clone()];
    let octopus = crate::open_in(dir.path(), config).unwrap();
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "support", "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url,
        "summary_model": "small-summariser"},
        "memory": {"pii": "redact_outgoing"}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "dana"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
    let messages: Vec<octopus_core::message::NewMessage> = serde_json::from_value(json!([
        {"role": "user", "content": "My card is 4111 1111 1111 1111", "contains_pii": true,
         "redacted_content": "My card is [CARD]"},
        {"role": "assistant", "content": "Thanks, I have updated the card on your account."},
        {"role": "user", "content": "Great, and please ship the blender to Lyon."}
    ]))
    .unwrap();
    let stored = octopus
        .append_messages(tenant, conversation, messages)
        .await
        .unwrap();
    let episode = stored[0].episode_id;
    // The model fails for as long as the first pass takes: a retry that
    // falls due within it (on a slow machine) fails too.
    for _ in 0..20 {
        fake.then(Answer::Fail {
            status: 503,
            headers: Vec::new(),
            message: "model is loading".into(),
        });
    }
    octopus
        .close_episode(
            tenant,
            episode,
            octopus_core::episode::CloseEpisode {
                reason: octopus_core::episode::EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
        )
        .await
        .unwrap();
    octopus.run_memory_jobs().await.unwrap();
    let stand_in = octopus.get_episode(tenant, episode).await.unwrap().episode;
    assert_eq!(
        stand_in.summary_source,
        Some(octopus_core::episode::SummarySource::Extractive)
    );
    assert!(stand_in.summary.is_some() && stand_in.summary_embedding.is_some());
    assert_eq!(
        octopus.pending_memory_jobs().await.unwrap(),
        1,
        "the model is asked again later"
    );

    // The model answers now; the retry falls due a second or so later.
    fake.forget_script();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let summarised = loop {
        octopus.run_memory_jobs().await.unwrap();
        let episode = octopus.get_episode(tenant, episode).await.unwrap().episode;
        if episode.summary_source == Some(octopus_core::episode::SummarySource::Llm) {
            break episode;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the model's summary never replaced the stand-in"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(summarised.key_facts.len(), 2);
    assert_ne!(
        summarised.summary_embedding, stand_in.summary_embedding,
        "re-embedded"
    );
    assert_eq!(octopus.pending_memory_jobs().await.unwrap(), 0);
    let request = fake.last_body();
    assert_eq!(request["model"], "small-summariser");
    let transcript = request["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("My card is [CARD]"), "{transcript}");
    assert!(
        !transcript.contains("4111"),
        "redact_outgoing: the card never leaves"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_episode_is_swept_closed_summarised_and_recalled() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let octopus = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            llm: LlmSettings {
                allowed_base_urls: vec![url.clone()],
                ..LlmSettings::default()
            },
            ..EngineConfig::default()
        },
    )
    .unwrap();
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let spec = serde_json::from_value(json!({
        "name": "support", "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url},
        "memory": {"episode_idle_timeout_secs": 1}
    }))
    .unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "dana"})).unwrap();
    let conversation = octopus.create_conversation(tenant, spec).await.unwrap().id;
    for text in [
        "The espresso machine leaks water",
        "Descale it and check the gasket",
    ] {
        octopus
            .turn(tenant, conversation, say(text), None)
            .await
            .unwrap();
    }
    let episodes = octopus
        .list_episodes(tenant, &Default::default())
        .await
        .unwrap();
    let (episode, last_message_at) = (episodes[0].id, episodes[0].last_message_at);
    assert!(episodes[0].is_open());

    // The user just stops. Nothing more is sent: the background closes it.
    let worker = octopus.start_memory_worker();
    let sweeper = octopus.start_idle_sweeper(std::time::Duration::from_millis(200));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let closed = loop {
        let current = octopus.get_episode(tenant, episode).await.unwrap().episode;
        if current.summary_source == Some(octopus_core::episode::SummarySource::Llm) {
            break current;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not summarised: {:?}",
            current.summary
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    worker.abort();
    sweeper.abort();
    assert_eq!(
        closed.end_reason,
        Some(octopus_core::episode::EndReason::Timeout)
    );
    assert_eq!(closed.ended_at, Some(last_message_at));
    assert_eq!(closed.message_count, 4, "no new message");
    let mut query =
        octopus_core::recall::RecallQuery::new("dana", "LLM summary espresso machine gasket");
    query.top_k = 5;
    let hits = octopus.recall(tenant, agent.id, &query).await.unwrap();
    let summary = hits
        .iter()
        .find(|hit| hit.kind == octopus_core::recall::MemoryKind::Summary)
        .expect("the summary is recalled");
    assert_eq!(summary.episode_id, Some(episode));
    assert_eq!(summary.summary, closed.summary);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redact_outgoing_the_model_is_sent_redacted_history() {
    let s = setup("ollama").await;
    let agent = s
        .octopus
        .get_conversation(s.tenant, s.conversation)
        .await
        .unwrap()
        .agent_id;
    s.octopus
        .update_agent(
            s.tenant,
            agent,
            &json!({"memory": {"pii": "redact_outgoing"}}),
        )
        .await
        .unwrap();
    let earlier: Vec<octopus_core::message::NewMessage> = serde_json::from_value(json!([
        {"role": "user", "content": "Call me on +44 7700 900123", "contains_pii": true,
         "redacted_content": "Call me on [PHONE]"},
        {"role": "assistant", "content": "Will do."}
    ]))
    .unwrap();
    s.octopus
        .append_messages(s.tenant, s.conversation, earlier)
        .await
        .unwrap();
    s.octopus
        .turn(s.tenant, s.conversation, say("Thanks"), None)
        .await
        .unwrap();
    let sent = s.fake.last_body().to_string();
    assert!(sent.contains("Call me on [PHONE]"), "{sent}");
    assert!(
        !sent.contains("7700 900123"),
        "the number never leaves: {sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_episode_with_tool_calls_teaches_a_draft_procedure() {
    let s = setup("openai").await;
    let first = a_tool_round(&s).await;

    let proposed = s
        .octopus
        .propose_procedure(s.tenant, first.episode_id)
        .await
        .unwrap();
    assert_eq!(proposed.name, "learned procedure");
    assert!(!proposed.is_approved, "a person approves it first");
    assert_eq!(
        proposed.created_by,
        Some(format!("learned:{}", first.episode_id))
    );
    assert_eq!(proposed.steps[0].tool.as_deref(), Some("track_parcel"));
    let asked = s.fake.last_body()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        asked.contains("assistant called tool track_parcel"),
        "{asked}"
    );
    assert!(asked.contains("tool track_parcel returned"), "{asked}");
    // Proposing again names the second one after its episode.
    let again = s
        .octopus
        .propose_procedure(s.tenant, first.episode_id)
        .await
        .unwrap();
    assert!(
        again.name.starts_with("learned procedure (learned from"),
        "{}",
        again.name
    );

    // An episode without tool calls has nothing to teach.
    let other = s
        .octopus
        .create_conversation(
            s.tenant,
            serde_json::from_value(json!({
        "agent_id": proposed.agent_id, "user_id": "eve"}))
            .unwrap(),
        )
        .await
        .unwrap()
        .id;
    let plain = s
        .octopus
        .turn(s.tenant, other, say("Hello"), None)
        .await
        .unwrap();
    let error = s
        .octopus
        .propose_procedure(s.tenant, plain.episode_id)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Domain(octopus_core::Error::Conflict { code, .. }) if *code == DomainCode::NoToolCalls),
        "{error:?}"
    );
    // Without a model to ask, it says so.
    let keyless = s
        .octopus
        .clone()
        .with_chat_models(crate::chat_models(&s.settings, Arc::new(|_| None)));
    let error = keyless
        .propose_procedure(s.tenant, first.episode_id)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Chat(e) if e.fault == Fault::Configuration),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_learns_proposes_a_procedure_when_such_an_episode_closes() {
    let s = setup("openai").await;
    let agent = s
        .octopus
        .get_conversation(s.tenant, s.conversation)
        .await
        .unwrap()
        .agent_id;
    s.octopus
        .update_agent(
            s.tenant,
            agent,
            &json!({"memory": {"learn_procedures": true}}),
        )
        .await
        .unwrap();
    let first = a_tool_round(&s).await;
    s.octopus
        .close_episode(
            s.tenant,
            first.episode_id,
            octopus_core::episode::CloseEpisode {
                reason: octopus_core::episode::EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
        )
        .await
        .unwrap();
    s.octopus.run_memory_jobs().await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let listed = s
            .octopus
            .list_procedures(s.tenant, &Default::default())
            .await
            .unwrap();
        if let Some(learned) = listed.first() {
            assert_eq!(
                learned.created_by,
                Some(format!("learned:{}", first.episode_id))
            );
            assert!(!learned.is_approved);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no procedure was proposed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A turn in which the model calls `track_parcel`, and the turn's end after
/// its result; returns the first turn's reply.
async fn a_tool_round(s: &Setup) -> octopus_core::chat::TurnReply {
    let tools = vec![ToolSpec {
        name: "track_parcel".into(),
        description: None,
        parameters: json!({"type": "object"}),
    }];
    s.fake.then(Answer::tool_call(
        "call_1",
        "track_parcel",
        json!({"id": "P-77"}),
    ));
    let input = TurnInput {
        tools: tools.clone(),
        ..say("Where is parcel P-77?")
    };
    let first = s
        .octopus
        .turn(s.tenant, s.conversation, input, None)
        .await
        .unwrap();
    let results = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: "call_1".into(),
            content: json!({"city": "Lyon"}),
            is_error: false,
            duration_ms: None,
        }],
        tools,
        ..TurnInput::default()
    };
    s.octopus
        .turn(s.tenant, s.conversation, results, None)
        .await
        .unwrap();
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_prompt_carries_the_tool_calls_and_their_results() {
    let s = setup("ollama").await;
    let tools = vec![ToolSpec {
        name: "get_order_status".into(),
        description: None,
        parameters: json!({"type": "object"}),
    }];
    s.fake.then(Answer::tool_call(
        "call_1",
        "get_order_status",
        json!({"order": "8821"}),
    ));
    let first = s
        .octopus
        .turn(
            s.tenant,
            s.conversation,
            TurnInput {
                tools: tools.clone(),
                ..say("Where is order 8821?")
            },
            None,
        )
        .await
        .unwrap();
    s.fake.then(Answer::text("It is on its way."));
    let results = TurnInput {
        tool_results: vec![ToolResult {
            tool_call_id: first.reply.tool_calls[0].tool_call_id.clone(),
            content: json!({"status": "shipped with FedEx"}),
            is_error: false,
            duration_ms: None,
        }],
        tools,
        ..TurnInput::default()
    };
    let reply = s
        .octopus
        .turn(s.tenant, s.conversation, results, None)
        .await
        .unwrap();
    s.octopus
        .close_episode(
            s.tenant,
            reply.reply.episode_id,
            octopus_core::episode::CloseEpisode {
                reason: octopus_core::episode::EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
        )
        .await
        .unwrap();
    s.octopus.run_memory_jobs().await.unwrap();
    let transcript = s.fake.last_body()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        transcript.contains("assistant called tool get_order_status with {\"order\":\"8821\"}")
            && transcript
                .contains("tool get_order_status returned: {\"status\":\"shipped with FedEx\"}")
            && transcript.contains("assistant: It is on its way."),
        "{transcript}"
    );
}

fn client(role: octopus_engine::ClientRole, text: &str) -> octopus_engine::ClientMessage {
    octopus_engine::ClientMessage {
        role,
        content: Some(text.into()),
        tool_call_id: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_finds_its_agent_by_name_and_stores_only_what_is_new() {
    use octopus_engine::{ClientRole, CompletionRequest};
    let s = setup("openai").await;
    let ask = |messages| CompletionRequest {
        model: "support".into(),
        user: "erin".into(),
        messages,
        ..CompletionRequest::default()
    };
    let first = s
        .octopus
        .prepare_completion(
            s.tenant,
            ask(vec![
                client(ClientRole::System, "Ignored: the agent's prompt rules."),
                client(ClientRole::User, "Where is my parcel?"),
            ]),
        )
        .await
        .unwrap();
    let reply = first.turn.run(None).await.unwrap();
    let answer = reply.reply.content.as_ref().unwrap().text();
    assert_eq!(answer, "echo: Where is my parcel?");
    assert_ne!(
        first.conversation, s.conversation,
        "erin's own conversation, started"
    );

    // The client sends the whole list again, with its new message at the end.
    let second = s
        .octopus
        .prepare_completion(
            s.tenant,
            ask(vec![
                client(ClientRole::User, "Where is my parcel?"),
                client(ClientRole::Assistant, &answer),
                client(ClientRole::User, "And when will it arrive?"),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(
        second.conversation, first.conversation,
        "the same conversation, found"
    );
    second.turn.run(None).await.unwrap();
    let sent: Vec<String> = s.fake.last_body()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(!sent.iter().any(|m| m.starts_with("Ignored")), "{sent:?}");
    assert_eq!(
        sent.iter().filter(|m| *m == "Where is my parcel?").count(),
        1,
        "the history comes from memory, once: {sent:?}"
    );

    let episode = s
        .octopus
        .get_episode(s.tenant, reply.episode_id)
        .await
        .unwrap();
    let stored: Vec<String> = episode
        .messages
        .iter()
        .map(|m| m.content.as_ref().unwrap().text())
        .collect();
    assert_eq!(
        stored,
        [
            "Where is my parcel?",
            "echo: Where is my parcel?",
            "And when will it arrive?",
            "echo: And when will it arrive?"
        ],
        "nothing resent was stored twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_names_what_it_cannot_find_or_match() {
    use octopus_engine::{ClientRole, CompletionRequest};
    let s = setup("openai").await;
    let ask = |model: &str, user: &str, conversation| CompletionRequest {
        model: model.into(),
        user: user.into(),
        conversation,
        messages: vec![client(ClientRole::User, "Hello")],
        ..CompletionRequest::default()
    };
    let unknown = s
        .octopus
        .prepare_completion(s.tenant, ask("no-such-agent", "dana", None))
        .await
        .err()
        .unwrap();
    assert!(
        matches!(unknown, Error::Domain(octopus_core::Error::NotFound { .. })),
        "{unknown}"
    );
    // The setup's conversation is dana's, not erin's.
    let mismatched = s
        .octopus
        .prepare_completion(s.tenant, ask("support", "erin", Some(s.conversation)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        mismatched.contains("x-octopus-conversation"),
        "{mismatched}"
    );
    let nameless = s
        .octopus
        .prepare_completion(s.tenant, ask("support", " ", None))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(nameless.contains("user"), "{nameless}");
    // By id, into the named conversation.
    let agent = s
        .octopus
        .list_agents(s.tenant, Default::default())
        .await
        .unwrap()[0]
        .id;
    let by_id = s
        .octopus
        .prepare_completion(
            s.tenant,
            ask(&agent.to_string(), "dana", Some(s.conversation)),
        )
        .await
        .unwrap();
    assert_eq!(by_id.conversation, s.conversation);
}

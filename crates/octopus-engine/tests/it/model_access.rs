//! Where an agent's model calls go, and with which key (`llm/access.rs`),
//! through the engine as a tenant drives it: turns and the background
//! summary at close, against loopback providers that record what reaches
//! them.

use std::collections::BTreeMap;
use std::sync::Arc;

use octopus_core::chat::Fault;
use octopus_core::episode::{CloseEpisode, EndReason};
use octopus_core::llm_settings::{LlmSettings, OtherBaseUrls};
use octopus_core::{ConversationId, TenantId};
use octopus_engine::{EngineConfig, Error, Octopus, TurnInput};
use octopus_testkit::fake_chat::{self, Answer, ChatProvider, Received};
use serde_json::{Value, json};

/// The operator's keys, as the server's environment holds them.
fn operator_env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-operator".into()),
        "ANTHROPIC_API_KEY" => Some("ant-operator".into()),
        "AZURE_OPENAI_API_KEY" => Some("azure-operator".into()),
        "OCTOPUS_LLM_KEY_ACME" => Some("sk-acme".into()),
        "OCTOPUS_LLM_KEY_SHARED" => Some("sk-shared".into()),
        _ => None,
    }
}

/// Every header value a request carried that holds one of the operator's
/// keys.
fn operator_keys_in(received: &Received) -> Vec<String> {
    received
        .headers
        .iter()
        .filter_map(|(name, value)| {
            let value = value.to_str().unwrap_or_default();
            value
                .contains("operator")
                .then(|| format!("{name}: {value}"))
        })
        .collect()
}

struct Server {
    octopus: Octopus,
    _dir: tempfile::TempDir,
}

async fn server() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let octopus = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            ..EngineConfig::default()
        },
    )
    .unwrap();
    Server { octopus, _dir: dir }
}

impl Server {
    fn with(&self, settings: LlmSettings) -> Octopus {
        self.octopus
            .clone()
            .with_chat_models(crate::chat_models(&settings, Arc::new(operator_env)))
    }
}

async fn new_conversation(octopus: &Octopus, tenant: TenantId, llm: Value) -> ConversationId {
    let name = format!("support-{}", uuid::Uuid::now_v7().simple());
    let spec = serde_json::from_value(json!({"name": name, "llm": llm})).unwrap();
    let agent = octopus.create_agent(tenant, spec).await.unwrap();
    let spec = serde_json::from_value(json!({"agent_id": agent.id, "user_id": "dana"})).unwrap();
    octopus.create_conversation(tenant, spec).await.unwrap().id
}

/// Three messages in the conversation, then its episode closed (which
/// queues its summary); the episode.
async fn close_an_episode_of_three(
    octopus: &Octopus,
    tenant: TenantId,
    conversation: ConversationId,
) -> octopus_core::EpisodeId {
    let messages: Vec<octopus_core::message::NewMessage> =
        ["Hello there", "Hi, how can I help?", "My order is late"]
            .iter()
            .enumerate()
            .map(|(i, text)| {
                serde_json::from_value(
                    json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "content": text}),
                )
                .unwrap()
            })
            .collect();
    let episode = octopus
        .append_messages(tenant, conversation, messages)
        .await
        .unwrap()[0]
        .episode_id;
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    };
    octopus.close_episode(tenant, episode, close).await.unwrap();
    episode
}

fn say(text: &str) -> TurnInput {
    TurnInput {
        message: Some(text.into()),
        ..TurnInput::default()
    }
}

/// The agent's settings for `provider` with its base URL at `url`.
fn llm_at(provider: &str, url: &str) -> Value {
    let base_url = match provider {
        "openai" => format!("{url}/v1"),
        _ => url.to_owned(),
    };
    json!({"provider": provider, "model": "m", "base_url": base_url, "deployment": "chat-4o"})
}

fn chat_error(error: Error) -> octopus_core::chat::ChatError {
    match error {
        Error::Chat(error) => error,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_keys_never_reach_a_url_a_tenant_chose() {
    let fake = Arc::new(ChatProvider::keyless());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let server = server().await;
    // Loopback is reachable here, so that the fake can see what arrives;
    // the URL is still the tenant's choice, not the operator's.
    let octopus = server.with(LlmSettings {
        other_base_urls: OtherBaseUrls::Any,
        ..LlmSettings::default()
    });
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    for provider in ["openai", "anthropic", "azure_openai"] {
        let conversation = new_conversation(&octopus, tenant, llm_at(provider, &url)).await;
        octopus
            .turn(tenant, conversation, say("Hello"), None)
            .await
            .unwrap();
        let received = fake.received();
        let last = received.last().unwrap();
        assert!(
            operator_keys_in(last).is_empty(),
            "{provider}: {:?}",
            operator_keys_in(last)
        );
    }

    // The summary at close, with no turn at all: the same.
    let conversation = new_conversation(&octopus, tenant, llm_at("openai", &url)).await;
    let before = fake.received().len();
    close_an_episode_of_three(&octopus, tenant, conversation).await;
    octopus.run_memory_jobs().await.unwrap();
    let received = fake.received();
    assert_eq!(received.len(), before + 1, "the summary was asked for");
    assert!(operator_keys_in(&received[before]).is_empty());

    // Naming the server's key outright is refused, before any request.
    for key in ["OPENAI_API_KEY", "OCTOPUS_LLM_KEY_SHARED"] {
        let mut llm = llm_at("openai", &url);
        llm["api_key_env"] = json!(key);
        let conversation = new_conversation(&octopus, tenant, llm).await;
        let before = fake.received().len();
        let error = chat_error(
            octopus
                .turn(tenant, conversation, say("Hello"), None)
                .await
                .unwrap_err(),
        );
        assert_eq!(error.fault, Fault::Configuration);
        assert!(error.message.contains("allowed_base_urls"), "{error}");
        assert_eq!(fake.received().len(), before, "no request was made");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_key_goes_where_the_operator_allows() {
    let fake = Arc::new(ChatProvider::keyless());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let server = server().await;
    let octopus = server.with(LlmSettings {
        allowed_base_urls: vec![url.clone()],
        ..LlmSettings::default()
    });
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    for (provider, header, key) in [
        ("openai", "authorization", "Bearer sk-operator"),
        ("anthropic", "x-api-key", "ant-operator"),
        ("azure_openai", "api-key", "azure-operator"),
    ] {
        let conversation = new_conversation(&octopus, tenant, llm_at(provider, &url)).await;
        octopus
            .turn(tenant, conversation, say("Hello"), None)
            .await
            .unwrap();
        assert_eq!(fake.received().last().unwrap().headers[header], key);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_bound_to_a_tenant_is_that_tenants_alone() {
    let fake = Arc::new(ChatProvider::keyless());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let server = server().await;
    let acme = server.octopus.create_tenant("acme").await.unwrap().id;
    let globex = server.octopus.create_tenant("globex").await.unwrap().id;
    let octopus = server.with(LlmSettings {
        other_base_urls: OtherBaseUrls::Any,
        tenant_keys: BTreeMap::from([(acme.0, vec!["OCTOPUS_LLM_KEY_ACME".to_owned()])]),
        ..LlmSettings::default()
    });
    let mut llm = llm_at("openai", &url);
    llm["api_key_env"] = json!("OCTOPUS_LLM_KEY_ACME");
    let own = new_conversation(&octopus, acme, llm.clone()).await;
    octopus.turn(acme, own, say("Hello"), None).await.unwrap();
    assert_eq!(
        fake.received().last().unwrap().headers["authorization"],
        "Bearer sk-acme",
        "the tenant's own key goes to the tenant's own URL"
    );
    let before = fake.received().len();
    for base_url in [Some(format!("{url}/v1")), None] {
        let mut theirs = llm.clone();
        match base_url {
            Some(base_url) => theirs["base_url"] = json!(base_url),
            None => drop(theirs.as_object_mut().unwrap().remove("base_url")),
        }
        let conversation = new_conversation(&octopus, globex, theirs).await;
        let error = chat_error(
            octopus
                .turn(globex, conversation, say("Hello"), None)
                .await
                .unwrap_err(),
        );
        assert_eq!(error.fault, Fault::Configuration);
        assert!(
            error.message.contains("not a key of this tenant"),
            "{error}"
        );
    }
    assert_eq!(fake.received().len(), before, "globex sent nothing with it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn internal_addresses_are_refused_by_default_for_turns_and_summaries() {
    let fake = Arc::new(ChatProvider::keyless());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let port = url.rsplit(':').next().unwrap().to_owned();
    let server = server().await;
    let octopus = server.with(LlmSettings {
        max_retries: 0,
        ..LlmSettings::default()
    });
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    // An address in the URL, and a name that resolves to one.
    for base_url in [url.clone(), format!("http://localhost:{port}")] {
        let conversation = new_conversation(
            &octopus,
            tenant,
            json!({"provider": "ollama", "model": "m", "base_url": base_url}),
        )
        .await;
        let error = chat_error(
            octopus
                .turn(tenant, conversation, say("Hello"), None)
                .await
                .unwrap_err(),
        );
        assert_eq!(error.fault, Fault::Configuration, "{base_url}");
        assert!(
            error.message.contains("not reachable from this server"),
            "{base_url}: {error}"
        );
        // The summary at close goes nowhere either: an extractive one stands in.
        let episode = close_an_episode_of_three(&octopus, tenant, conversation).await;
        octopus.run_memory_jobs().await.unwrap();
        let episode = octopus.get_episode(tenant, episode).await.unwrap().episode;
        assert_eq!(
            episode.summary_source,
            Some(octopus_core::episode::SummarySource::Extractive)
        );
    }
    assert!(
        fake.received().is_empty(),
        "nothing reached the loopback server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_providers_error_body_and_redirects_are_not_passed_on() {
    let fake = Arc::new(ChatProvider::keyless());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let elsewhere = Arc::new(ChatProvider::keyless());
    let elsewhere_url = fake_chat::serve(Arc::clone(&elsewhere)).await;
    let server = server().await;
    let octopus = server.with(LlmSettings {
        other_base_urls: OtherBaseUrls::Any,
        max_retries: 0,
        ..LlmSettings::default()
    });
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let conversation = new_conversation(&octopus, tenant, llm_at("openai", &url)).await;

    // An internal service's own body: only its status comes back.
    fake.then(Answer::Raw {
        status: 400,
        body: "config error: db_password=hunter2 at 10.0.0.7".into(),
        location: None,
    });
    let error = chat_error(
        octopus
            .turn(tenant, conversation, say("Hello"), None)
            .await
            .unwrap_err(),
    );
    assert_eq!(error.message, "HTTP 400");
    // A provider's own message comes back, its secrets masked.
    fake.then(Answer::Fail {
        status: 400,
        headers: Vec::new(),
        message: "bad request; password=hunter2".into(),
    });
    let error = chat_error(
        octopus
            .turn(tenant, conversation, say("Hello"), None)
            .await
            .unwrap_err(),
    );
    assert!(!error.message.contains("hunter2"), "{error}");
    assert!(
        error.message.starts_with("HTTP 400: bad request"),
        "{error}"
    );

    // A redirect is not followed, wherever it points.
    fake.then(Answer::Raw {
        status: 307,
        body: String::new(),
        location: Some(format!("{elsewhere_url}/v1/chat/completions")),
    });
    let error = chat_error(
        octopus
            .turn(tenant, conversation, say("Hello"), None)
            .await
            .unwrap_err(),
    );
    assert!(error.message.contains("redirect"), "{error}");
    assert!(!error.message.contains(&elsewhere_url), "{error}");
    assert!(
        elsewhere.received().is_empty(),
        "the redirect was not followed"
    );
}

/// A summary that no model can write as the server is configured is not
/// asked for again and again: an extractive one stands in, the job is
/// parked and the queue drains; changing the agent's settings, or starting
/// with another configuration, asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_that_cannot_be_written_as_configured_waits_for_the_configuration() {
    use octopus_core::episode::SummarySource;
    let fake = Arc::new(ChatProvider::keyless());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let server = server().await;
    // The default configuration: no key, loopback refused.
    let octopus = server.octopus.clone().with_chat_models(crate::chat_models(
        &LlmSettings::default(),
        Arc::new(|_| None),
    ));
    let tenant = octopus.create_tenant("acme").await.unwrap().id;
    let no_key = new_conversation(
        &octopus,
        tenant,
        json!({"provider": "openai", "model": "m"}),
    )
    .await;
    let refused = new_conversation(&octopus, tenant, llm_at("ollama", &url)).await;
    let first = close_an_episode_of_three(&octopus, tenant, no_key).await;
    let second = close_an_episode_of_three(&octopus, tenant, refused).await;
    octopus.run_memory_jobs().await.unwrap();
    let source = |episode| {
        let octopus = octopus.clone();
        async move {
            octopus
                .get_episode(tenant, episode)
                .await
                .unwrap()
                .episode
                .summary_source
        }
    };
    assert_eq!(source(first).await, Some(SummarySource::Extractive));
    assert_eq!(source(second).await, Some(SummarySource::Extractive));
    assert_eq!(
        octopus.pending_memory_jobs().await.unwrap(),
        0,
        "the queue drains"
    );
    let queues = octopus.memory_queues().await.unwrap();
    assert_eq!(queues[0].parked, 2);
    assert_eq!(
        octopus.run_memory_jobs().await.unwrap(),
        0,
        "nothing asked again"
    );
    octopus.unpark_for_this_configuration().await;
    assert_eq!(
        octopus.pending_memory_jobs().await.unwrap(),
        0,
        "the same configuration"
    );
    assert!(fake.received().is_empty());

    // Started with a configuration that trusts the provider: asked again.
    let trusting = octopus.clone().with_chat_models(crate::chat_models(
        &LlmSettings {
            allowed_base_urls: vec![url.clone()],
            ..LlmSettings::default()
        },
        Arc::new(|_| None),
    ));
    trusting.unpark_for_this_configuration().await;
    assert_eq!(trusting.pending_memory_jobs().await.unwrap(), 2);
    trusting.run_memory_jobs().await.unwrap();
    assert_eq!(source(second).await, Some(SummarySource::Llm));
    // The agent without a key is parked again, under this configuration;
    // its settings changed (pointed at the trusted provider), it is asked.
    assert_eq!(source(first).await, Some(SummarySource::Extractive));
    assert_eq!(trusting.pending_memory_jobs().await.unwrap(), 0);
    let agent = trusting
        .get_conversation(tenant, no_key)
        .await
        .unwrap()
        .agent_id;
    trusting
        .update_agent(
            tenant,
            agent,
            &json!({"llm": {"provider": "ollama", "base_url": url}}),
        )
        .await
        .unwrap();
    assert_eq!(trusting.pending_memory_jobs().await.unwrap(), 1);
    trusting.run_memory_jobs().await.unwrap();
    assert_eq!(source(first).await, Some(SummarySource::Llm));
}

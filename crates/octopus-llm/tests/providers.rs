//! Each chat client against a loopback server speaking its provider's wire
//! format (`octopus_testkit::fake_chat`): a plain reply, a streamed reply, a
//! tool-call round trip, a 429 then success, a 500, a timeout and a malformed
//! body; and the request each client sends, field by field.
//!
//! The payloads follow each provider's published reference:
//! - OpenAI: <https://platform.openai.com/docs/api-reference/chat/create>, and
//!   "The chat completion chunk object" for streams (`stream_options.include_usage`);
//! - Azure OpenAI: <https://learn.microsoft.com/azure/ai-foundry/openai/reference>,
//!   "Chat completions" (deployment URL, `api-version`, `api-key` header);
//! - Anthropic: <https://docs.anthropic.com/en/api/messages> and
//!   <https://docs.anthropic.com/en/docs/build-with-claude/streaming> (event types);
//! - Ollama: <https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion>.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use octopus_core::agent::{LlmConfig, LlmProvider};
use octopus_core::chat::ChatPurpose;
use octopus_core::chat::{ChatModel, ChatRequest, Fault, ToolCall, ToolSpec};
use octopus_core::message::Role;
use octopus_core::working_memory::ChatMessage;
use octopus_llm::{ClientOptions, for_agent};
use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use serde_json::{Value, json};

const ALL: [LlmProvider; 4] = [
    LlmProvider::Openai,
    LlmProvider::AzureOpenai,
    LlmProvider::Anthropic,
    LlmProvider::Ollama,
];

fn env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-test".into()),
        "AZURE_OPENAI_API_KEY" => Some("azure-key".into()),
        "ANTHROPIC_API_KEY" => Some("ant-key".into()),
        "OCTOPUS_LLM_KEY_OTHER" => Some("sk-other".into()),
        _ => None,
    }
}

/// The key an agent with `llm` is sent with (the engine decides which; here,
/// the variable it names or its provider's).
fn key(llm: &LlmConfig) -> Option<String> {
    llm.api_key_env
        .as_deref()
        .or(octopus_llm::default_key_variable(llm.provider))
        .and_then(env)
}

fn config(provider: LlmProvider, base_url: &str) -> LlmConfig {
    let (model, deployment, base) = match provider {
        LlmProvider::Openai => ("gpt-4o", None, format!("{base_url}/v1")),
        LlmProvider::AzureOpenai => ("gpt-4o", Some("chat-4o".to_owned()), base_url.to_owned()),
        LlmProvider::Anthropic => ("claude-sonnet-4-5", None, base_url.to_owned()),
        LlmProvider::Ollama => ("llama3.2", None, base_url.to_owned()),
    };
    LlmConfig {
        provider,
        model: model.into(),
        temperature: Some(0.3),
        top_p: Some(0.9),
        max_output_tokens: Some(300),
        base_url: Some(base),
        deployment,
        api_version: None,
        summary_model: None,
        api_key_env: None,
    }
}

fn options() -> ClientOptions {
    let mut options = ClientOptions::default();
    options.retry.max_retries = 2;
    options.retry.timeout = Duration::from_secs(5);
    options
}

async fn start() -> (Arc<ChatProvider>, String) {
    let provider = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&provider)).await;
    (provider, url)
}

fn model(provider: LlmProvider, url: &str, options: &ClientOptions) -> Arc<dyn ChatModel> {
    let client = options.http_client().unwrap();
    let llm = config(provider, url);
    for_agent(&llm, ChatPurpose::Turn, options, &client, key(&llm)).unwrap()
}

fn conversation() -> ChatRequest {
    ChatRequest {
        messages: vec![
            ChatMessage::new(Role::System, "You are terse."),
            ChatMessage::new(Role::System, "[Retrieved Knowledge]\nParis is in France."),
            ChatMessage::new(Role::User, "Hi"),
            ChatMessage::new(Role::Assistant, "Hello."),
            ChatMessage::new(Role::User, "Where is Paris?"),
        ],
        tools: Vec::new(),
    }
}

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: Some("Current weather of a city".into()),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}),
    }
}

#[tokio::test]
async fn a_plain_reply_comes_back_with_its_usage() {
    let (fake, url) = start().await;
    for provider in ALL {
        let model = model(provider, &url, &options());
        let reply = model.chat(&conversation(), None).await.unwrap();
        assert_eq!(reply.text, "echo: Where is Paris?", "{provider:?}");
        assert!(reply.tool_calls.is_empty());
        let (input, output) = *fake.reported_usage().last().unwrap();
        assert_eq!(
            (reply.usage.input_tokens, reply.usage.output_tokens),
            (input, output),
            "{provider:?}: the usage the provider reported"
        );
        assert!(reply.finish_reason.is_some(), "{provider:?}");
    }
}

#[tokio::test]
async fn each_request_has_the_fields_of_its_api() {
    let (fake, url) = start().await;
    let mut request = conversation();
    request.tools = vec![weather_tool()];

    model(LlmProvider::Openai, &url, &options())
        .chat(&request, None)
        .await
        .unwrap();
    let sent = fake.received().pop().unwrap();
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.headers["authorization"], "Bearer sk-test");
    let body = sent.body;
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are terse."})
    );
    assert_eq!(
        body["messages"][4],
        json!({"role": "user", "content": "Where is Paris?"})
    );
    assert_eq!(body["messages"].as_array().unwrap().len(), 5);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["city"])
    );
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(
        body["max_tokens"], 300,
        "a compatible server by base URL takes max_tokens"
    );
    assert_eq!(body.get("stream"), None);

    model(LlmProvider::AzureOpenai, &url, &options())
        .chat(&request, None)
        .await
        .unwrap();
    let sent = fake.received().pop().unwrap();
    assert_eq!(
        sent.path,
        "/openai/deployments/chat-4o/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(sent.headers["api-key"], "azure-key");
    assert!(sent.headers.get("authorization").is_none());
    assert_eq!(
        sent.body.get("model"),
        None,
        "the deployment names the model"
    );
    assert_eq!(sent.body["max_tokens"], 300);

    model(LlmProvider::Anthropic, &url, &options())
        .chat(&request, None)
        .await
        .unwrap();
    let sent = fake.received().pop().unwrap();
    assert_eq!(sent.headers["x-api-key"], "ant-key");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    let body = sent.body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(
        body["system"], "You are terse.\n\n[Retrieved Knowledge]\nParis is in France.",
        "system messages go to the system field"
    );
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        body["messages"][2]["content"],
        json!([{"type": "text", "text": "Where is Paris?"}])
    );
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["city"])
    );
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body.get("stream"), None);

    model(LlmProvider::Ollama, &url, &options())
        .chat(&request, None)
        .await
        .unwrap();
    let body = fake.last_body();
    assert_eq!(body["model"], "llama3.2");
    assert_eq!(body["stream"], false, "Ollama streams unless told not to");
    assert_eq!(body["messages"][1]["role"], "system");
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        body["options"],
        json!({"temperature": 0.3, "top_p": 0.9, "num_predict": 300})
    );
}

#[tokio::test]
async fn official_openai_takes_max_completion_tokens_and_a_default_max_for_anthropic() {
    let (fake, url) = start().await;
    let options = options();
    let client = options.http_client().unwrap();
    // The official endpoint cannot be reached here; the body is what matters.
    let mut llm = config(LlmProvider::Openai, &url);
    llm.base_url = None;
    let official = for_agent(&llm, ChatPurpose::Turn, &options, &client, key(&llm)).unwrap();
    assert_eq!(official.provider(), "openai");
    let mut anthropic = config(LlmProvider::Anthropic, &url);
    anthropic.max_output_tokens = None;
    let turns = for_agent(
        &anthropic,
        ChatPurpose::Turn,
        &options,
        &client,
        key(&anthropic),
    )
    .unwrap();
    turns.chat(&conversation(), None).await.unwrap();
    assert_eq!(
        fake.last_body()["max_tokens"],
        4096,
        "Anthropic requires one: the default"
    );
    anthropic.summary_model = Some("claude-haiku-4-5".into());
    let summariser = for_agent(
        &anthropic,
        ChatPurpose::Summary,
        &options,
        &client,
        key(&anthropic),
    )
    .unwrap();
    assert_eq!(summariser.model(), "claude-haiku-4-5");
    summariser.chat(&conversation(), None).await.unwrap();
    assert_eq!(
        fake.last_body()["max_tokens"],
        octopus_llm::SUMMARY_MAX_OUTPUT_TOKENS
    );
    assert_eq!(fake.last_body()["model"], "claude-haiku-4-5");
    use octopus_llm::openai::max_tokens_field;
    assert_eq!(
        max_tokens_field(LlmProvider::Openai, None),
        "max_completion_tokens"
    );
    assert_eq!(
        max_tokens_field(LlmProvider::Openai, Some("https://api.openai.com/v1")),
        "max_completion_tokens"
    );
    assert_eq!(
        max_tokens_field(LlmProvider::Openai, Some("http://localhost:8000/v1")),
        "max_tokens"
    );
    assert_eq!(
        max_tokens_field(LlmProvider::AzureOpenai, Some("https://x.openai.azure.com")),
        "max_tokens"
    );
}

#[tokio::test]
async fn a_streamed_reply_arrives_in_pieces_and_adds_up() {
    let (fake, url) = start().await;
    for provider in ALL {
        fake.then(Answer::text("Paris is the capital of France."));
        let model = model(provider, &url, &options());
        let pieces = Mutex::new(Vec::<String>::new());
        let sink = |piece: &str| pieces.lock().unwrap().push(piece.to_owned());
        let reply = model.chat(&conversation(), Some(&sink)).await.unwrap();
        let pieces = pieces.into_inner().unwrap();
        assert!(pieces.len() >= 5, "{provider:?}: {pieces:?}");
        assert_eq!(pieces.concat(), "Paris is the capital of France.");
        assert_eq!(reply.text, pieces.concat());
        let (input, output) = *fake.reported_usage().last().unwrap();
        assert_eq!(
            (reply.usage.input_tokens, reply.usage.output_tokens),
            (input, output),
            "{provider:?}"
        );
        let body = fake.last_body();
        assert_eq!(body["stream"], true, "{provider:?}");
        if matches!(provider, LlmProvider::Openai | LlmProvider::AzureOpenai) {
            assert_eq!(body["stream_options"], json!({"include_usage": true}));
        }
    }
}

#[tokio::test]
async fn a_tool_call_round_trip() {
    let (fake, url) = start().await;
    for provider in ALL {
        for streamed in [false, true] {
            let arguments = json!({"city": "Paris", "unit": "celsius"});
            fake.then(Answer::tool_call(
                "call_abc",
                "get_weather",
                arguments.clone(),
            ));
            let model = model(provider, &url, &options());
            let mut request = conversation();
            request.tools = vec![weather_tool()];
            let sink = |_: &str| {};
            let deltas: Option<&(dyn Fn(&str) + Send + Sync)> = streamed.then_some(&sink);
            let reply = model.chat(&request, deltas).await.unwrap();
            let id = if provider == LlmProvider::Ollama {
                "call_0"
            } else {
                "call_abc"
            };
            assert_eq!(
                reply.tool_calls,
                [ToolCall {
                    id: id.into(),
                    name: "get_weather".into(),
                    arguments: arguments.clone()
                }],
                "{provider:?} streamed={streamed}"
            );
            // The caller runs the tool and sends its result back.
            request.messages.push(ChatMessage {
                tool_calls: reply.tool_calls.clone(),
                ..ChatMessage::new(Role::Assistant, "")
            });
            request.messages.push(ChatMessage {
                tool_call_id: Some(id.into()),
                name: Some("get_weather".into()),
                ..ChatMessage::new(Role::Tool, "18 degrees, sunny")
            });
            fake.then(Answer::text("It is 18 degrees and sunny."));
            let reply = model.chat(&request, deltas).await.unwrap();
            assert_eq!(reply.text, "It is 18 degrees and sunny.");
            let body = fake.last_body();
            let messages = body["messages"].as_array().unwrap();
            match provider {
                LlmProvider::Openai | LlmProvider::AzureOpenai => {
                    let call = &messages[5];
                    assert_eq!(call["role"], "assistant");
                    assert_eq!(call["content"], Value::Null);
                    assert_eq!(call["tool_calls"][0]["id"], "call_abc");
                    assert_eq!(call["tool_calls"][0]["type"], "function");
                    let sent: Value = serde_json::from_str(
                        call["tool_calls"][0]["function"]["arguments"]
                            .as_str()
                            .unwrap(),
                    )
                    .unwrap();
                    assert_eq!(sent, arguments, "arguments go as a JSON string");
                    assert_eq!(
                        messages[6],
                        json!({"role": "tool", "content": "18 degrees, sunny", "tool_call_id": "call_abc"})
                    );
                }
                LlmProvider::Anthropic => {
                    let call = &messages[3];
                    assert_eq!(call["role"], "assistant");
                    assert_eq!(
                        call["content"],
                        json!([{"type": "tool_use", "id": "call_abc", "name": "get_weather", "input": arguments}])
                    );
                    assert_eq!(
                        messages[4],
                        json!({"role": "user", "content": [{"type": "tool_result",
                            "tool_use_id": "call_abc", "content": "18 degrees, sunny"}]})
                    );
                }
                LlmProvider::Ollama => {
                    assert_eq!(
                        messages[5]["tool_calls"],
                        json!([{"function": {"name": "get_weather", "arguments": arguments}}])
                    );
                    assert_eq!(
                        messages[6],
                        json!({"role": "tool", "content": "18 degrees, sunny", "tool_name": "get_weather"})
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn a_429_is_retried_after_the_wait_the_provider_asks_for() {
    let (fake, url) = start().await;
    for provider in ALL {
        let headers = match provider {
            LlmProvider::AzureOpenai | LlmProvider::Openai => vec![("retry-after-ms", "300")],
            LlmProvider::Anthropic => vec![("retry-after", "1")],
            LlmProvider::Ollama => Vec::new(),
        };
        fake.then(Answer::Fail {
            status: 429,
            headers,
            message: "Rate limit reached".into(),
        });
        let before = fake.received().len();
        let started = std::time::Instant::now();
        let reply = model(provider, &url, &options())
            .chat(&conversation(), None)
            .await
            .unwrap();
        assert_eq!(reply.text, "echo: Where is Paris?");
        assert_eq!(fake.received().len(), before + 2, "{provider:?}: one retry");
        let least = match provider {
            LlmProvider::Anthropic => Duration::from_secs(1),
            // No header: the first backoff, at least half of its 250 ms.
            LlmProvider::Ollama => Duration::from_millis(125),
            _ => Duration::from_millis(300),
        };
        assert!(
            started.elapsed() >= least,
            "{provider:?} waited {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_500_that_persists_names_the_provider_and_its_message() {
    let (fake, url) = start().await;
    for provider in ALL {
        for _ in 0..3 {
            fake.then(Answer::Fail {
                status: 500,
                headers: Vec::new(),
                message: "The server had an error".into(),
            });
        }
        let error = model(provider, &url, &options())
            .chat(&conversation(), None)
            .await
            .unwrap_err();
        assert_eq!(error.provider, provider.as_str());
        assert_eq!(error.fault, Fault::Provider);
        assert!(
            error.message.contains("HTTP 500: The server had an error"),
            "{error}"
        );
    }
    // A refused key is the configuration's fault, and not retried.
    let mut llm = config(LlmProvider::Openai, &url);
    llm.api_key_env = Some("OCTOPUS_LLM_KEY_OTHER".into());
    let options = options();
    let client = options.http_client().unwrap();
    let before = fake.received().len();
    let error = for_agent(&llm, ChatPurpose::Turn, &options, &client, key(&llm))
        .unwrap()
        .chat(&conversation(), None)
        .await
        .unwrap_err();
    assert_eq!(error.fault, Fault::Configuration);
    assert!(error.message.contains("Incorrect API key"), "{error}");
    assert_eq!(fake.received().len(), before + 1);
    assert_eq!(
        fake.received().last().unwrap().headers["authorization"],
        "Bearer sk-other"
    );
}

#[tokio::test]
async fn a_provider_that_does_not_answer_times_out() {
    let (fake, url) = start().await;
    let mut options = options();
    options.retry.max_retries = 0;
    options.retry.timeout = Duration::from_millis(300);
    for provider in ALL {
        fake.then(Answer::Stall(Duration::from_secs(2)));
        let started = std::time::Instant::now();
        let error = model(provider, &url, &options)
            .chat(&conversation(), None)
            .await
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{provider:?}");
        assert_eq!(error.fault, Fault::Provider);
        assert!(error.message.contains("timeout"), "{error}");
    }
}

#[tokio::test]
async fn a_malformed_body_is_the_providers_fault() {
    let (fake, url) = start().await;
    for provider in ALL {
        for streamed in [false, true] {
            fake.then(Answer::Malformed);
            let sink = |_: &str| {};
            let deltas: Option<&(dyn Fn(&str) + Send + Sync)> = streamed.then_some(&sink);
            let error = model(provider, &url, &options())
                .chat(&conversation(), deltas)
                .await
                .unwrap_err();
            assert_eq!(error.provider, provider.as_str());
            assert_eq!(
                error.fault,
                Fault::Provider,
                "{provider:?} streamed={streamed}: {error}"
            );
        }
    }
}

#[tokio::test]
async fn missing_configuration_is_named() {
    let (_, url) = start().await;
    let options = options();
    let client = options.http_client().unwrap();
    let ollama = for_agent(
        &config(LlmProvider::Ollama, &url),
        ChatPurpose::Turn,
        &options,
        &client,
        None,
    );
    assert!(ollama.is_ok(), "Ollama needs no key");
    let mut azure = config(LlmProvider::AzureOpenai, &url);
    azure.deployment = None;
    let error = for_agent(&azure, ChatPurpose::Turn, &options, &client, key(&azure))
        .err()
        .unwrap();
    assert!(error.message.contains("llm.deployment"), "{error}");
    // Ollama's missing model is a configuration error with Ollama's words.
    let mut missing = config(LlmProvider::Ollama, &url);
    missing.model = "missing".into();
    let error = for_agent(
        &missing,
        ChatPurpose::Turn,
        &options,
        &client,
        key(&missing),
    )
    .unwrap()
    .chat(&conversation(), None)
    .await
    .unwrap_err();
    assert_eq!(error.fault, Fault::Configuration);
    assert!(error.message.contains("try pulling it first"), "{error}");
}

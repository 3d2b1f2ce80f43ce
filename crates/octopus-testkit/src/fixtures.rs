//! Builders for valid domain objects.

use chrono::Duration;
use octopus_core::agent::{Agent, LlmConfig, LlmProvider, MemoryConfig};
use octopus_core::appending::{AppendMessages, MessageRecord};
use octopus_core::conversation::Conversation;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::{MessageContent, Role};
use octopus_core::store::Store;
use octopus_core::tenant::Tenant;
use octopus_core::{AgentId, ConversationId, MessageId, TenantId, Timestamp, now};

pub fn tenant(name: &str) -> Tenant {
    Tenant {
        id: TenantId::new(),
        name: name.into(),
        created_at: now(),
    }
}

pub fn llm() -> LlmConfig {
    LlmConfig {
        provider: LlmProvider::Openai,
        model: "gpt-4o-mini".into(),
        temperature: Some(0.2),
        top_p: None,
        max_output_tokens: Some(512),
        base_url: None,
        deployment: None,
        api_version: None,
        summary_model: None,
        api_key_env: None,
    }
}

pub fn agent(tenant: TenantId, name: &str) -> Agent {
    let at = now();
    Agent {
        id: AgentId::new(),
        tenant_id: tenant,
        name: name.into(),
        system_prompt: "You are a helpful support agent.".into(),
        llm: llm(),
        memory: MemoryConfig::default(),
        is_active: true,
        created_at: at,
        updated_at: at,
    }
}

pub fn conversation(tenant: TenantId, agent: AgentId, user: &str) -> Conversation {
    let at = now();
    Conversation {
        id: ConversationId::new(),
        tenant_id: tenant,
        agent_id: agent,
        user_id: user.into(),
        title: None,
        metadata: Default::default(),
        created_at: at,
        updated_at: at,
        deleted_at: None,
        opening: None,
    }
}

pub fn text(role: Role, content: &str, at: Timestamp) -> MessageRecord {
    MessageRecord {
        id: MessageId::new(),
        role,
        content: Some(MessageContent::Text(content.into())),
        name: None,
        tool_call_id: None,
        tool_calls: Vec::new(),
        token_count: u32::try_from(content.len().div_ceil(4)).unwrap_or(u32::MAX),
        timestamp: at,
        agent_id: None,
        contains_pii: false,
        redacted_content: None,
        accounting: Default::default(),
    }
}

pub fn batch(conversation: ConversationId, messages: Vec<MessageRecord>) -> AppendMessages {
    AppendMessages {
        conversation_id: conversation,
        messages,
        idle_timeout: Duration::minutes(30),
        now: now(),
        work_class: WorkClass::Live,
        follows: None,
        learn_every: 0,
    }
}

/// A tenant with one agent and one conversation of user `alice`.
pub struct World {
    pub tenant: TenantId,
    pub agent: AgentId,
    pub conversation: ConversationId,
}

impl World {
    pub async fn create(store: &dyn Store, name: &str) -> World {
        let tenant = tenant(name);
        store.create_tenant(&tenant).await.unwrap();
        let agent = agent(tenant.id, "support");
        store.create_agent(&agent).await.unwrap();
        let conversation = conversation(tenant.id, agent.id, "alice");
        store.create_conversation(&conversation).await.unwrap();
        World {
            tenant: tenant.id,
            agent: agent.id,
            conversation: conversation.id,
        }
    }

    /// Appends plain user messages, one a second from `start`.
    pub async fn say(
        &self,
        store: &dyn Store,
        start: Timestamp,
        texts: &[&str],
    ) -> Vec<octopus_core::message::Message> {
        let records = texts
            .iter()
            .enumerate()
            .map(|(i, t)| text(Role::User, t, start + Duration::seconds(i as i64)))
            .collect();
        store
            .append_messages(self.tenant, batch(self.conversation, records))
            .await
            .unwrap()
    }
}

/// A full-text search of every message for `text`, twenty hits at most.
pub fn search(text: &str) -> octopus_core::search::MessageSearchQuery {
    octopus_core::search::MessageSearchQuery {
        text: text.into(),
        agent_id: None,
        user_id: None,
        conversation_id: None,
        from: None,
        to: None,
        limit: 20,
    }
}

/// A time on the day the conformance rules are set (14 March 2026).
pub fn at(hour: u32, minute: u32) -> octopus_core::Timestamp {
    use chrono::TimeZone;
    chrono::Utc
        .with_ymd_and_hms(2026, 3, 14, hour, minute, 0)
        .unwrap()
}

/// Panics unless the outcome is a not-found error.
pub fn assert_not_found<T: std::fmt::Debug>(outcome: octopus_core::Result<T>) {
    match outcome {
        Err(octopus_core::Error::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

/// Memory settings as agents were stored with the three PII settings that
/// became `pii`, each with the policy a migration must read it as.
pub fn earlier_pii_settings() -> [(&'static str, octopus_core::pii::PiiPolicy); 5] {
    use octopus_core::pii::PiiPolicy;
    [
        (
            r#"{"pii_detection": "off", "redact_pii": false}"#,
            PiiPolicy::Off,
        ),
        (r#"{"pii_detection": "flag"}"#, PiiPolicy::Flag),
        (
            r#"{"pii_detection": "redact", "pii_storage": "original"}"#,
            PiiPolicy::Redact,
        ),
        (
            r#"{"pii_detection": "off", "redact_pii": true}"#,
            PiiPolicy::RedactOutgoing,
        ),
        (
            r#"{"redact_pii": false, "pii_storage": "redacted_only"}"#,
            PiiPolicy::RedactStored,
        ),
    ]
}

//! The adapters a service built over a store alone lacks
//! ([`Octopus::with_store`](crate::Octopus::with_store)): each refuses,
//! naming what is missing, instead of pretending to work.

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::agent::Agent;
use octopus_core::chat::{ChatError, ChatModel, ChatModels, ChatPurpose, Fault};
use octopus_core::embedding::{EmbedError, EmbedderSource, LoadedEmbedder};
use octopus_core::webhook_sender::{PostAnswer, UrlRefused, WebhookPost, WebhookSender};

const WHY: &str = "this service was built over a store alone";

pub(crate) struct Absent;

#[async_trait]
impl EmbedderSource for Absent {
    async fn load(&self) -> Result<LoadedEmbedder, EmbedError> {
        Err(EmbedError::Model(format!("no embedder: {WHY}")))
    }
}

impl ChatModels for Absent {
    fn for_agent(&self, agent: &Agent, _: ChatPurpose) -> Result<Arc<dyn ChatModel>, ChatError> {
        Err(ChatError::new(
            agent.llm.provider.as_str(),
            Fault::Configuration,
            format!("no chat models: {WHY}"),
        ))
    }

    fn configuration(&self) -> &str {
        "absent"
    }
}

#[async_trait]
impl WebhookSender for Absent {
    fn check_url(&self, _: &str) -> Result<(), UrlRefused> {
        Err(UrlRefused(format!("no webhook sender: {WHY}")))
    }

    async fn post(&self, _: &WebhookPost) -> PostAnswer {
        PostAnswer::NoAnswer {
            error: format!("no webhook sender: {WHY}"),
        }
    }
}

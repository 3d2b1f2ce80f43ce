//! The adapters the engine calls out through, built from its settings: the
//! embedder, the agents' chat models and the webhook sender.

use std::sync::Arc;

use octopus_core::chat::ChatModels;
use octopus_core::embedding::EmbedderSource;
use octopus_core::webhook_sender::WebhookSender;
use octopus_embed::configured::ConfiguredEmbedder;
use octopus_engine::EngineConfig;
use octopus_engine::webhooks::Destinations;
use octopus_llm::AgentModels;
use octopus_provider_http::webhooks::HttpWebhookSender;

use crate::{Error, Result};

/// Refuses adapter settings that cannot work: an embedding model this build
/// lacks, an HTTP embedder without what it needs, `[llm]` entries that do
/// not parse. Cheap: nothing is loaded or called.
pub(crate) fn check(engine: &EngineConfig) -> Result<()> {
    octopus_embed::configured::check(&engine.embedding)
        .map_err(|e| Error::Config(e.to_string()))?;
    octopus_llm::check_settings(&engine.llm).map_err(|e| Error::Config(e.to_string()))?;
    Ok(())
}

/// The embedder `[embedding]` names, loaded when the engine first embeds.
pub(crate) fn embedder(engine: &EngineConfig) -> Result<Arc<dyn EmbedderSource>> {
    let source = ConfiguredEmbedder::new(engine.embedding.clone())
        .map_err(|e| Error::Config(e.to_string()))?;
    Ok(Arc::new(source))
}

/// The agents' models under `[llm]`, with the process's environment's keys.
/// A reply longer than a message could not be stored, so no more of one is
/// read.
pub(crate) fn chat_models(engine: &EngineConfig) -> Arc<dyn ChatModels> {
    let mut settings = engine.llm.clone();
    settings.max_reply_bytes = settings
        .max_reply_bytes
        .min(engine.limits.max_message_bytes);
    Arc::new(AgentModels::new(
        &settings,
        Arc::new(|name| std::env::var(name).ok()),
    ))
}

/// Deliveries over HTTP under `[webhooks]`' outbound rules.
pub(crate) fn webhook_sender(engine: &EngineConfig) -> Arc<dyn WebhookSender> {
    let settings = &engine.webhooks;
    Arc::new(HttpWebhookSender::new(
        settings.destinations == Destinations::Public,
        settings.timeout(),
    ))
}

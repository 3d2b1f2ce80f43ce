//! The route table. Every route is registered together with its OpenAPI
//! description (`utoipa_axum::routes!`), so `/openapi.json` lists exactly the
//! routes the server answers.

mod agents;
mod chat_imports;
mod conversations;
mod dumps;
mod episodes;
mod facts;
mod health;
pub(crate) mod knowledge;
mod messages;
pub(crate) mod openai;
mod procedures;
mod profiles;
mod recall;
mod search;
mod status;
mod tenants;
mod turns;
mod users;
mod webhooks;

use octopus_core::store::Page;
use serde::{Deserialize, Serialize};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::error::{ApiError, ErrorBody};

#[derive(OpenApi)]
#[openapi(
    info(title = "Octopus", description = "Memory for LLM agents: episodic, semantic, procedural and working memory, for many tenants."),
    modifiers(&BearerAuth),
    components(schemas(ErrorBody)),
    tags(
        (name = "admin", description = "Tenants, API keys and metrics; needs the admin key"),
        (name = "agents"),
        (name = "conversations"),
        (name = "episodes"),
        (name = "search"),
        (name = "knowledge", description = "Semantic memory: an agent's documents, searched by meaning"),
        (name = "recall", description = "Episodic memory: past conversations, recalled by meaning and by words"),
        (name = "procedures", description = "Procedural memory: step-by-step procedures triggered by a pattern or by meaning, approved and versioned"),
        (name = "users", description = "Everything about one user of a tenant"),
        (name = "dumps", description = "A tenant's data, or one user's, exported as JSON Lines and imported back"),
        (name = "webhooks", description = "Signed events about a tenant's memory, delivered to endpoints it registers"),
        (name = "openai", description = "OpenAI-compatible: any OpenAI client, its `base_url` pointed here, talks to an agent with memory"),
        (name = "health"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

pub(crate) fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(health::healthz))
        .routes(routes!(health::health))
        .routes(routes!(health::readyz))
        .routes(routes!(health::metrics))
        .routes(routes!(status::status))
        .routes(routes!(tenants::create_tenant, tenants::list_tenants))
        .routes(routes!(tenants::get_tenant, tenants::delete_tenant))
        .routes(routes!(tenants::create_api_key, tenants::list_api_keys))
        .routes(routes!(tenants::revoke_api_key))
        .routes(routes!(agents::create_agent, agents::list_agents))
        .routes(routes!(
            agents::get_agent,
            agents::update_agent,
            agents::delete_agent
        ))
        .routes(routes!(
            conversations::create_conversation,
            conversations::list_conversations
        ))
        .routes(routes!(
            conversations::get_conversation,
            conversations::delete_conversation
        ))
        .routes(routes!(conversations::append_messages))
        .routes(routes!(conversations::import_conversation))
        .routes(routes!(chat_imports::import_chats))
        .routes(routes!(conversations::build_context))
        .routes(routes!(turns::take_turn))
        .routes(routes!(openai::chat_completion))
        .routes(routes!(openai::list_models))
        .routes(routes!(
            procedures::create_procedure,
            procedures::list_procedures
        ))
        .routes(routes!(
            procedures::get_procedure,
            procedures::update_procedure,
            procedures::delete_procedure
        ))
        .routes(routes!(procedures::approve_procedure))
        .routes(routes!(procedures::reject_procedure))
        .routes(routes!(procedures::procedure_versions))
        .routes(routes!(procedures::rollback_procedure))
        .routes(routes!(procedures::propose_procedure))
        .routes(routes!(episodes::list_episodes))
        .routes(routes!(episodes::get_episode, episodes::delete_episode))
        .routes(routes!(episodes::close_episode))
        .routes(routes!(episodes::set_episode_summary))
        .routes(routes!(episodes::restore_episode))
        .routes(routes!(episodes::purge_episode))
        .routes(routes!(search::search_messages))
        .routes(routes!(messages::erase_message))
        .routes(routes!(
            knowledge::ingest_document,
            knowledge::list_documents
        ))
        .routes(routes!(knowledge::search_knowledge))
        .routes(routes!(knowledge::knowledge_info))
        .routes(routes!(knowledge::delete_chunk))
        .routes(routes!(knowledge::read_document))
        .routes(routes!(recall::recall))
        .routes(routes!(users::forget_user))
        .routes(routes!(users::list_users))
        .routes(routes!(users::list_facts, users::add_fact))
        .routes(routes!(profiles::user_profile))
        .routes(routes!(
            facts::get_fact,
            facts::correct_fact,
            facts::delete_fact
        ))
        .routes(routes!(facts::fact_history))
        .routes(routes!(dumps::export_dump))
        .routes(routes!(dumps::export_tenant_dump))
        .routes(routes!(dumps::import_dump))
        .routes(routes!(webhooks::create_webhook, webhooks::list_webhooks))
        .routes(routes!(webhooks::get_webhook, webhooks::delete_webhook))
        .routes(routes!(webhooks::enable_webhook))
        .routes(routes!(webhooks::list_deliveries))
}

/// `limit` and `offset` of a list.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageParams {
    /// 1 to 1000; default 50.
    pub limit: Option<u32>,
    /// Default 0.
    pub offset: Option<u32>,
}

pub(crate) fn page(limit: Option<u32>, offset: Option<u32>) -> Result<Page, ApiError> {
    let limit = limit.unwrap_or(Page::default().limit);
    if limit == 0 || limit > Page::MAX_LIMIT {
        return Err(octopus_core::Error::invalid(
            "limit",
            format!("must be between 1 and {}", Page::MAX_LIMIT),
        )
        .into());
    }
    Ok(Page {
        limit,
        offset: offset.unwrap_or(0),
    })
}

/// A list of items.
#[derive(Serialize, ToSchema)]
pub(crate) struct Items<T> {
    pub items: Vec<T>,
}

//! Routes of conversations, their messages and imports: `/v1/conversations`.

use axum::extract::State;
use axum::http::StatusCode;
use octopus_core::conversation::{
    Conversation, ConversationFilter, ConversationImport, ConversationSpec,
};
use octopus_core::message::{Message, NewMessage};
use octopus_core::{AgentId, ConversationId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::{Items, page};
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::from_value;
use crate::extract::{Json, Path, Query};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListConversations {
    pub agent_id: Option<AgentId>,
    pub user_id: Option<String>,
    /// Include deleted conversations. Default false.
    #[serde(default)]
    pub include_deleted: bool,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

/// A batch of messages.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AppendMessagesRequest {
    pub messages: Vec<NewMessage>,
}

/// What an append takes: a batch of messages, or one message by itself
/// (without the `messages` wrapper).
// The schema is the untagged reading, one of the two; `AppendBody::read`
// tells them apart by the `messages` key instead, so that an error names
// the field at fault rather than saying neither shape matched.
#[derive(ToSchema)]
#[serde(untagged)]
pub(crate) enum AppendBody {
    Batch(AppendMessagesRequest),
    One(NewMessage),
}

impl AppendBody {
    fn read(body: Value) -> Result<Self, crate::error::ApiError> {
        Ok(match body.get("messages") {
            Some(_) => Self::Batch(from_value(body)?),
            None => Self::One(from_value(body)?),
        })
    }

    fn into_messages(self) -> Vec<NewMessage> {
        match self {
            Self::Batch(batch) => batch.messages,
            Self::One(message) => vec![message],
        }
    }
}

#[derive(Serialize, ToSchema)]
pub(crate) struct AppendedMessages {
    /// The stored messages, with their ids, episodes and ordinals.
    pub messages: Vec<Message>,
}

/// Start a conversation between a user and an agent.
#[utoipa::path(post, path = "/v1/conversations", tag = "conversations", security(("bearer" = [])),
    request_body = ConversationSpec,
    responses((status = 201, body = Conversation), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn create_conversation(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Json(spec): Json<ConversationSpec>,
) -> ApiResult<(StatusCode, axum::Json<Conversation>)> {
    Ok((
        StatusCode::CREATED,
        axum::Json(state.octopus.create_conversation(tenant, spec).await?),
    ))
}

/// List conversations, newest first.
#[utoipa::path(get, path = "/v1/conversations", tag = "conversations", security(("bearer" = [])),
    params(ListConversations),
    responses((status = 200, body = Items<Conversation>), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_conversations(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Query(params): Query<ListConversations>,
) -> ApiResult<axum::Json<Items<Conversation>>> {
    let filter = ConversationFilter {
        agent_id: params.agent_id,
        user_id: params.user_id,
        include_deleted: params.include_deleted,
        page: page(params.limit, params.offset)?,
    };
    Ok(axum::Json(Items {
        items: state.octopus.list_conversations(tenant, &filter).await?,
    }))
}

/// Get a conversation.
#[utoipa::path(get, path = "/v1/conversations/{conversation_id}", tag = "conversations", security(("bearer" = [])),
    params(("conversation_id" = ConversationId, Path)),
    responses((status = 200, body = Conversation), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_conversation(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<ConversationId>,
) -> ApiResult<axum::Json<Conversation>> {
    Ok(axum::Json(
        state.octopus.get_conversation(tenant, id).await?,
    ))
}

/// Delete a conversation: it takes no more messages, and its open episode closes.
#[utoipa::path(delete, path = "/v1/conversations/{conversation_id}", tag = "conversations", security(("bearer" = [])),
    params(("conversation_id" = ConversationId, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_conversation(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<ConversationId>,
) -> ApiResult<StatusCode> {
    state.octopus.delete_conversation(tenant, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Append messages to a conversation, in order, all or none. Opens an episode when
/// none is open. Give `timestamp` on each message when importing history.
#[utoipa::path(post, path = "/v1/conversations/{conversation_id}/messages", tag = "conversations",
    security(("bearer" = [])), params(("conversation_id" = ConversationId, Path)),
    request_body = AppendBody,
    responses(
        (status = 201, body = AppendedMessages),
        (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 410, description = "the conversation was deleted", body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)
    ))]
pub(crate) async fn append_messages(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(conversation): Path<ConversationId>,
    Json(body): Json<Value>,
) -> ApiResult<(StatusCode, axum::Json<AppendedMessages>)> {
    let messages = AppendBody::read(body)?.into_messages();
    let messages = state
        .octopus
        .append_messages(tenant, conversation, messages)
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(AppendedMessages { messages }),
    ))
}

#[derive(Serialize, ToSchema)]
pub(crate) struct ImportResponse {
    pub conversation: Conversation,
    /// One episode per imported session, in order.
    pub episodes: Vec<octopus_core::EpisodeId>,
    pub messages: usize,
}

/// Import past conversations with their original timestamps: a new
/// conversation, one closed episode per session. Everything is validated
/// before anything is stored; embeddings and summaries follow in the
/// background, as for live messages.
#[utoipa::path(post, path = "/v1/conversations/import", tag = "conversations", security(("bearer" = [])),
    request_body = ConversationImport,
    responses((status = 201, body = ImportResponse), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn import_conversation(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Json(import): Json<ConversationImport>,
) -> ApiResult<(StatusCode, axum::Json<ImportResponse>)> {
    let report = state.octopus.import_conversation(tenant, import).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(ImportResponse {
            conversation: report.conversation,
            episodes: report.episodes,
            messages: report.messages,
        }),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContextRequest {
    /// The user's new message. It is not stored: append it as usual.
    pub message: String,
    /// Also say why each candidate was kept or left out, and why recall
    /// found each memory where it did (`explanation`). Off, none of that
    /// work is done.
    #[serde(default)]
    pub explain: bool,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct ContextResponse {
    /// Ready for any chat-completions API: system prompt, retrieved knowledge,
    /// episodic snippets, history, and the user's message.
    pub messages: Vec<octopus_core::working_memory::ChatMessage>,
    /// What was retrieved with its scores, what was pruned, tokens per block.
    pub trace: octopus_core::working_memory::ContextTrace,
    pub episode_id: Option<octopus_core::EpisodeId>,
    pub tokenizer: String,
    /// Why each candidate was kept or left out, when asked (`explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<octopus_core::context_explanation::ContextExplanation>,
}

/// Assemble the working memory for the user's next message: retrieval for every
/// block at once, then pruning to the agent's token budget, with a trace.
#[utoipa::path(post, path = "/v1/conversations/{conversation_id}/context", tag = "conversations",
    security(("bearer" = [])), params(("conversation_id" = ConversationId, Path)), request_body = ContextRequest,
    responses((status = 200, body = ContextResponse), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, description = "the embedding model is not available", body = ErrorBody)))]
pub(crate) async fn build_context(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(conversation): Path<ConversationId>,
    Json(body): Json<ContextRequest>,
) -> ApiResult<axum::Json<ContextResponse>> {
    let context = match body.explain {
        true => {
            state
                .octopus
                .build_context_explained(tenant, conversation, &body.message)
                .await?
        }
        false => {
            state
                .octopus
                .build_context(tenant, conversation, &body.message)
                .await?
        }
    };
    Ok(axum::Json(ContextResponse {
        messages: context.messages,
        trace: context.trace,
        episode_id: context.episode_id,
        tokenizer: context.tokenizer.to_owned(),
        explanation: context.explanation,
    }))
}

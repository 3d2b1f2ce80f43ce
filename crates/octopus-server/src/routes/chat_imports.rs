//! A person's conversations from ChatGPT or Claude, imported from the
//! `conversations.json` of their data export: `/v1/conversations/import/{format}`.

use axum::extract::State;
use axum::http::StatusCode;
use octopus_core::chat_exports::ExportFormat;
use octopus_core::{AgentId, ConversationId};
use octopus_engine::{ChatStatus, ChatsImport};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Path, Query, RawBody};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChatsImportParams {
    /// The agent the conversations were with, from now on.
    pub agent_id: AgentId,
    /// The person whose conversations they are.
    pub user_id: String,
}

/// The `conversations.json` of a data export, as the service wrote it: an
/// array of conversations (one conversation alone is read as an array of one).
#[derive(ToSchema)]
#[schema(value_type = Vec<Object>)]
#[allow(dead_code)] // describes the body, which is read as bytes
pub(crate) struct ExportFile(Vec<serde_json::Value>);

/// What an import of an export did.
#[derive(Serialize, ToSchema)]
pub(crate) struct ChatsImported {
    /// Each conversation of the export with something said in it, in the
    /// export's order.
    pub conversations: Vec<ImportedChat>,
    /// How many of them this import stored.
    pub imported: usize,
    /// How many an earlier import of the same conversations stored; they are
    /// left as they are.
    pub already_imported: usize,
    /// Conversations of the export with nothing said in them, not stored.
    pub empty: usize,
    /// Messages this import stored.
    pub messages: usize,
}

/// One conversation of the export, and the conversation it is in Octopus.
#[derive(Serialize, ToSchema)]
pub(crate) struct ImportedChat {
    /// Its place in the export's array.
    pub index: usize,
    /// The export's own id of the conversation.
    pub export_id: String,
    pub conversation_id: ConversationId,
    pub title: Option<String>,
    pub status: ImportStatus,
    /// Messages this import stored of it.
    pub messages: usize,
}

/// Whether this import stored the conversation.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ImportStatus {
    /// Stored now.
    Imported,
    /// Stored by an earlier import, and left as it is.
    AlreadyImported,
}

/// Import a person's past conversations from the `conversations.json` of a
/// ChatGPT or Claude data export, sent as it is. Each conversation becomes
/// one conversation of the user with the agent, of one closed episode, every
/// message at its own time: of ChatGPT's message trees, the branch the user
/// last saw; system and tool messages as such; the words of attached files
/// where the export holds them. Embeddings, summaries and facts follow in
/// the background, as for any import. The same conversations imported again
/// are found and left as they are. The whole file is read before anything
/// is stored: a file cut short or of another shape is refused, naming the
/// line or the conversation.
#[utoipa::path(post, path = "/v1/conversations/import/{format}", tag = "conversations", security(("bearer" = [])),
    params(("format" = inline(ExportFormat), Path, description = "whose export: chatgpt or claude"), ChatsImportParams),
    request_body(content = ExportFile, content_type = "application/json", description = "the export's conversations.json"),
    responses((status = 201, description = "conversations were stored", body = ChatsImported),
        (status = 200, description = "every conversation was stored already, or the export had none", body = ChatsImported),
        (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn import_chats(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(format): Path<String>,
    Query(params): Query<ChatsImportParams>,
    RawBody(file): RawBody,
) -> ApiResult<(StatusCode, axum::Json<ChatsImported>)> {
    let import = ChatsImport {
        format: format.parse::<ExportFormat>()?,
        agent_id: params.agent_id,
        user_id: params.user_id,
    };
    let report = state.octopus.import_chats(tenant, import, file).await?;
    let status = match report.imported {
        0 => StatusCode::OK,
        _ => StatusCode::CREATED,
    };
    Ok((
        status,
        axum::Json(ChatsImported {
            conversations: report
                .conversations
                .into_iter()
                .map(|chat| ImportedChat {
                    index: chat.index,
                    export_id: chat.export_id,
                    conversation_id: chat.conversation_id,
                    title: chat.title,
                    status: match chat.status {
                        ChatStatus::Imported => ImportStatus::Imported,
                        ChatStatus::AlreadyImported => ImportStatus::AlreadyImported,
                    },
                    messages: chat.messages,
                })
                .collect(),
            imported: report.imported,
            already_imported: report.already_imported,
            empty: report.empty,
            messages: report.messages,
        }),
    ))
}

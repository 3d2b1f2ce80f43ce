//! One message, erased: its words leave every store, with the facts learned
//! from it, and its episode's summary is written again. Recorded under the
//! name of the key that asked.

use axum::extract::State;
use octopus_core::MessageId;
use octopus_core::message::MessageErasureReceipt;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::AppState;
use crate::auth::TenantAuthor;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Path, Query};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct EraseMessageParams {
    /// Why, up to 500 characters; kept in the histories of the facts
    /// deleted with it.
    pub reason: Option<String>,
}

/// Erase one message: its row, full-text entry and vector leave every
/// store, and the stores' files are compacted, as forgetting a user does.
/// The facts learned from it are deleted with every version (their
/// histories say by whom); its episode's summary and key facts are
/// dropped, written again for a closed episode (by the agent's model, or
/// extractively), and the facts are learned again from the messages left.
/// Cannot be undone.
#[utoipa::path(delete, path = "/v1/messages/{message_id}", tag = "conversations", security(("bearer" = [])),
    params(("message_id" = MessageId, Path), EraseMessageParams),
    responses((status = 200, body = MessageErasureReceipt), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn erase_message(
    State(state): State<AppState>,
    caller: TenantAuthor,
    Path(id): Path<MessageId>,
    Query(params): Query<EraseMessageParams>,
) -> ApiResult<axum::Json<MessageErasureReceipt>> {
    Ok(axum::Json(
        state
            .octopus
            .erase_message(caller.tenant, id, params.reason, caller.name())
            .await?,
    ))
}

//! One fact at a time: read it, correct it (a new version, the old one kept
//! with the period it held), delete it (every version, from every store),
//! and read its history. Changes are recorded under the name of the key
//! that made them.

use axum::extract::State;
use octopus_core::FactId;
use octopus_core::fact::{Fact, FactDeletionReceipt, FactEdit, FactHistoryEntry};
use serde::Deserialize;
use utoipa::IntoParams;

use super::Items;
use crate::AppState;
use crate::auth::{TenantAuthor, TenantCaller};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

/// A fact, by the id of any of its versions: current or replaced.
#[utoipa::path(get, path = "/v1/facts/{fact_id}", tag = "users", security(("bearer" = [])),
    params(("fact_id" = FactId, Path)),
    responses((status = 200, body = Fact), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_fact(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<FactId>,
) -> ApiResult<axum::Json<Fact>> {
    Ok(axum::Json(state.octopus.get_fact(tenant, id).await?))
}

/// Correct a fact that holds: the answer is a new version (a new id,
/// `source: manual`, `changed_by` the key's name) that replaces it from
/// `valid_from`; the corrected version is kept with the period it held, as
/// the model's replacements are. Recall finds the new words by keyword at
/// once and by meaning once the memory worker has embedded them.
#[utoipa::path(patch, path = "/v1/facts/{fact_id}", tag = "users", security(("bearer" = [])),
    params(("fact_id" = FactId, Path)), request_body = FactEdit,
    responses((status = 200, body = Fact), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn correct_fact(
    State(state): State<AppState>,
    caller: TenantAuthor,
    Path(id): Path<FactId>,
    Json(edit): Json<FactEdit>,
) -> ApiResult<axum::Json<Fact>> {
    Ok(axum::Json(
        state
            .octopus
            .correct_fact(caller.tenant, id, edit, caller.name())
            .await?,
    ))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeleteFactParams {
    /// Why, up to 500 characters; kept in the fact's history.
    pub reason: Option<String>,
}

/// Delete a fact, given any of its versions: every version's words leave
/// the rows, the full-text index, the memory vectors and the vector index,
/// and the stores' files are compacted, as forgetting a user does. Its
/// history keeps that it was deleted, by whom and when, and none of its
/// words. Cannot be undone.
#[utoipa::path(delete, path = "/v1/facts/{fact_id}", tag = "users", security(("bearer" = [])),
    params(("fact_id" = FactId, Path), DeleteFactParams),
    responses((status = 200, body = FactDeletionReceipt), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn delete_fact(
    State(state): State<AppState>,
    caller: TenantAuthor,
    Path(id): Path<FactId>,
    Query(params): Query<DeleteFactParams>,
) -> ApiResult<axum::Json<FactDeletionReceipt>> {
    Ok(axum::Json(
        state
            .octopus
            .delete_fact(caller.tenant, id, params.reason, caller.name())
            .await?,
    ))
}

/// A fact's history, by the id of any of its versions, oldest first: each
/// version learned, corrected or imported (its words, who, when, why), and
/// its deletion. Kept after a deletion, without the words.
#[utoipa::path(get, path = "/v1/facts/{fact_id}/history", tag = "users", security(("bearer" = [])),
    params(("fact_id" = FactId, Path)),
    responses((status = 200, body = Items<FactHistoryEntry>), (status = 404, body = ErrorBody)))]
pub(crate) async fn fact_history(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<FactId>,
) -> ApiResult<axum::Json<Items<FactHistoryEntry>>> {
    Ok(axum::Json(Items {
        items: state.octopus.fact_history(tenant, id).await?,
    }))
}

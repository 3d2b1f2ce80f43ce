//! Authentication: `Authorization: Bearer <key>` on every `/v1` route.
//!
//! Handlers ask for the caller they need: [`TenantCaller`] for tenant data (the
//! admin key has no tenant, so it is refused there) or [`AdminCaller`] for tenants
//! and keys. The tenant id is recorded on the request's span.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use octopus_core::TenantId;
use octopus_engine::{Caller, Error as EngineError};

use crate::AppState;
use crate::error::{ApiError, ErrorCode};

/// A caller holding a tenant's key.
pub struct TenantCaller(pub TenantId);

/// A caller holding the admin key.
pub struct AdminCaller;

/// Why a key sent to an admin route was refused.
const NOT_THE_ADMIN_KEY: &str = "this is not the server's admin key: the server holds the key set in OCTOPUS_ADMIN_KEY (or --admin-key) when it last started, or, started without one, the key it generated on its first start and printed once (the line `export OCTOPUS_ADMIN_KEY=…` in its output); start the server with OCTOPUS_ADMIN_KEY set to choose the key";

/// The key a request presents (`Authorization: Bearer <key>`), if any.
fn bearer(parts: &Parts) -> Option<&str> {
    parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|secret| !secret.is_empty())
}

async fn caller(parts: &Parts, state: &AppState) -> Result<Caller, ApiError> {
    let secret = bearer(parts).ok_or(EngineError::Unauthenticated)?;
    Ok(state.octopus.authenticate(secret).await?)
}

impl FromRequestParts<AppState> for TenantCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        match caller(parts, state).await? {
            Caller::Tenant(tenant) => {
                tracing::Span::current().record("tenant_id", tracing::field::display(tenant));
                Ok(TenantCaller(tenant))
            }
            Caller::Admin => Err(ApiError::from_code(
                ErrorCode::TenantKeyRequired,
                "the admin key manages tenants and keys; use a tenant's key for tenant data",
            )),
        }
    }
}

impl FromRequestParts<AppState> for AdminCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        match caller(parts, state).await {
            Ok(Caller::Admin) => Ok(AdminCaller),
            Ok(Caller::Tenant(_)) => Err(EngineError::AdminOnly.into()),
            // A key sent to an admin route is meant as the admin key; the
            // usual cause is a key chosen by hand for a server that holds
            // another, so say which key the server holds.
            Err(error) if error.code == ErrorCode::Unauthenticated && bearer(parts).is_some() => {
                Err(ApiError::from_code(
                    ErrorCode::Unauthenticated,
                    NOT_THE_ADMIN_KEY,
                ))
            }
            Err(error) => Err(error),
        }
    }
}

/// Any caller with a valid key: for the routes that serve both.
pub struct AnyCaller(pub Caller);

impl FromRequestParts<AppState> for AnyCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = caller(parts, state).await?;
        if let Caller::Tenant(tenant) = caller {
            tracing::Span::current().record("tenant_id", tracing::field::display(tenant));
        }
        Ok(AnyCaller(caller))
    }
}

/// A caller holding a tenant's key, with the key's name: what records say
/// wrote or approved a procedure version, or changed a fact.
#[derive(Clone, Debug)]
pub struct TenantAuthor {
    pub tenant: TenantId,
    pub key_name: Option<String>,
}

impl TenantAuthor {
    /// The name a change is recorded under: the key's (absent only when it
    /// was revoked as the request ran).
    pub fn name(&self) -> &str {
        self.key_name.as_deref().unwrap_or("a revoked key")
    }
}

impl FromRequestParts<AppState> for TenantAuthor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let TenantCaller(tenant) = TenantCaller::from_request_parts(parts, state).await?;
        let secret = bearer(parts).unwrap_or_default();
        let key_name = state.octopus.key_name(tenant, secret).await?;
        Ok(TenantAuthor { tenant, key_name })
    }
}

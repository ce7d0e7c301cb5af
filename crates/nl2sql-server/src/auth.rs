//! Authentication (spec: config-and-security.md §5): `Authorization: Bearer KEY` or
//! `X-API-Key: KEY` is looked up in the server's API keys; the key's identity becomes the
//! caller. A missing or unknown key is 401.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use nl2sql_state::{AccessPolicy, UserContext};

use crate::config::Identity;
use crate::error::ApiError;
use crate::state::AppState;

/// The authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The key's identity.
    pub identity: Identity,
    /// Its user context (tenant defaulted).
    pub user: UserContext,
}

impl Caller {
    /// 403 unless the key may manage datasources and indexes.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.identity.admin {
            Ok(())
        } else {
            Err(ApiError::forbidden(
                "This API key may not manage datasources or indexes.",
            ))
        }
    }

    /// Whether the caller may see datasource `id`: administrators see every datasource,
    /// others those their roles allow.
    pub fn may_see(&self, access: &AccessPolicy, id: &str) -> bool {
        self.identity.admin || access.datasource_allowed(id)
    }
}

/// The key a request presents, if any.
fn presented_key(parts: &Parts) -> Option<&str> {
    if let Some(v) = parts.headers.get(header::AUTHORIZATION)
        && let Ok(v) = v.to_str()
    {
        let v = v.trim();
        let (scheme, rest) = v.split_once(' ').unwrap_or((v, ""));
        if scheme.eq_ignore_ascii_case("bearer") && !rest.trim().is_empty() {
            return Some(rest.trim());
        }
    }
    parts
        .headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let key = presented_key(parts).ok_or_else(ApiError::unauthorized)?;
        let identity = state
            .config()
            .api_keys
            .identify(key)
            .ok_or_else(ApiError::unauthorized)?
            .clone();
        let user = identity.user_context(&state.config().default_tenant_id);
        Ok(Caller { identity, user })
    }
}

//! Authentication (spec: config-and-security.md §5): `Authorization: Bearer KEY` or
//! `X-API-Key: KEY` is looked up in the server's API keys; the key's identity becomes the
//! caller. A missing or unknown key is 401.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
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

    /// The caller whose key `headers` present (401 without a known key).
    pub fn of_request(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
        let key = presented_key(headers).ok_or_else(ApiError::unauthorized)?;
        let identity = state
            .config()
            .api_keys
            .identify(key)
            .ok_or_else(ApiError::unauthorized)?
            .clone();
        Ok(Caller::of(identity, &state.config().default_tenant_id))
    }

    /// The caller with `identity` (its tenant defaulted to `default_tenant`).
    pub fn of(identity: Identity, default_tenant: &str) -> Caller {
        let user = identity.user_context(default_tenant);
        Caller { identity, user }
    }

    /// Whether the caller may see datasource `id`: administrators see every datasource,
    /// others those their roles allow.
    pub fn may_see(&self, access: &AccessPolicy, id: &str) -> bool {
        self.identity.admin || access.datasource_allowed(id)
    }
}

/// The key a request presents, if any.
fn presented_key(headers: &HeaderMap) -> Option<&str> {
    if let Some(v) = headers.get(header::AUTHORIZATION)
        && let Ok(v) = v.to_str()
    {
        let v = v.trim();
        let (scheme, rest) = v.split_once(' ').unwrap_or((v, ""));
        if scheme.eq_ignore_ascii_case("bearer") && !rest.trim().is_empty() {
            return Some(rest.trim());
        }
    }
    headers
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        Caller::of_request(state, &parts.headers)
    }
}

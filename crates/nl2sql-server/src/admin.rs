//! Datasource and index routes (spec: interfaces.md §2): `GET/POST /datasource`,
//! `GET/DELETE /datasource/{id}`, `POST /index/{id}`, `POST /index-all`, `DELETE /index`
//! and `GET /index/status`. Changes need an administrator key; listings show a caller
//! only the datasources their roles allow (administrators see every one).

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use nl2sql_orchestrator::IndexReport;
use nl2sql_state::DatasourceEntry;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson};
use crate::state::{AppState, unknown_datasource};

/// The body of `POST /datasource`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasourceRequest {
    /// The datasource, as a `[[datasources]]` entry of the configuration file.
    pub config: DatasourceEntry,
}

/// `GET /datasource`.
pub(crate) async fn list(State(state): State<AppState>, caller: Caller) -> Json<Value> {
    let engine = state.engine();
    let access = engine.access_for(&caller.user);
    let ids: Vec<&str> = engine
        .registry()
        .ids()
        .into_iter()
        .filter(|id| caller.may_see(&access, id))
        .collect();
    Json(json!({ "datasources": ids }))
}

/// `GET /datasource/{id}`.
pub(crate) async fn get(
    State(state): State<AppState>,
    caller: Caller,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let engine = state.engine();
    let access = engine.access_for(&caller.user);
    let config = engine
        .registry()
        .config(&id)
        .ok()
        .filter(|_| caller.may_see(&access, &id))
        .ok_or_else(|| unknown_datasource(&id))?;
    let mut body = json!({
        "datasource_id": id,
        "exists": true,
        "description": config.description,
        "engine": config.engine.as_str(),
        "schema_version": engine.store().latest_version(&id),
    });
    if caller.identity.admin {
        body["url"] = Value::String(config.redacted_url());
    }
    Ok(Json(body))
}

/// `POST /datasource` (201).
pub(crate) async fn add(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<DatasourceRequest>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    caller.require_admin()?;
    let id = req.config.id.clone();
    state.add_datasource(req.config).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "success": true,
            "message": format!("Datasource '{id}' added; index it with POST /api/v1/index/{id}."),
            "datasource_id": id,
        })),
    ))
}

/// `DELETE /datasource/{id}`.
pub(crate) async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    state.remove_datasource(&id).await?;
    Ok(Json(json!({
        "success": true,
        "message": format!("Datasource '{id}' removed."),
        "datasource_id": id,
    })))
}

fn failures(report: &IndexReport) -> Vec<Value> {
    report
        .failed
        .iter()
        .map(|(id, e)| {
            json!({
                "datasource_id": id,
                "code": e.code.as_str(),
                "message": e.safe_message(),
            })
        })
        .collect()
}

/// `POST /index/{datasource_id}`: 200 when indexed, 503 when the datasource could not
/// be reached or described.
pub(crate) async fn index_one(
    State(state): State<AppState>,
    caller: Caller,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let report = state.index_one(&id).await?;
    match report.indexed.first() {
        Some(stats) => Ok(Json(json!({
            "success": true,
            "datasource_id": id,
            "indexing_stats": stats,
            "message": format!("Datasource '{id}' indexed (schema version {}).", stats.schema_version),
        }))),
        None => {
            let message = report
                .failed
                .first()
                .map_or("indexing failed", |(_, e)| e.safe_message())
                .to_owned();
            Err(
                ApiError::unavailable(format!("Datasource '{id}' could not be indexed: {message}"))
                    .with_details(json!({ "failed": failures(&report) })),
            )
        }
    }
}

/// `POST /index-all`: every datasource; `success` is false when one failed (the others
/// are indexed all the same).
pub(crate) async fn index_all(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    let report = state.index_all().await?;
    let success = report.failed.is_empty();
    Ok(Json(json!({
        "success": success,
        "indexing_results": {
            "indexed": report.indexed,
            "failed": failures(&report),
        },
        "message": format!(
            "Datasources: total={}, succeeded={}, failed={}.",
            report.indexed.len() + report.failed.len(),
            report.indexed.len(),
            report.failed.len()
        ),
    })))
}

/// `DELETE /index`: not offered (501): the index is rebuilt, never emptied, over REST.
pub(crate) async fn clear_index(caller: Caller) -> Result<Json<Value>, ApiError> {
    caller.require_admin()?;
    Err(ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "NOT_IMPLEMENTED",
        "Clearing the index is not offered over REST; re-index with POST /api/v1/index-all.",
    ))
}

/// `GET /index/status`: which datasources have a schema snapshot (are indexed), with
/// their latest and stored versions.
pub(crate) async fn status(State(state): State<AppState>, caller: Caller) -> Json<Value> {
    let engine = state.engine();
    let access = engine.access_for(&caller.user);
    let store = engine.store();
    let mut indexed = Vec::new();
    let mut datasources = Vec::new();
    let ids: Vec<&str> = engine
        .registry()
        .ids()
        .into_iter()
        .filter(|id| caller.may_see(&access, id))
        .collect();
    for id in &ids {
        let latest = store.latest_version(id);
        if latest.is_some() {
            indexed.push(*id);
        }
        datasources.push(json!({
            "datasource_id": id,
            "indexed": latest.is_some(),
            "schema_version": latest,
            "versions": store.list_versions(id),
        }));
    }
    let status = if indexed.len() == ids.len() && !ids.is_empty() {
        "operational"
    } else {
        "degraded"
    };
    Json(json!({
        "status": status,
        "indexed_datasources": indexed,
        "total_indexes": indexed.len(),
        "datasources": datasources,
    }))
}

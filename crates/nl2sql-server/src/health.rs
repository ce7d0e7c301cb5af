//! `GET /health` (the process answers), `GET /ready` (real checks: every datasource is
//! indexed and reachable through a fresh connection; 503 otherwise) and the read-only
//! `/llm` routes (the planner's settings, never a key; `POST /llm` is 501 because the
//! LLM configuration is file-based).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use nl2sql_planner::Step;
use nl2sql_planner_llm::LlmConfig;
use nl2sql_planner_llm::{AgentConfig, AgentSettings, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_SEC};
use nl2sql_state::redact_url;
use serde_json::{Map, Value, json};
use tokio::task::JoinSet;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::{AppState, PlannerInfo};

/// How long `/ready` waits for one datasource.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `GET /health` (no key needed).
pub(crate) async fn health() -> Json<Value> {
    Json(json!({"success": true, "message": "nl2sql is running"}))
}

/// `GET /ready` (no key needed; the body names no datasource).
pub(crate) async fn ready(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let engine = state.engine();
    let ids: Vec<String> = engine
        .registry()
        .ids()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let indexed = ids
        .iter()
        .filter(|id| engine.store().latest_version(id).is_some())
        .count();
    let mut probes = JoinSet::new();
    for id in ids.clone() {
        let engine = Arc::clone(&engine);
        // A fresh connection, not the engine's pooled one: an open handle can outlive
        // the database it was opened on.
        probes.spawn(async move {
            let probe = async {
                let adapter = engine.registry().connect_fresh(&id).await?;
                adapter.test_connection().await
            };
            matches!(tokio::time::timeout(PROBE_TIMEOUT, probe).await, Ok(Ok(())))
        });
    }
    let mut reachable = 0;
    while let Some(joined) = probes.join_next().await {
        if joined.unwrap_or(false) {
            reachable += 1;
        }
    }
    let total = ids.len();
    let checks = json!({
        "datasources": {"total": total, "reachable": reachable},
        "index": {"total": total, "indexed": indexed},
    });
    if total == 0 {
        return Err(
            ApiError::unavailable("Not ready: no datasource is configured.")
                .with_details(json!({ "checks": checks })),
        );
    }
    if indexed < total || reachable < total {
        return Err(ApiError::unavailable(format!(
            "Not ready: {indexed} of {total} datasources indexed, {reachable} of {total} reachable."
        ))
        .with_details(json!({ "checks": checks })));
    }
    Ok(Json(json!({
        "success": true,
        "message": "ready",
        "checks": checks,
    })))
}

/// The steps whose model settings `GET /llm` lists besides `default`.
const STEPS: [Step; 4] = [
    Step::Decomposer,
    Step::AstPlanner,
    Step::Refiner,
    Step::AnswerSynthesizer,
];

fn default_view(agent: &AgentConfig) -> Value {
    json!({
        "provider": agent.provider.clone().unwrap_or_else(|| "openai".to_owned()),
        "model": agent.model,
        "temperature": agent.temperature.unwrap_or(0.0),
        "base_url": redact_url(agent.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL)),
        "timeout_sec": agent.timeout_sec.unwrap_or(DEFAULT_TIMEOUT_SEC),
    })
}

fn settings_view(s: &AgentSettings) -> Value {
    json!({
        "provider": s.provider,
        "model": s.model,
        "temperature": s.temperature,
        "base_url": redact_url(&s.base_url),
        "timeout_sec": s.timeout.as_secs_f64(),
        "max_retries": s.max_retries,
        "structured_output": s.structured_output,
    })
}

/// Every configured model by name (`default` and the steps), without keys.
fn llms(planner: &PlannerInfo) -> Map<String, Value> {
    let mut out = Map::new();
    match planner {
        PlannerInfo::Offline => {
            out.insert(
                "default".to_owned(),
                json!({"provider": "offline", "model": null}),
            );
        }
        PlannerInfo::Replay => {
            out.insert(
                "default".to_owned(),
                json!({"provider": "replay", "model": null}),
            );
        }
        PlannerInfo::Llm(config) => llm_views(config, &mut out),
    }
    out
}

fn llm_views(config: &LlmConfig, out: &mut Map<String, Value>) {
    out.insert("default".to_owned(), default_view(&config.default));
    for step in STEPS {
        if let Ok(s) = config.settings(step) {
            out.insert(step.as_str().to_owned(), settings_view(&s));
        }
    }
}

/// `GET /llm`.
pub(crate) async fn list_llms(State(state): State<AppState>, _caller: Caller) -> Json<Value> {
    Json(json!({ "llms": llms(state.planner()) }))
}

/// `GET /llm/{name}`: that step's settings, `default`'s for any other name.
pub(crate) async fn get_llm(
    State(state): State<AppState>,
    _caller: Caller,
    UrlPath(name): UrlPath<String>,
) -> Json<Value> {
    let mut all = llms(state.planner());
    let found = all
        .remove(&name)
        .or_else(|| all.remove("default"))
        .unwrap_or(Value::Null);
    Json(found)
}

/// `POST /llm`: 501, the LLM configuration is file-based.
pub(crate) async fn post_llm(_caller: Caller) -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "NOT_IMPLEMENTED",
        "The LLM configuration is file-based: edit the LLM file and restart the server.",
    )
}

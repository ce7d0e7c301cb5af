//! The nl2sql REST API and MCP server (spec: interfaces.md §2 and §3.2; documented in
//! `docs/rest-api.md`): the reference routes under `/api/v1`, over an
//! [`nl2sql_orchestrator::Engine`].
//!
//! - Every route but `/health` and `/ready` needs an API key (`Authorization: Bearer KEY`
//!   or `X-API-Key: KEY`); the key's identity (user, tenant, roles) is the caller, and RBAC
//!   applies through the engine's policy. A `user_context` in a request body is honoured
//!   only in development mode ([`ServerConfig::dev_trust_user_context`]).
//! - Errors are an HTTP status and an [`ErrorResponse`] with safe messages.
//! - CORS is closed unless origins are configured; bodies are capped.
//! - A run is cancelled when its client disconnects or the server shuts down.
//! - `POST /query` with `Accept: text/event-stream` streams the run's events as they
//!   happen (`stream.rs`, documented in `docs/rest-api.md`).
//! - `/mcp` is the Model Context Protocol endpoint (streamable HTTP, [`mcp`]), behind the
//!   same API keys.
//!
//! The server crate adds no adapter: the engine it is given opens datasources with the
//! drivers its registry was built with (the `nl2sql` binary's: `nl2sql_drivers::compiled`),
//! and a datasource added through the API must name an engine of that set.

mod admin;
mod auth;
mod config;
mod error;
mod health;
pub mod mcp;
mod post_query;
mod query;
mod state;
mod stream;

use std::future::Future;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::routing::{delete, get, post};
use tower_http::cors::{AllowOrigin, CorsLayer};

pub use admin::DatasourceRequest;
pub use auth::Caller;
pub use config::{
    ApiKeys, DEFAULT_MAX_BODY_BYTES, DEFAULT_MCP_ALLOWED_HOSTS, DEFAULT_TENANT_ID, Identity,
    MIN_KEY_LEN, ServerConfig,
};
pub use error::{ApiError, ErrorResponse, status_of};
pub use query::{QueryError, QueryRequest, QueryResponse, QuerySubquery, response_of};
pub use state::{AppState, Catalog, EngineFactory, PlannerInfo};

/// The routes, under `/api/v1`, with the body limit and (when origins are configured)
/// CORS.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/query", post(post_query::post_query))
        .route("/query/{trace_id}", get(query::get_query))
        .route("/health", get(health::health))
        .route("/ready", get(health::ready))
        .route("/datasource", get(admin::list).post(admin::add))
        .route("/datasource/{id}", get(admin::get).delete(admin::remove))
        .route("/llm", get(health::list_llms).post(health::post_llm))
        .route("/llm/{name}", get(health::get_llm))
        .route("/index/{datasource_id}", post(admin::index_one))
        .route("/index-all", post(admin::index_all))
        .route("/index", delete(admin::clear_index))
        .route("/index/status", get(admin::status))
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "METHOD_NOT_ALLOWED",
                "Method not allowed on this route.",
            )
        });
    let limit = state.config().max_body_bytes;
    let cors = cors_layer(&state.config().cors_origins);
    let mcp = Router::new()
        .nest_service(
            "/mcp",
            mcp::http_service(&state, &state.config().mcp_allowed_hosts),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            mcp::require_key,
        ));
    let app = Router::new()
        .nest("/api/v1", api)
        .merge(mcp)
        .fallback(|| async { ApiError::not_found("No such route.") })
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state);
    match cors {
        Some(layer) => app.layer(layer),
        None => app,
    }
}

/// CORS for `origins`; `None` (closed) when there is none. Origins that are not valid
/// header values are skipped (the CLI checks them first).
fn cors_layer(origins: &[String]) -> Option<CorsLayer> {
    let values: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|o| HeaderValue::from_str(o.trim().trim_end_matches('/')).ok())
        .collect();
    if values.is_empty() {
        return None;
    }
    Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(values))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                HeaderName::from_static("x-api-key"),
            ]),
    )
}

/// Serves [`router`] on `listener` until `shutdown` completes; then every run in flight
/// is cancelled (it answers 503) and the server stops once the open requests are done.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cancel = state.shutdown_token();
    let app = router(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            cancel.cancel();
        })
        .await
}

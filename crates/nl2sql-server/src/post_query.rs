//! `POST /query` (spec: interfaces.md §2): one JSON response when the run ends
//! (`query.rs`), or, with `Accept: text/event-stream`, the run's events as they happen
//! (`stream.rs`).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse as _, Response};
use nl2sql_state::TraceId;

use crate::auth::Caller;
use crate::error::{ApiError, ApiJson};
use crate::query::{Prepared, QueryRequest, outcome};
use crate::state::AppState;

/// Whether the request asks for a stream of events (`Accept: text/event-stream`).
fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

/// `POST /query`: one JSON response when the run ends, or, with
/// `Accept: text/event-stream`, the run's events as they happen ([`crate::stream`]).
pub(crate) async fn post_query(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiJson(req): ApiJson<QueryRequest>,
) -> Result<Response, ApiError> {
    let prepared = Prepared::new(&state, &caller, req)?;
    if wants_events(&headers) {
        return Ok(crate::stream::events(&state, prepared).into_response());
    }
    let cancel = state.shutdown_token().child_token();
    // A client that goes away drops this future: the guard cancels the run, which then
    // finishes (as cancelled) and is recorded on its own task.
    let guard = cancel.clone().drop_guard();
    let joined = prepared.spawn(TraceId::new(), cancel, None).await;
    drop(guard);
    let (result, response) = joined.map_err(|e| {
        tracing::error!(error = %e, "a run panicked");
        ApiError::internal()
    })?;
    outcome(&result, response).map(|r| Json(r).into_response())
}

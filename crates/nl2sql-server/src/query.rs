//! `POST /query` and `GET /query/{trace_id}` (spec: interfaces.md §2 and §3.2).
//!
//! A question runs on its own task with a cancellation token that is cancelled when the
//! client goes away (the handler is dropped) or the server shuts down; the run then ends
//! as `cancelled` at its next await point. The response, filled from the `RunResult`, is
//! recorded beside the run log (`runs/<trace_id>.response.json`, with the caller who
//! owns it), and `GET /query/{trace_id}` returns it to that caller only, with its
//! `reasoning` read from the run log.

use std::path::{Path, PathBuf};

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use nl2sql_orchestrator::{AskOptions, EngineOptions, RunEvents, RunResult, read_run_log};
use nl2sql_state::{ErrorCode, PipelineError, RunStatus, TraceId, UserContext};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::error::{ApiError, rank, status_of};
use crate::state::{AppState, unknown_datasource};
use tokio_util::sync::CancellationToken;

/// The body of `POST /query`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryRequest {
    /// The question.
    pub natural_language: String,
    /// Use only this datasource.
    #[serde(default)]
    pub datasource_id: Option<String>,
    /// Run the SQL (false: plan, validate and generate SQL only).
    #[serde(default = "yes")]
    pub execute: bool,
    /// The caller's context: honoured only in development mode, else ignored.
    #[serde(default)]
    pub user_context: Option<UserContext>,
}

fn yes() -> bool {
    true
}

/// One error of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryError {
    /// The stable code (`SECURITY_VIOLATION`, …).
    pub code: String,
    /// `INFO`, `WARNING`, `ERROR` or `CRITICAL`.
    pub severity: String,
    /// The safe message.
    pub message: String,
    /// The node that emitted it.
    pub node: String,
}

/// One sub-query of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuerySubquery {
    /// Sub-query id.
    pub id: String,
    /// Its datasource.
    pub datasource_id: String,
    /// What it asks.
    pub intent: String,
    /// `succeeded`, `failed`, …
    pub status: Value,
    /// Its SQL.
    pub sql: Option<String>,
    /// Rows it returned.
    pub row_count: Option<u64>,
}

/// The answer to `POST /query` and `GET /query/{trace_id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResponse {
    /// The first sub-query's SQL.
    pub sql: Option<String>,
    /// The primary result's rows, one object per row (column name → value).
    pub results: Vec<Map<String, Value>>,
    /// The primary result's column names, in order.
    #[serde(default)]
    pub columns: Vec<String>,
    /// The answer's summary.
    pub final_answer: Option<String>,
    /// Errors that shaped the outcome.
    pub errors: Vec<QueryError>,
    /// The run id.
    pub trace_id: Option<String>,
    /// The run log: one entry per node execution (node, timing, error codes).
    pub reasoning: Vec<Value>,
    /// Warnings.
    pub warnings: Vec<String>,
    /// `succeeded`, `partial`, `failed`, `cancelled` or `timed_out`.
    pub status: RunStatus,
    /// The sub-queries.
    #[serde(default)]
    pub subqueries: Vec<QuerySubquery>,
}

/// What is stored beside a run log.
#[derive(Debug, Serialize, Deserialize)]
struct RunRecord {
    version: u32,
    owner_user_id: String,
    owner_tenant_id: Option<String>,
    response: QueryResponse,
}

/// Rows as objects; a repeated column name gets a `_2`, `_3`, … suffix.
fn row_objects(columns: &[String], rows: &[Vec<Value>]) -> Vec<Map<String, Value>> {
    let mut keys: Vec<String> = Vec::with_capacity(columns.len());
    for c in columns {
        let mut key = c.clone();
        let mut n = 1;
        while keys.contains(&key) {
            n += 1;
            key = format!("{c}_{n}");
        }
        keys.push(key);
    }
    rows.iter()
        .map(|row| {
            keys.iter()
                .cloned()
                .zip(row.iter().cloned().chain(std::iter::repeat(Value::Null)))
                .collect()
        })
        .collect()
}

/// The response of a finished run (reasoning empty: it comes from the run log).
pub fn response_of(result: &RunResult, mut warnings: Vec<String>) -> QueryResponse {
    let columns = result.columns.clone().unwrap_or_default();
    let rows = result.rows.clone().unwrap_or_default();
    warnings.extend(result.warnings.iter().cloned());
    if let Some(a) = &result.answer {
        for w in &a.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    QueryResponse {
        sql: result.subqueries.first().and_then(|s| s.sql.clone()),
        results: row_objects(&columns, &rows),
        columns,
        final_answer: result.answer.as_ref().map(|a| a.summary.clone()),
        errors: result
            .errors
            .iter()
            .map(|e| QueryError {
                code: e.code.as_str().to_owned(),
                severity: e.severity.as_str().to_owned(),
                message: e.message.clone(),
                node: e.node.clone(),
            })
            .collect(),
        trace_id: Some(result.trace_id.clone()),
        reasoning: Vec::new(),
        warnings,
        status: result.status,
        subqueries: result
            .subqueries
            .iter()
            .map(|s| QuerySubquery {
                id: s.id.clone(),
                datasource_id: s.datasource_id.clone(),
                intent: s.intent.clone(),
                status: serde_json::to_value(s.status).unwrap_or(Value::Null),
                sql: s.sql.clone(),
                row_count: s.row_count,
            })
            .collect(),
    }
}

fn error_json(e: &PipelineError) -> Value {
    json!({
        "code": e.code.as_str(),
        "severity": e.severity.as_str(),
        "message": e.safe_message(),
        "node": e.node,
    })
}

/// The reasoning of a run: its run log without the nodes' payloads (plans, prompts and
/// rows stay in the file).
fn reasoning_of(log: &Path) -> Result<Vec<Value>, PipelineError> {
    Ok(read_run_log(log)?
        .iter()
        .map(|e| {
            json!({
                "seq": e.seq,
                "node": e.node,
                "subgraph_id": e.subgraph_id,
                "attempt": e.attempt,
                "started_at": e.started_at,
                "duration_ms": e.duration_ms,
                "errors": e.errors.iter().map(error_json).collect::<Vec<_>>(),
            })
        })
        .collect())
}

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it, then a
/// rename, so a reader never sees half a record.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn record_path(log: &Path, trace_id: &str) -> PathBuf {
    log.with_file_name(format!("{trace_id}.response.json"))
}

/// The HTTP error of a run that did not produce an answer, if it did not.
fn run_error(result: &RunResult, response: &QueryResponse) -> Option<ApiError> {
    let (status, code, message) = match result.status {
        RunStatus::Succeeded | RunStatus::Partial => return None,
        RunStatus::TimedOut => (
            StatusCode::GATEWAY_TIMEOUT,
            ErrorCode::PipelineTimeout,
            "The request timed out.".to_owned(),
        ),
        RunStatus::Cancelled => (
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ServiceUnavailable,
            "The run was cancelled (the server is shutting down).".to_owned(),
        ),
        RunStatus::Failed => {
            let primary = result
                .errors
                .iter()
                .filter(|e| e.is_blocking())
                .max_by_key(|e| rank(status_of(e.code)))
                .or_else(|| result.errors.first());
            match primary {
                Some(e) => (status_of(e.code), e.code, e.message.clone()),
                None => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorCode::UnknownError,
                    "The question could not be answered.".to_owned(),
                ),
            }
        }
    };
    Some(
        ApiError::new(status, code.as_str(), message).with_details(json!({
            "trace_id": response.trace_id,
            "status": response.status,
            "final_answer": response.final_answer,
            "errors": response.errors,
        })),
    )
}

/// A question checked and ready to run: the engine (execute or plan-only), the caller
/// and the warnings so far. [`Prepared::spawn`] runs it on its own task.
pub(crate) struct Prepared {
    engine: std::sync::Arc<nl2sql_orchestrator::Engine>,
    question: String,
    user: UserContext,
    owner: UserContext,
    datasource: Option<String>,
    warnings: Vec<String>,
}

impl Prepared {
    /// Checks `req` for `caller`: a non-empty question, a known datasource, the caller's
    /// identity (a request's `user_context` only in development mode).
    pub(crate) fn new(
        state: &AppState,
        caller: &Caller,
        req: QueryRequest,
    ) -> Result<Self, ApiError> {
        let question = req.natural_language.trim().to_owned();
        if question.is_empty() {
            return Err(ApiError::bad_request("natural_language must not be empty."));
        }
        let mut warnings = Vec::new();
        let user = match req.user_context {
            Some(mut ctx) if state.config().dev_trust_user_context => {
                if ctx.tenant_id.as_deref().is_none_or(|t| t.trim().is_empty()) {
                    ctx.tenant_id = Some(state.config().default_tenant_id.clone());
                }
                ctx
            }
            Some(_) => {
                warnings.push(
                    "user_context in the request was ignored: the caller's identity comes from the API key."
                        .to_owned(),
                );
                caller.user.clone()
            }
            None => caller.user.clone(),
        };
        let engine = state.engine();
        if let Some(id) = &req.datasource_id
            && !engine.registry().ids().contains(&id.as_str())
        {
            return Err(unknown_datasource(id));
        }
        let engine = if req.execute {
            engine
        } else {
            let options = EngineOptions {
                execute: false,
                ..engine.options().clone()
            };
            std::sync::Arc::new(nl2sql_orchestrator::Engine::clone(&engine).with_options(options))
        };
        Ok(Prepared {
            engine,
            question,
            user,
            owner: caller.user.clone(),
            datasource: req.datasource_id,
            warnings,
        })
    }

    /// Runs the question on its own task under `cancel` (sending live events to `events`,
    /// when given); the task records the response beside the run log (so
    /// `GET /query/{trace_id}` returns it to its owner) and yields the result and the
    /// response with its reasoning. The run keeps going if the caller stops waiting; only
    /// `cancel` stops it.
    pub(crate) fn spawn(
        self,
        trace_id: TraceId,
        cancel: CancellationToken,
        events: Option<RunEvents>,
    ) -> tokio::task::JoinHandle<(RunResult, QueryResponse)> {
        let Prepared {
            engine,
            question,
            user,
            owner,
            datasource,
            warnings,
        } = self;
        let opts = AskOptions {
            user,
            datasource,
            cancel,
            trace_id: Some(trace_id),
            events,
        };
        tokio::spawn(async move {
            let result = engine.ask(&question, opts).await;
            let mut response = response_of(&result, warnings);
            if let Some(log) = engine.run_log_path(&result.trace_id) {
                let record = RunRecord {
                    version: 1,
                    owner_user_id: owner.user_id.clone().unwrap_or_default(),
                    owner_tenant_id: owner.tenant_id.clone(),
                    response: response.clone(),
                };
                let written = serde_json::to_vec(&record)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| {
                        write_whole(&record_path(&log, &result.trace_id), &bytes)
                            .map_err(|e| e.to_string())
                    });
                if let Err(e) = written {
                    tracing::warn!(trace_id = %result.trace_id, error = %e, "run record not written");
                }
                match reasoning_of(&log) {
                    Ok(r) => response.reasoning = r,
                    Err(e) => tracing::warn!(error = %e, "run log not readable"),
                }
            }
            (result, response)
        })
    }
}

/// The answer, or the error, of a finished run.
pub(crate) fn outcome(
    result: &RunResult,
    response: QueryResponse,
) -> Result<QueryResponse, ApiError> {
    match run_error(result, &response) {
        Some(e) => Err(e),
        None => Ok(response),
    }
}

/// `GET /query/{trace_id}`: the recorded response of a run the caller started (404 for
/// an unknown id, a run of another caller, or a run not made through this API).
pub(crate) async fn get_query(
    State(state): State<AppState>,
    caller: Caller,
    UrlPath(trace_id): UrlPath<String>,
) -> Result<Json<QueryResponse>, ApiError> {
    let not_found = || ApiError::not_found(format!("Unknown trace id '{trace_id}'."));
    let trace = TraceId::parse(&trace_id).map_err(|_| not_found())?;
    let engine = state.engine();
    let log = engine.run_log_path(trace.as_str()).ok_or_else(not_found)?;
    if !log.is_file() {
        return Err(not_found());
    }
    let text = std::fs::read(record_path(&log, trace.as_str())).map_err(|_| not_found())?;
    let record: RunRecord = serde_json::from_slice(&text).map_err(|e| {
        tracing::warn!(trace_id = %trace, error = %e, "run record not readable");
        not_found()
    })?;
    let owner_matches = caller.user.user_id.as_deref() == Some(record.owner_user_id.as_str())
        && caller.user.tenant_id == record.owner_tenant_id;
    if !owner_matches {
        return Err(not_found());
    }
    let mut response = record.response;
    response.reasoning = reasoning_of(&log).map_err(|e| {
        tracing::warn!(trace_id = %trace, error = %e, "run log not readable");
        ApiError::internal()
    })?;
    Ok(Json(response))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_objects_with_unique_keys() {
        let columns = vec!["name".to_owned(), "n".to_owned(), "name".to_owned()];
        let rows = vec![vec![json!("a"), json!(1), json!("b")], vec![json!("c")]];
        let objects = row_objects(&columns, &rows);
        assert_eq!(
            Value::from(objects[0].clone()),
            json!({"name": "a", "n": 1, "name_2": "b"})
        );
        // A short row is padded with nulls.
        assert_eq!(
            Value::from(objects[1].clone()),
            json!({"name": "c", "n": null, "name_2": null})
        );
        let keys: Vec<&String> = objects[0].keys().collect();
        assert_eq!(keys, ["name", "n", "name_2"]);
    }
}

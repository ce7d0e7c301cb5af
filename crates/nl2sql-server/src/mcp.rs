//! The Model Context Protocol server (documented in `docs/mcp.md`), on the official Rust
//! SDK (`rmcp`): over stdio ([`serve_stdio`], `nl2sql mcp`) and over streamable HTTP
//! ([`http_service`], mounted at `/mcp` by [`crate::router`]).
//!
//! Tools: `ask`, `validate_sql`, `list_datasources`, `describe_datasource`, `explain`;
//! resources: one schema per datasource the caller may see
//! (`nl2sql://datasource/{id}/schema`).
//!
//! Identity: over stdio, the caller given when the server starts (the command line's
//! roles); over HTTP, the API key of each request, exactly as for the REST routes (a
//! request without a known key is 401 before it reaches MCP). A client cannot raise its
//! roles. What the guard or the policy refuses is a tool result with `isError` and a
//! readable `{error_code, message, …}`, never a protocol error; protocol errors are kept
//! for calls that do not name a tool or resource of this server.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use nl2sql_orchestrator::{RunResult, validate_sql_live};
use nl2sql_state::{AccessPolicy, Dialect, SchemaSnapshot, TraceId};
use nl2sql_validate::{GuardContext, GuardStatus, SqlGuard};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::ApiError;
use crate::query::{Prepared, QueryRequest, outcome};
use crate::state::AppState;
use crate::stream::follow;

/// Rows an `ask` returns when the call does not say.
pub const DEFAULT_MAX_ROWS: usize = 100;
/// The most rows an `ask` returns, whatever the call says.
pub const MAX_ROWS: usize = 1_000;

/// Who calls: fixed for a stdio server, each HTTP request's API key otherwise.
#[derive(Debug, Clone)]
enum Identity {
    Fixed(Box<Caller>),
    ApiKey,
}

/// The MCP server over an [`AppState`] (cheap to clone: one per MCP session).
#[derive(Debug, Clone)]
pub struct McpServer {
    state: AppState,
    identity: Identity,
}

impl McpServer {
    /// A server whose every call is made by `caller` (stdio).
    pub fn for_caller(state: AppState, caller: Caller) -> Self {
        McpServer {
            state,
            identity: Identity::Fixed(Box::new(caller)),
        }
    }

    /// A server that identifies each HTTP request by its API key.
    pub fn per_api_key(state: AppState) -> Self {
        McpServer {
            state,
            identity: Identity::ApiKey,
        }
    }

    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Caller, McpError> {
        match &self.identity {
            Identity::Fixed(caller) => Ok(Caller::clone(caller)),
            Identity::ApiKey => {
                let parts = ctx
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .ok_or_else(|| McpError::invalid_request("no HTTP request", None))?;
                Caller::of_request(&self.state, &parts.headers)
                    .map_err(|e| McpError::invalid_request(e.body.message, None))
            }
        }
    }
}

/// Serves MCP on standard input and output until the client closes them or `shutdown`
/// is cancelled.
pub async fn serve_stdio(
    server: McpServer,
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    let running = server
        .serve_with_ct(rmcp::transport::stdio(), shutdown)
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The streamable-HTTP MCP service over `state`: sessions in memory (closed after 5
/// minutes idle), `Host` checked against `allowed_hosts`, bodies capped as the REST
/// routes', every session stopped when the server shuts down.
pub fn http_service(
    state: &AppState,
    allowed_hosts: &[String],
) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(Duration::from_secs(5)))
        .with_allowed_hosts(allowed_hosts.iter().cloned())
        .with_max_request_body_bytes(state.config().max_body_bytes)
        .with_cancellation_token(state.shutdown_token().child_token());
    let server = McpServer::per_api_key(state.clone());
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// The middleware in front of `/mcp`: 401 for a request without a known API key.
pub(crate) async fn require_key(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    match Caller::of_request(&state, request.headers()) {
        Ok(_) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

// ---- tool inputs ----

fn yes() -> bool {
    true
}

/// Input of `ask`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AskInput {
    /// The question, in plain English.
    question: String,
    /// Use only this datasource (see `list_datasources`).
    #[serde(default)]
    datasource: Option<String>,
    /// Run the SQL (false: plan, validate and write the SQL only).
    #[serde(default = "yes")]
    execute: bool,
    /// Rows to return (default 100, at most 1000); `truncated` says when there were more.
    #[serde(default)]
    max_rows: Option<usize>,
}

/// Input of `validate_sql`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ValidateSqlInput {
    /// The SQL statement.
    sql: String,
    /// Check against this datasource's live schema and the caller's policy, then dry-run
    /// it (EXPLAIN) and estimate its cost.
    #[serde(default)]
    datasource: Option<String>,
    /// Without a datasource: the dialect to parse (duckdb, postgres, mysql, sqlite or
    /// generic; default generic). Tables and columns are then not verified.
    #[serde(default)]
    dialect: Option<String>,
}

/// Input of `list_datasources`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListDatasourcesInput {}

/// Input of `describe_datasource`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DescribeDatasourceInput {
    /// The datasource id (see `list_datasources`).
    datasource: String,
}

/// Input of `explain`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExplainInput {
    /// The question, in plain English.
    question: String,
    /// Use only this datasource.
    #[serde(default)]
    datasource: Option<String>,
}

fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let schema = schemars::schema_for!(T);
    match serde_json::to_value(schema) {
        Ok(Value::Object(map)) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn object_schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The tools, with their input and output schemas.
fn tools() -> Vec<Tool> {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    let errors = json!({"type": "array", "items": {"type": "object"}});
    vec![
        Tool::new(
            "ask",
            "Answer a question in plain English over the datasources the caller may use: \
             the answer, the result table (capped), the SQL of each sub-query and the trace \
             id. Sends progress notifications as the run goes when the call carries a \
             progress token; cancelling the call cancels the run.",
            schema_of::<AskInput>(),
        )
        .with_raw_output_schema(object_schema(json!({
            "type": "object",
            "properties": {
                "trace_id": {"type": "string"},
                "status": {"type": "string"},
                "answer": {"type": ["string", "null"]},
                "columns": strings,
                "rows": {"type": "array", "items": {"type": "array"}},
                "row_count": {"type": "integer"},
                "truncated": {"type": "boolean"},
                "subqueries": {"type": "array", "items": {"type": "object"}},
                "warnings": strings,
                "errors": errors,
            },
            "required": ["trace_id", "status", "columns", "rows", "row_count", "truncated", "subqueries"],
        }))),
        Tool::new(
            "validate_sql",
            "Check one SQL statement with nl2sql's guard, exactly as `nl2sql validate-sql \
             --format json` does: read-only shape, tables, columns and functions, and the \
             caller's policy; with a datasource also a dry run and a cost estimate. A refused \
             statement is a tool error whose content is the report.",
            schema_of::<ValidateSqlInput>(),
        ),
        Tool::new(
            "list_datasources",
            "The datasources the caller may use: id, engine, description and schema version.",
            schema_of::<ListDatasourcesInput>(),
        )
        .with_raw_output_schema(object_schema(json!({
            "type": "object",
            "properties": {"datasources": {"type": "array", "items": {"type": "object"}}},
            "required": ["datasources"],
        }))),
        Tool::new(
            "describe_datasource",
            "A datasource's tables as the caller may see them: columns (type, nullable, \
             primary key), foreign keys and row counts. Columns the caller's policy denies \
             are left out.",
            schema_of::<DescribeDatasourceInput>(),
        )
        .with_raw_output_schema(object_schema(json!({
            "type": "object",
            "properties": {
                "datasource_id": {"type": "string"},
                "engine": {"type": "string"},
                "schema_version": {"type": ["string", "null"]},
                "tables": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["datasource_id", "tables"],
        }))),
        Tool::new(
            "explain",
            "Plan a question without running it: the execution DAG, each sub-query's typed \
             plan and SQL, the warnings.",
            schema_of::<ExplainInput>(),
        )
        .with_raw_output_schema(object_schema(json!({
            "type": "object",
            "properties": {
                "trace_id": {"type": "string"},
                "status": {"type": "string"},
                "dag": {},
                "subqueries": {"type": "array", "items": {"type": "object"}},
                "warnings": strings,
                "errors": errors,
            },
            "required": ["trace_id", "status", "subqueries"],
        }))),
    ]
}

/// A tool error the agent can read: `{error_code, message, details?}`.
fn tool_error(code: &str, message: impl Into<String>, details: Option<Value>) -> CallToolResult {
    let mut body = json!({"error_code": code, "message": message.into()});
    if let Some(d) = details {
        body["details"] = d;
    }
    CallToolResult::structured_error(body)
}

fn api_error(e: &ApiError) -> CallToolResult {
    tool_error(
        &e.body.error_code,
        e.body.message.clone(),
        e.body.details.clone(),
    )
}

fn arguments<T: DeserializeOwned>(params: &CallToolRequestParams) -> Result<T, CallToolResult> {
    let args = Value::Object(params.arguments.clone().unwrap_or_default());
    serde_json::from_value(args).map_err(|e| {
        tool_error(
            "BAD_REQUEST",
            format!("Invalid arguments for '{}': {e}", params.name),
            None,
        )
    })
}

const SCHEMA_URI_PREFIX: &str = "nl2sql://datasource/";
const SCHEMA_URI_SUFFIX: &str = "/schema";

fn schema_uri(id: &str) -> String {
    format!("{SCHEMA_URI_PREFIX}{id}{SCHEMA_URI_SUFFIX}")
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("nl2sql", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Ask questions in plain English over the caller's databases (`ask`), check SQL \
             before running it (`validate_sql`), and look at what is there \
             (`list_datasources`, `describe_datasource`, the schema resources). Every \
             statement is read-only and checked by nl2sql's guard and policy.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&context)?;
        let result = match request.name.as_ref() {
            "ask" => match arguments::<AskInput>(&request) {
                Ok(input) => self.ask(&caller, input, &context).await,
                Err(e) => e,
            },
            "explain" => match arguments::<ExplainInput>(&request) {
                Ok(input) => self.explain(&caller, input, &context).await,
                Err(e) => e,
            },
            "validate_sql" => match arguments::<ValidateSqlInput>(&request) {
                Ok(input) => self.validate_sql(&caller, input).await,
                Err(e) => e,
            },
            "list_datasources" => match arguments::<ListDatasourcesInput>(&request) {
                Ok(ListDatasourcesInput {}) => self.list_datasources(&caller),
                Err(e) => e,
            },
            "describe_datasource" => match arguments::<DescribeDatasourceInput>(&request) {
                Ok(input) => match self.describe(&caller, &input.datasource) {
                    Ok(v) => CallToolResult::structured(v),
                    Err(e) => e,
                },
                Err(e) => e,
            },
            other => {
                return Err(McpError::invalid_params(
                    format!("Unknown tool '{other}'."),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let caller = self.caller(&context)?;
        let engine = self.state.engine();
        let access = engine.access_for(&caller.user);
        let resources = engine
            .registry()
            .ids()
            .into_iter()
            .filter(|id| caller.may_see(&access, id))
            .map(|id| {
                Resource::new(schema_uri(id), format!("{id} schema"))
                    .with_description(format!(
                        "The tables, columns, keys and row counts of datasource '{id}' that the caller may see."
                    ))
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let caller = self.caller(&context)?;
        let not_found = || {
            McpError::resource_not_found(
                format!("No resource '{}'.", request.uri),
                Some(json!({"uri": request.uri})),
            )
        };
        let id = request
            .uri
            .strip_prefix(SCHEMA_URI_PREFIX)
            .and_then(|rest| rest.strip_suffix(SCHEMA_URI_SUFFIX))
            .ok_or_else(not_found)?;
        let described = self.describe(&caller, id).map_err(|_| not_found())?;
        let text = serde_json::to_string_pretty(&described)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri.clone()).with_mime_type("application/json"),
        ])
        .into())
    }
}

impl McpServer {
    /// Runs `req` for `caller`, sending progress notifications when the call carries a
    /// progress token; the MCP call's cancellation cancels the run, which is still
    /// recorded (as cancelled). A run that did not answer is the tool error its REST
    /// request would have had.
    async fn run(
        &self,
        caller: &Caller,
        req: QueryRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<(RunResult, crate::query::QueryResponse), CallToolResult> {
        let prepared = Prepared::new(&self.state, caller, req).map_err(|e| api_error(&e))?;
        let cancel = self.state.shutdown_token().child_token();
        let _guard = cancel.clone().drop_guard();
        let trace_id = TraceId::new();
        let token = context.meta.get_progress_token();
        let step = std::sync::atomic::AtomicU32::new(0);
        let notify = |message: String| {
            let token = token.clone();
            let peer = context.peer.clone();
            let n = step.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move {
                if let Some(token) = token {
                    let mut param = ProgressNotificationParam::new(token, f64::from(n));
                    param.message = Some(message);
                    // A client that cannot take a notification any more is not the run's
                    // concern: its cancellation comes as a cancellation.
                    let _ = peer.notify_progress(param).await;
                }
            }
        };
        notify(format!("run {}", trace_id.as_str())).await;
        let joined = follow(
            prepared,
            trace_id,
            cancel,
            context.ct.cancelled(),
            |shown| notify(format!("{}: {}", shown.name, shown.data)),
        )
        .await;
        let (result, response) = joined.map_err(|e| {
            tracing::error!(error = %e, "a run panicked");
            tool_error("INTERNAL_ERROR", "Internal error.", None)
        })?;
        let response = outcome(&result, response).map_err(|e| api_error(&e))?;
        Ok((result, response))
    }

    async fn ask(
        &self,
        caller: &Caller,
        input: AskInput,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let cap = input.max_rows.unwrap_or(DEFAULT_MAX_ROWS).min(MAX_ROWS);
        let req = QueryRequest {
            natural_language: input.question,
            datasource_id: input.datasource,
            execute: input.execute,
            user_context: None,
        };
        let (result, response) = match self.run(caller, req, context).await {
            Ok(done) => done,
            Err(e) => return e,
        };
        let rows = result.rows.clone().unwrap_or_default();
        let row_count = rows.len();
        let mut warnings = response.warnings.clone();
        if row_count > cap {
            warnings.push(format!(
                "Only the first {cap} of {row_count} rows are returned (max_rows)."
            ));
        }
        CallToolResult::structured(json!({
            "trace_id": result.trace_id,
            "status": result.status,
            "answer": response.final_answer,
            "columns": response.columns,
            "rows": rows.into_iter().take(cap).collect::<Vec<_>>(),
            "row_count": row_count,
            "truncated": row_count > cap,
            "subqueries": response.subqueries,
            "warnings": warnings,
            "errors": response.errors,
        }))
    }

    async fn explain(
        &self,
        caller: &Caller,
        input: ExplainInput,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let req = QueryRequest {
            natural_language: input.question,
            datasource_id: input.datasource,
            execute: false,
            user_context: None,
        };
        let (result, response) = match self.run(caller, req, context).await {
            Ok(done) => done,
            Err(e) => return e,
        };
        CallToolResult::structured(json!({
            "trace_id": result.trace_id,
            "status": result.status,
            "dag": result.dag,
            "subqueries": result.subqueries.iter().map(|s| json!({
                "id": s.id,
                "datasource_id": s.datasource_id,
                "intent": s.intent,
                "status": s.status,
                "plan": s.plan,
                "sql": s.sql,
            })).collect::<Vec<_>>(),
            "warnings": response.warnings,
            "errors": response.errors,
        }))
    }

    async fn validate_sql(&self, caller: &Caller, input: ValidateSqlInput) -> CallToolResult {
        match (&input.datasource, &input.dialect) {
            (Some(_), Some(_)) => tool_error(
                "BAD_REQUEST",
                "Give a datasource or a dialect, not both: a datasource has its own dialect.",
                None,
            ),
            (Some(id), None) => {
                let engine = self.state.engine();
                let access = engine.access_for(&caller.user);
                if !engine.registry().ids().contains(&id.as_str()) || !caller.may_see(&access, id) {
                    return api_error(&crate::state::unknown_datasource(id));
                }
                match validate_sql_live(engine.registry(), id, &input.sql, Some(access), None).await
                {
                    Ok((report, _)) => {
                        let json = report.to_json();
                        if report.is_blocking() {
                            CallToolResult::structured_error(json)
                        } else {
                            CallToolResult::structured(json)
                        }
                    }
                    Err(e) => CallToolResult::structured_error(json!({
                        "status": "unavailable",
                        "error": {"code": e.error_code.as_str(), "message": e.safe_message},
                        "sql": input.sql,
                    })),
                }
            }
            (None, dialect) => {
                let dialect = match dialect.as_deref().map(str::parse::<Dialect>).transpose() {
                    Ok(d) => d.unwrap_or(Dialect::Generic),
                    Err(_) => {
                        return tool_error(
                            "BAD_REQUEST",
                            "Unknown dialect: use duckdb, postgres, mysql, sqlite or generic.",
                            None,
                        );
                    }
                };
                let report = SqlGuard::new(GuardContext::without_schema("default", dialect))
                    .check(&input.sql);
                if report.status == GuardStatus::Ok {
                    CallToolResult::structured(report.to_json())
                } else {
                    CallToolResult::structured_error(report.to_json())
                }
            }
        }
    }

    fn list_datasources(&self, caller: &Caller) -> CallToolResult {
        let engine = self.state.engine();
        let access = engine.access_for(&caller.user);
        let datasources: Vec<Value> = engine
            .registry()
            .ids()
            .into_iter()
            .filter(|id| caller.may_see(&access, id))
            .filter_map(|id| {
                let config = engine.registry().config(id).ok()?;
                Some(json!({
                    "id": id,
                    "engine": config.engine.as_str(),
                    "description": config.description,
                    "schema_version": engine.store().latest_version(id),
                }))
            })
            .collect();
        CallToolResult::structured(json!({ "datasources": datasources }))
    }

    /// Datasource `id` as `caller` may see it (a tool error when it may not, or when the
    /// datasource was never indexed).
    fn describe(&self, caller: &Caller, id: &str) -> Result<Value, CallToolResult> {
        let engine = self.state.engine();
        let access = engine.access_for(&caller.user);
        let config = engine
            .registry()
            .config(id)
            .ok()
            .filter(|_| caller.may_see(&access, id))
            .ok_or_else(|| api_error(&crate::state::unknown_datasource(id)))?;
        let snapshot = engine.store().latest_snapshot(id).ok_or_else(|| {
            tool_error(
                "NOT_INDEXED",
                format!("Datasource '{id}' has not been indexed yet."),
                None,
            )
        })?;
        Ok(json!({
            "datasource_id": id,
            "engine": config.engine.as_str(),
            "description": config.description,
            "schema_version": engine.store().latest_version(id),
            "tables": visible_tables(id, &snapshot, &access),
        }))
    }
}

/// The tables of `snapshot` that `access` lets its caller read, without denied columns
/// (and without foreign keys through them or to tables it may not read).
fn visible_tables(id: &str, snapshot: &SchemaSnapshot, access: &AccessPolicy) -> Vec<Value> {
    let allowed = |schema: &str, table: &str| access.table_allowed(id, Some(schema), table);
    snapshot
        .contract
        .tables
        .iter()
        .filter(|(_, t)| allowed(&t.table.schema_name, &t.table.table_name))
        .map(|(key, t)| {
            let name = &t.table.table_name;
            let visible = |c: &str| !access.column_denied(id, name, c);
            let columns: Vec<Value> = t
                .columns
                .values()
                .filter(|c| visible(&c.name))
                .map(|c| {
                    json!({
                        "name": c.name,
                        "type": c.data_type,
                        "nullable": c.is_nullable,
                        "primary_key": c.is_primary_key,
                    })
                })
                .collect();
            let foreign_keys: Vec<Value> =
                t.foreign_keys
                    .iter()
                    .filter(|fk| {
                        fk.constrained_columns.iter().all(|c| visible(c))
                            && allowed(
                                &fk.referred_table.schema_name,
                                &fk.referred_table.table_name,
                            )
                            && fk.referred_columns.iter().all(|c| {
                                !access.column_denied(id, &fk.referred_table.table_name, c)
                            })
                    })
                    .map(|fk| {
                        json!({
                            "columns": fk.constrained_columns,
                            "references": fk.referred_table.table_name,
                            "referred_columns": fk.referred_columns,
                        })
                    })
                    .collect();
            let row_count = snapshot
                .metadata
                .as_ref()
                .and_then(|m| m.tables.get(key))
                .and_then(|m| m.row_count);
            json!({
                "name": name,
                "schema": t.table.schema_name,
                "columns": columns,
                "foreign_keys": foreign_keys,
                "row_count": row_count,
            })
        })
        .collect()
}

//! Request, result and limit contracts of the SPI (spec: adapters.md §3–§4,
//! errors-and-recovery.md §1.5).

use std::fmt;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use nl2sql_state::{ErrorCode, Severity};
use serde::{Deserialize, Serialize};

/// Default statement timeout (`DEFAULT_STATEMENT_TIMEOUT_MS`).
pub const DEFAULT_STATEMENT_TIMEOUT_MS: u64 = 30_000;
pub use nl2sql_state::DEFAULT_ROW_LIMIT;
/// Default byte limit of one result (`DEFAULT_MAX_BYTES`, 10 MiB).
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// Default connect timeout (`CONNECT_TIMEOUT_MS`).
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 5_000;
/// Default time budget of column statistics in a snapshot (`SCHEMA_STATS_TIMEOUT_MS`).
pub const DEFAULT_SCHEMA_STATS_TIMEOUT_MS: u64 = 10_000;
/// Tables above this many rows are profiled on a sample (`SCHEMA_STATS_SAMPLE_ROWS`).
pub const DEFAULT_SCHEMA_STATS_SAMPLE_ROWS: u64 = 100_000;

/// Adapter settings beyond the per-statement [`Limits`]: how long connecting may take and
/// how much work the column statistics of a schema snapshot may do (spec:
/// errors-and-recovery.md §6, adapters.md §5.2). The default is the spec's defaults.
///
/// The embedded engines (DuckDB, SQLite) open a file and have nothing to connect to:
/// they ignore `connect_timeout_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdapterOptions {
    /// Connecting to a server gives up after this many milliseconds
    /// (`CONNECT_TIMEOUT_MS`, default [`DEFAULT_CONNECT_TIMEOUT_MS`]).
    pub connect_timeout_ms: u64,
    /// Column statistics of a snapshot stop after this many milliseconds; the remaining
    /// columns get none (`SCHEMA_STATS_TIMEOUT_MS`, default
    /// [`DEFAULT_SCHEMA_STATS_TIMEOUT_MS`]).
    pub schema_stats_timeout_ms: u64,
    /// Tables with more rows are profiled on their first this many rows
    /// (`SCHEMA_STATS_SAMPLE_ROWS`, default [`DEFAULT_SCHEMA_STATS_SAMPLE_ROWS`]).
    pub schema_stats_sample_rows: u64,
}

impl AdapterOptions {
    /// The defaults with `timeout` as the connect timeout (whole milliseconds, saturating).
    pub fn with_connect_timeout(timeout: std::time::Duration) -> Self {
        AdapterOptions {
            connect_timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            ..AdapterOptions::default()
        }
    }

    /// How long a whole snapshot may take under `limits`: three times the statistics
    /// budget (catalog reads and row counts come on top of the statistics), and never
    /// less than the statement timeout.
    pub fn snapshot_timeout_ms(&self, limits: &Limits) -> u64 {
        self.schema_stats_timeout_ms
            .saturating_mul(3)
            .max(limits.statement_timeout_ms)
    }
}

impl Default for AdapterOptions {
    fn default() -> Self {
        AdapterOptions {
            connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT_MS,
            schema_stats_timeout_ms: DEFAULT_SCHEMA_STATS_TIMEOUT_MS,
            schema_stats_sample_rows: DEFAULT_SCHEMA_STATS_SAMPLE_ROWS,
        }
    }
}

/// The sandbox limits of a datasource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// At most this many rows are read.
    pub row_limit: u64,
    /// A statement is cancelled after this many milliseconds.
    pub statement_timeout_ms: u64,
    /// At most this many bytes of data are returned.
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            row_limit: DEFAULT_ROW_LIMIT,
            statement_timeout_ms: DEFAULT_STATEMENT_TIMEOUT_MS,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl Limits {
    /// The effective limits: the smaller of each configured value and the request's.
    pub fn narrowed_by(self, request: &RequestLimits) -> Limits {
        Limits {
            row_limit: request
                .row_limit
                .map_or(self.row_limit, |r| r.min(self.row_limit)),
            statement_timeout_ms: request.timeout_ms.map_or(self.statement_timeout_ms, |t| {
                t.min(self.statement_timeout_ms)
            }),
            max_bytes: request
                .max_bytes
                .map_or(self.max_bytes, |b| b.min(self.max_bytes)),
        }
    }
}

/// Limits a request may ask for; each only narrows the datasource's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLimits {
    /// Row limit.
    #[serde(default)]
    pub row_limit: Option<u64>,
    /// Statement timeout in milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Byte limit.
    #[serde(default)]
    pub max_bytes: Option<u64>,
}

/// A capability an adapter advertises (spec: adapters.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Runs SQL.
    SupportsSql,
    /// Runs REST requests.
    SupportsRest,
    /// Runs GraphQL requests.
    SupportsGraphql,
    /// Reads a data lake.
    SupportsLake,
    /// Can describe its schema.
    SupportsSchemaIntrospection,
    /// Can check a statement without running it.
    SupportsDryRun,
    /// Can estimate a statement's cost.
    SupportsCostEstimate,
}

impl Capability {
    /// The capability's string form (`supports_sql`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::SupportsSql => "supports_sql",
            Capability::SupportsRest => "supports_rest",
            Capability::SupportsGraphql => "supports_graphql",
            Capability::SupportsLake => "supports_lake",
            Capability::SupportsSchemaIntrospection => "supports_schema_introspection",
            Capability::SupportsDryRun => "supports_dry_run",
            Capability::SupportsCostEstimate => "supports_cost_estimate",
        }
    }
}

/// The set of capabilities of one adapter, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilitySet(pub Vec<Capability>);

impl CapabilitySet {
    /// A set of `caps`.
    pub fn new(caps: &[Capability]) -> Self {
        let mut v = caps.to_vec();
        v.sort();
        v.dedup();
        CapabilitySet(v)
    }

    /// Whether the set holds `cap`.
    pub fn has(&self, cap: Capability) -> bool {
        self.0.contains(&cap)
    }

    /// Whether the adapter can estimate cost.
    pub fn supports_cost_estimate(&self) -> bool {
        self.has(Capability::SupportsCostEstimate)
    }

    /// Whether the adapter can dry-run.
    pub fn supports_dry_run(&self) -> bool {
        self.has(Capability::SupportsDryRun)
    }

    /// The capability strings.
    pub fn as_strings(&self) -> Vec<&'static str> {
        self.0.iter().map(|c| c.as_str()).collect()
    }
}

/// A request to an adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterRequest {
    /// `sql` for SQL adapters.
    pub plan_type: String,
    /// For SQL: `{"sql": "<statement>"}`.
    #[serde(default)]
    pub payload: serde_json::Value,
    /// Bound parameters (unused by SQL adapters today).
    #[serde(default)]
    pub parameters: serde_json::Value,
    /// Limits that narrow the datasource's.
    #[serde(default)]
    pub limits: RequestLimits,
    /// Trace id of the run.
    #[serde(default)]
    pub trace_id: Option<String>,
}

impl AdapterRequest {
    /// A SQL request with no extra limits.
    pub fn sql(sql: impl Into<String>) -> Self {
        AdapterRequest {
            plan_type: "sql".to_owned(),
            payload: serde_json::json!({ "sql": sql.into() }),
            parameters: serde_json::Value::Null,
            limits: RequestLimits::default(),
            trace_id: None,
        }
    }

    /// The same request with `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: RequestLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The SQL text of the payload, if any.
    pub fn sql_text(&self) -> Option<&str> {
        self.payload.get("sql").and_then(serde_json::Value::as_str)
    }
}

/// Why a result stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncatedReason {
    /// The row limit was reached.
    RowLimit,
    /// The byte limit was reached.
    MaxBytes,
}

/// Execution statistics of one call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecutionStats {
    /// Wall-clock time of the call in milliseconds.
    pub execution_time_ms: f64,
    /// Why the result was truncated, when it was.
    #[serde(default)]
    pub truncated_reason: Option<TruncatedReason>,
}

/// The code of a [`ResultError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ResultErrorCode {
    /// A non-SQL request reached a SQL adapter.
    CapabilityViolation,
    /// The request had no SQL.
    MissingSql,
    /// The engine rejected or failed the statement.
    ExecutionFailed,
    /// The statement timeout expired; the statement was cancelled.
    ExecutionTimeout,
    /// The datasource cannot be reached (or its circuit breaker is open).
    ServiceUnavailable,
    /// The guard or the engine sandbox refused the statement.
    SecurityViolation,
    /// The adapter itself failed unexpectedly.
    ExecutorCrash,
}

impl ResultErrorCode {
    /// The stable string form.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultErrorCode::CapabilityViolation => "CAPABILITY_VIOLATION",
            ResultErrorCode::MissingSql => "MISSING_SQL",
            ResultErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ResultErrorCode::ExecutionTimeout => "EXECUTION_TIMEOUT",
            ResultErrorCode::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            ResultErrorCode::SecurityViolation => "SECURITY_VIOLATION",
            ResultErrorCode::ExecutorCrash => "EXECUTOR_CRASH",
        }
    }

    /// The pipeline code of the same name (`EXECUTION_FAILED` when there is none).
    pub fn pipeline_code(self) -> ErrorCode {
        match self {
            ResultErrorCode::MissingSql => ErrorCode::MissingSql,
            ResultErrorCode::ExecutionTimeout => ErrorCode::ExecutionTimeout,
            ResultErrorCode::ServiceUnavailable => ErrorCode::ServiceUnavailable,
            ResultErrorCode::SecurityViolation => ErrorCode::SecurityViolation,
            ResultErrorCode::ExecutorCrash => ErrorCode::ExecutorCrash,
            ResultErrorCode::CapabilityViolation | ResultErrorCode::ExecutionFailed => {
                ErrorCode::ExecutionFailed
            }
        }
    }

    /// Whether this failure counts against the datasource's circuit breaker: only
    /// connectivity, timeouts and crashes do, never errors caused by the SQL itself.
    pub fn counts_for_breaker(self) -> bool {
        matches!(
            self,
            ResultErrorCode::ServiceUnavailable
                | ResultErrorCode::ExecutionTimeout
                | ResultErrorCode::ExecutorCrash
        )
    }

    fn default_severity(self) -> Severity {
        match self {
            ResultErrorCode::ServiceUnavailable
            | ResultErrorCode::SecurityViolation
            | ResultErrorCode::ExecutorCrash => Severity::Critical,
            _ => Severity::Error,
        }
    }

    fn default_retryable(self) -> bool {
        matches!(
            self,
            ResultErrorCode::ExecutionFailed
                | ResultErrorCode::ExecutionTimeout
                | ResultErrorCode::ServiceUnavailable
        )
    }
}

impl fmt::Display for ResultErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A structured adapter failure. `safe_message` may be shown to users; the driver's
/// own text is kept in `detail`, which is never serialised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("[{error_code}] {safe_message}")]
pub struct ResultError {
    /// The code.
    pub error_code: ResultErrorCode,
    /// A message safe to show: no URLs, paths, hosts or secrets.
    pub safe_message: String,
    /// Severity.
    pub severity: Severity,
    /// Whether a retry may help.
    pub retryable: bool,
    /// The adapter operation (`execute`, `dry_run`, `cost_estimate`, `schema_snapshot`, `connect`).
    #[serde(default)]
    pub stage: Option<String>,
    /// The datasource.
    #[serde(default)]
    pub datasource_id: Option<String>,
    /// An id to find the detail in logs.
    #[serde(default)]
    pub error_id: Option<String>,
    /// The driver's message, for logs only.
    #[serde(skip)]
    pub detail: Option<String>,
}

impl ResultError {
    /// An error with `code` and a safe message, with the code's default severity and
    /// retryability.
    pub fn new(code: ResultErrorCode, safe_message: impl Into<String>) -> Self {
        ResultError {
            error_code: code,
            safe_message: safe_message.into(),
            severity: code.default_severity(),
            retryable: code.default_retryable(),
            stage: None,
            datasource_id: None,
            error_id: None,
            detail: None,
        }
    }

    /// An error whose safe message is the engine's message passed through
    /// [`nl2sql_state::sanitize_engine_message`]; the raw text goes to `detail`.
    pub fn from_engine(code: ResultErrorCode, engine_message: &str) -> Self {
        let mut e = ResultError::new(code, nl2sql_state::sanitize_engine_message(engine_message));
        e.detail = Some(engine_message.to_owned());
        e
    }

    /// `SERVICE_UNAVAILABLE` with a safe message; the driver's text kept in `detail`.
    pub fn unavailable(safe_message: &str, detail: String) -> Self {
        ResultError::new(ResultErrorCode::ServiceUnavailable, safe_message).with_detail(detail)
    }

    /// `EXECUTOR_CRASH` with a safe message; the driver's text kept in `detail`.
    pub fn crash(safe_message: &str, detail: String) -> Self {
        ResultError::new(ResultErrorCode::ExecutorCrash, safe_message).with_detail(detail)
    }

    /// `EXECUTION_TIMEOUT`: the statement ran past its timeout and was stopped; the
    /// engine's text kept in `detail`.
    pub fn timed_out(detail: String) -> Self {
        ResultError::new(
            ResultErrorCode::ExecutionTimeout,
            "the statement exceeded its timeout and was cancelled",
        )
        .with_detail(detail)
    }

    /// The same error with the driver's text in `detail` (never serialised).
    #[must_use]
    pub fn with_detail(mut self, detail: String) -> Self {
        self.detail = Some(detail);
        self
    }

    /// The same error with `stage` and `datasource_id` filled in.
    #[must_use]
    pub fn at(mut self, stage: &str, datasource_id: &str) -> Self {
        self.stage = Some(stage.to_owned());
        self.datasource_id = Some(datasource_id.to_owned());
        self
    }

    /// The pipeline error the executor reports for this failure.
    pub fn to_pipeline_error(&self, node: &str) -> nl2sql_state::PipelineError {
        nl2sql_state::PipelineError::new(
            node,
            self.error_code.pipeline_code(),
            self.severity,
            self.safe_message.clone(),
        )
    }
}

/// The result of one execution: Arrow batches with a schema, or an error.
#[derive(Debug, Clone)]
pub struct ResultFrame {
    /// Whether the statement ran.
    pub success: bool,
    /// The Arrow schema of the result (column types from the engine's metadata).
    pub schema: Option<SchemaRef>,
    /// The rows.
    pub batches: Vec<RecordBatch>,
    /// Number of rows returned.
    pub row_count: u64,
    /// Whether a limit stopped reading early.
    pub truncated: bool,
    /// Size of the data returned (Arrow buffer sizes).
    pub bytes: Option<u64>,
    /// The datasource.
    pub datasource_id: Option<String>,
    /// The tenant, when known.
    pub tenant_id: Option<String>,
    /// Statistics.
    pub execution_stats: ExecutionStats,
    /// The failure, when `success` is false.
    pub error: Option<ResultError>,
}

impl ResultFrame {
    /// A failed frame.
    pub fn failed(error: ResultError, execution_time_ms: f64) -> Self {
        ResultFrame {
            success: false,
            schema: None,
            batches: Vec::new(),
            row_count: 0,
            truncated: false,
            bytes: None,
            datasource_id: error.datasource_id.clone(),
            tenant_id: None,
            execution_stats: ExecutionStats {
                execution_time_ms,
                truncated_reason: None,
            },
            error: Some(error),
        }
    }

    /// The column names of the result.
    pub fn columns(&self) -> Vec<String> {
        self.schema
            .as_ref()
            .map(|s| s.fields().iter().map(|f| f.name().clone()).collect())
            .unwrap_or_default()
    }

    /// The error code, when the frame failed.
    pub fn error_code(&self) -> Option<ResultErrorCode> {
        self.error.as_ref().map(|e| e.error_code)
    }
}

/// The outcome of a dry run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DryRunResult {
    /// Whether the engine accepted the statement.
    pub is_valid: bool,
    /// The engine's message passed through the safe-message filter, when invalid.
    pub error_message: Option<String>,
    /// The plan text or other engine data.
    pub data: Option<serde_json::Value>,
    /// The structured error, when the dry run could not run at all or was invalid.
    #[serde(default)]
    pub error: Option<ResultError>,
}

/// A normalised cost estimate; `None` means unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostEstimate {
    /// Engine cost units.
    pub estimated_cost: Option<f64>,
    /// Estimated result rows.
    pub estimated_rows: Option<u64>,
    /// Estimated time, when the engine gives one.
    pub estimated_time_ms: Option<f64>,
}

/// The format of a plan text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanFormat {
    /// Plain text.
    Text,
    /// JSON.
    Json,
    /// XML.
    Xml,
}

/// An engine's query plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryPlan {
    /// The plan.
    pub plan_text: String,
    /// Its format.
    pub format: PlanFormat,
}

//! The `DatasourceAdapter` trait (spec: adapters.md §4).

use std::time::Instant;

use async_trait::async_trait;
use nl2sql_state::{Dialect, ErrorCode, SchemaContract, SchemaSnapshot};
use nl2sql_validate::{GuardContext, GuardedSql, SqlGuard};

use crate::types::{
    AdapterRequest, CapabilitySet, CostEstimate, DryRunResult, Limits, QueryPlan, RequestLimits,
    ResultError, ResultErrorCode, ResultFrame,
};

/// One datasource behind a driver. Every operation is sandboxed by the engine (read-only,
/// no files, no network, no settings changes) and bounded by [`Limits`].
///
/// Every statement an adapter runs, plans or explains is a [`GuardedSql`]: the SQL guard's
/// rendering of a tree it approved, which only the guard can make. Implementors write
/// [`DatasourceAdapter::run_sql`]; callers use [`DatasourceAdapter::execute_guarded`]
/// (a statement already checked against the schema and policy) or
/// [`DatasourceAdapter::execute`] (a request with SQL text, which runs the guard's shape
/// and security checks first).
#[async_trait]
pub trait DatasourceAdapter: Send + Sync {
    /// The datasource id.
    fn id(&self) -> &str;
    /// The engine type (`sqlite`, `postgres`, `mysql`, `duckdb`).
    fn engine_type(&self) -> &str;
    /// The SQL dialect the engine speaks.
    fn dialect(&self) -> Dialect;
    /// What the adapter can do.
    fn capabilities(&self) -> &CapabilitySet;
    /// The configured sandbox limits.
    fn limits(&self) -> Limits;
    /// Connects (or opens) and runs a trivial query.
    async fn test_connection(&self) -> Result<(), ResultError>;
    /// Tables, columns, keys, row counts and cheap column statistics, within the
    /// statistics time budget.
    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError>;
    /// The structure only (tables, columns, keys), without statistics or samples: cheap
    /// enough to call before every question to detect a schema change. Must equal
    /// `schema_snapshot().contract`.
    ///
    /// The default takes a full snapshot and drops its metadata; adapters override it to
    /// read the catalog alone.
    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        self.schema_snapshot().await.map(|s| s.contract)
    }
    /// Runs `sql` in the engine sandbox under exactly `limits`. Failures are returned as
    /// a failed frame, never raised; a statement guarded in another dialect is refused
    /// ([`dialect_mismatch`]).
    async fn run_sql(&self, sql: &GuardedSql, limits: Limits) -> ResultFrame;
    /// Checks `sql` with the engine (binds and plans) without executing it.
    async fn dry_run(&self, sql: &GuardedSql) -> DryRunResult;
    /// The engine's plan estimates, normalised; unknown values are `None`.
    async fn cost_estimate(&self, sql: &GuardedSql) -> Result<CostEstimate, ResultError>;
    /// The engine's plan.
    async fn explain(&self, sql: &GuardedSql) -> Result<QueryPlan, ResultError>;
    /// A non-secret summary of the datasource.
    fn details(&self) -> serde_json::Value;

    /// Validates `req` (plan type, non-empty SQL, the guard's shape and security checks)
    /// and runs it under the narrower of the datasource's and the request's limits.
    async fn execute(&self, req: AdapterRequest) -> ResultFrame {
        let started = Instant::now();
        let fail = |e: ResultError| {
            ResultFrame::failed(
                e.at("execute", self.id()),
                started.elapsed().as_secs_f64() * 1000.0,
            )
        };
        if req.plan_type != "sql" {
            return fail(ResultError::new(
                ResultErrorCode::CapabilityViolation,
                "SQL adapter received non-SQL request.",
            ));
        }
        let sql = match req.sql_text() {
            Some(s) if !s.trim().is_empty() => s.to_owned(),
            _ => {
                return fail(ResultError::new(
                    ResultErrorCode::MissingSql,
                    "SQL adapter received an empty SQL payload.",
                ));
            }
        };
        let guarded = match shape_check(self.id(), self.dialect(), &sql) {
            Ok(guarded) => guarded,
            Err(e) => return fail(e),
        };
        self.execute_guarded(&guarded, &req.limits).await
    }

    /// Runs a guarded statement under the narrower of the datasource's and `limits`.
    async fn execute_guarded(&self, sql: &GuardedSql, limits: &RequestLimits) -> ResultFrame {
        let limits = self.limits().narrowed_by(limits);
        self.run_sql(sql, limits).await
    }
}

/// The refusal of a statement guarded in another dialect than the adapter's, if it is.
pub fn dialect_mismatch(adapter: Dialect, sql: &GuardedSql) -> Option<ResultError> {
    (sql.dialect() != adapter).then(|| {
        ResultError::new(
            ResultErrorCode::CapabilityViolation,
            format!(
                "the statement was checked in the {} dialect, but the engine speaks {adapter}",
                sql.dialect()
            ),
        )
    })
}

/// Runs the guard without a schema (size, parse, statement shape, security) and returns
/// the statement to run, or the first blocking issue as a [`ResultError`].
pub fn shape_check(
    datasource_id: &str,
    dialect: Dialect,
    sql: &str,
) -> Result<GuardedSql, ResultError> {
    let report = SqlGuard::new(GuardContext::without_schema(datasource_id, dialect)).check(sql);
    if let Some(guarded) = report.guarded {
        return Ok(guarded);
    }
    let issue = report.issues.iter().find(|i| i.severity.is_blocking());
    let (code, message) = match issue {
        Some(i) if i.code == ErrorCode::SqlSyntaxError => {
            (ResultErrorCode::ExecutionFailed, i.message.clone())
        }
        Some(i) => (ResultErrorCode::SecurityViolation, i.message.clone()),
        None => (
            ResultErrorCode::SecurityViolation,
            "statement rejected by the SQL guard".to_owned(),
        ),
    };
    Err(ResultError::new(code, message))
}

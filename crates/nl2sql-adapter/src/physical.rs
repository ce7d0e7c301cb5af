//! The physical validator: guard → dry run → cost estimate (spec: validators.md §4).

use nl2sql_state::Node;
use nl2sql_state::{AccessPolicy, ErrorCode, PipelineError, SchemaContract, Severity};
use nl2sql_validate::{GuardContext, GuardedSql, SqlGuard};
use serde::Serialize;

use crate::breaker::{CircuitBreaker, DatasourceBreaker as _, PermitOutcome as _};
use crate::spi::DatasourceAdapter;
use crate::types::{CostEstimate, DryRunResult, ResultError, ResultErrorCode};

const NODE: &str = Node::PhysicalValidator.as_str();

/// Settings of the physical validator.
#[derive(Debug, Clone, Default)]
pub struct PhysicalSettings {
    /// `PHYSICAL_MAX_COST`: an estimated cost above it is a blocking `PERFORMANCE_WARNING`.
    pub max_cost: Option<f64>,
    /// The caller's access policy, applied by the guard.
    pub policy: Option<AccessPolicy>,
    /// Whether the SQL came from the generator (guard failures are then reported as
    /// `SQL_GEN_FAILED`) rather than from a user.
    pub generated: bool,
}

/// What the physical validator found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhysicalReport {
    /// Findings (warnings and errors).
    pub errors: Vec<PipelineError>,
    /// "Physical validation passed." or the list of messages.
    pub reasoning: Vec<String>,
    /// The dry run, when it ran.
    pub dry_run: Option<DryRunResult>,
    /// The cost estimate, when it ran.
    pub cost: Option<CostEstimate>,
    /// The statement to execute: the guard's rendering of what it approved (set when the
    /// guard passed, whatever the dry run and cost estimate then found).
    #[serde(skip)]
    pub guarded: Option<GuardedSql>,
}

impl PhysicalReport {
    /// Whether any finding blocks (ERROR or CRITICAL).
    pub fn is_blocking(&self) -> bool {
        self.errors.iter().any(PipelineError::is_blocking)
    }
}

/// Validates `sql` against `adapter`: the SQL guard over `contract`, then a dry run and,
/// when the adapter supports it, a cost estimate, both through `breaker`.
pub async fn validate_physical(
    adapter: &dyn DatasourceAdapter,
    breaker: &CircuitBreaker,
    contract: &SchemaContract,
    sql: &str,
    settings: &PhysicalSettings,
) -> PhysicalReport {
    let mut report = PhysicalReport::default();
    if sql.trim().is_empty() {
        return report;
    }
    if adapter.id().is_empty() {
        report.errors.push(PipelineError::new(
            NODE,
            ErrorCode::MissingDatasourceId,
            Severity::Error,
            "sub-query has no datasource id",
        ));
        return finish(report);
    }
    let mut ctx = GuardContext::new(adapter.id(), adapter.dialect(), contract);
    if let Some(policy) = &settings.policy {
        ctx = ctx.with_policy(policy.clone());
    }
    let mut guard = SqlGuard::new(ctx).check(sql);
    let Some(guarded) = guard.guarded.take() else {
        for issue in guard.issues.iter().filter(|i| i.severity.is_blocking()) {
            let code = if settings.generated {
                ErrorCode::SqlGenFailed
            } else {
                issue.code
            };
            let severity = if settings.generated {
                Severity::Error
            } else {
                issue.severity
            };
            report.errors.push(PipelineError::new(
                NODE,
                code,
                severity,
                issue.message.clone(),
            ));
        }
        return finish(report);
    };
    report.guarded = Some(guarded.clone());

    if adapter.capabilities().supports_dry_run() {
        let permit = match breaker.enter() {
            Ok(permit) => permit,
            Err(e) => {
                report.errors.push(from_result_error(&e));
                return finish(report);
            }
        };
        let dry = adapter.dry_run(&guarded).await;
        permit.settle(dry.error.as_ref());
        if !dry.is_valid {
            let err = match &dry.error {
                Some(e) if e.error_code != ResultErrorCode::ExecutionFailed => from_result_error(e),
                _ => PipelineError::new(
                    NODE,
                    ErrorCode::ExecutionError,
                    Severity::Error,
                    dry.error_message
                        .clone()
                        .unwrap_or_else(|| "the engine rejected the statement".to_owned()),
                ),
            };
            report.errors.push(err);
            report.dry_run = Some(dry);
            return finish(report);
        }
        report.dry_run = Some(dry);
    }

    if adapter.capabilities().supports_cost_estimate() {
        let permit = match breaker.enter() {
            Ok(permit) => permit,
            Err(e) => {
                report.errors.push(from_result_error(&e));
                return finish(report);
            }
        };
        let cost = adapter.cost_estimate(&guarded).await;
        permit.settle(cost.as_ref().err());
        match cost {
            Ok(cost) => {
                let row_limit = adapter.limits().row_limit;
                if let Some(rows) = cost.estimated_rows.filter(|r| *r > row_limit) {
                    report.errors.push(PipelineError::new(
                        NODE,
                        ErrorCode::PerformanceWarning,
                        Severity::Warning,
                        format!(
                            "estimated {rows} rows exceed the row limit {row_limit} of datasource '{}'",
                            adapter.id()
                        ),
                    ));
                }
                if let (Some(c), Some(max)) = (cost.estimated_cost, settings.max_cost)
                    && c > max
                {
                    report.errors.push(PipelineError::new(
                        NODE,
                        ErrorCode::PerformanceWarning,
                        Severity::Error,
                        format!("estimated cost {c} exceeds the limit {max}"),
                    ));
                }
                report.cost = Some(cost);
            }
            Err(e) => report.errors.push(from_result_error(&e)),
        }
    }
    finish(report)
}

fn from_result_error(e: &ResultError) -> PipelineError {
    match e.error_code {
        ResultErrorCode::ServiceUnavailable => PipelineError::new(
            NODE,
            ErrorCode::ServiceUnavailable,
            Severity::Critical,
            e.safe_message.clone(),
        ),
        ResultErrorCode::ExecutionTimeout => PipelineError::new(
            NODE,
            ErrorCode::ExecutionTimeout,
            Severity::Error,
            e.safe_message.clone(),
        ),
        ResultErrorCode::ExecutorCrash => PipelineError::new(
            NODE,
            ErrorCode::ExecutorCrash,
            Severity::Critical,
            e.safe_message.clone(),
        ),
        ResultErrorCode::SecurityViolation => PipelineError::new(
            NODE,
            ErrorCode::SecurityViolation,
            Severity::Critical,
            e.safe_message.clone(),
        ),
        ResultErrorCode::ExecutionFailed => PipelineError::new(
            NODE,
            ErrorCode::ExecutionError,
            Severity::Error,
            e.safe_message.clone(),
        ),
        ResultErrorCode::CapabilityViolation | ResultErrorCode::MissingSql => PipelineError::new(
            NODE,
            ErrorCode::PhysicalValidatorFailed,
            Severity::Error,
            e.safe_message.clone(),
        ),
    }
}

fn finish(mut report: PhysicalReport) -> PhysicalReport {
    report.reasoning = if report.errors.is_empty() {
        vec!["Physical validation passed.".to_owned()]
    } else {
        report.errors.iter().map(|e| e.message.clone()).collect()
    };
    report
}

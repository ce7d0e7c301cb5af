//! The dry run, cost estimate and explain of an adapter whose engine explains a statement
//! as a JSON plan (DuckDB, PostgreSQL, MySQL): each is one reading of the same plan, so an
//! adapter fetches the plan and hands it here.

use serde_json::Value;

use crate::types::{CostEstimate, DryRunResult, PlanFormat, QueryPlan, ResultError};

/// The dry run of datasource `id` from its plan (or the error that explaining gave).
pub fn dry_run_of(id: &str, plan: Result<Value, ResultError>) -> DryRunResult {
    match plan {
        Ok(plan) => DryRunResult {
            is_valid: true,
            error_message: None,
            data: Some(serde_json::json!({ "plan": plan })),
            error: None,
        },
        Err(e) => DryRunResult {
            is_valid: false,
            error_message: Some(e.safe_message.clone()),
            data: None,
            error: Some(e.at("dry_run", id)),
        },
    }
}

/// The cost estimate of datasource `id` from its plan: `estimates` reads the engine's
/// (cost, rows) out of it.
pub fn cost_of(
    id: &str,
    plan: Result<Value, ResultError>,
    estimates: impl FnOnce(&Value) -> (Option<f64>, Option<u64>),
) -> Result<CostEstimate, ResultError> {
    let plan = plan.map_err(|e| e.at("cost_estimate", id))?;
    let (estimated_cost, estimated_rows) = estimates(&plan);
    Ok(CostEstimate {
        estimated_cost,
        estimated_rows,
        estimated_time_ms: None,
    })
}

/// The plan of datasource `id` as pretty-printed JSON.
pub fn explain_of(id: &str, plan: Result<Value, ResultError>) -> Result<QueryPlan, ResultError> {
    let plan = plan.map_err(|e| e.at("explain", id))?;
    Ok(QueryPlan {
        plan_text: serde_json::to_string_pretty(&plan).unwrap_or_default(),
        format: PlanFormat::Json,
    })
}

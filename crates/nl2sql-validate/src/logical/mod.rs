//! The logical validator: checks a `PlanModel` against the datasource's schema, column
//! statistics and the caller's policy before any SQL exists (spec: validators.md §2).
//!
//! [`validate_plan`] runs every check in the spec's order — structure (S), expected schema
//! (E), tables (T), joins (J), literals against statistics (L), columns (C), then the Rust
//! additions A1-A4, F1-F4, N1, D1, O1, K1, J6, and finally the policy (P) — and returns
//! every finding as a `PipelineError` in a [`LogicalReport`]. It never panics and does no IO.

pub(crate) mod context;
mod exprs;
mod policy;
pub(crate) mod resolve;
mod structure;

pub use context::LogicalContext;
use context::{NODE, finding};
use resolve::Resolver;

use nl2sql_plan::PlanModel;
use nl2sql_state::{ErrorCode, PipelineError, Severity};
use serde_json::{Value, json};

/// The outcome of the logical validator: every finding, in the spec's order.
#[derive(Debug, Clone, PartialEq)]
pub struct LogicalReport {
    /// The findings.
    pub findings: Vec<PipelineError>,
    /// Either the list of messages or a success note.
    pub reasoning: Vec<String>,
}

impl LogicalReport {
    fn new(findings: Vec<PipelineError>) -> Self {
        let reasoning = if findings.iter().any(PipelineError::is_blocking) {
            findings.iter().map(|f| f.message.clone()).collect()
        } else {
            vec!["Logical validation succeeded.".to_owned()]
        };
        LogicalReport {
            findings,
            reasoning,
        }
    }

    /// True when no finding is ERROR or CRITICAL.
    pub fn is_ok(&self) -> bool {
        !self.findings.iter().any(PipelineError::is_blocking)
    }

    /// The report as JSON: `{status, findings, reasoning}`.
    pub fn to_json(&self) -> Value {
        json!({
            "status": if self.is_ok() { "ok" } else { "rejected" },
            "findings": self.findings,
            "reasoning": self.reasoning,
        })
    }
}

/// Runs the logical validator on `plan` (spec: validators.md §2.1).
pub fn validate_plan(plan: Option<&PlanModel>, ctx: &LogicalContext<'_>) -> LogicalReport {
    let Some(plan) = plan else {
        return LogicalReport::new(vec![PipelineError::new(
            NODE,
            ErrorCode::MissingPlan,
            Severity::Critical,
            "No plan to validate.",
        )]);
    };
    let mut out = Vec::new();
    if plan.tables.is_empty() {
        // S1: the static phase ends here; the policy still runs.
        out.push(finding(
            ErrorCode::InvalidPlanStructure,
            Severity::Error,
            "Plan has no tables.",
            "$.tables",
        ));
        out.extend(policy::check(plan, ctx));
        return LogicalReport::new(out);
    }
    // S2 (query_type other than READ) cannot reach here: the PlanModel type only holds READ.
    structure::ordinals(plan, &mut out);
    structure::duplicate_alias(plan, &mut out);
    structure::expected_schema(plan, ctx, &mut out);
    let resolver = Resolver::new(plan, ctx, &mut out);
    structure::joins(plan, ctx, &resolver, &mut out);
    exprs::literals(plan, ctx, &resolver, &mut out);
    exprs::columns(plan, ctx, &resolver, &mut out);
    exprs::aggregates(plan, &mut out);
    exprs::functions(plan, &mut out);
    exprs::value_formats(plan, &resolver, &mut out);
    structure::limits(plan, &mut out);
    structure::case_ordinals(plan, &mut out);
    structure::join_chain(plan, &mut out);
    out.extend(policy::check(plan, ctx));
    LogicalReport::new(out)
}

#[cfg(test)]
mod tests;

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
    subqueries(plan, ctx, &mut out);
    LogicalReport::new(out)
}

/// Every sub-query's plan is validated as a plan of its own (schema, columns, aggregates,
/// functions and the caller's policy: a table or column the caller may not read stays
/// unread inside a sub-query too), its findings' paths prefixed with the sub-query's.
/// Its columns name only its own aliases (sub-queries are uncorrelated): an outer alias
/// there is an unknown alias.
fn subqueries(plan: &PlanModel, ctx: &LogicalContext<'_>, out: &mut Vec<PipelineError>) {
    let inner_ctx = LogicalContext {
        expected_schema: Vec::new(),
        ..ctx.clone()
    };
    for (root, e) in plan.expressions() {
        exprs::walk(&root, e, &mut |x, path| {
            let Some(q) = x.query.as_deref() else {
                return;
            };
            let prefix = format!("{path}.query");
            for mut f in validate_plan(Some(q), &inner_ctx).findings {
                if let Some(Value::String(p)) =
                    f.details.as_deref_mut().and_then(|d| d.get_mut("path"))
                {
                    *p = format!("{prefix}{}", p.strip_prefix('$').unwrap_or(p));
                }
                out.push(f);
            }
        });
    }
}

#[cfg(test)]
mod tests;

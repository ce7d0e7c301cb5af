//! P: the caller's policy on the plan's datasource, tables and columns
//! (spec: validators.md §2.7).

use nl2sql_plan::{ExprKind, PlanModel};
use nl2sql_state::{ErrorCode, PipelineError, Severity, norm};

use super::context::{LogicalContext, finding};
use super::exprs::walk;

fn violation(message: String, path: &str) -> PipelineError {
    finding(
        ErrorCode::SecurityViolation,
        Severity::Critical,
        message,
        path,
    )
}

/// Runs P and returns its findings.
pub(crate) fn check(plan: &PlanModel, ctx: &LogicalContext<'_>) -> Vec<PipelineError> {
    let mut out = Vec::new();
    let Some(ds) = ctx
        .datasource_id
        .as_deref()
        .filter(|d| !d.trim().is_empty())
    else {
        out.push(violation(
            "Security Enforcement Failed: No sub_query datasource_id in state.".to_owned(),
            "$",
        ));
        return out;
    };
    let roles = ctx.policy.roles().join(", ");
    if !ctx.policy.datasource_allowed(ds) {
        out.push(violation(
            format!("Role '{roles}' denied access to datasource '{ds}'."),
            "$",
        ));
        return out;
    }
    for (i, t) in plan.tables.iter().enumerate() {
        let name = norm(&t.name);
        let schema = t.schema_name.as_deref().map(norm);
        if !ctx.policy.table_allowed(ds, schema.as_deref(), &name) {
            out.push(violation(
                format!(
                    "Role '{roles}' denied access to '{ds}.{name}'. Policy requires explicit 'datasource.table' allow."
                ),
                &format!("$.tables[{i}]"),
            ));
        }
    }
    // Denied columns: direct references and `*` expansions.
    let table_of = |alias: Option<&str>| -> Vec<(String, Vec<String>)> {
        plan.tables
            .iter()
            .filter(|t| alias.is_none_or(|a| a == t.alias))
            .map(|t| {
                let cols = ctx
                    .contract
                    .tables
                    .values()
                    .find(|c| norm(&c.table.table_name) == norm(&t.name))
                    .map(|c| c.columns.values().map(|col| norm(&col.name)).collect())
                    .unwrap_or_default();
                (norm(&t.name), cols)
            })
            .collect()
    };
    for (root, e) in plan.expressions() {
        walk(&root, e, &mut |x, path| {
            if x.kind != ExprKind::Column {
                return;
            }
            let col = norm(x.column_name.as_deref().unwrap_or_default());
            for (table, cols) in table_of(x.alias.as_deref()) {
                let hits: Vec<&String> = if col == "*" {
                    cols.iter()
                        .filter(|c| ctx.policy.column_denied(ds, &table, c))
                        .collect()
                } else if ctx.policy.column_denied(ds, &table, &col)
                    && (x.alias.is_some() || cols.contains(&col))
                {
                    vec![&col]
                } else {
                    Vec::new()
                };
                for c in hits {
                    out.push(violation(
                        format!("Column '{ds}.{table}.{c}' is denied to role '{roles}'."),
                        path,
                    ));
                }
            }
        });
    }
    out
}

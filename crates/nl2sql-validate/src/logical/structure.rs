//! Structural checks: S3, S4, E1, E2, J, O1, K1, J6 (spec: validators.md §2.1, §2.3, §2.6).

use std::collections::BTreeSet;

use nl2sql_plan::{Expr, ExprKind, Op, PlanModel};
use nl2sql_state::{ErrorCode, PipelineError, Severity, norm};

use super::context::{LogicalContext, finding};
use super::exprs::walk;
use super::resolve::Resolver;

fn structure(message: impl Into<String>, path: &str) -> PipelineError {
    finding(
        ErrorCode::InvalidPlanStructure,
        Severity::Error,
        message,
        path,
    )
}

fn ordinal_finding(list: &str, ordinals: &[i64], path: &str) -> Option<PipelineError> {
    let ok = ordinals
        .iter()
        .enumerate()
        .all(|(i, o)| i64::try_from(i).is_ok_and(|i| i == *o));
    (!ok).then(|| {
        structure(
            format!(
                "Ordinals of '{list}' must be 0..{} in list order; found {ordinals:?}.",
                ordinals.len().saturating_sub(1)
            ),
            path,
        )
    })
}

/// S3: ordinals of tables, joins, select items, group by, order by.
pub(crate) fn ordinals(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    let lists: [(&str, Vec<i64>); 5] = [
        ("tables", plan.tables.iter().map(|t| t.ordinal).collect()),
        ("joins", plan.joins.iter().map(|j| j.ordinal).collect()),
        (
            "select_items",
            plan.select_items.iter().map(|s| s.ordinal).collect(),
        ),
        (
            "group_by",
            plan.group_by.iter().map(|g| g.ordinal).collect(),
        ),
        (
            "order_by",
            plan.order_by.iter().map(|o| o.ordinal).collect(),
        ),
    ];
    for (list, ords) in lists {
        out.extend(ordinal_finding(list, &ords, &format!("$.{list}")));
    }
}

/// S4: the first duplicate table alias.
pub(crate) fn duplicate_alias(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    let mut seen = BTreeSet::new();
    for (i, t) in plan.tables.iter().enumerate() {
        if !seen.insert(t.alias.as_str()) {
            out.push(structure(
                format!("Duplicate table alias '{}'.", t.alias),
                &format!("$.tables[{i}].alias"),
            ));
            return;
        }
    }
}

/// E1, E2: the select aliases match the sub-query's expected schema, in order.
pub(crate) fn expected_schema(
    plan: &PlanModel,
    ctx: &LogicalContext<'_>,
    out: &mut Vec<PipelineError>,
) {
    let expected = &ctx.expected_schema;
    if expected.is_empty() {
        return;
    }
    if plan.select_items.len() != expected.len() {
        out.push(structure(
            format!(
                "Plan selects {} columns but the sub-query expects {}: {}.",
                plan.select_items.len(),
                expected.len(),
                expected.join(", ")
            ),
            "$.select_items",
        ));
    }
    let mut items: Vec<_> = plan.select_items.iter().collect();
    items.sort_by_key(|s| s.ordinal);
    let aliases: Vec<&str> = items
        .iter()
        .map(|s| s.alias.as_deref().unwrap_or(""))
        .collect();
    let wanted: Vec<&str> = expected.iter().map(String::as_str).collect();
    if aliases != wanted {
        out.push(structure(
            format!(
                "Select aliases [{}] must equal the expected output columns [{}], in order.",
                aliases.join(", "),
                wanted.join(", ")
            ),
            "$.select_items",
        ));
    }
}

/// Equality pairs `(left alias, column, right alias, column)` anywhere in a condition.
fn equality_pairs(cond: &Expr) -> Vec<(String, String, String, String)> {
    let mut pairs = Vec::new();
    walk("", cond, &mut |e, _| {
        if e.kind == ExprKind::Binary
            && e.op == Some(Op::Eq)
            && let (Some(l), Some(r)) = (e.left.as_deref(), e.right.as_deref())
            && let (Some(la), Some(lc), Some(ra), Some(rc)) =
                (&l.alias, &l.column_name, &r.alias, &r.column_name)
            && l.kind == ExprKind::Column
            && r.kind == ExprKind::Column
        {
            pairs.push((la.clone(), norm(lc), ra.clone(), norm(rc)));
        }
    });
    pairs
}

/// J: every join names plan aliases, references both, has an equality, and matches a
/// foreign key of the schema in either orientation.
pub(crate) fn joins(
    plan: &PlanModel,
    ctx: &LogicalContext<'_>,
    resolver: &Resolver<'_>,
    out: &mut Vec<PipelineError>,
) {
    struct Rel {
        from: String,
        to: String,
        from_cols: Vec<String>,
        to_cols: Vec<String>,
    }
    let rels: Vec<Rel> = ctx
        .contract
        .tables
        .values()
        .flat_map(|t| {
            t.foreign_keys.iter().map(move |fk| Rel {
                from: norm(&t.table.table_name),
                to: norm(&fk.referred_table.table_name),
                from_cols: fk.constrained_columns.iter().map(|c| norm(c)).collect(),
                to_cols: fk.referred_columns.iter().map(|c| norm(c)).collect(),
            })
        })
        .collect();
    let table_of = |alias: &str| {
        plan.tables
            .iter()
            .find(|t| t.alias == alias)
            .map(|t| norm(&t.name))
    };
    for (i, j) in plan.joins.iter().enumerate() {
        let path = format!("$.joins[{i}]");
        let mut bad_alias = false;
        for (side, alias) in [("left", &j.left_alias), ("right", &j.right_alias)] {
            if !resolver.is_plan_alias(alias) {
                out.push(finding(
                    ErrorCode::JoinTableNotInPlan,
                    Severity::Error,
                    format!("Join {side} alias '{alias}' not in plan tables."),
                    &format!("{path}.{side}_alias"),
                ));
                bad_alias = true;
            }
        }
        if bad_alias {
            continue;
        }
        let mut referenced = BTreeSet::new();
        walk("", &j.condition, &mut |e, _| {
            if e.kind == ExprKind::Column
                && let Some(a) = &e.alias
            {
                referenced.insert(a.clone());
            }
        });
        if !referenced.contains(&j.left_alias) || !referenced.contains(&j.right_alias) {
            out.push(finding(
                ErrorCode::JoinMissingOnClause,
                Severity::Error,
                format!(
                    "Join condition must reference both '{}' and '{}'.",
                    j.left_alias, j.right_alias
                ),
                &format!("{path}.condition"),
            ));
            continue;
        }
        let pairs = equality_pairs(&j.condition);
        if pairs.is_empty() {
            out.push(finding(
                ErrorCode::JoinMissingOnClause,
                Severity::Error,
                "Join condition must include an equality between join columns.",
                &format!("{path}.condition"),
            ));
            continue;
        }
        let matches = |l: &str, lc: &str, r: &str, rc: &str| {
            let (Some(lt), Some(rt)) = (table_of(l), table_of(r)) else {
                return false;
            };
            rels.iter().any(|rel| {
                (rel.from == lt
                    && rel.to == rt
                    && rel.from_cols.iter().any(|c| c == lc)
                    && rel.to_cols.iter().any(|c| c == rc))
                    || (rel.from == rt
                        && rel.to == lt
                        && rel.from_cols.iter().any(|c| c == rc)
                        && rel.to_cols.iter().any(|c| c == lc))
            })
        };
        let ok = pairs.iter().any(|(la, lc, ra, rc)| {
            (*la == j.left_alias && *ra == j.right_alias && matches(la, lc, ra, rc))
                || (*ra == j.left_alias && *la == j.right_alias && matches(ra, rc, la, lc))
        });
        if !ok {
            out.push(structure(
                "Join does not match any allowed relationship.",
                &format!("{path}.condition"),
            ));
        }
    }
}

/// O1: limit ≥ 1, offset ≥ 0, at least one select item.
pub(crate) fn limits(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    if let Some(l) = plan.limit
        && l < 1
    {
        out.push(structure(
            format!("Limit must be at least 1, got {l}."),
            "$.limit",
        ));
    }
    if let Some(o) = plan.offset
        && o < 0
    {
        out.push(structure(
            format!("Offset must not be negative, got {o}."),
            "$.offset",
        ));
    }
    if plan.select_items.is_empty() {
        out.push(structure(
            "Plan selects nothing; add select items.",
            "$.select_items",
        ));
    }
}

/// K1: the ordinals of every CASE's whens are 0..n-1.
pub(crate) fn case_ordinals(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    for (root, e) in plan.expressions() {
        walk(&root, e, &mut |x, path| {
            if x.kind == ExprKind::Case {
                let ords: Vec<i64> = x.whens.iter().map(|w| w.ordinal).collect();
                out.extend(ordinal_finding("whens", &ords, &format!("{path}.whens")));
            }
        });
    }
}

/// J6: every table but the first enters through exactly one join, from a table of lower
/// ordinal.
pub(crate) fn join_chain(plan: &PlanModel, out: &mut Vec<PipelineError>) {
    let ordinal_of = |alias: &str| {
        plan.tables
            .iter()
            .find(|t| t.alias == alias)
            .map(|t| t.ordinal)
    };
    let first = plan.tables.iter().map(|t| t.ordinal).min();
    for (i, t) in plan.tables.iter().enumerate() {
        if Some(t.ordinal) == first {
            continue;
        }
        let n = plan
            .joins
            .iter()
            .filter(|j| j.right_alias == t.alias)
            .count();
        if n != 1 {
            out.push(structure(
                format!(
                    "Table '{}' ({}) must be the right side of exactly one join; it is of {n}.",
                    t.alias, t.name
                ),
                &format!("$.tables[{i}]"),
            ));
        }
    }
    for (i, j) in plan.joins.iter().enumerate() {
        if let (Some(l), Some(r)) = (ordinal_of(&j.left_alias), ordinal_of(&j.right_alias))
            && l >= r
        {
            out.push(structure(
                format!(
                    "Join left alias '{}' must belong to a table of lower ordinal than '{}'.",
                    j.left_alias, j.right_alias
                ),
                &format!("$.joins[{i}].left_alias"),
            ));
        }
    }
}

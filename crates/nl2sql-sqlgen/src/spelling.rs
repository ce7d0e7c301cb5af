//! Names in the schema's exact spelling (spec: sql-generation.md §4.1): the plan may write
//! `FACTORIES` or `Name`; the SQL must name the table and column as the schema does, which
//! matters wherever quoted identifiers are case-sensitive.

use std::collections::BTreeMap;

use nl2sql_plan::{Expr, ExprKind, PlanModel};
use nl2sql_state::{SchemaContract, TableContract, norm};

/// A copy of `plan` whose table and column names use the spelling of `contract`. Names the
/// schema does not know, or knows ambiguously, are left as written.
pub(crate) fn respell(plan: &PlanModel, contract: &SchemaContract) -> PlanModel {
    let mut plan = plan.clone();
    let mut by_alias: BTreeMap<String, &TableContract> = BTreeMap::new();
    for t in &mut plan.tables {
        let candidates: Vec<&TableContract> = contract
            .tables
            .values()
            .filter(|c| norm(&c.table.table_name) == norm(&t.name))
            .filter(|c| {
                t.schema_name
                    .as_deref()
                    .is_none_or(|s| norm(s) == norm(&c.table.schema_name))
            })
            .collect();
        if let [one] = candidates.as_slice() {
            t.name.clone_from(&one.table.table_name);
            if t.schema_name.is_some() {
                t.schema_name = Some(one.table.schema_name.clone());
            }
            by_alias.insert(t.alias.clone(), one);
        }
    }
    let spell = |alias: Option<&str>, name: &str| -> Option<String> {
        let find = |t: &TableContract| {
            t.columns
                .values()
                .find(|c| norm(&c.name) == norm(name))
                .map(|c| c.name.clone())
        };
        match alias {
            Some(a) => by_alias.get(a).and_then(|t| find(t)),
            None => {
                let hits: Vec<String> = by_alias.values().filter_map(|t| find(t)).collect();
                match hits.as_slice() {
                    [one] => Some(one.clone()),
                    _ => None,
                }
            }
        }
    };
    let mut fix = |e: &mut Expr| {
        // A sub-query is a scope of its own: its aliases name its own tables.
        if let Some(q) = e.query.as_deref_mut() {
            *q = respell(q, contract);
        }
        if e.kind == ExprKind::Column
            && let Some(name) = &e.column_name
            && name != "*"
            && let Some(exact) = spell(e.alias.as_deref(), name)
        {
            e.column_name = Some(exact);
        }
    };
    for j in &mut plan.joins {
        walk_mut(&mut j.condition, &mut fix);
    }
    for s in &mut plan.select_items {
        walk_mut(&mut s.expr, &mut fix);
    }
    if let Some(w) = &mut plan.where_ {
        walk_mut(w, &mut fix);
    }
    for g in &mut plan.group_by {
        walk_mut(&mut g.expr, &mut fix);
    }
    if let Some(h) = &mut plan.having {
        walk_mut(h, &mut fix);
    }
    for o in &mut plan.order_by {
        walk_mut(&mut o.expr, &mut fix);
    }
    plan
}

fn walk_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    if let Some(x) = e.left.as_deref_mut() {
        walk_mut(x, f);
    }
    if let Some(x) = e.right.as_deref_mut() {
        walk_mut(x, f);
    }
    for a in &mut e.args {
        walk_mut(a, f);
    }
    if let Some(x) = e.expr.as_deref_mut() {
        walk_mut(x, f);
    }
    for w in &mut e.whens {
        walk_mut(&mut w.condition, f);
        walk_mut(&mut w.result, f);
    }
    if let Some(x) = e.else_expr.as_deref_mut() {
        walk_mut(x, f);
    }
}

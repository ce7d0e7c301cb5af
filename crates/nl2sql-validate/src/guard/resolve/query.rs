//! Queries: WITH (plain and recursive CTEs), set operations, VALUES, `TABLE t`, the
//! ORDER BY of a set operation, LIMIT/FETCH, and positional references.

use std::rc::Rc;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    Expr, Ident, OrderBy, OrderByKind, Query, SelectItem, SetExpr, SetQuantifier, Spanned, Value,
    Visit,
};

use super::super::catalog::TableLookup;
use super::super::suggest::{closest, did_you_mean};
use super::walk::ExprWalk;
use super::{ColumnResolution, Cte, Ctx, OutCol, Resolver, Scope, span_of};

impl<'g> Resolver<'g> {
    // ----- queries -------------------------------------------------------------------

    pub(super) fn query(
        &mut self,
        query: &Query,
        outer: Option<&Scope<'_>>,
    ) -> Option<Vec<OutCol>> {
        self.handled_queries.insert(query as *const Query);
        let base = self.ctes.len();
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                let key = self.key(&cte.alias.name);
                self.cte_names.push(key.clone());
                if self.ctx.catalog.has_table_named(&key) {
                    self.issue(
                        ErrorCode::SecurityViolation,
                        format!(
                            "CTE '{}' has the name of a table of the datasource and would hide it; give the CTE another name",
                            cte.alias.name.value
                        ),
                        cte.alias.name.span,
                    );
                }
                let cols = if with.recursive {
                    let declared = self
                        .alias_columns(&cte.alias)
                        .or_else(|| self.anchor_columns(&cte.query.body))
                        .map(Rc::new);
                    self.ctes.push(Cte {
                        key: key.clone(),
                        cols: declared,
                    });
                    let cols = self.query(&cte.query, outer).map(Rc::new);
                    let cols = self.rename(cols, &cte.alias);
                    self.ctes.pop();
                    cols
                } else {
                    let cols = self.query(&cte.query, outer).map(Rc::new);
                    self.rename(cols, &cte.alias)
                };
                self.ctes.push(Cte { key, cols });
            }
        }
        let out = match query.body.as_ref() {
            SetExpr::Select(select) => self.select(select, outer, query.order_by.as_ref()),
            body => {
                let out = self.set_expr(body, outer);
                if let Some(order_by) = &query.order_by {
                    self.set_order_by(order_by, out.as_deref(), outer);
                }
                out
            }
        };
        let empty = Scope::new(outer);
        if let Some(limit) = &query.limit_clause {
            let _ = limit.visit(&mut ExprWalk::new(self, &empty, Ctx::Plain));
        }
        if let Some(fetch) = &query.fetch {
            let _ = fetch.visit(&mut ExprWalk::new(self, &empty, Ctx::Plain));
        }
        self.ctes.truncate(base);
        out
    }

    fn set_expr(&mut self, body: &SetExpr, outer: Option<&Scope<'_>>) -> Option<Vec<OutCol>> {
        match body {
            SetExpr::Select(select) => self.select(select, outer, None),
            SetExpr::Query(query) => self.query(query, outer),
            SetExpr::SetOperation {
                left,
                right,
                set_quantifier,
                ..
            } => {
                let l = self.set_expr(left, outer);
                let r = self.set_expr(right, outer);
                if matches!(
                    set_quantifier,
                    SetQuantifier::ByName
                        | SetQuantifier::AllByName
                        | SetQuantifier::DistinctByName
                ) {
                    // Columns match by name: the result has the left's names, then the
                    // right's new ones.
                    return match (l, r) {
                        (Some(mut l), Some(r)) => {
                            for col in r {
                                if !l.iter().any(|c| c.key.is_some() && c.key == col.key) {
                                    l.push(col);
                                }
                            }
                            Some(l)
                        }
                        _ => None,
                    };
                }
                if let (Some(l), Some(r)) = (&l, &r)
                    && l.len() != r.len()
                {
                    self.issue(
                            ErrorCode::ColumnNotFound,
                            format!(
                                "the branches of a set operation return different numbers of columns ({} and {}); make them match",
                                l.len(),
                                r.len()
                            ),
                            body.span(),
                        );
                }
                l
            }
            SetExpr::Values(values) => {
                let empty = Scope::new(outer);
                let _ = values.visit(&mut ExprWalk::new(self, &empty, Ctx::Plain));
                let width = values.rows.first().map_or(0, |r| r.len());
                Some(
                    (0..width)
                        .map(|i| OutCol {
                            key: Some(self.values_column_name(i)),
                        })
                        .collect(),
                )
            }
            SetExpr::Table(table) => {
                let name = table.table_name.clone().unwrap_or_default();
                let ident = Ident::new(name);
                let key = self.key(&ident);
                match self.ctx.catalog.lookup(None, &key) {
                    TableLookup::Found(idx, t) => {
                        let cols = t
                            .columns
                            .iter()
                            .map(|(k, _)| OutCol {
                                key: Some(k.clone()),
                            })
                            .collect();
                        self.check_table_policy(idx, body.span());
                        Some(cols)
                    }
                    _ => {
                        self.unknown_table(&key, &ident.value, body.span());
                        None
                    }
                }
            }
            // Data-modifying bodies are reported by the security pass.
            SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) => {
                None
            }
        }
    }

    /// Output names of a recursive CTE's anchor (its first branch), read from the select
    /// list alone, so that the recursive branch can refer to them before the CTE is bound.
    fn anchor_columns(&self, body: &SetExpr) -> Option<Vec<OutCol>> {
        match body {
            SetExpr::SetOperation { left, .. } => self.anchor_columns(left),
            SetExpr::Query(query) => self.anchor_columns(&query.body),
            SetExpr::Select(select) => select
                .projection
                .iter()
                .map(|item| match item {
                    SelectItem::UnnamedExpr(expr) => Some(OutCol {
                        key: self.output_name(expr),
                    }),
                    SelectItem::ExprWithAlias { alias, .. } => Some(OutCol {
                        key: Some(self.key(alias)),
                    }),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    fn values_column_name(&self, i: usize) -> String {
        match self.dialect() {
            Dialect::DuckDb => format!("col{i}"),
            Dialect::MySql => format!("column_{i}"),
            _ => format!("column{}", i + 1),
        }
    }

    /// ORDER BY of a set operation: output column names or positions only.
    fn set_order_by(
        &mut self,
        order_by: &OrderBy,
        out: Option<&[OutCol]>,
        outer: Option<&Scope<'_>>,
    ) {
        let OrderByKind::Expressions(items) = &order_by.kind else {
            return;
        };
        let mut scope = Scope::new(outer);
        if let Some(out) = out {
            scope.aliases = out
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.key.clone().map(|k| (k, i)))
                .collect();
        }
        for item in items {
            if self.positional(&item.expr, out.map(<[OutCol]>::len), "ORDER BY") {
                continue;
            }
            let name = match &item.expr {
                Expr::Identifier(ident) => Some(ident),
                Expr::CompoundIdentifier(parts) => parts.last(),
                _ => None,
            };
            match (name, out) {
                (Some(ident), Some(_)) => {
                    self.handled_names.insert(&item.expr as *const Expr);
                    let key = self.key(ident);
                    if !scope.has_alias(&key) {
                        self.issue(
                            ErrorCode::ColumnNotFound,
                            format!(
                                "ORDER BY term '{}' of a set operation must name a result column{}",
                                item.expr,
                                did_you_mean(&closest(
                                    &key,
                                    scope.aliases.iter().map(|(k, _)| k.as_str())
                                ))
                            ),
                            item.expr.span(),
                        );
                    } else {
                        self.resolutions.push(ColumnResolution {
                            column: key,
                            qualifier: None,
                            table: None,
                            span: span_of(item.expr.span()),
                        });
                    }
                }
                _ => {
                    let _ = item
                        .expr
                        .visit(&mut ExprWalk::new(self, &scope, Ctx::OrderBy));
                }
            }
        }
    }

    /// Checks a positional reference (`ORDER BY 2`, `GROUP BY 1`); true when `expr` is one.
    pub(super) fn positional(&mut self, expr: &Expr, width: Option<usize>, clause: &str) -> bool {
        let Expr::Value(v) = expr else { return false };
        let Value::Number(n, _) = &v.value else {
            return false;
        };
        let Ok(pos) = n.parse::<usize>() else {
            return false;
        };
        if let Some(width) = width
            && (pos == 0 || pos > width)
        {
            self.issue(
                ErrorCode::ColumnNotFound,
                format!(
                    "{clause} position {pos} is out of range: the select list has {width} item(s)"
                ),
                expr.span(),
            );
        }
        true
    }
}

//! FROM: binding range variables (tables of the datasource, CTEs, derived and LATERAL
//! tables, nested joins, table functions), joins with ON, USING and NATURAL, alias column
//! lists, and unknown-table reporting.

use std::collections::HashSet;
use std::rc::Rc;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    Ident, JoinConstraint, JoinOperator, ObjectName, Spanned, TableAlias, TableFactor,
    TableWithJoins, Visit,
};
use sqlparser::tokenizer::Span;

use super::super::catalog::TableLookup;
use super::super::suggest::{closest, did_you_mean};
use super::walk::ExprWalk;
use super::{Cols, Ctx, OutCol, RangeVar, Resolver, Scope, append};

impl<'g> Resolver<'g> {
    // ----- FROM ----------------------------------------------------------------------

    pub(super) fn bind_from_item(&mut self, item: &TableWithJoins, scope: &mut Scope<'_>) {
        let start = scope.rels.len();
        let rels = self.table_factor(&item.relation, scope);
        for rel in rels {
            self.add_rel(scope, rel, super::super::factor_span(&item.relation));
        }
        for join in &item.joins {
            let rels = self.table_factor(&join.relation, scope);
            let span = super::super::factor_span(&join.relation);
            match join_constraint(&join.join_operator) {
                Some(JoinConstraint::On(on)) => {
                    let before = scope.rels.len();
                    for rel in rels {
                        self.add_rel(scope, rel, span);
                    }
                    self.expr(on, scope, Ctx::JoinOn);
                    // A semi or anti join only filters its left side: the right side is
                    // not in scope after its condition.
                    if matches!(
                        join.join_operator,
                        JoinOperator::Semi(_)
                            | JoinOperator::LeftSemi(_)
                            | JoinOperator::Anti(_)
                            | JoinOperator::LeftAnti(_)
                    ) {
                        scope.rels.truncate(before);
                    }
                }
                Some(JoinConstraint::Using(names)) => {
                    let keys: Vec<(String, Span)> = names
                        .iter()
                        .filter_map(|n| n.0.last().and_then(|p| p.as_ident()))
                        .map(|i| (self.key(i), i.span))
                        .collect();
                    self.merge_join(scope, start, rels, keys, span);
                }
                Some(JoinConstraint::Natural) => {
                    let left: HashSet<String> = scope.rels[start..]
                        .iter()
                        .filter_map(|r| r.cols.as_deref())
                        .flatten()
                        .filter_map(|c| c.key.clone())
                        .collect();
                    let keys: Vec<(String, Span)> = rels
                        .iter()
                        .filter_map(|r| r.cols.as_deref())
                        .flatten()
                        .filter_map(|c| c.key.clone())
                        .filter(|k| left.contains(k))
                        .map(|k| (k, span))
                        .collect();
                    self.merge_join(scope, start, rels, keys, span);
                }
                _ => {
                    for rel in rels {
                        self.add_rel(scope, rel, span);
                    }
                }
            }
        }
    }

    /// Adds the right side of a USING/NATURAL join, merging the join columns.
    fn merge_join(
        &mut self,
        scope: &mut Scope<'_>,
        start: usize,
        rels: Vec<RangeVar>,
        keys: Vec<(String, Span)>,
        span: Span,
    ) {
        let mut right = rels;
        for (key, key_span) in keys {
            let left: Vec<usize> = (start..scope.rels.len())
                .filter(|&i| {
                    let r = &scope.rels[i];
                    r.count(&key).is_some_and(|n| n > 0) && !r.hidden.contains(&key)
                })
                .collect();
            let right_idx = right
                .iter()
                .position(|r| r.count(&key).is_some_and(|n| n > 0));
            let left_unknown = scope.rels[start..].iter().any(|r| r.cols.is_none());
            let right_unknown = right.iter().any(|r| r.cols.is_none());
            match left.as_slice() {
                [] if !left_unknown => self.issue(
                    ErrorCode::ColumnNotFound,
                    format!("USING column '{key}' does not exist on the left side of the join"),
                    key_span,
                ),
                [_, _, ..] => self.issue(
                    ErrorCode::ColumnNotFound,
                    format!("USING column '{key}' is ambiguous on the left side of the join"),
                    key_span,
                ),
                _ => {}
            }
            if right_idx.is_none() && !right_unknown {
                self.issue(
                    ErrorCode::ColumnNotFound,
                    format!("USING column '{key}' does not exist on the right side of the join"),
                    key_span,
                );
            }
            if let [l] = left.as_slice() {
                let rel = scope.rels[*l].clone();
                self.check_denied(&rel, &key, key_span);
                self.record(&key, &rel, key_span);
                scope.rels[*l].using.push(key.clone());
            }
            if let Some(r) = right_idx {
                let rel = right[r].clone();
                self.check_denied(&rel, &key, key_span);
                right[r].hidden.push(key.clone());
                right[r].using.push(key.clone());
            }
        }
        for rel in right {
            self.add_rel(scope, rel, span);
        }
    }

    fn add_rel(&mut self, scope: &mut Scope<'_>, rel: RangeVar, span: Span) {
        if let Some(key) = &rel.key
            && scope.rels.iter().any(|r| r.key.as_ref() == Some(key))
        {
            self.issue(
                    ErrorCode::InvalidAliasUsage,
                    format!("table or alias '{key}' appears twice in one FROM clause; give each occurrence its own alias"),
                    span,
                );
        }
        scope.rels.push(rel);
    }

    pub(super) fn alias_columns(&self, alias: &TableAlias) -> Option<Vec<OutCol>> {
        (!alias.columns.is_empty()).then(|| {
            alias
                .columns
                .iter()
                .map(|c| OutCol {
                    key: Some(self.key(&c.name)),
                })
                .collect()
        })
    }

    /// Applies an alias's column list `AS t(a, b)` to a relation's columns.
    pub(super) fn rename(&mut self, cols: Option<Cols>, alias: &TableAlias) -> Option<Cols> {
        let Some(names) = self.alias_columns(alias) else {
            return cols;
        };
        match cols {
            None => Some(Rc::new(names)),
            Some(cols) => {
                let mut cols = (*cols).clone();
                if names.len() > cols.len() {
                    self.issue(
                        ErrorCode::ColumnNotFound,
                        format!(
                            "alias '{}' names {} columns but the relation has {}",
                            alias.name.value,
                            names.len(),
                            cols.len()
                        ),
                        alias.name.span,
                    );
                }
                for (col, name) in cols.iter_mut().zip(names) {
                    *col = name;
                }
                Some(Rc::new(cols))
            }
        }
    }

    fn table_factor(&mut self, factor: &TableFactor, scope: &Scope<'_>) -> Vec<RangeVar> {
        let alias_key =
            |r: &Self, alias: &Option<TableAlias>| alias.as_ref().map(|a| r.key(&a.name));
        match factor {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                if let Some(args) = args {
                    let _ = args.visit(&mut ExprWalk::new(self, scope, Ctx::Plain));
                    let key = alias_key(self, alias).or_else(|| last_key(self, name));
                    return vec![RangeVar::unknown(key)];
                }
                vec![self.named_table(name, alias.as_ref(), name.span())]
            }
            TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                let cols = if *lateral {
                    self.query(subquery, Some(scope))
                } else {
                    self.query(subquery, scope.parent)
                }
                .map(Rc::new);
                if alias.is_none() && matches!(self.dialect(), Dialect::Generic | Dialect::MySql) {
                    self.issue(
                        ErrorCode::ColumnNotFound,
                        "every derived table (subquery in FROM) needs an alias; add AS name"
                            .to_owned(),
                        factor.span(),
                    );
                }
                let cols = match alias {
                    Some(a) => self.rename(cols, a),
                    None => cols,
                };
                let mut rel = RangeVar::unknown(alias_key(self, alias));
                rel.cols = cols;
                vec![rel]
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                let mut inner = Scope::new(scope.parent);
                self.bind_from_item(table_with_joins, &mut inner);
                match alias {
                    None => inner.rels,
                    Some(a) => {
                        let mut cols = Some(Vec::new());
                        for rel in &inner.rels {
                            append(&mut cols, rel.cols.as_deref().cloned());
                        }
                        let cols = self.rename(cols.map(Rc::new), a);
                        let mut rel = RangeVar::unknown(Some(self.key(&a.name)));
                        rel.cols = cols;
                        vec![rel]
                    }
                }
            }
            TableFactor::Pivot { table, alias, .. }
            | TableFactor::Unpivot { table, alias, .. }
            | TableFactor::MatchRecognize { table, alias, .. } => {
                let _ = self.table_factor(table, scope);
                vec![RangeVar::unknown(alias_key(self, alias))]
            }
            TableFactor::UNNEST {
                alias, array_exprs, ..
            } => {
                for e in array_exprs {
                    self.expr(e, scope, Ctx::Plain);
                }
                vec![self.unknown_with_alias(alias.as_ref())]
            }
            TableFactor::Function { alias, args, .. } => {
                for arg in args {
                    let _ = arg.visit(&mut ExprWalk::new(self, scope, Ctx::Plain));
                }
                vec![self.unknown_with_alias(alias.as_ref())]
            }
            TableFactor::TableFunction { expr, alias } => {
                self.expr(expr, scope, Ctx::Plain);
                vec![self.unknown_with_alias(alias.as_ref())]
            }
            TableFactor::JsonTable { alias, .. }
            | TableFactor::OpenJsonTable { alias, .. }
            | TableFactor::XmlTable { alias, .. }
            | TableFactor::SemanticView { alias, .. } => {
                vec![self.unknown_with_alias(alias.as_ref())]
            }
            TableFactor::UnpivotExpr { .. } => vec![RangeVar::unknown(None)],
        }
    }

    fn unknown_with_alias(&self, alias: Option<&TableAlias>) -> RangeVar {
        let mut rel = RangeVar::unknown(alias.map(|a| self.key(&a.name)));
        if let Some(a) = alias {
            rel.cols = self.alias_columns(a).map(Rc::new);
        }
        rel
    }

    /// A table reference by name: a CTE in scope or a table of the datasource.
    fn named_table(
        &mut self,
        name: &ObjectName,
        alias: Option<&TableAlias>,
        span: Span,
    ) -> RangeVar {
        let idents: Vec<&Ident> = name.0.iter().filter_map(|p| p.as_ident()).collect();
        let keys: Vec<String> = idents.iter().map(|i| self.key(i)).collect();
        let alias_key = alias.map(|a| self.key(&a.name));
        let Some(table_key) = keys.last().cloned() else {
            return RangeVar::unknown(alias_key);
        };
        if keys.len() == 1
            && let Some(cte) = self.ctes.iter().rev().find(|c| c.key == table_key)
        {
            let mut rel = RangeVar::unknown(alias_key.or(Some(table_key)));
            rel.cols = cte.cols.clone();
            if let Some(a) = alias {
                rel.cols = self.rename(rel.cols, a);
            }
            return rel;
        }
        let schema = (keys.len() >= 2).then(|| keys[keys.len() - 2].clone());
        match self.ctx.catalog.lookup(schema.as_deref(), &table_key) {
            TableLookup::Found(idx, table) => {
                let cols = Rc::clone(self.table_cols.entry(idx).or_insert_with(|| {
                    Rc::new(
                        table
                            .columns
                            .iter()
                            .map(|(k, _)| OutCol {
                                key: Some(k.clone()),
                            })
                            .collect(),
                    )
                }));
                let mut rel = RangeVar::unknown(alias_key.or(Some(table_key)));
                rel.cols = Some(cols);
                rel.table = Some(idx);
                self.reads.entry(idx).or_default();
                self.check_table_policy(idx, span);
                if let Some(a) = alias {
                    rel.cols = self.rename(rel.cols, a);
                }
                rel
            }
            TableLookup::Ambiguous(candidates) => {
                self.issue(
                    ErrorCode::TableNotFound,
                    format!(
                        "table '{name}' exists in several schemas ({}); qualify it with its schema",
                        candidates.join(", ")
                    ),
                    span,
                );
                RangeVar::unknown(alias_key.or(Some(table_key)))
            }
            TableLookup::Missing if self.ctx.catalog.open => {
                if let Some(policy) = &self.ctx.policy {
                    let schema =
                        (idents.len() >= 2).then(|| idents[idents.len() - 2].value.clone());
                    let table = idents.last().map(|i| i.value.clone()).unwrap_or_default();
                    if !policy.table_allowed(&self.ctx.datasource_id, schema.as_deref(), &table) {
                        let message = format!(
                            "role(s) '{}' may not read table '{}.{}'; the policy requires an explicit 'datasource.table' allow",
                            policy.roles().join(", "),
                            self.ctx.datasource_id,
                            table
                        );
                        self.issue(ErrorCode::SecurityViolation, message, span);
                    }
                }
                RangeVar::unknown(alias_key.or(Some(table_key)))
            }
            TableLookup::Missing => {
                let display = idents.last().map(|i| i.value.clone()).unwrap_or_default();
                self.unknown_table(&table_key, &display, span);
                RangeVar::unknown(alias_key.or(Some(table_key)))
            }
        }
    }

    pub(super) fn unknown_table(&mut self, key: &str, display: &str, span: Span) {
        // File paths and system catalogs are reported by the security pass.
        if super::super::security::looks_like_path(display) || is_system_name(key) {
            return;
        }
        let suggestions = closest(key, self.ctx.catalog.table_names());
        let cte_names: Vec<&str> = self.ctes.iter().map(|c| c.key.as_str()).collect();
        let more = closest(key, cte_names.iter().copied());
        let mut all = suggestions;
        all.extend(more);
        self.issue(
            ErrorCode::TableNotFound,
            format!(
                "table '{display}' does not exist in datasource '{}'{}",
                self.ctx.datasource_id,
                did_you_mean(&all)
            ),
            span,
        );
    }
}

fn last_key(r: &Resolver<'_>, name: &ObjectName) -> Option<String> {
    name.0.last().and_then(|p| p.as_ident()).map(|i| r.key(i))
}

fn join_constraint(op: &JoinOperator) -> Option<&JoinConstraint> {
    match op {
        JoinOperator::Join(c)
        | JoinOperator::Inner(c)
        | JoinOperator::Left(c)
        | JoinOperator::LeftOuter(c)
        | JoinOperator::Right(c)
        | JoinOperator::RightOuter(c)
        | JoinOperator::FullOuter(c)
        | JoinOperator::CrossJoin(c)
        | JoinOperator::Semi(c)
        | JoinOperator::LeftSemi(c)
        | JoinOperator::RightSemi(c)
        | JoinOperator::Anti(c)
        | JoinOperator::LeftAnti(c)
        | JoinOperator::RightAnti(c)
        | JoinOperator::StraightJoin(c)
        | JoinOperator::AsOf { constraint: c, .. } => Some(c),
        _ => None,
    }
}

fn is_system_name(key: &str) -> bool {
    key.starts_with("pg_")
        || key.starts_with("sqlite_")
        || key.starts_with("duckdb_")
        || matches!(
            key,
            "information_schema" | "pg_catalog" | "performance_schema"
        )
}

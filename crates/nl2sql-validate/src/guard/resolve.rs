//! Scoped resolution of every relation and column reference (rules G3, G8 and the column
//! part of G9).
//!
//! A [`Scope`] is one `SELECT`'s FROM clause (its range variables) plus its select-list
//! aliases, linked to the enclosing scope for correlated subqueries. Queries nested in
//! expressions are found with sqlparser's visitor, so no expression position is missed,
//! and resolved right where they appear with the current scope as their parent.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::ControlFlow;
use std::rc::Rc;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident, JoinConstraint,
    JoinOperator, ObjectName, OneOrManyWithParens, OrderBy, OrderByKind, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, SetQuantifier, Spanned, TableAlias, TableFactor,
    TableWithJoins, Value, Visit, Visitor, WildcardAdditionalOptions,
};
use sqlparser::tokenizer::Span;

use super::catalog::TableLookup;
use super::ident::ident_key;
use super::suggest::{closest, did_you_mean};
use super::{ColumnResolution, GuardContext, GuardIssue, SqlSpan, functions};

/// Resolves `query`; returns the issues found and how each column reference resolved.
/// What the scoped walk found and reached.
pub(crate) struct Resolution {
    /// Table, column and policy findings.
    pub(crate) issues: Vec<GuardIssue>,
    /// How each column reference resolved.
    pub(crate) resolutions: Vec<ColumnResolution>,
    /// Lookup keys of every CTE defined anywhere in the statement.
    pub(crate) cte_names: Vec<String>,
    /// Queries the walk resolved (by address, valid while the tree lives).
    pub(crate) handled_queries: HashSet<*const Query>,
    /// Identifier expressions the walk saw.
    pub(crate) handled_names: HashSet<*const Expr>,
    /// The datasource's tables the statement reads, and their columns.
    pub(crate) reads: Vec<TableRead>,
    /// Where double-quoted names that the guard read as strings start (SQLite): the
    /// rendering writes them as string literals.
    pub(crate) strings: HashSet<(u64, u64)>,
}

/// One table of the datasource a statement reads, and the columns it reads there
/// (directly, through `*`, or in a join, filter, grouping or ordering).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TableRead {
    /// Schema name as stored.
    pub schema: String,
    /// Table name as stored.
    pub table: String,
    /// Stored names of the columns read, in table order.
    pub columns: Vec<String>,
}

/// Resolves `query`. The caller checks, with [`Resolution::handled_queries`] and
/// [`Resolution::handled_names`], that the walk reached every node.
pub(crate) fn resolve(ctx: &GuardContext, query: &Query) -> Resolution {
    let mut resolver = Resolver {
        ctx,
        issues: Vec::new(),
        resolutions: Vec::new(),
        ctes: Vec::new(),
        cte_names: Vec::new(),
        handled_queries: HashSet::new(),
        handled_names: HashSet::new(),
        table_cols: HashMap::new(),
        reads: BTreeMap::new(),
        strings: HashSet::new(),
    };
    resolver.query(query, None);
    let reads = resolver
        .reads
        .iter()
        .map(|(&idx, positions)| {
            let table = ctx.catalog.table(idx);
            TableRead {
                schema: table.schema.clone(),
                table: table.name.clone(),
                columns: positions
                    .iter()
                    .filter_map(|&i| table.columns.get(i).map(|(_, name)| name.clone()))
                    .collect(),
            }
        })
        .collect();
    Resolution {
        reads,
        strings: resolver.strings,
        issues: resolver.issues,
        resolutions: resolver.resolutions,
        cte_names: resolver.cte_names,
        handled_queries: resolver.handled_queries,
        handled_names: resolver.handled_names,
    }
}

/// The columns of a relation, shared between the range variables that use them.
type Cols = Rc<Vec<OutCol>>;

/// One output column of a relation.
#[derive(Debug, Clone)]
struct OutCol {
    /// Lookup key; `None` when the column has no name that SQL could reference.
    key: Option<String>,
}

/// A range variable: a table, CTE or derived table in a FROM clause.
#[derive(Debug, Clone)]
struct RangeVar {
    /// Lookup key of its name (alias, or table name when unaliased).
    key: Option<String>,
    /// Its columns; `None` when they cannot be known (table functions). Shared, so that
    /// copying a range variable is cheap.
    cols: Option<Cols>,
    /// Catalog index when it is a table of the datasource.
    table: Option<usize>,
    /// Columns merged into an earlier relation by USING/NATURAL (hidden from unqualified
    /// lookup and from `*` on this side).
    hidden: Vec<String>,
    /// Join columns of a USING/NATURAL join, on either side.
    using: Vec<String>,
}

impl RangeVar {
    fn unknown(key: Option<String>) -> Self {
        RangeVar {
            key,
            cols: None,
            table: None,
            hidden: Vec::new(),
            using: Vec::new(),
        }
    }

    fn count(&self, key: &str) -> Option<usize> {
        self.cols.as_ref().map(|cols| {
            cols.iter()
                .filter(|c| c.key.as_deref() == Some(key))
                .count()
        })
    }
}

/// One SELECT's names.
struct Scope<'p> {
    rels: Vec<RangeVar>,
    parent: Option<&'p Scope<'p>>,
    /// Select-list aliases: (lookup key, position).
    aliases: Vec<(String, usize)>,
}

impl<'p> Scope<'p> {
    fn new(parent: Option<&'p Scope<'p>>) -> Self {
        Scope {
            rels: Vec::new(),
            parent,
            aliases: Vec::new(),
        }
    }

    fn has_alias(&self, key: &str) -> bool {
        self.aliases.iter().any(|(k, _)| k == key)
    }
}

/// Where an expression sits, which decides whether select-list aliases are visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Plain,
    Projection,
    Where,
    GroupBy,
    Having,
    OrderBy,
    JoinOn,
}

/// A CTE visible by name.
struct Cte {
    key: String,
    cols: Option<Cols>,
}

enum Lookup<'s> {
    Found(&'s RangeVar),
    Ambiguous(Vec<String>),
    Unknowable,
    NotFound,
}

struct Resolver<'g> {
    ctx: &'g GuardContext,
    issues: Vec<GuardIssue>,
    resolutions: Vec<ColumnResolution>,
    ctes: Vec<Cte>,
    /// Every CTE name met.
    cte_names: Vec<String>,
    /// Queries the scoped walk resolved (by address, valid while the tree lives).
    handled_queries: HashSet<*const Query>,
    /// Identifier expressions the scoped walk saw.
    handled_names: HashSet<*const Expr>,
    /// Column lists of catalog tables, built once per check.
    table_cols: HashMap<usize, Cols>,
    /// Catalog tables bound anywhere, with the positions of their columns read.
    reads: BTreeMap<usize, BTreeSet<usize>>,
    /// Where double-quoted names read as strings start (SQLite).
    strings: HashSet<(u64, u64)>,
}

fn span_of(span: Span) -> Option<SqlSpan> {
    SqlSpan::from_parser(span)
}

fn idents_span(idents: &[Ident]) -> Span {
    Span::union_iter(idents.iter().map(|i| i.span))
}

impl<'g> Resolver<'g> {
    fn dialect(&self) -> Dialect {
        self.ctx.dialect
    }

    fn key(&self, ident: &Ident) -> String {
        ident_key(self.ctx.dialect, ident)
    }

    fn issue(&mut self, code: ErrorCode, message: String, span: Span) {
        self.issues
            .push(GuardIssue::new(code, message, span_of(span)));
    }

    // ----- queries -------------------------------------------------------------------

    fn query(&mut self, query: &Query, outer: Option<&Scope<'_>>) -> Option<Vec<OutCol>> {
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
    fn positional(&mut self, expr: &Expr, width: Option<usize>, clause: &str) -> bool {
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

    // ----- SELECT --------------------------------------------------------------------

    fn select(
        &mut self,
        select: &Select,
        outer: Option<&Scope<'_>>,
        order_by: Option<&OrderBy>,
    ) -> Option<Vec<OutCol>> {
        let mut scope = Scope::new(outer);
        for item in &select.from {
            self.bind_from_item(item, &mut scope);
        }
        let mut out: Option<Vec<OutCol>> = Some(Vec::new());
        for (pos, item) in select.projection.iter().enumerate() {
            match item {
                SelectItem::UnnamedExpr(expr) => {
                    self.expr(expr, &scope, Ctx::Projection);
                    let key = self.output_name(expr);
                    if let Some(out) = out.as_mut() {
                        out.push(OutCol { key });
                    }
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    self.expr(expr, &scope, Ctx::Projection);
                    let key = self.key(alias);
                    scope.aliases.push((key.clone(), pos));
                    if let Some(out) = out.as_mut() {
                        out.push(OutCol { key: Some(key) });
                    }
                }
                SelectItem::ExprWithAliases { expr, aliases } => {
                    self.expr(expr, &scope, Ctx::Projection);
                    for alias in aliases {
                        let key = self.key(alias);
                        if let Some(out) = out.as_mut() {
                            out.push(OutCol { key: Some(key) });
                        }
                    }
                }
                SelectItem::Wildcard(options) => {
                    self.wildcard_options(options, &scope);
                    let expanded =
                        self.expand_star(&scope, None, options, options.wildcard_token.0.span);
                    append(&mut out, expanded);
                }
                SelectItem::QualifiedWildcard(kind, options) => match kind {
                    SelectItemQualifiedWildcardKind::ObjectName(name) => {
                        self.wildcard_options(options, &scope);
                        let expanded = self.expand_star(&scope, Some(name), options, name.span());
                        append(&mut out, expanded);
                    }
                    SelectItemQualifiedWildcardKind::Expr(expr) => {
                        self.expr(expr, &scope, Ctx::Projection);
                        out = None;
                    }
                },
            }
        }
        let width = out.as_ref().map(Vec::len);
        if let Some(sqlparser::ast::Distinct::On(exprs)) = &select.distinct {
            for e in exprs {
                self.expr(e, &scope, Ctx::OrderBy);
            }
        }
        if let Some(top) = &select.top {
            let _ = top.visit(&mut ExprWalk::new(self, &scope, Ctx::Plain));
        }
        if let Some(selection) = &select.selection {
            self.expr(selection, &scope, Ctx::Where);
        }
        match &select.group_by {
            GroupByExpr::Expressions(exprs, _) => {
                for e in exprs {
                    if !self.positional(e, width, "GROUP BY") {
                        self.expr(e, &scope, Ctx::GroupBy);
                    }
                }
            }
            GroupByExpr::All(_) => {}
        }
        if let Some(having) = &select.having {
            self.expr(having, &scope, Ctx::Having);
        }
        for window in &select.named_window {
            let _ = window.visit(&mut ExprWalk::new(self, &scope, Ctx::Plain));
        }
        if let Some(qualify) = &select.qualify {
            self.expr(qualify, &scope, Ctx::Having);
        }
        if let Some(order_by) = order_by
            && let OrderByKind::Expressions(items) = &order_by.kind
        {
            for item in items {
                if !self.positional(&item.expr, width, "ORDER BY") {
                    self.expr(&item.expr, &scope, Ctx::OrderBy);
                }
            }
        }
        out
    }

    /// The name a dialect gives an unaliased select item, when SQL can refer to it.
    fn output_name(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Identifier(ident) => Some(self.key(ident)),
            Expr::CompoundIdentifier(parts) => parts.last().map(|p| self.key(p)),
            Expr::Nested(inner) => self.output_name(inner),
            _ => match self.dialect() {
                Dialect::Postgres => match expr {
                    Expr::Function(f) => f
                        .name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map(|i| self.key(i)),
                    Expr::Cast { expr, .. } => self.output_name(expr),
                    _ => None,
                },
                _ => Some(expr.to_string().to_lowercase()),
            },
        }
    }

    /// Expands `*` or `q.*` into output columns, checking denied columns.
    fn expand_star(
        &mut self,
        scope: &Scope<'_>,
        qualifier: Option<&ObjectName>,
        options: &WildcardAdditionalOptions,
        span: Span,
    ) -> Option<Vec<OutCol>> {
        let rels: Vec<&RangeVar> = match qualifier {
            None => {
                if scope.rels.is_empty() {
                    self.issue(
                        ErrorCode::ColumnNotFound,
                        "'*' is used without a FROM clause; list the values to select".to_owned(),
                        span,
                    );
                    return None;
                }
                scope.rels.iter().collect()
            }
            Some(name) => {
                let key = name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| self.key(i))
                    .unwrap_or_default();
                match scope
                    .rels
                    .iter()
                    .find(|r| r.key.as_deref() == Some(key.as_str()))
                {
                    Some(rel) => vec![rel],
                    None => {
                        let names: Vec<&str> =
                            scope.rels.iter().filter_map(|r| r.key.as_deref()).collect();
                        self.issue(
                            ErrorCode::ColumnNotFound,
                            format!(
                                "'{name}.*' names no table or alias of this FROM clause (in scope: {}){}",
                                list_or_none(&names),
                                did_you_mean(&closest(&key, names.iter().copied()))
                            ),
                            span,
                        );
                        return None;
                    }
                }
            }
        };
        let excluded = self.excluded(options);
        let mut out = Some(Vec::new());
        let mut matched: HashSet<String> = HashSet::new();
        for rel in rels {
            let Some(cols) = &rel.cols else {
                out = None;
                continue;
            };
            for col in cols.iter() {
                let Some(key) = &col.key else {
                    if let Some(out) = out.as_mut() {
                        out.push(col.clone());
                    }
                    continue;
                };
                if qualifier.is_none() && rel.hidden.contains(key) {
                    continue;
                }
                if excluded.contains(key) {
                    matched.insert(key.clone());
                    continue;
                }
                self.check_denied(rel, key, span);
                self.note_read(rel, key);
                if let Some(out) = out.as_mut() {
                    out.push(col.clone());
                }
            }
        }
        if out.is_some() {
            let mut missing: Vec<&String> = excluded.difference(&matched).collect();
            missing.sort();
            for name in missing {
                self.issue(
                    ErrorCode::ColumnNotFound,
                    format!("EXCLUDE/EXCEPT names column '{name}', which '*' does not expand to"),
                    span,
                );
            }
        }
        out
    }

    /// Resolves the expressions of `* REPLACE (expr AS col)` in the select's scope.
    fn wildcard_options(&mut self, options: &WildcardAdditionalOptions, scope: &Scope<'_>) {
        if let Some(replace) = &options.opt_replace {
            for element in &replace.items {
                self.expr(&element.expr, scope, Ctx::Projection);
            }
        }
    }

    fn excluded(&self, options: &WildcardAdditionalOptions) -> HashSet<String> {
        let mut names = HashSet::new();
        if let Some(exclude) = &options.opt_exclude {
            match exclude {
                sqlparser::ast::ExcludeSelectItem::Single(name) => {
                    if let Some(i) = name.0.last().and_then(|p| p.as_ident()) {
                        names.insert(self.key(i));
                    }
                }
                sqlparser::ast::ExcludeSelectItem::Multiple(list) => {
                    for name in list {
                        if let Some(i) = name.0.last().and_then(|p| p.as_ident()) {
                            names.insert(self.key(i));
                        }
                    }
                }
            }
        }
        if let Some(except) = &options.opt_except {
            names.insert(self.key(&except.first_element));
            for i in &except.additional_elements {
                names.insert(self.key(i));
            }
        }
        names
    }

    // ----- FROM ----------------------------------------------------------------------

    fn bind_from_item(&mut self, item: &TableWithJoins, scope: &mut Scope<'_>) {
        let start = scope.rels.len();
        let rels = self.table_factor(&item.relation, scope);
        for rel in rels {
            self.add_rel(scope, rel, super::factor_span(&item.relation));
        }
        for join in &item.joins {
            let rels = self.table_factor(&join.relation, scope);
            let span = super::factor_span(&join.relation);
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

    fn alias_columns(&self, alias: &TableAlias) -> Option<Vec<OutCol>> {
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
    fn rename(&mut self, cols: Option<Cols>, alias: &TableAlias) -> Option<Cols> {
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

    fn unknown_table(&mut self, key: &str, display: &str, span: Span) {
        // File paths and system catalogs are reported by the security pass.
        if super::security::looks_like_path(display) || is_system_name(key) {
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

    fn check_table_policy(&mut self, idx: usize, span: Span) {
        let Some(policy) = &self.ctx.policy else {
            return;
        };
        let table = self.ctx.catalog.table(idx);
        if !policy.table_allowed(&self.ctx.datasource_id, Some(&table.schema), &table.name) {
            let message = format!(
                "role(s) '{}' may not read table '{}.{}'; the policy requires an explicit 'datasource.table' allow",
                policy.roles().join(", "),
                self.ctx.datasource_id,
                table.name
            );
            self.issue(ErrorCode::SecurityViolation, message, span);
        }
    }

    fn check_denied(&mut self, rel: &RangeVar, key: &str, span: Span) {
        let (Some(policy), Some(idx)) = (&self.ctx.policy, rel.table) else {
            return;
        };
        let table = self.ctx.catalog.table(idx);
        let Some((_, column)) = table.columns.iter().find(|(k, _)| k == key) else {
            return;
        };
        if policy.column_denied(&self.ctx.datasource_id, &table.name, column) {
            let message = format!(
                "column '{}.{}.{}' is denied to role(s) '{}' and may not be read, including through '*'",
                self.ctx.datasource_id,
                table.name,
                column,
                policy.roles().join(", ")
            );
            self.issue(ErrorCode::SecurityViolation, message, span);
        }
    }

    // ----- expressions ---------------------------------------------------------------

    fn expr(&mut self, expr: &Expr, scope: &Scope<'_>, ctx: Ctx) {
        let _ = expr.visit(&mut ExprWalk::new(self, scope, ctx));
    }

    fn record(&mut self, key: &str, rel: &RangeVar, span: Span) {
        self.note_read(rel, key);
        self.resolutions.push(ColumnResolution {
            column: key.to_owned(),
            qualifier: rel.key.clone(),
            table: rel
                .table
                .map(|i| self.ctx.catalog.table(i).name.to_lowercase()),
            span: span_of(span),
        });
    }

    /// Notes that `key`, a column of `rel`, is read when `rel` is a catalog table.
    fn note_read(&mut self, rel: &RangeVar, key: &str) {
        let (Some(idx), Some(cols)) = (rel.table, &rel.cols) else {
            return;
        };
        if let Some(position) = cols.iter().position(|c| c.key.as_deref() == Some(key)) {
            self.reads.entry(idx).or_default().insert(position);
        }
    }

    fn alias_visible(&self, ctx: Ctx) -> bool {
        match ctx {
            Ctx::OrderBy | Ctx::GroupBy => true,
            Ctx::Having => self.dialect() != Dialect::Postgres,
            Ctx::Where => matches!(
                self.dialect(),
                Dialect::Sqlite | Dialect::DuckDb | Dialect::Generic
            ),
            Ctx::Projection => matches!(self.dialect(), Dialect::DuckDb | Dialect::Generic),
            Ctx::Plain | Ctx::JoinOn => false,
        }
    }

    fn lookup<'s>(&self, scope: &'s Scope<'s>, key: &str) -> Lookup<'s> {
        let mut level = Some(scope);
        while let Some(s) = level {
            let mut found: Vec<&RangeVar> = Vec::new();
            let mut total = 0;
            let mut unknowable = false;
            for rel in &s.rels {
                match rel.count(key) {
                    None => unknowable = true,
                    Some(0) => {}
                    Some(n) => {
                        if !rel.hidden.iter().any(|h| h == key) {
                            found.push(rel);
                            total += n;
                        }
                    }
                }
            }
            match (found.as_slice(), total) {
                ([rel], 1) => return Lookup::Found(rel),
                ([], _) if unknowable => return Lookup::Unknowable,
                ([], _) => level = s.parent,
                (rels, _) => {
                    return Lookup::Ambiguous(
                        rels.iter()
                            .map(|r| r.key.clone().unwrap_or_else(|| "(subquery)".to_owned()))
                            .collect(),
                    );
                }
            }
        }
        Lookup::NotFound
    }

    fn find_rel<'s>(&self, scope: &'s Scope<'s>, key: &str) -> Option<&'s RangeVar> {
        let mut level = Some(scope);
        while let Some(s) = level {
            if let Some(rel) = s.rels.iter().find(|r| r.key.as_deref() == Some(key)) {
                return Some(rel);
            }
            level = s.parent;
        }
        None
    }

    fn column_names_in_scope(&self, scope: &Scope<'_>) -> Vec<String> {
        let mut names = Vec::new();
        let mut level = Some(scope);
        while let Some(s) = level {
            for rel in &s.rels {
                for col in rel.cols.iter().flat_map(|c| c.iter()) {
                    if let Some(k) = &col.key {
                        names.push(k.clone());
                    }
                }
            }
            level = s.parent;
        }
        names
    }

    fn ident(&mut self, ident: &Ident, scope: &Scope<'_>, ctx: Ctx) {
        let key = self.key(ident);
        if ctx == Ctx::OrderBy && scope.has_alias(&key) {
            self.resolutions.push(ColumnResolution {
                column: key,
                qualifier: None,
                table: None,
                span: span_of(ident.span),
            });
            return;
        }
        match self.lookup(scope, &key) {
            Lookup::Found(rel) => {
                let rel = rel.clone();
                self.check_denied(&rel, &key, ident.span);
                self.record(&key, &rel, ident.span);
            }
            Lookup::Unknowable => {}
            Lookup::Ambiguous(names) => {
                if self.alias_visible(ctx) && scope.has_alias(&key) && ctx != Ctx::Where {
                    return;
                }
                self.issue(
                    ErrorCode::ColumnNotFound,
                    format!(
                        "column '{}' is ambiguous: it exists in {}; qualify it with a table alias",
                        ident.value,
                        names
                            .iter()
                            .map(|n| format!("'{n}'"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    ident.span,
                );
            }
            Lookup::NotFound => {
                if self.alias_visible(ctx) && scope.has_alias(&key) {
                    self.resolutions.push(ColumnResolution {
                        column: key,
                        qualifier: None,
                        table: None,
                        span: span_of(ident.span),
                    });
                    return;
                }
                // SQLite reads a double-quoted name that matches no column as a string
                // (its legacy "DQS" reading, which Spider's gold queries rely on). The
                // adapter turns that reading off; the rendering spells the string with
                // single quotes, so the engine reads what the guard read.
                if self.dialect() == Dialect::Sqlite && ident.quote_style == Some('"') {
                    self.strings
                        .insert((ident.span.start.line, ident.span.start.column));
                    return;
                }
                if matches!(self.dialect(), Dialect::Sqlite | Dialect::DuckDb)
                    && matches!(key.as_str(), "rowid" | "oid" | "_rowid_")
                    && scope.rels.iter().any(|r| r.table.is_some())
                {
                    return;
                }
                let mut candidates = self.column_names_in_scope(scope);
                candidates.extend(scope.aliases.iter().map(|(k, _)| k.clone()));
                let suggestions = closest(&key, candidates.iter().map(String::as_str));
                let tables: Vec<&str> =
                    scope.rels.iter().filter_map(|r| r.key.as_deref()).collect();
                let message = if tables.is_empty() && scope.parent.is_none() {
                    format!(
                        "column '{}' is used but the query has no FROM clause",
                        ident.value
                    )
                } else {
                    format!(
                        "column '{}' does not exist in {}{}",
                        ident.value,
                        describe_tables(&tables),
                        did_you_mean(&suggestions)
                    )
                };
                self.issue(ErrorCode::ColumnNotFound, message, ident.span);
            }
        }
    }

    fn compound(&mut self, idents: &[Ident], scope: &Scope<'_>, ctx: Ctx) {
        let keys: Vec<String> = idents.iter().map(|i| self.key(i)).collect();
        let span = idents_span(idents);
        match keys.as_slice() {
            [] => {}
            [_] => self.ident(&idents[0], scope, ctx),
            [q, c] => self.qualified(q, c, &idents[0], &idents[1], scope, span),
            [a, b, rest @ ..] => {
                // `t.col.field` (struct access) or `schema.table.col` / `db.schema.table.col`.
                if let Some(rel) = self.find_rel(scope, a)
                    && (rel.count(b).is_some_and(|n| n > 0) || rel.cols.is_none())
                {
                    let rel = rel.clone();
                    self.check_denied(&rel, b, span);
                    self.record(b, &rel, span);
                    return;
                }
                let n = keys.len();
                let (schema, table, column) = (&keys[n - 3], &keys[n - 2], &keys[n - 1]);
                let _ = rest;
                let mut level = Some(scope);
                while let Some(s) = level {
                    for rel in &s.rels {
                        if let Some(idx) = rel.table {
                            let t = self.ctx.catalog.table(idx);
                            let t_schema = super::ident::stored_key(self.dialect(), &t.schema);
                            let t_name = super::ident::stored_key(self.dialect(), &t.name);
                            if &t_schema == schema
                                && &t_name == table
                                && rel.key.as_deref() == Some(table.as_str())
                            {
                                let rel = rel.clone();
                                self.qualified_in(&rel, column, &idents[n - 1], span);
                                return;
                            }
                        }
                    }
                    level = s.parent;
                }
                self.issue(
                    ErrorCode::ColumnNotFound,
                    format!(
                        "'{}' names no table in scope; refer to columns as alias.column",
                        idents
                            .iter()
                            .map(|i| i.value.as_str())
                            .collect::<Vec<_>>()
                            .join(".")
                    ),
                    span,
                );
            }
        }
    }

    fn qualified(
        &mut self,
        q: &str,
        c: &str,
        q_ident: &Ident,
        c_ident: &Ident,
        scope: &Scope<'_>,
        span: Span,
    ) {
        match self.find_rel(scope, q) {
            Some(rel) => {
                let rel = rel.clone();
                if self.dialect() == Dialect::Generic && rel.using.iter().any(|u| u == c) {
                    self.issue(
                        ErrorCode::ColumnNotFound,
                        format!(
                            "column '{}' is a USING join column; standard SQL refers to it without a qualifier",
                            c_ident.value
                        ),
                        span,
                    );
                    return;
                }
                self.qualified_in(&rel, c, c_ident, span);
            }
            None => {
                let names: Vec<String> = {
                    let mut names = Vec::new();
                    let mut level = Some(scope);
                    while let Some(s) = level {
                        names.extend(s.rels.iter().filter_map(|r| r.key.clone()));
                        level = s.parent;
                    }
                    names
                };
                let aliased_table = scope.rels.iter().find(|r| {
                    r.table.is_some_and(|i| {
                        super::ident::stored_key(self.dialect(), &self.ctx.catalog.table(i).name)
                            == q
                    })
                });
                let hint = match aliased_table.and_then(|r| r.key.clone()) {
                    Some(alias) => {
                        format!("; table '{}' is aliased as '{alias}' here", q_ident.value)
                    }
                    None => did_you_mean(&closest(q, names.iter().map(String::as_str))),
                };
                self.issue(
                    ErrorCode::ColumnNotFound,
                    format!(
                        "'{}.{}' uses '{}', which is no table or alias in scope (in scope: {}){hint}",
                        q_ident.value,
                        c_ident.value,
                        q_ident.value,
                        list_or_none(&names.iter().map(String::as_str).collect::<Vec<_>>()),
                    ),
                    span,
                );
            }
        }
    }

    fn qualified_in(&mut self, rel: &RangeVar, c: &str, c_ident: &Ident, span: Span) {
        match rel.count(c) {
            None => {}
            Some(1) => {
                self.check_denied(rel, c, span);
                self.record(c, rel, span);
            }
            Some(0) => {
                if matches!(self.dialect(), Dialect::Sqlite | Dialect::DuckDb)
                    && matches!(c, "rowid" | "oid" | "_rowid_")
                    && rel.table.is_some()
                {
                    return;
                }
                let cols: Vec<&str> = rel.cols.iter().flat_map(|c| c.iter()).filter_map(|c| c.key.as_deref()).collect();
                let owner = match (rel.key.as_deref(), rel.table) {
                    (Some(k), Some(i)) if self.ctx.catalog.table(i).name.to_lowercase() != k => {
                        format!("'{k}' (table '{}')", self.ctx.catalog.table(i).name)
                    }
                    (Some(k), _) => format!("'{k}'"),
                    (None, _) => "the subquery".to_owned(),
                };
                self.issue(
                    ErrorCode::ColumnNotFound,
                    format!("column '{}' does not exist in {owner}{}", c_ident.value, did_you_mean(&closest(c, cols))),
                    span,
                );
            }
            Some(_) => self.issue(
                ErrorCode::ColumnNotFound,
                format!(
                    "column '{}' is ambiguous in '{}': the subquery returns it more than once; alias the columns",
                    c_ident.value,
                    rel.key.clone().unwrap_or_default()
                ),
                span,
            ),
        }
    }

    fn function_wildcards(&mut self, function: &sqlparser::ast::Function, scope: &Scope<'_>) {
        let FunctionArguments::List(list) = &function.args else {
            return;
        };
        for arg in &list.args {
            let arg_expr = match arg {
                FunctionArg::Unnamed(a)
                | FunctionArg::Named { arg: a, .. }
                | FunctionArg::ExprNamed { arg: a, .. } => a,
            };
            if let FunctionArgExpr::QualifiedWildcard(name) = arg_expr {
                let options = WildcardAdditionalOptions::default();
                let _ = self.expand_star(scope, Some(name), &options, function.span());
            }
        }
    }
}

fn append(out: &mut Option<Vec<OutCol>>, more: Option<Vec<OutCol>>) {
    match (out.as_mut(), more) {
        (Some(out), Some(more)) => out.extend(more),
        _ => *out = None,
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

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

fn describe_tables(tables: &[&str]) -> String {
    match tables {
        [] => "any table in scope".to_owned(),
        [one] => format!("'{one}'"),
        many => format!(
            "any of {}",
            many.iter()
                .map(|t| format!("'{t}'"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Visits one expression tree, resolving column references at its own level and handing
/// nested queries back to the resolver with the current scope as their parent.
struct ExprWalk<'r, 'g, 's, 'p> {
    r: &'r mut Resolver<'g>,
    scope: &'s Scope<'p>,
    ctx: Ctx,
    nested: usize,
    lambdas: Vec<String>,
    skip: HashSet<*const Expr>,
}

impl<'r, 'g, 's, 'p> ExprWalk<'r, 'g, 's, 'p> {
    fn new(r: &'r mut Resolver<'g>, scope: &'s Scope<'p>, ctx: Ctx) -> Self {
        ExprWalk {
            r,
            scope,
            ctx,
            nested: 0,
            lambdas: Vec::new(),
            skip: HashSet::new(),
        }
    }
}

impl Visitor for ExprWalk<'_, '_, '_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if self.nested == 0 {
            self.r.query(query, Some(self.scope));
        }
        self.nested += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<()> {
        self.nested = self.nested.saturating_sub(1);
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if self.nested > 0 {
            return ControlFlow::Continue(());
        }
        if matches!(expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
            self.r.handled_names.insert(expr as *const Expr);
        }
        if self.skip.contains(&(expr as *const Expr)) {
            return ControlFlow::Continue(());
        }
        match expr {
            Expr::Identifier(ident) => {
                let key = self.r.key(ident);
                if !ident.value.starts_with('@') && !self.lambdas.contains(&key) {
                    self.r.ident(ident, self.scope, self.ctx);
                }
            }
            Expr::CompoundIdentifier(idents) => {
                let first = idents.first().map(|i| self.r.key(i));
                let is_var = idents.first().is_some_and(|i| i.value.starts_with('@'));
                if !is_var && !first.is_some_and(|f| self.lambdas.contains(&f)) {
                    self.r.compound(idents, self.scope, self.ctx);
                }
            }
            Expr::CompoundFieldAccess { access_chain, .. } => {
                for access in access_chain {
                    if let sqlparser::ast::AccessExpr::Dot(e) = access {
                        self.skip_names(e);
                    }
                }
            }
            Expr::Function(function) => {
                let name = function
                    .name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.to_lowercase())
                    .unwrap_or_default();
                if functions::takes_date_part_keyword(&name)
                    && let FunctionArguments::List(list) = &function.args
                    && let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(e))) = list.args.first()
                    && matches!(e, Expr::Identifier(i) if i.quote_style.is_none())
                {
                    self.skip.insert(e as *const Expr);
                }
                self.r.function_wildcards(function, self.scope);
            }
            Expr::Lambda(lambda) => {
                let params: Vec<String> = match &lambda.params {
                    OneOrManyWithParens::One(p) => vec![self.r.key(&p.name)],
                    OneOrManyWithParens::Many(ps) => {
                        ps.iter().map(|p| self.r.key(&p.name)).collect()
                    }
                };
                self.lambdas.extend(params);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if self.nested == 0
            && let Expr::Lambda(lambda) = expr
        {
            let n = match &lambda.params {
                OneOrManyWithParens::One(_) => 1,
                OneOrManyWithParens::Many(ps) => ps.len(),
            };
            let keep = self.lambdas.len().saturating_sub(n);
            self.lambdas.truncate(keep);
        }
        ControlFlow::Continue(())
    }
}

impl ExprWalk<'_, '_, '_, '_> {
    /// Field names after a dot are not columns.
    fn skip_names(&mut self, expr: &Expr) {
        if matches!(expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
            self.skip.insert(expr as *const Expr);
        }
    }
}

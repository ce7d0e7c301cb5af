//! Column references: unqualified and qualified names (`c`, `t.c`, `s.t.c`, struct
//! fields), lookup through enclosing scopes for correlated subqueries, select-list
//! aliases, USING columns, and what each reference resolved to.

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, Spanned, Visit,
    WildcardAdditionalOptions,
};
use sqlparser::tokenizer::Span;

use super::super::suggest::{closest, did_you_mean};
use super::walk::ExprWalk;
use super::{ColumnResolution, Ctx, Lookup, RangeVar, Resolver, Scope, list_or_none, span_of};

fn idents_span(idents: &[Ident]) -> Span {
    Span::union_iter(idents.iter().map(|i| i.span))
}

impl<'g> Resolver<'g> {
    // ----- expressions ---------------------------------------------------------------

    pub(super) fn expr(&mut self, expr: &Expr, scope: &Scope<'_>, ctx: Ctx) {
        let _ = expr.visit(&mut ExprWalk::new(self, scope, ctx));
    }

    pub(super) fn record(&mut self, key: &str, rel: &RangeVar, span: Span) {
        self.note_read(rel, key);
        self.resolutions.push(ColumnResolution {
            column: key.to_owned(),
            qualifier: rel.key.clone(),
            table: rel
                .table
                .map(|i| super::super::ident::lower(&self.ctx.catalog.table(i).name)),
            span: span_of(span),
        });
    }

    /// Notes that `key`, a column of `rel`, is read when `rel` is a catalog table.
    pub(super) fn note_read(&mut self, rel: &RangeVar, key: &str) {
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

    pub(super) fn ident(&mut self, ident: &Ident, scope: &Scope<'_>, ctx: Ctx) {
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

    pub(super) fn compound(&mut self, idents: &[Ident], scope: &Scope<'_>, ctx: Ctx) {
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
                            let t_schema =
                                super::super::ident::stored_key(self.dialect(), &t.schema);
                            let t_name = super::super::ident::stored_key(self.dialect(), &t.name);
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
                        super::super::ident::stored_key(
                            self.dialect(),
                            &self.ctx.catalog.table(i).name,
                        ) == q
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

    pub(super) fn function_wildcards(
        &mut self,
        function: &sqlparser::ast::Function,
        scope: &Scope<'_>,
    ) {
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

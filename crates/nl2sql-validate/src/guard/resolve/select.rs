//! SELECT: the select list and its output columns, `*` and `q.*` expansion (with
//! EXCLUDE/EXCEPT/REPLACE), and the clauses resolved in the select's scope.

use std::collections::HashSet;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    Expr, GroupByExpr, ObjectName, OrderBy, OrderByKind, Select, SelectItem,
    SelectItemQualifiedWildcardKind, Spanned, Visit, WildcardAdditionalOptions,
};
use sqlparser::tokenizer::Span;

use super::super::suggest::{closest, did_you_mean};
use super::walk::ExprWalk;
use super::{Ctx, OutCol, RangeVar, Resolver, Scope, append, list_or_none};

impl<'g> Resolver<'g> {
    // ----- SELECT --------------------------------------------------------------------

    pub(super) fn select(
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
    pub(super) fn output_name(&self, expr: &Expr) -> Option<String> {
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
    pub(super) fn expand_star(
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
}

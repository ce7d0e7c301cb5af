//! The expression visitor: finds column references at one query level (skipping lambda
//! parameters, struct field names and date-part keywords) and hands nested queries back
//! to the resolver.

use rustc_hash::FxHashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, OneOrManyWithParens, Query, Visitor,
};

use super::super::functions;
use super::{Ctx, Resolver, Scope};

/// Visits one expression tree, resolving column references at its own level and handing
/// nested queries back to the resolver with the current scope as their parent.
pub(super) struct ExprWalk<'r, 'g, 's, 'p> {
    r: &'r mut Resolver<'g>,
    scope: &'s Scope<'p>,
    ctx: Ctx,
    nested: usize,
    lambdas: Vec<String>,
    skip: FxHashSet<*const Expr>,
}

impl<'r, 'g, 's, 'p> ExprWalk<'r, 'g, 's, 'p> {
    pub(super) fn new(r: &'r mut Resolver<'g>, scope: &'s Scope<'p>, ctx: Ctx) -> Self {
        ExprWalk {
            r,
            scope,
            ctx,
            nested: 0,
            lambdas: Vec::new(),
            skip: FxHashSet::default(),
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
                    .map(|i| super::super::ident::lower(&i.value))
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

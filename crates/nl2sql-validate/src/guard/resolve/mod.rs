//! Scoped resolution of every relation and column reference (rules G3, G8 and the column
//! part of G9).
//!
//! A [`Scope`] is one `SELECT`'s FROM clause (its range variables) plus its select-list
//! aliases, linked to the enclosing scope for correlated subqueries. Queries nested in
//! expressions are found with sqlparser's visitor, so no expression position is missed,
//! and resolved right where they appear with the current scope as their parent.
//!
//! The walk is split by concern: [`query`] (WITH, set operations, VALUES, ORDER BY of a
//! set operation), [`select`] (select lists and `*`), [`from`] (FROM items, joins, CTE
//! and table binding), [`policy`] (table and column policy checks), [`columns`]
//! (identifier and qualified-name binding, select-list aliases) and [`walk`] (the
//! expression visitor that finds column references and nested queries).

mod columns;
mod from;
mod policy;
mod query;
mod select;
mod walk;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rustc_hash::FxHashSet;
use std::rc::Rc;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{Expr, Ident, Query};
use sqlparser::tokenizer::Span;

use super::ident::ident_key;
use super::{ColumnResolution, GuardContext, GuardIssue, SqlSpan};

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
    pub(crate) handled_queries: FxHashSet<*const Query>,
    /// Identifier expressions the walk saw.
    pub(crate) handled_names: FxHashSet<*const Expr>,
    /// The datasource's tables the statement reads, and their columns.
    pub(crate) reads: Vec<TableRead>,
    /// Where double-quoted names that the guard read as strings start (SQLite): the
    /// rendering writes them as string literals.
    pub(crate) strings: FxHashSet<(u64, u64)>,
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
        handled_queries: FxHashSet::default(),
        handled_names: FxHashSet::default(),
        table_cols: HashMap::new(),
        reads: BTreeMap::new(),
        strings: FxHashSet::default(),
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
    handled_queries: FxHashSet<*const Query>,
    /// Identifier expressions the scoped walk saw.
    handled_names: FxHashSet<*const Expr>,
    /// Column lists of catalog tables, built once per check.
    table_cols: HashMap<usize, Cols>,
    /// Catalog tables bound anywhere, with the positions of their columns read.
    reads: BTreeMap<usize, BTreeSet<usize>>,
    /// Where double-quoted names read as strings start (SQLite).
    strings: FxHashSet<(u64, u64)>,
}

fn span_of(span: Span) -> Option<SqlSpan> {
    SqlSpan::from_parser(span)
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
}

fn append(out: &mut Option<Vec<OutCol>>, more: Option<Vec<OutCol>>) {
    match (out.as_mut(), more) {
        (Some(out), Some(more)) => out.extend(more),
        _ => *out = None,
    }
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

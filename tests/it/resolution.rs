//! Comparing the guard's column resolutions with sqlglot's qualified output.
//!
//! sqlglot's `qualify_columns` rewrites a query so that every column reference carries the
//! range variable it resolves to (`SELECT a FROM x` → `SELECT x.a AS a FROM x AS x`). The
//! guard reports, for each column reference of the input, the range variable it resolved
//! to ([`ColumnResolution`]). Both describe the same scoping decisions, but sqlglot also
//! rewrites the query: it expands `*`, replaces a `USING` column by
//! `COALESCE(l.c, r.c)` and adds `ON l.c = r.c`, inlines select aliases used in `WHERE`,
//! `GROUP BY` and `HAVING`, and turns `GROUP BY 1` into the expression. So the expected
//! text has *more* references than the input, never fewer, except for alias references it
//! inlined. The comparison is therefore a containment, checked in two directions:
//!
//! 1. **Agreement** — every resolution of ours must appear in the expected text:
//!    - `qualifier = Some(q)`: the expected text holds a qualified reference `q.c`; each
//!      such expected reference is consumed at most once (multiset containment), so two
//!      references of ours to `x.a` need two `x.a` in the expected text. When the
//!      `x.a` are used up, an unqualified expected reference to a select alias whose
//!      expression reads `q.c` also agrees (sqlglot keeps `ORDER BY a` where `a` is
//!      `x.a AS a` or `CAST(x.a AS INT) AS a`; resolving that `a` to `x.a` reads the same
//!      column).
//!    - `qualifier = None` (a select alias, or an anonymous derived table): the expected
//!      text holds `c` unqualified, or names a projection `… AS c` (sqlglot inlined the
//!      alias), or holds `_N.c` with `_N` one of the names sqlglot gives anonymous derived
//!      tables (`_0`, `_1`, …).
//! 2. **Completeness** — every column reference of the input (each `Identifier` or
//!    `CompoundIdentifier` expression, in source order, except lambda parameters and the
//!    value column an `UNPIVOT` defines) has a resolution: the input's
//!    column names, in source order, must be a subsequence of our resolutions' column
//!    names (ours may hold more, e.g. for the columns of `USING (…)`).
//!
//! sqlglot's TPC-H fixtures are the output of its whole optimizer rather than of
//! `qualify_columns` alone; [`Oracle::Optimized`] documents how the comparison weakens for
//! them.
//!
//! Names compare the way the dialect does: unquoted names fold to lower case; quoted names
//! keep their case, except in the dialects that ignore case (SQLite, MySQL, DuckDB), where
//! every name is lower-cased. A reference `a.b.c` is read as qualifier `a`, column `b` (a
//! struct field access, as sqlglot writes it) in the expected text, and as column `c`
//! in the input.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::ControlFlow;

use nl2sql_state::Dialect;
use nl2sql_validate::ColumnResolution;
use sqlparser::ast::{
    Expr, Ident, Query, Select, SelectItem, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::parser::Parser;

pub(crate) use nl2sql_validate::parser_dialect;

/// Parses exactly one statement.
pub(crate) fn parse_one(sql: &str, dialect: Dialect) -> Result<Statement, String> {
    let mut statements =
        Parser::parse_sql(parser_dialect(dialect).as_ref(), sql).map_err(|e| e.to_string())?;
    match statements.len() {
        1 => Ok(statements.remove(0)),
        n => Err(format!("expected one statement, found {n}")),
    }
}

fn ignores_case(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::Sqlite | Dialect::MySql | Dialect::DuckDb)
}

/// The comparison form of an identifier as written in SQL.
pub(crate) fn ident_name(dialect: Dialect, ident: &Ident) -> String {
    if ident.quote_style.is_none() || ignores_case(dialect) {
        ident.value.to_lowercase()
    } else {
        ident.value.clone()
    }
}

/// The comparison form of a name reported by the guard (already normalised by it).
pub(crate) fn reported_name(dialect: Dialect, name: &str) -> String {
    if ignores_case(dialect) {
        name.to_lowercase()
    } else {
        name.to_owned()
    }
}

// ---------------------------------------------------------------------------------------
// What the input holds
// ---------------------------------------------------------------------------------------

/// Facts about an input query that decide whether a case can be compared, and its column
/// references.
#[derive(Debug, Default)]
pub(crate) struct InputFacts {
    /// Column names of the column references, in source order.
    pub(crate) column_refs: Vec<String>,
    /// Names (last part, compared lower-case) of the relations in FROM/JOIN that are plain
    /// table names: tables of the schema or CTEs.
    pub(crate) relations: BTreeSet<String>,
    /// Names of the CTEs the query defines anywhere.
    pub(crate) ctes: BTreeSet<String>,
    /// Table functions and other relations that are neither tables nor subqueries
    /// (`read_parquet(…)`, `UNNEST(…)`, …).
    pub(crate) table_functions: Vec<String>,
    /// True when some `WITH` is `WITH RECURSIVE`.
    pub(crate) recursive: bool,
}

impl InputFacts {
    /// Reads the facts of `statement`, parsed in `dialect`.
    pub(crate) fn of(statement: &Statement, dialect: Dialect) -> Self {
        let mut collector = InputCollector {
            dialect,
            facts: InputFacts::default(),
            refs: Vec::new(),
            lambda_params: Vec::new(),
            defined: BTreeSet::new(),
        };
        let _ = statement.visit(&mut collector);
        let mut refs = collector.refs;
        refs.sort_by_key(|(pos, _)| *pos);
        let mut facts = collector.facts;
        facts.column_refs = refs.into_iter().map(|(_, name)| name).collect();
        facts
    }

    /// Relations that are neither CTEs nor tables named in `tables` (lower-case names).
    pub(crate) fn unknown_relations(&self, tables: &BTreeSet<String>) -> Vec<String> {
        self.relations
            .iter()
            .filter(|r| !tables.contains(*r) && !self.ctes.contains(*r))
            .cloned()
            .collect()
    }
}

struct InputCollector {
    dialect: Dialect,
    facts: InputFacts,
    refs: Vec<((u64, u64), String)>,
    /// Parameters of the lambdas being visited: their names are not column references.
    lambda_params: Vec<Vec<String>>,
    /// Positions of identifiers that define a column rather than reference one (the value
    /// column of `UNPIVOT(value FOR name IN (…))`).
    defined: BTreeSet<(u64, u64)>,
}

fn position(ident: &Ident) -> (u64, u64) {
    (ident.span.start.line, ident.span.start.column)
}

impl Visitor for InputCollector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            self.facts.recursive |= with.recursive;
            for cte in &with.cte_tables {
                self.facts.ctes.insert(cte.alias.name.value.to_lowercase());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        match factor {
            TableFactor::Table {
                name, args: None, ..
            } => {
                let last = name.0.last().map(|p| match p.as_ident() {
                    Some(ident) => ident.value.to_lowercase(),
                    None => p.to_string().to_lowercase(),
                });
                self.facts.relations.extend(last);
            }
            TableFactor::Table {
                name,
                args: Some(_),
                ..
            } => {
                self.facts.table_functions.push(name.to_string());
            }
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => {}
            TableFactor::Pivot { .. } => {}
            TableFactor::Unpivot { value, .. } => {
                let defined: Vec<&Expr> = match value {
                    Expr::Tuple(values) => values.iter().collect(),
                    other => vec![other],
                };
                for expr in defined {
                    if let Expr::Identifier(ident) = expr {
                        self.defined.insert(position(ident));
                    }
                }
            }
            other => {
                let text = other.to_string();
                let head = text.split('(').next().unwrap_or(&text).trim().to_owned();
                self.facts.table_functions.push(head);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Lambda(lambda) => {
                let params = lambda
                    .params
                    .iter()
                    .map(|p| ident_name(self.dialect, &p.name));
                self.lambda_params.push(params.collect());
            }
            Expr::Identifier(ident) => {
                let name = ident_name(self.dialect, ident);
                let is_param = self.lambda_params.iter().flatten().any(|p| *p == name);
                if !is_param && !self.defined.contains(&position(ident)) {
                    self.refs.push((position(ident), name));
                }
            }
            Expr::CompoundIdentifier(parts) => {
                if let (Some(first), Some(last)) = (parts.first(), parts.last()) {
                    self.refs
                        .push((position(first), ident_name(self.dialect, last)));
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if let Expr::Lambda(_) = expr {
            self.lambda_params.pop();
        }
        ControlFlow::Continue(())
    }
}

// ---------------------------------------------------------------------------------------
// What sqlglot's expected output holds
// ---------------------------------------------------------------------------------------

/// The column references of sqlglot's qualified output.
#[derive(Debug, Default)]
pub(crate) struct Expected {
    /// `(qualifier, column)` of each qualified reference, with its count.
    qualified: BTreeMap<(String, String), usize>,
    /// Unqualified references (select aliases left as they are), with their count.
    bare: BTreeMap<String, usize>,
    /// Every projection alias, with the qualified columns its expression reads.
    aliases: BTreeMap<String, BTreeSet<(String, String)>>,
    /// The range variables of every FROM clause: table aliases (sqlglot aliases every
    /// table), derived-table aliases.
    range_variables: BTreeSet<String>,
}

impl Expected {
    /// Reads the references of sqlglot's output `statement`, parsed in `dialect`.
    pub(crate) fn of(statement: &Statement, dialect: Dialect) -> Self {
        let mut collector = ExpectedCollector {
            dialect,
            expected: Expected::default(),
        };
        let _ = statement.visit(&mut collector);
        collector.expected
    }

    fn qualifiers_of(&self, column: &str) -> Vec<String> {
        self.qualified
            .keys()
            .filter(|(_, c)| c == column)
            .map(|(q, _)| q.clone())
            .collect()
    }
}

struct ExpectedCollector {
    dialect: Dialect,
    expected: Expected,
}

/// The qualified column references inside one expression.
struct ColumnsOf {
    dialect: Dialect,
    columns: BTreeSet<(String, String)>,
}

impl Visitor for ColumnsOf {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if let Expr::CompoundIdentifier(parts) = expr
            && parts.len() >= 2
        {
            let (q, c) = qualifier_and_column(parts);
            self.columns
                .insert((ident_name(self.dialect, q), ident_name(self.dialect, c)));
        }
        ControlFlow::Continue(())
    }
}

/// sqlglot writes `qualifier.column` and, for struct fields, `qualifier.column.field…`.
fn qualifier_and_column(parts: &[Ident]) -> (&Ident, &Ident) {
    (&parts[0], &parts[1])
}

impl Visitor for ExpectedCollector {
    type Break = ();

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
        for item in &select.projection {
            if let SelectItem::ExprWithAlias { expr, alias } = item {
                let mut reads = ColumnsOf {
                    dialect: self.dialect,
                    columns: BTreeSet::new(),
                };
                let _ = expr.visit(&mut reads);
                let name = ident_name(self.dialect, alias);
                self.expected
                    .aliases
                    .entry(name)
                    .or_default()
                    .extend(reads.columns);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let name = match factor {
            TableFactor::Table {
                alias: Some(alias), ..
            }
            | TableFactor::Derived {
                alias: Some(alias), ..
            } => Some(&alias.name),
            TableFactor::Table { name, .. } => name.0.last().and_then(|p| p.as_ident()),
            _ => None,
        };
        if let Some(name) = name {
            self.expected
                .range_variables
                .insert(ident_name(self.dialect, name));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        match expr {
            Expr::Identifier(ident) => {
                *self
                    .expected
                    .bare
                    .entry(ident_name(self.dialect, ident))
                    .or_default() += 1;
            }
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let (q, c) = qualifier_and_column(parts);
                let key = (ident_name(self.dialect, q), ident_name(self.dialect, c));
                *self.expected.qualified.entry(key).or_default() += 1;
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

// ---------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------

/// One disagreement between the guard and sqlglot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// A resolution of ours that the expected text does not hold.
    Disagrees {
        /// Our column.
        column: String,
        /// Our qualifier.
        qualifier: Option<String>,
        /// The qualifiers sqlglot gives that column anywhere in the query.
        sqlglot: Vec<String>,
    },
    /// Input column references without a resolution (completeness).
    Unresolved {
        /// The input's column references, in source order.
        input: Vec<String>,
        /// Our resolutions' columns, in order.
        ours: Vec<String>,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Disagrees {
                column,
                qualifier,
                sqlglot,
            } => {
                let ours = match qualifier {
                    Some(q) => format!("{q}.{column}"),
                    None => format!("{column} (alias/anonymous)"),
                };
                let theirs = if sqlglot.is_empty() {
                    format!("no qualified `{column}`")
                } else {
                    sqlglot
                        .iter()
                        .map(|q| format!("{q}.{column}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                write!(f, "guard resolved {ours}; sqlglot has {theirs}")
            }
            Finding::Unresolved { input, ours } => write!(
                f,
                "input references [{}] are not a subsequence of the resolutions [{}]",
                input.join(", "),
                ours.join(", ")
            ),
        }
    }
}

/// True for the names sqlglot gives anonymous derived tables: `_0`, `_1`, …
fn is_generated_alias(name: &str) -> bool {
    name.strip_prefix('_')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What sqlglot's expected text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Oracle {
    /// The output of `qualify_columns` alone: the input's scopes, qualified.
    Qualified,
    /// The output of sqlglot's whole optimizer (the TPC-H fixtures): besides qualifying,
    /// it merges derived tables and CTEs into their outer query and drops columns nothing
    /// reads. So counts are not compared (set containment instead of multiset), and a
    /// resolution to a range variable the output no longer has is not compared.
    Optimized,
}

/// Compares our `resolutions` of an input (`input`) with sqlglot's output (`expected`),
/// as the module documentation describes; returns every finding.
pub(crate) fn compare(
    dialect: Dialect,
    oracle: Oracle,
    input: &InputFacts,
    expected: &Expected,
    resolutions: &[Resolved],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut available = expected.qualified.clone();
    let ours: Vec<Resolved> = resolutions
        .iter()
        .map(|(column, qualifier)| {
            (
                reported_name(dialect, column),
                qualifier.as_deref().map(|q| reported_name(dialect, q)),
            )
        })
        .collect();

    // Agreement. Qualified resolutions first, so that they consume before any fallback.
    for (column, qualifier) in &ours {
        let Some(q) = qualifier else { continue };
        let key = (q.clone(), column.clone());
        if oracle == Oracle::Optimized
            && (expected.qualified.contains_key(&key) || !expected.range_variables.contains(q))
        {
            continue;
        }
        if let Some(n) = available.get_mut(&key).filter(|n| **n > 0) {
            *n -= 1;
            continue;
        }
        let via_alias = expected
            .aliases
            .iter()
            .any(|(alias, columns)| columns.contains(&key) && expected.bare.contains_key(alias));
        if !via_alias {
            findings.push(Finding::Disagrees {
                column: column.clone(),
                qualifier: qualifier.clone(),
                sqlglot: expected.qualifiers_of(column),
            });
        }
    }
    for (column, qualifier) in &ours {
        if qualifier.is_some() {
            continue;
        }
        let agrees = expected.bare.contains_key(column)
            || expected.aliases.contains_key(column)
            || expected
                .qualified
                .keys()
                .any(|(q, c)| c == column && is_generated_alias(q));
        if !agrees {
            findings.push(Finding::Disagrees {
                column: column.clone(),
                qualifier: None,
                sqlglot: expected.qualifiers_of(column),
            });
        }
    }

    // Completeness: the input's references are a subsequence of ours.
    let mut ours_iter = ours.iter().map(|(c, _)| c);
    let complete = input
        .column_refs
        .iter()
        .all(|name| ours_iter.any(|c| c == name));
    if !complete {
        findings.push(Finding::Unresolved {
            input: input.column_refs.clone(),
            ours: ours.iter().map(|(c, _)| c.clone()).collect(),
        });
    }
    findings
}

/// A resolution as the comparison sees it: (column, qualifier).
pub(crate) type Resolved = (String, Option<String>);

/// The (column, qualifier) pairs of the guard's resolutions.
pub(crate) fn resolved(resolutions: &[ColumnResolution]) -> Vec<Resolved> {
    resolutions
        .iter()
        .map(|r| (r.column.clone(), r.qualifier.clone()))
        .collect()
}

/// Our resolutions on one line, for reports: `x.a, y.b, c(alias)`.
pub(crate) fn render_resolutions(resolutions: &[ColumnResolution]) -> String {
    resolutions
        .iter()
        .map(|r| match &r.qualifier {
            Some(q) => format!("{q}.{}", r.column),
            None => format!("{}(alias)", r.column),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compares `ours` (`q.c` or `c` for an alias) for `input` against `expected`.
    fn check(oracle: Oracle, input: &str, expected: &str, ours: &[&str]) -> Vec<Finding> {
        let dialect = Dialect::Generic;
        let input = InputFacts::of(&parse_one(input, dialect).unwrap(), dialect);
        let expected = Expected::of(&parse_one(expected, dialect).unwrap(), dialect);
        let ours: Vec<Resolved> = ours
            .iter()
            .map(|r| match r.split_once('.') {
                Some((q, c)) => (c.to_owned(), Some(q.to_owned())),
                None => ((*r).to_owned(), None),
            })
            .collect();
        compare(dialect, oracle, &input, &expected, &ours)
    }

    const Q: Oracle = Oracle::Qualified;

    #[test]
    fn agreeing_resolutions_have_no_findings() {
        let expected = "SELECT z.a AS a FROM x AS z WHERE z.b > 1 ORDER BY a";
        let input = "SELECT a FROM x AS z WHERE b > 1 ORDER BY a";
        assert_eq!(check(Q, input, expected, &["z.a", "z.b", "a"]), []);
        // Resolving the ORDER BY alias to the column it stands for is the same column.
        assert_eq!(check(Q, input, expected, &["z.a", "z.b", "z.a"]), []);
    }

    #[test]
    fn a_wrong_qualifier_disagrees() {
        let findings = check(
            Q,
            "SELECT a FROM x AS z",
            "SELECT z.a AS a FROM x AS z",
            &["x.a"],
        );
        assert_eq!(
            findings,
            [Finding::Disagrees {
                column: "a".to_owned(),
                qualifier: Some("x".to_owned()),
                sqlglot: vec!["z".to_owned()],
            }]
        );
    }

    #[test]
    fn each_expected_reference_is_used_once() {
        let findings = check(
            Q,
            "SELECT a FROM x WHERE a > 1",
            "SELECT x.a AS a FROM x AS x WHERE y.a > 1",
            &["x.a", "x.a"],
        );
        assert_eq!(findings.len(), 1, "{findings:?}");
    }

    #[test]
    fn a_missing_resolution_is_unresolved() {
        let findings = check(
            Q,
            "SELECT a, b FROM x",
            "SELECT x.a AS a, x.b AS b FROM x AS x",
            &["x.a"],
        );
        assert!(
            matches!(findings.as_slice(), [Finding::Unresolved { .. }]),
            "{findings:?}"
        );
    }

    #[test]
    fn an_alias_resolution_needs_an_alias_in_the_expected_text() {
        let input = "SELECT a FROM x ORDER BY a";
        let expected = "SELECT x.a AS a FROM x AS x ORDER BY a";
        assert_eq!(check(Q, input, expected, &["x.a", "a"]), []);
        assert_eq!(
            check(
                Q,
                "SELECT a FROM x WHERE b > 0",
                "SELECT x.a AS a FROM x AS x WHERE x.b > 0",
                &["x.a", "b"]
            )
            .len(),
            1
        );
    }

    #[test]
    fn optimized_output_ignores_merged_range_variables_only() {
        let input = "SELECT v FROM (SELECT a AS v FROM x) AS d";
        let expected = "SELECT x.a AS v FROM x AS x";
        assert_eq!(
            check(Oracle::Optimized, input, expected, &["d.v", "x.a"]),
            []
        );
        assert_eq!(
            check(Oracle::Optimized, input, expected, &["d.v", "y.a"]),
            []
        );
        assert_eq!(
            check(
                Oracle::Optimized,
                "SELECT a FROM x",
                "SELECT x.a AS a FROM x AS x",
                &["q.a"]
            ),
            []
        );
        assert_eq!(check(Q, input, expected, &["d.v", "x.a"]).len(), 1);
        let wrong = check(
            Oracle::Optimized,
            "SELECT a FROM x, y",
            "SELECT x.a AS a FROM x AS x, y AS y",
            &["y.a"],
        );
        assert_eq!(wrong.len(), 1, "{wrong:?}");
    }

    #[test]
    fn lambda_parameters_and_unpivot_values_are_not_references() {
        let dialect = Dialect::DuckDb;
        let sql = "SELECT list_transform(l, v -> v + 1) FROM t UNPIVOT(val FOR k IN (a, b))";
        let facts = InputFacts::of(&parse_one(sql, dialect).unwrap(), dialect);
        assert_eq!(facts.column_refs, ["l", "a", "b"]);
    }
}

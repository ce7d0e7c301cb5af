//! One exhaustive pass over every node of the query (sqlparser's `Visit`), so that no
//! position in the tree escapes the checks: statement shape inside the query (G2),
//! relations that are not plain tables (G4), functions (G5), variables and parameters
//! (G6) and recursive CTEs (G7).

use std::ops::ControlFlow;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArguments, ObjectName, Query, Select, SetExpr, Spanned,
    Statement, TableFactor, Value, Visit, Visitor,
};

use super::functions::{self, FunctionVerdict};
use super::ident::ident_key;
use super::resolve::Resolution;
use super::suggest::did_you_mean;
use super::{GuardContext, GuardIssue, SqlSpan};

/// Runs the exhaustive checks over `query`, after the scoped walk (`resolution`).
/// Returns the security findings and, separately, the safety net's findings: queries and
/// column references the scoped walk did not reach, refused rather than left unchecked,
/// so that no subquery or column read slips past the table, column and policy rules.
pub(crate) fn check(
    ctx: &GuardContext,
    query: &Query,
    resolution: &Resolution,
) -> (Vec<GuardIssue>, Vec<GuardIssue>) {
    let mut visitor = SecurityVisitor {
        ctx,
        issues: Vec::new(),
        resolution,
        unreached: Vec::new(),
        unreached_depth: 0,
        query_stack: Vec::new(),
    };
    let _ = query.visit(&mut visitor);
    (visitor.issues, visitor.unreached)
}

struct SecurityVisitor<'g> {
    ctx: &'g GuardContext,
    issues: Vec<GuardIssue>,
    resolution: &'g Resolution,
    /// Findings of the safety net.
    unreached: Vec<GuardIssue>,
    /// Depth inside a query the scoped walk did not reach.
    unreached_depth: usize,
    /// For each query being visited: whether it counted in `unreached_depth`.
    query_stack: Vec<bool>,
}

impl SecurityVisitor<'_> {
    fn push(&mut self, code: ErrorCode, message: String, span: sqlparser::tokenizer::Span) {
        self.issues
            .push(GuardIssue::new(code, message, SqlSpan::from_parser(span)));
    }

    fn check_select(&mut self, select: &Select) {
        // The SELECT keyword: cheap, unlike the span of the whole select.
        let span = select.select_token.0.span;
        if !select.optimizer_hints.is_empty() {
            // MySQL's SET_VAR hint changes session variables for the statement; other
            // hints steer the engine. The rendering would keep them, so they are refused.
            self.push(
                ErrorCode::SecurityViolation,
                "optimizer hints (/*+ … */) can change session settings and plans; they are not allowed"
                    .to_owned(),
                span,
            );
        }
        if select.into.is_some() {
            self.push(
                ErrorCode::SecurityViolation,
                "SELECT … INTO writes a table or variables; only read-only queries are allowed"
                    .to_owned(),
                span,
            );
        }
        let unsupported = [
            (!select.lateral_views.is_empty(), "LATERAL VIEW"),
            (select.prewhere.is_some(), "PREWHERE"),
            (!select.connect_by.is_empty(), "CONNECT BY"),
            (!select.cluster_by.is_empty(), "CLUSTER BY"),
            (!select.distribute_by.is_empty(), "DISTRIBUTE BY"),
            (!select.sort_by.is_empty(), "SORT BY"),
            (select.value_table_mode.is_some(), "SELECT AS VALUE/STRUCT"),
        ];
        for (present, what) in unsupported {
            if present {
                self.push(
                    ErrorCode::UnsupportedSql,
                    format!("{what} is not supported"),
                    span,
                );
            }
        }
    }

    fn check_set_expr(&mut self, body: &SetExpr) {
        match body {
            SetExpr::Select(select) => self.check_select(select),
            SetExpr::SetOperation { left, right, .. } => {
                self.check_set_expr(left);
                self.check_set_expr(right);
            }
            // Nested queries are visited on their own; VALUES and TABLE hold nothing else;
            // data-modifying statements are reported when the visitor reaches them.
            SetExpr::Query(_)
            | SetExpr::Values(_)
            | SetExpr::Table(_)
            | SetExpr::Insert(_)
            | SetExpr::Update(_)
            | SetExpr::Delete(_)
            | SetExpr::Merge(_) => {}
        }
    }

    fn check_table_function(&mut self, name: &str, span: sqlparser::tokenizer::Span) {
        if self.ctx.allows_table_function(name) {
            return;
        }
        let what = if functions::judge(self.ctx.dialect, name) == FunctionVerdict::Denied {
            "reads files, the network or engine internals"
        } else {
            "is not a table of the datasource"
        };
        self.push(
            ErrorCode::SecurityViolation,
            format!("table function '{name}' {what}; query only the datasource's tables"),
            span,
        );
    }

    fn check_relation_name(&mut self, name: &ObjectName, span: sqlparser::tokenizer::Span) {
        let parts: Vec<&sqlparser::ast::Ident> =
            name.0.iter().filter_map(|p| p.as_ident()).collect();
        if parts.len() != name.0.len() {
            self.push(
                ErrorCode::UnsupportedSql,
                format!("table name '{name}' is computed; name a table of the datasource"),
                span,
            );
            return;
        }
        let Some(last) = parts.last() else { return };
        if last.quote_style == Some('\'') || looks_like_path(&last.value) {
            self.push(
                ErrorCode::SecurityViolation,
                format!(
                    "'{}' is a file path or URL used as a table; query only the datasource's tables",
                    last.value
                ),
                span,
            );
            return;
        }
        let keys: Vec<String> = parts
            .iter()
            .map(|p| ident_key(self.ctx.dialect, p))
            .collect();
        // A table of the datasource or a CTE is never a system catalog, whatever its name.
        if parts.len() == 1
            && (self.ctx.catalog.has_table_named(&keys[0])
                || self.resolution.cte_names.contains(&keys[0]))
        {
            return;
        }
        if parts.len() >= 2 {
            let schema = &keys[keys.len() - 2];
            if matches!(
                self.ctx.catalog.lookup(Some(schema), &keys[keys.len() - 1]),
                super::catalog::TableLookup::Found(..)
            ) {
                return;
            }
        }
        if is_system_catalog(&keys) && !self.ctx.allows_system_catalogs() {
            self.push(
                ErrorCode::SecurityViolation,
                format!("'{name}' is a system catalog; query only the datasource's tables"),
                span,
            );
        }
    }

    fn check_function(&mut self, function: &sqlparser::ast::Function) {
        let span = function.name.span();
        let Some(last) = function.name.0.last() else {
            return;
        };
        let Some(ident) = last.as_ident() else {
            self.push(
                ErrorCode::UnsupportedSql,
                format!("function name '{}' is computed", function.name),
                span,
            );
            return;
        };
        let name = super::ident::lower(&ident.value);
        match functions::judge(self.ctx.dialect, &name) {
            FunctionVerdict::Denied => self.push(
                ErrorCode::SecurityViolation,
                format!(
                    "function '{name}' reads files, sleeps, changes settings or reaches outside the query; it is not allowed"
                ),
                span,
            ),
            FunctionVerdict::Unknown => {
                let suggestions = functions::suggest(self.ctx.dialect, &name);
                self.push(
                    ErrorCode::UnsupportedSql,
                    format!(
                        "function '{name}' is not on the {} allow-list{}",
                        self.ctx.dialect,
                        did_you_mean(&suggestions)
                    ),
                    span,
                );
            }
            FunctionVerdict::Allowed if function.name.0.len() > 1 => self.push(
                ErrorCode::UnsupportedSql,
                format!(
                    "function '{}' is schema-qualified; call '{name}' without a schema",
                    function.name
                ),
                span,
            ),
            FunctionVerdict::Allowed => {}
        }
        let sizes = super::sizes::check(
            self.ctx.dialect,
            &name,
            function,
            SqlSpan::from_parser(span),
        );
        self.issues.extend(sizes);
        if !matches!(function.parameters, FunctionArguments::None) {
            self.push(
                ErrorCode::UnsupportedSql,
                format!("parametric function call '{name}(…)(…)' is not supported"),
                span,
            );
        }
    }
}

impl Visitor for SecurityVisitor<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        let unreached = self.unreached_depth > 0
            || !self
                .resolution
                .handled_queries
                .contains(&(query as *const Query));
        self.query_stack.push(unreached);
        if unreached {
            if self.unreached_depth == 0 {
                self.unreached.push(GuardIssue::new(
                    ErrorCode::UnsupportedSql,
                    "a subquery in this position is not supported; move it to FROM, WHERE or the select list",
                    SqlSpan::from_parser(query.span()),
                ));
            }
            self.unreached_depth += 1;
        }
        if let Some(with) = &query.with
            && with.recursive
            && !self.ctx.allows_recursive_cte()
        {
            self.push(
                    ErrorCode::UnsupportedSql,
                    "recursive CTEs (WITH RECURSIVE) are not allowed by the policy; rewrite without recursion".to_owned(),
                    with.span(),
                );
        }
        if !query.locks.is_empty() {
            self.push(
                ErrorCode::SecurityViolation,
                "FOR UPDATE/FOR SHARE takes row locks; only read-only queries are allowed"
                    .to_owned(),
                query.span(),
            );
        }
        let unsupported = [
            (query.for_clause.is_some(), "FOR XML/JSON/BROWSE"),
            (query.settings.is_some(), "SETTINGS"),
            (query.format_clause.is_some(), "FORMAT"),
            (!query.pipe_operators.is_empty(), "pipe operators (|>)"),
        ];
        for (present, what) in unsupported {
            if present {
                self.push(
                    ErrorCode::UnsupportedSql,
                    format!("{what} is not supported"),
                    query.span(),
                );
            }
        }
        self.check_set_expr(&query.body);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<()> {
        if self.query_stack.pop() == Some(true) {
            self.unreached_depth -= 1;
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_statement(&mut self, statement: &Statement) -> ControlFlow<()> {
        // The top statement is a query (checked before); any statement met here is nested.
        if !matches!(statement, Statement::Query(_)) {
            self.push(
                ErrorCode::SecurityViolation,
                format!(
                    "{} statements are not allowed inside a query (data-modifying CTE or subquery); only read-only queries are allowed",
                    super::shape::statement_kind(statement)
                ),
                statement.span(),
            );
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        let span = super::factor_span(factor);
        match factor {
            TableFactor::Table { name, args, version, .. } => {
                if args.is_some() {
                    let fname = name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.to_lowercase())
                        .unwrap_or_default();
                    self.check_table_function(&fname, span);
                } else {
                    self.check_relation_name(name, span);
                }
                if version.is_some() {
                    self.push(
                        ErrorCode::UnsupportedSql,
                        "time travel (FOR SYSTEM_TIME / AT) is not supported".to_owned(),
                        span,
                    );
                }
            }
            TableFactor::Function { name, .. } => {
                let fname = name.to_string().to_lowercase();
                self.check_table_function(&fname, span);
            }
            TableFactor::TableFunction { expr, .. } => {
                let fname = match expr {
                    Expr::Function(f) => f.name.to_string().to_lowercase(),
                    _ => "table".to_owned(),
                };
                self.check_table_function(&fname, span);
            }
            TableFactor::UNNEST { .. } => self.check_table_function("unnest", span),
            TableFactor::JsonTable { .. } => self.check_table_function("json_table", span),
            TableFactor::OpenJsonTable { .. } => self.check_table_function("openjson", span),
            TableFactor::XmlTable { .. } => self.check_table_function("xmltable", span),
            TableFactor::Pivot { .. }
            | TableFactor::Unpivot { .. }
            | TableFactor::UnpivotExpr { .. }
            | TableFactor::MatchRecognize { .. }
            | TableFactor::SemanticView { .. } => self.push(
                ErrorCode::UnsupportedSql,
                "PIVOT, UNPIVOT, MATCH_RECOGNIZE and semantic views are not supported; use GROUP BY with CASE".to_owned(),
                span,
            ),
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if self.unreached_depth == 0
            && matches!(expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
            && !self
                .resolution
                .handled_names
                .contains(&(expr as *const Expr))
        {
            self.unreached.push(GuardIssue::new(
                ErrorCode::UnsupportedSql,
                format!("column reference '{expr}' is in a position that is not supported"),
                SqlSpan::from_parser(expr.span()),
            ));
        }
        match expr {
            Expr::Function(function) => self.check_function(function),
            Expr::Identifier(ident)
                if ident.quote_style.is_none() && ident.value.starts_with('@') =>
            {
                self.variable(&ident.value, expr.span());
            }
            Expr::CompoundIdentifier(parts)
                if parts
                    .first()
                    .is_some_and(|p| p.quote_style.is_none() && p.value.starts_with('@')) =>
            {
                let name = parts
                    .iter()
                    .map(|p| p.value.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                self.variable(&name, expr.span());
            }
            Expr::Value(v) => {
                if let Value::HexStringLiteral(_) = &v.value
                    && self.ctx.dialect != Dialect::MySql
                {
                    // sqlparser reads `0x1F` and `X'1F'` alike and prints `X'1F'`: an
                    // integer in the text would reach SQLite or DuckDB as a blob.
                    self.push(
                        ErrorCode::UnsupportedSql,
                        "hexadecimal literals (0x…, X'…') read differently across engines; write the number in decimal"
                            .to_owned(),
                        expr.span(),
                    );
                }
                if let Value::Placeholder(p) = &v.value {
                    if p.starts_with('@') {
                        self.variable(p, expr.span());
                    } else {
                        self.push(
                            ErrorCode::UnsupportedSql,
                            format!(
                                "bind parameter '{p}' is not supported; write the literal value"
                            ),
                            expr.span(),
                        );
                    }
                }
            }
            Expr::BinaryOp {
                op: BinaryOperator::Assignment,
                ..
            } => self.push(
                ErrorCode::SecurityViolation,
                "variable assignment (:=) changes session state; it is not allowed".to_owned(),
                expr.span(),
            ),
            Expr::Prior(_) | Expr::OuterJoin(_) => self.push(
                ErrorCode::UnsupportedSql,
                "PRIOR and (+) outer joins are not supported; use JOIN syntax".to_owned(),
                expr.span(),
            ),
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

impl SecurityVisitor<'_> {
    fn variable(&mut self, name: &str, span: sqlparser::tokenizer::Span) {
        if name.starts_with("@@") {
            self.push(
                ErrorCode::SecurityViolation,
                format!("session/system variable '{name}' is not allowed"),
                span,
            );
        } else {
            self.push(
                ErrorCode::UnsupportedSql,
                format!("user variable '{name}' is not supported; write the value"),
                span,
            );
        }
    }
}

/// System catalogs and schemas of the supported engines (lower-cased name parts).
fn is_system_catalog(keys: &[String]) -> bool {
    const SCHEMAS: &[&str] = &[
        "information_schema",
        "pg_catalog",
        "pg_toast",
        "mysql",
        "performance_schema",
        "sys",
        "system",
        "temp",
    ];
    const TABLES: &[&str] = &[
        "sqlite_master",
        "sqlite_schema",
        "sqlite_temp_master",
        "sqlite_temp_schema",
        "sqlite_sequence",
        "sqlite_stat1",
    ];
    let Some(table) = keys.last().map(|k| k.to_lowercase()) else {
        return false;
    };
    let qualifiers: Vec<String> = keys[..keys.len() - 1]
        .iter()
        .map(|k| k.to_lowercase())
        .collect();
    qualifiers
        .iter()
        .any(|q| SCHEMAS.contains(&q.as_str()) || q.starts_with("pg_temp"))
        || TABLES.contains(&table.as_str())
        || table.starts_with("pg_")
        || table.starts_with("duckdb_")
        || table.starts_with("sqlite_")
        || (qualifiers.is_empty()
            && matches!(
                table.as_str(),
                "information_schema" | "pg_catalog" | "performance_schema"
            ))
}

/// True for names that engines may read as files or URLs (DuckDB replacement scans).
pub(crate) fn looks_like_path(name: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".csv", ".tsv", ".parquet", ".json", ".jsonl", ".ndjson", ".txt", ".gz", ".zst", ".xlsx",
        ".db", ".duckdb", ".sqlite", ".arrow", ".avro",
    ];
    // ASCII names (nearly all) are compared without allocating; others fold as before
    // (a Kelvin sign lower-cases to `k`).
    let folded = (!name.is_ascii()).then(|| name.to_lowercase());
    let name = folded.as_deref().unwrap_or(name);
    let ends_with = |suffix: &str| {
        name.len() >= suffix.len()
            && name.is_char_boundary(name.len() - suffix.len())
            && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
    };
    name.contains('/')
        || name.contains('\\')
        || name.contains("://")
        || name.starts_with('~')
        || EXTENSIONS.iter().any(|e| ends_with(e))
}

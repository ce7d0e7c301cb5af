//! The SQL guard: decides on the AST whether one SQL text is a safe, valid, read-only
//! query over a datasource's schema.
//!
//! Checks run in the order of the spec (validators.md §3.3): size and nesting (G0),
//! parsing in the dialect (G1), statement shape (G2), then one exhaustive pass over every
//! AST node for relations, functions and variables (G4–G7, [`security`]) and one scoped
//! pass that resolves every relation and column reference (G3, G8, G9, [`resolve`]).

mod catalog;
mod functions;
mod guarded;
mod ident;
mod render;
mod report;
mod resolve;
mod security;
mod shape;
mod sizes;
mod suggest;

#[cfg(test)]
mod tests;

use nl2sql_state::{AccessPolicy, Dialect, ErrorCode, SchemaContract, Severity};
use serde::Serialize;
use sqlparser::dialect::{
    DuckDbDialect, GenericDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Tokenizer};

use catalog::Catalog;

pub use guarded::GuardedSql;
pub use report::{GuardReport, GuardStatus};
pub use resolve::TableRead;

/// sqlparser's dialect for ours: the one the guard parses each of our dialects with.
pub fn parser_dialect(dialect: Dialect) -> Box<dyn sqlparser::dialect::Dialect> {
    match dialect {
        Dialect::DuckDb => Box::new(DuckDbDialect {}),
        Dialect::Postgres => Box::new(PostgreSqlDialect {}),
        Dialect::MySql => Box::new(MySqlDialect {}),
        Dialect::Sqlite => Box::new(SQLiteDialect {}),
        Dialect::Generic => Box::new(GenericDialect {}),
    }
}

/// Input bounds of the guard (rule G0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardLimits {
    /// Largest accepted SQL text, in bytes (default 100 KiB).
    pub max_bytes: usize,
    /// Deepest accepted nesting of expressions and subqueries (default 200).
    pub max_depth: usize,
}

impl Default for GuardLimits {
    fn default() -> Self {
        GuardLimits {
            max_bytes: 100 * 1024,
            max_depth: 200,
        }
    }
}

/// What the guard checks against: a datasource's id, dialect and schema, and the
/// caller's access policy.
#[derive(Debug, Clone)]
pub struct GuardContext {
    pub(crate) datasource_id: String,
    pub(crate) dialect: Dialect,
    pub(crate) catalog: Catalog,
    pub(crate) policy: Option<AccessPolicy>,
    pub(crate) limits: GuardLimits,
    /// The policy's switches (recursive CTEs, system catalogs, table functions) were
    /// decided by an earlier check of the same statement.
    pub(crate) switches_decided: bool,
}

impl GuardContext {
    /// A context for `datasource_id` in `dialect` over the tables of `contract`, with no
    /// access policy (every table and column of the schema may be read).
    pub fn new(datasource_id: &str, dialect: Dialect, contract: &SchemaContract) -> Self {
        GuardContext {
            datasource_id: datasource_id.to_owned(),
            dialect,
            catalog: Catalog::new(contract, dialect),
            policy: None,
            limits: GuardLimits::default(),
            switches_decided: false,
        }
    }

    /// A context with no schema: shape, security, function and policy checks run, but
    /// tables and columns cannot be verified (every non-system table name is accepted).
    pub fn without_schema(datasource_id: &str, dialect: Dialect) -> Self {
        GuardContext {
            datasource_id: datasource_id.to_owned(),
            dialect,
            catalog: Catalog::open(),
            policy: None,
            limits: GuardLimits::default(),
            switches_decided: false,
        }
    }

    /// A context for checking again, in another process, a statement this guard already
    /// approved with the caller's schema and policy (a worker process receiving it): no
    /// schema, and the policy's switches (recursive CTEs, system catalogs, table
    /// functions) taken as decided. Every other check runs again, and the statement that
    /// runs is this check's rendering.
    pub fn rechecking(datasource_id: &str, dialect: Dialect) -> Self {
        GuardContext {
            switches_decided: true,
            ..GuardContext::without_schema(datasource_id, dialect)
        }
    }

    /// Applies an access policy (rule G9 and the policy switches of G4 and G7).
    #[must_use]
    pub fn with_policy(mut self, policy: AccessPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Replaces the input bounds.
    #[must_use]
    pub fn with_limits(mut self, limits: GuardLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The dialect statements are parsed in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    pub(crate) fn allows_system_catalogs(&self) -> bool {
        self.switches_decided
            || self
                .policy
                .as_ref()
                .is_some_and(AccessPolicy::allows_system_catalogs)
    }

    pub(crate) fn allows_recursive_cte(&self) -> bool {
        self.switches_decided
            || self
                .policy
                .as_ref()
                .is_some_and(AccessPolicy::allows_recursive_cte)
    }

    pub(crate) fn allows_table_function(&self, name: &str) -> bool {
        self.switches_decided
            || self
                .policy
                .as_ref()
                .is_some_and(|p| p.table_function_allowed(name))
    }
}

/// A line/column position in the SQL text (both 1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Position {
    /// Line, from 1.
    pub line: u64,
    /// Column, from 1.
    pub column: u64,
}

/// A range of the SQL text an issue points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SqlSpan {
    /// First character.
    pub start: Position,
    /// Position just after the last character.
    pub end: Position,
}

impl SqlSpan {
    pub(crate) fn from_parser(span: Span) -> Option<SqlSpan> {
        (span.start.line > 0).then_some(SqlSpan {
            start: Position {
                line: span.start.line,
                column: span.start.column,
            },
            end: Position {
                line: span.end.line,
                column: span.end.column,
            },
        })
    }
}

/// One finding of the guard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuardIssue {
    /// Stable error code.
    pub code: ErrorCode,
    /// `CRITICAL` for security violations, `ERROR` otherwise.
    pub severity: Severity,
    /// One sentence naming the offending element, actionable by a model.
    pub message: String,
    /// Where in the SQL, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<SqlSpan>,
}

impl GuardIssue {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>, span: Option<SqlSpan>) -> Self {
        let severity = match code {
            ErrorCode::SecurityViolation => Severity::Critical,
            _ => Severity::Error,
        };
        GuardIssue {
            code,
            severity,
            message: message.into(),
            span,
        }
    }
}

/// How one column reference of the SQL text was resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnResolution {
    /// Normalised column name.
    pub column: String,
    /// Normalised name of the range variable (table alias, unaliased table name, derived
    /// table or CTE alias) the reference resolved to; `None` for a select-list alias or an
    /// anonymous derived table.
    pub qualifier: Option<String>,
    /// Underlying base table name when the range variable is a table of the schema.
    pub table: Option<String>,
    /// Where the reference is in the SQL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<SqlSpan>,
}

/// Inputs longer than this are checked on a stack of [`BIG_STACK_BYTES`].
const BIG_INPUT_BYTES: usize = 4 * 1024;
/// Enough for the deepest tree a 100 KiB input can produce, with debug-build frames.
const BIG_STACK_BYTES: usize = 256 * 1024 * 1024;

/// The SQL guard for one datasource.
#[derive(Debug, Clone)]
pub struct SqlGuard {
    ctx: GuardContext,
}

impl SqlGuard {
    /// A guard over `ctx`.
    pub fn new(ctx: GuardContext) -> Self {
        SqlGuard { ctx }
    }

    /// The guard's context.
    pub fn context(&self) -> &GuardContext {
        &self.ctx
    }

    /// Checks one SQL text. Never panics; every outcome is a report.
    pub fn check(&self, sql: &str) -> GuardReport {
        // Long inputs can hold long operator chains (`1 + a + a + …`), whose syntax trees
        // are deep enough to exhaust a thread's stack while they are walked or dropped.
        // Such inputs are checked on a fresh, large stack (reserved lazily, so cheap).
        let checked = if sql.len() > BIG_INPUT_BYTES {
            stacker::grow(BIG_STACK_BYTES.max(sql.len() * 1024), || self.issues(sql))
        } else {
            self.issues(sql)
        };
        let guarded = checked
            .rendered
            .map(|text| GuardedSql::new(text, self.ctx.dialect));
        let mut report = GuardReport::new(sql, checked.issues, checked.resolutions, guarded);
        report.reads = checked.reads;
        report
    }

    /// Checks `sql` and returns the statement to run, or the report when it may not run.
    pub fn guard(&self, sql: &str) -> Result<GuardedSql, Box<GuardReport>> {
        let mut report = self.check(sql);
        match report.guarded.take() {
            Some(guarded) => Ok(guarded),
            None => Err(Box::new(report)),
        }
    }

    fn issues(&self, sql: &str) -> Checked {
        let ctx = &self.ctx;
        // G0: bounds.
        if sql.len() > ctx.limits.max_bytes {
            return Checked::refused(GuardIssue::new(
                ErrorCode::SqlSyntaxError,
                format!(
                    "statement is {} bytes long, more than the limit of {} bytes",
                    sql.len(),
                    ctx.limits.max_bytes
                ),
                None,
            ));
        }
        if sql.trim().is_empty() {
            return Checked::refused(GuardIssue::new(
                ErrorCode::SqlSyntaxError,
                "statement is empty",
                None,
            ));
        }
        // G1: parse (tokenized once here, so executable comments can be seen).
        let dialect = parser_dialect(ctx.dialect);
        let parsed = Tokenizer::new(dialect.as_ref(), sql)
            .with_unescape(true)
            .tokenize_with_location()
            .map_err(ParserError::from)
            .and_then(|tokens| {
                let comments = render::executable_comments(&tokens);
                let mut parser = Parser::new(dialect.as_ref())
                    .with_recursion_limit(ctx.limits.max_depth)
                    .with_tokens_with_locations(tokens);
                let statements = parser.parse_statements()?;
                // The tokens stay: the rendering's proof compares with them.
                Ok((statements, comments, parser.into_tokens()))
            });
        let (mut statements, mut issues, tokens) = match parsed {
            Ok(parsed) => parsed,
            Err(err) => return Checked::refused(shape::parse_failure(ctx, sql, &err)),
        };
        // G2: one statement, a query.
        let query = match shape::single_query(&statements) {
            Ok(query) => query,
            Err(issue) => return Checked::refused(*issue),
        };
        // G9 (datasource part).
        if let Some(policy) = &ctx.policy
            && !policy.datasource_allowed(&ctx.datasource_id)
        {
            issues.push(GuardIssue::new(
                ErrorCode::SecurityViolation,
                format!(
                    "role(s) '{}' may not query datasource '{}'",
                    policy.roles().join(", "),
                    ctx.datasource_id
                ),
                None,
            ));
        }
        // G3, G8, G9: scoped resolution.
        let resolution = resolve::resolve(ctx, query);
        // G2 (inside the query), G4–G7 on every node, and the check that the scoped walk
        // reached every node.
        let (security_issues, unreached) = security::check(ctx, query, &resolution);
        issues.extend(security_issues);
        issues.extend(resolution.issues);
        issues.extend(unreached);
        dedup(&mut issues);
        let mut resolutions = resolution.resolutions;
        resolutions.sort_by_key(|r| r.span);
        // What runs is the guard's rendering of the tree it checked.
        let mut rendered = None;
        if issues.is_empty() {
            let original = render::Original {
                text: sql,
                tokens: &tokens,
            };
            match render::render(
                ctx.dialect,
                &mut statements[0],
                original,
                &resolution.strings,
            ) {
                Ok(text) => rendered = Some(text),
                Err(issue) => issues.push(issue),
            }
        }
        Checked {
            issues,
            resolutions,
            reads: resolution.reads,
            rendered,
        }
    }
}

/// What [`SqlGuard::issues`] found.
struct Checked {
    issues: Vec<GuardIssue>,
    resolutions: Vec<ColumnResolution>,
    reads: Vec<TableRead>,
    /// The text to run, when nothing was found.
    rendered: Option<String>,
}

impl Checked {
    fn refused(issue: GuardIssue) -> Self {
        Checked {
            issues: vec![issue],
            resolutions: Vec::new(),
            reads: Vec::new(),
            rendered: None,
        }
    }
}

/// Where a table factor is, cheaply: the span of a whole subtree is computed by walking
/// it, so plain tables point at their name and derived tables and joins at nothing.
pub(crate) fn factor_span(factor: &sqlparser::ast::TableFactor) -> Span {
    use sqlparser::ast::{Spanned, TableFactor};
    match factor {
        TableFactor::Table { name, .. } => name.span(),
        TableFactor::Derived {
            alias: Some(alias), ..
        }
        | TableFactor::NestedJoin {
            alias: Some(alias), ..
        } => alias.name.span,
        TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => Span::empty(),
        other => other.span(),
    }
}

/// Drops repeated findings (same code, message and span), keeping the first.
fn dedup(issues: &mut Vec<GuardIssue>) {
    let mut seen = std::collections::HashSet::new();
    issues.retain(|i| seen.insert((i.code, i.message.clone(), i.span)));
}

/// Turns a parser error into the G0/G1 issue.
pub(crate) fn parser_message(err: &ParserError) -> String {
    match err {
        ParserError::RecursionLimitExceeded => {
            "statement is nested too deeply (expressions or subqueries deeper than the limit)"
                .to_owned()
        }
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => {
            let m = m.strip_prefix("sql parser error: ").unwrap_or(m);
            format!("syntax error: {}", lower_first(m))
        }
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

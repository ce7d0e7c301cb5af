//! The guard's side of "execute what was validated": executable comments are refused
//! before parsing, and an approved tree is rendered to the text the engine will run,
//! which must parse back to the same tree.

use std::collections::HashSet;
use std::ops::ControlFlow;

use nl2sql_state::{Dialect, ErrorCode};
use sqlparser::ast::{Expr, Statement, Value, ValueWithSpan, VisitMut, VisitorMut};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

use super::{GuardIssue, SqlSpan, parser_dialect};

/// Comments whose text an engine of the MySQL family executes: `/*! … */` and
/// `/*!50000 … */` (MySQL and MariaDB), `/*M! … */` and `/*M!100000 … */` (MariaDB).
///
/// In the `mysql` and `generic` dialects sqlparser already reads `/*! … */` as code (so
/// the checks see it); what is left as a comment here is refused in every dialect. The
/// engine never receives comments anyway (the rendering drops them); refusing them says
/// so to the caller instead of silently running less than was written.
pub(crate) fn executable_comments(tokens: &[TokenWithSpan]) -> Vec<GuardIssue> {
    tokens
        .iter()
        .filter_map(|t| match &t.token {
            Token::Whitespace(Whitespace::MultiLineComment(body)) => {
                let marker = if body.starts_with('!') {
                    Some("/*! … */: MySQL and MariaDB run the text inside it")
                } else if body.starts_with("M!") || body.starts_with("m!") {
                    Some("/*M! … */: MariaDB runs the text inside it")
                } else {
                    None
                };
                marker.map(|what| {
                    GuardIssue::new(
                        ErrorCode::SecurityViolation,
                        format!(
                            "executable comment {what}; write the SQL without executable comments"
                        ),
                        SqlSpan::from_parser(t.span),
                    )
                })
            }
            _ => None,
        })
        .collect()
}

/// Renders `statement` to the text the engine will run, and proves that the text reads
/// back as the same tree in `dialect`. `original` is the caller's text: when the
/// rendering equals it, there is nothing to prove.
pub(crate) fn render(
    dialect: Dialect,
    statement: &Statement,
    original: &str,
    strings: &HashSet<(u64, u64)>,
) -> Result<String, GuardIssue> {
    let parser_dialect = parser_dialect(dialect);
    // Double-quoted names the guard read as strings (SQLite) become string literals:
    // the tree that must read back is this one.
    let spelled;
    let statement = if strings.is_empty() {
        statement
    } else {
        let mut copy = statement.clone();
        let _ = copy.visit(&mut SpellStrings(strings));
        spelled = copy;
        &spelled
    };
    let text = if parser_dialect.supports_string_literal_backslash_escape() {
        // sqlparser prints string values without escaping backslashes; an engine that
        // reads `\` as an escape (MySQL, MariaDB) would then read `'a\'` as an open
        // string. Print them escaped, as such an engine reads them.
        let mut escaped = statement.clone();
        let _ = escaped.visit(&mut EscapeBackslashes);
        escaped.to_string()
    } else {
        statement.to_string()
    };
    if text == original.trim() {
        return Ok(text);
    }
    let reparsed = Parser::new(parser_dialect.as_ref())
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_statements());
    match reparsed {
        Ok(statements) if statements.len() == 1 && statements[0] == *statement => Ok(text),
        _ => Err(GuardIssue::new(
            ErrorCode::UnsupportedSql,
            format!(
                "the statement cannot be rendered in the {dialect} dialect so that it reads back the same; write it more plainly (no unusual literals or escapes)"
            ),
            None,
        )),
    }
}

/// Turns the double-quoted names starting at the given positions into string literals.
struct SpellStrings<'a>(&'a HashSet<(u64, u64)>);

impl VisitorMut for SpellStrings<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<()> {
        if let Expr::Identifier(ident) = expr
            && ident.quote_style == Some('"')
            && self
                .0
                .contains(&(ident.span.start.line, ident.span.start.column))
        {
            *expr =
                Expr::Value(Value::SingleQuotedString(ident.value.clone()).with_span(ident.span));
        }
        ControlFlow::Continue(())
    }
}

/// Doubles the backslashes of string values (for dialects whose strings use backslash
/// escapes).
struct EscapeBackslashes;

impl VisitorMut for EscapeBackslashes {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        match &mut value.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) if s.contains('\\') => {
                *s = s.replace('\\', "\\\\");
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

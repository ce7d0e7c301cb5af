//! Rule G2: exactly one statement, and it is a query. Also the verdict on text that does
//! not parse (G0/G1), which still recognises statements that are plainly not queries.

use nl2sql_state::ErrorCode;
use sqlparser::ast::{Query, Statement};
use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Token, Tokenizer};

use super::{GuardContext, GuardIssue, SqlSpan, parser_dialect, parser_message};
use sqlparser::ast::Spanned;

/// Leading keywords of statements that change data, schema, session or the host.
const NON_QUERY_KEYWORDS: &[&str] = &[
    "INSERT",
    "UPDATE",
    "DELETE",
    "MERGE",
    "UPSERT",
    "REPLACE",
    "DROP",
    "CREATE",
    "ALTER",
    "TRUNCATE",
    "RENAME",
    "GRANT",
    "REVOKE",
    "ATTACH",
    "DETACH",
    "COPY",
    "EXPORT",
    "IMPORT",
    "INSTALL",
    "LOAD",
    "FORCE",
    "PRAGMA",
    "SET",
    "RESET",
    "CALL",
    "EXEC",
    "EXECUTE",
    "PREPARE",
    "DEALLOCATE",
    "BEGIN",
    "START",
    "COMMIT",
    "ROLLBACK",
    "SAVEPOINT",
    "RELEASE",
    "LOCK",
    "UNLOCK",
    "VACUUM",
    "ANALYZE",
    "CHECKPOINT",
    "USE",
    "SHOW",
    "DESCRIBE",
    "DESC",
    "EXPLAIN",
    "KILL",
    "SHUTDOWN",
    "HANDLER",
    "DO",
    "LISTEN",
    "NOTIFY",
    "UNLISTEN",
    "DISCARD",
    "REINDEX",
    "CLUSTER",
    "COMMENT",
    "SECURITY",
    "REFRESH",
    "SUMMARIZE",
    "UNPIVOT",
    "PIVOT",
    "FLUSH",
    "OPTIMIZE",
    "PURGE",
    "DECLARE",
    "FETCH",
    "CLOSE",
    "MOVE",
];

/// The single query of `statements`, or the G2 issue.
pub(crate) fn single_query(statements: &[Statement]) -> Result<&Query, Box<GuardIssue>> {
    match statements {
        [] => Err(Box::new(GuardIssue::new(
            ErrorCode::SqlSyntaxError,
            "statement is empty (only comments or semicolons)",
            None,
        ))),
        [Statement::Query(query)] => Ok(query),
        [other] => Err(Box::new(GuardIssue::new(
            ErrorCode::SecurityViolation,
            format!(
                "{} statements are not allowed; only read-only queries (SELECT, WITH … SELECT, set operations, VALUES) are",
                statement_kind(other)
            ),
            SqlSpan::from_parser(other.span()),
        ))),
        many => Err(Box::new(GuardIssue::new(
            ErrorCode::SecurityViolation,
            format!(
                "exactly one statement is allowed; found {} ({})",
                many.len(),
                many.iter()
                    .map(statement_kind)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None,
        ))),
    }
}

/// A short name for a statement: its leading keywords as rendered by sqlparser.
pub(crate) fn statement_kind(statement: &Statement) -> String {
    if let Statement::Query(_) = statement {
        return "SELECT".to_owned();
    }
    let text = statement.to_string();
    let words: Vec<&str> = text
        .split_whitespace()
        .take_while(|w| w.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        .take(2)
        .collect();
    let kind = match words.as_slice() {
        [] => "non-query".to_owned(),
        [first, second]
            if matches!(
                first.to_ascii_uppercase().as_str(),
                "EXPLAIN" | "CREATE" | "DROP" | "ALTER" | "EXPORT" | "IMPORT" | "START" | "SET"
            ) =>
        {
            format!("{first} {second}")
        }
        [first, ..] => (*first).to_owned(),
    };
    kind.to_ascii_uppercase()
}

/// The issue for a text that does not parse. A text whose first keyword starts a
/// statement that is never a query is rejected as such, whatever the parse error: the
/// dialect's parser may simply not know that statement.
pub(crate) fn parse_failure(ctx: &GuardContext, sql: &str, err: &ParserError) -> GuardIssue {
    let words = keywords(ctx, sql);
    if let Some(pair) = words
        .windows(2)
        .find(|w| w[0] == "INTO" && matches!(w[1].as_str(), "OUTFILE" | "DUMPFILE"))
    {
        return GuardIssue::new(
            ErrorCode::SecurityViolation,
            format!(
                "SELECT … {} {} writes a file; only read-only queries are allowed",
                pair[0], pair[1]
            ),
            None,
        );
    }
    if let Some(keyword) = words.first()
        && NON_QUERY_KEYWORDS.contains(&keyword.as_str())
    {
        return GuardIssue::new(
            ErrorCode::SecurityViolation,
            format!(
                "{keyword} statements are not allowed; only read-only queries are (the statement also does not parse: {})",
                parser_message(err)
            ),
            None,
        );
    }
    let span = error_span(err).or_else(|| {
        // "found: EOF" errors carry no position: point at the end of the text.
        err.to_string().contains("EOF").then(|| end_of(sql))
    });
    GuardIssue::new(ErrorCode::SqlSyntaxError, parser_message(err), span)
}

/// The position just after the last character of `sql`.
fn end_of(sql: &str) -> SqlSpan {
    let line = sql.lines().count().max(1) as u64;
    let column = sql.lines().last().map_or(0, |l| l.chars().count()) as u64 + 1;
    let pos = super::Position { line, column };
    SqlSpan {
        start: pos,
        end: pos,
    }
}

/// The unquoted words of the text, upper-cased, when the text starts with a word
/// (skipping whitespace, comments, parentheses and semicolons); empty otherwise.
fn keywords(ctx: &GuardContext, sql: &str) -> Vec<String> {
    let dialect = parser_dialect(ctx.dialect);
    let Ok(tokens) = Tokenizer::new(dialect.as_ref(), sql).tokenize() else {
        return Vec::new();
    };
    let mut significant = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::LParen | Token::SemiColon))
        .peekable();
    if !matches!(significant.peek(), Some(Token::Word(_))) {
        return Vec::new();
    }
    significant
        .filter_map(|t| match t {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        })
        .collect()
}

/// Parser messages end with "at Line: L, Column: C"; recover the position.
fn error_span(err: &ParserError) -> Option<SqlSpan> {
    let text = err.to_string();
    let at = text.rfind("Line: ")?;
    let rest = &text[at + 6..];
    let (line, rest) = rest.split_once(", Column: ")?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let line: u64 = line.trim().parse().ok()?;
    let column: u64 = column.parse().ok()?;
    let pos = super::Position { line, column };
    Some(SqlSpan {
        start: pos,
        end: pos,
    })
}

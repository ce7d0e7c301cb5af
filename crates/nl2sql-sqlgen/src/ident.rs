//! Identifier quoting per dialect (spec: sql-generation.md §4.1).

use nl2sql_state::Dialect;
use sqlparser::ast::{Ident, ObjectName};

/// Words quoted in every dialect: the reserved words of the four engines that can stand
/// where a table, column or alias name does.
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "between",
    "both",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "delete",
    "desc",
    "distinct",
    "do",
    "drop",
    "else",
    "end",
    "except",
    "exists",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "full",
    "glob",
    "grant",
    "group",
    "having",
    "ilike",
    "in",
    "index",
    "initially",
    "inner",
    "insert",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "key",
    "lateral",
    "leading",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "match",
    "natural",
    "not",
    "notnull",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "outer",
    "over",
    "placing",
    "pragma",
    "primary",
    "qualify",
    "range",
    "references",
    "regexp",
    "returning",
    "right",
    "rlike",
    "rows",
    "select",
    "session_user",
    "set",
    "similar",
    "some",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "update",
    "user",
    "using",
    "values",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

fn needs_quotes(dialect: Dialect, name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = |c: char| match dialect {
        Dialect::Postgres | Dialect::DuckDb | Dialect::Generic => {
            c.is_ascii_lowercase() || c == '_'
        }
        Dialect::Sqlite | Dialect::MySql => c.is_ascii_alphabetic() || c == '_',
    };
    let rest_ok = |c: char| match dialect {
        Dialect::Postgres | Dialect::DuckDb | Dialect::Generic => {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
        }
        Dialect::Sqlite | Dialect::MySql => c.is_ascii_alphanumeric() || c == '_',
    };
    let plain = chars.next().is_some_and(first_ok) && chars.all(rest_ok);
    !plain || RESERVED.contains(&name.to_ascii_lowercase().as_str())
}

/// One identifier, quoted when it must be.
pub(crate) fn ident(dialect: Dialect, name: &str) -> Ident {
    if needs_quotes(dialect, name) {
        let q = if dialect == Dialect::MySql { '`' } else { '"' };
        Ident::with_quote(q, name)
    } else {
        Ident::new(name)
    }
}

/// A dotted name from its parts.
pub(crate) fn object_name<'a>(
    dialect: Dialect,
    parts: impl IntoIterator<Item = &'a str>,
) -> ObjectName {
    ObjectName::from(
        parts
            .into_iter()
            .map(|p| ident(dialect, p))
            .collect::<Vec<_>>(),
    )
}

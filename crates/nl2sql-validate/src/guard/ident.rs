//! Identifier comparison rules per dialect.

use nl2sql_state::Dialect;
use sqlparser::ast::Ident;

/// True when the dialect compares table and column names case-insensitively even when
/// they are quoted (SQLite, MySQL, DuckDB).
pub(crate) fn case_insensitive(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::Sqlite | Dialect::MySql | Dialect::DuckDb)
}

/// The lookup key of an identifier as written in SQL: unquoted names fold to lower case;
/// quoted names keep their case unless the dialect ignores case altogether.
pub(crate) fn ident_key(dialect: Dialect, ident: &Ident) -> String {
    if ident.quote_style.is_none() || case_insensitive(dialect) {
        lower(&ident.value)
    } else {
        ident.value.clone()
    }
}

/// The lookup key of a name stored in a schema (already in its real case).
pub(crate) fn stored_key(dialect: Dialect, name: &str) -> String {
    if case_insensitive(dialect) {
        lower(name)
    } else {
        name.to_owned()
    }
}

/// `s` in lower case; ASCII text (nearly every name) the cheap way, with the same result.
pub(crate) fn lower(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.to_lowercase()
    }
}

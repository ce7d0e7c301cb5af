//! SQL dialects nl2sql parses and generates.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A SQL dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// DuckDB.
    #[serde(rename = "duckdb")]
    DuckDb,
    /// PostgreSQL.
    Postgres,
    /// MySQL and MariaDB.
    #[serde(rename = "mysql")]
    MySql,
    /// SQLite.
    Sqlite,
    /// ANSI-leaning generic SQL.
    Generic,
}

/// An unknown dialect name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect '{0}' (expected one of: duckdb, postgres, mysql, sqlite, generic)")]
pub struct UnknownDialect(pub String);

impl Dialect {
    /// Every dialect, in a stable order.
    pub const ALL: [Dialect; 5] = [
        Dialect::DuckDb,
        Dialect::Postgres,
        Dialect::MySql,
        Dialect::Sqlite,
        Dialect::Generic,
    ];

    /// The canonical lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::DuckDb => "duckdb",
            Dialect::Postgres => "postgres",
            Dialect::MySql => "mysql",
            Dialect::Sqlite => "sqlite",
            Dialect::Generic => "generic",
        }
    }

    /// True for SQLite and MySQL, whose table and column names compare
    /// case-insensitively even when quoted.
    pub fn case_insensitive_identifiers(self) -> bool {
        matches!(self, Dialect::Sqlite | Dialect::MySql)
    }

    /// How an unquoted identifier folds for comparison (lower case in every dialect
    /// nl2sql supports).
    pub fn fold_unquoted(self, ident: &str) -> String {
        ident.to_lowercase()
    }
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "duckdb" => Ok(Dialect::DuckDb),
            "postgres" | "postgresql" | "pg" => Ok(Dialect::Postgres),
            "mysql" | "mariadb" => Ok(Dialect::MySql),
            "sqlite" | "sqlite3" => Ok(Dialect::Sqlite),
            "generic" | "ansi" => Ok(Dialect::Generic),
            _ => Err(UnknownDialect(s.to_owned())),
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

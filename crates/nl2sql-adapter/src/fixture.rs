//! The manufacturing fixture as portable data, so that every adapter's tests can load the
//! same tables into their engine (spec: adapters.md §8).
//!
//! `tests/data/fixtures/manufacturing.json` is a dump of `manufacturing.db` (tables in
//! foreign-key order, column types, keys and every row); the SQLite adapter's tests check
//! that the two agree row for row. [`load_statements`] turns it into `CREATE TABLE` and
//! `INSERT` statements for one dialect.

use nl2sql_state::Dialect;
use serde::Deserialize;

const FIXTURE_JSON: &str = include_str!("../../../tests/data/fixtures/manufacturing.json");

/// The portable type of a fixture column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FixtureType {
    /// A 64-bit integer.
    Integer,
    /// Text.
    Text,
    /// A calendar date (`YYYY-MM-DD`).
    Date,
    /// A timestamp without time zone (`YYYY-MM-DDTHH:MM:SS`).
    Timestamp,
    /// A time of day (`HH:MM`).
    Time,
    /// A JSON document.
    Json,
}

/// One column of a fixture table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureColumn {
    /// The name.
    pub name: String,
    /// The type.
    #[serde(rename = "type")]
    pub ty: FixtureType,
    /// `NOT NULL`.
    pub not_null: bool,
    /// Part of the primary key.
    pub primary_key: bool,
    /// Has a unique constraint of its own.
    pub unique: bool,
}

/// A single-column foreign key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureForeignKey {
    /// The constrained column.
    pub column: String,
    /// The referenced table.
    pub references_table: String,
    /// The referenced column.
    pub references_column: String,
}

/// One fixture table with its rows (values are JSON numbers, strings or null).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureTable {
    /// The name.
    pub name: String,
    /// The columns, in table order.
    pub columns: Vec<FixtureColumn>,
    /// The foreign keys.
    pub foreign_keys: Vec<FixtureForeignKey>,
    /// Every row, ordered by the first column.
    pub rows: Vec<Vec<serde_json::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureFile {
    #[allow(dead_code)] // reason: documents where the dump came from
    source: String,
    tables: Vec<FixtureTable>,
}

/// The fixture's tables, in an order where every referenced table comes first.
pub fn tables() -> Vec<FixtureTable> {
    serde_json::from_str::<FixtureFile>(FIXTURE_JSON)
        .map(|f| f.tables)
        .unwrap_or_default()
}

fn quote(dialect: Dialect, ident: &str) -> String {
    match dialect {
        Dialect::MySql => format!("`{}`", ident.replace('`', "``")),
        _ => format!("\"{}\"", ident.replace('"', "\"\"")),
    }
}

fn sql_type(dialect: Dialect, ty: FixtureType) -> &'static str {
    match (dialect, ty) {
        (_, FixtureType::Integer) => "BIGINT",
        // MySQL cannot index TEXT without a prefix length.
        (Dialect::MySql, FixtureType::Text) => "VARCHAR(255)",
        (Dialect::DuckDb, FixtureType::Text | FixtureType::Json) => "VARCHAR",
        (_, FixtureType::Text) => "TEXT",
        (_, FixtureType::Date) => "DATE",
        (Dialect::MySql, FixtureType::Timestamp) => "DATETIME",
        (_, FixtureType::Timestamp) => "TIMESTAMP",
        (_, FixtureType::Time) => "TIME",
        (Dialect::Postgres, FixtureType::Json) => "JSONB",
        (_, FixtureType::Json) => "JSON",
    }
}

fn literal(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "NULL".to_owned(),
        serde_json::Value::Bool(b) => b.to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => format!("'{}'", s.replace('\'', "''")),
        other => format!("'{}'", other.to_string().replace('\'', "''")),
    }
}

/// `DROP TABLE IF EXISTS`, `CREATE TABLE` and `INSERT` statements that load the fixture
/// into `schema` (created first when given) of an engine speaking `dialect`. Dropping
/// first makes loading idempotent on a shared server.
pub fn load_statements(dialect: Dialect, schema: Option<&str>) -> Vec<String> {
    let tables = tables();
    let qualified = |t: &str| match schema {
        Some(s) => format!("{}.{}", quote(dialect, s), quote(dialect, t)),
        None => quote(dialect, t),
    };
    let mut out = Vec::new();
    if let Some(s) = schema {
        out.push(format!("CREATE SCHEMA IF NOT EXISTS {}", quote(dialect, s)));
    }
    for t in tables.iter().rev() {
        let cascade = if dialect == Dialect::Postgres {
            " CASCADE"
        } else {
            ""
        };
        out.push(format!(
            "DROP TABLE IF EXISTS {}{cascade}",
            qualified(&t.name)
        ));
    }
    for t in &tables {
        let mut parts: Vec<String> = t
            .columns
            .iter()
            .map(|c| {
                let mut def = format!("{} {}", quote(dialect, &c.name), sql_type(dialect, c.ty));
                if c.not_null {
                    def.push_str(" NOT NULL");
                }
                if c.unique {
                    def.push_str(" UNIQUE");
                }
                def
            })
            .collect();
        let pk: Vec<String> = t
            .columns
            .iter()
            .filter(|c| c.primary_key)
            .map(|c| quote(dialect, &c.name))
            .collect();
        if !pk.is_empty() {
            parts.push(format!("PRIMARY KEY ({})", pk.join(", ")));
        }
        for fk in &t.foreign_keys {
            parts.push(format!(
                "FOREIGN KEY ({}) REFERENCES {} ({})",
                quote(dialect, &fk.column),
                qualified(&fk.references_table),
                quote(dialect, &fk.references_column)
            ));
        }
        out.push(format!(
            "CREATE TABLE {} ({})",
            qualified(&t.name),
            parts.join(", ")
        ));
        if !t.rows.is_empty() {
            let cols: Vec<String> = t.columns.iter().map(|c| quote(dialect, &c.name)).collect();
            let rows: Vec<String> = t
                .rows
                .iter()
                .map(|r| {
                    let vals: Vec<String> = r.iter().map(literal).collect();
                    format!("({})", vals.join(", "))
                })
                .collect();
            out.push(format!(
                "INSERT INTO {} ({}) VALUES {}",
                qualified(&t.name),
                cols.join(", "),
                rows.join(", ")
            ));
        }
    }
    out
}

//! A portable description of a whole database (tables, typed columns, keys and rows) for
//! the adapters' bulk-write functions (`nl2sql_adapter_sqlite::write_database`,
//! `nl2sql_adapter_duckdb::write_database`), which build demo and test databases.
//!
//! These are admin write paths, not the sandboxed query path: nothing here is reachable
//! from a question. This module links no driver; it holds the shared parts (the checks,
//! the DDL for one dialect, date formatting and the atomic temp-file-then-rename dance).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nl2sql_state::{Dialect, ErrorCode, PipelineError, Severity};

/// The portable type of a dataset column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatasetType {
    /// A 64-bit integer.
    Integer,
    /// A double-precision float.
    Real,
    /// Text.
    Text,
    /// A calendar date ([`DatasetValue::Date`]).
    Date,
    /// A timestamp without time zone ([`DatasetValue::Timestamp`]).
    Timestamp,
    /// A boolean (SQLite stores 0 or 1).
    Boolean,
}

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum DatasetValue {
    /// SQL `NULL` (only in nullable columns).
    Null,
    /// An integer.
    Integer(i64),
    /// A float.
    Real(f64),
    /// Text.
    Text(String),
    /// Days since 1970-01-01 ([`days_from_civil`]).
    Date(i32),
    /// Seconds since 1970-01-01T00:00:00, no time zone.
    Timestamp(i64),
    /// A boolean.
    Boolean(bool),
}

impl DatasetValue {
    /// Whether the value may be stored in a column of type `ty` (`Null` fits every type;
    /// nullability is checked apart).
    pub fn fits(&self, ty: DatasetType) -> bool {
        matches!(
            (self, ty),
            (DatasetValue::Null, _)
                | (DatasetValue::Integer(_), DatasetType::Integer)
                | (DatasetValue::Real(_), DatasetType::Real)
                | (DatasetValue::Text(_), DatasetType::Text)
                | (DatasetValue::Date(_), DatasetType::Date)
                | (DatasetValue::Timestamp(_), DatasetType::Timestamp)
                | (DatasetValue::Boolean(_), DatasetType::Boolean)
        )
    }
}

/// One column of a dataset table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetColumn {
    /// The name.
    pub name: String,
    /// The type.
    pub ty: DatasetType,
    /// Whether `NULL` is allowed.
    pub nullable: bool,
    /// Part of the primary key.
    pub primary_key: bool,
    /// What the column holds, for people and for the schema index.
    pub description: String,
}

impl DatasetColumn {
    /// A `NOT NULL` column that is not part of the key.
    pub fn new(name: &str, ty: DatasetType, description: &str) -> Self {
        DatasetColumn {
            name: name.to_owned(),
            ty,
            nullable: false,
            primary_key: false,
            description: description.to_owned(),
        }
    }

    /// An integer primary-key column.
    pub fn key(name: &str, description: &str) -> Self {
        DatasetColumn {
            primary_key: true,
            ..DatasetColumn::new(name, DatasetType::Integer, description)
        }
    }

    /// The same column, nullable.
    #[must_use]
    pub fn nullable(mut self) -> Self {
        self.nullable = true;
        self
    }
}

/// A single-column foreign key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetForeignKey {
    /// The constrained column.
    pub column: String,
    /// The referenced table (earlier in [`DatasetSpec::tables`]).
    pub references_table: String,
    /// The referenced column (the referenced table's primary key).
    pub references_column: String,
}

impl DatasetForeignKey {
    /// `column` references `table`.`references`.
    pub fn new(column: &str, table: &str, references: &str) -> Self {
        DatasetForeignKey {
            column: column.to_owned(),
            references_table: table.to_owned(),
            references_column: references.to_owned(),
        }
    }
}

/// One table with its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetTable {
    /// The name.
    pub name: String,
    /// What the table holds.
    pub description: String,
    /// The columns, in table order.
    pub columns: Vec<DatasetColumn>,
    /// The foreign keys.
    pub foreign_keys: Vec<DatasetForeignKey>,
    /// The rows, each with one value per column.
    pub rows: Vec<Vec<DatasetValue>>,
}

/// A whole database: tables in an order where every referenced table comes first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DatasetSpec {
    /// The tables.
    pub tables: Vec<DatasetTable>,
}

impl DatasetSpec {
    /// The table called `name`.
    pub fn table(&self, name: &str) -> Option<&DatasetTable> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// Checks the shape: unique non-empty names, every row as wide as its table, values
    /// of the column's type, `NULL` only where allowed, and foreign keys naming an
    /// earlier table's primary-key column. Key uniqueness and referential integrity are
    /// left to the engine, which enforces both while writing.
    pub fn check(&self) -> Result<(), String> {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for t in &self.tables {
            if t.name.is_empty() || t.columns.is_empty() {
                return Err(format!("table '{}' has no name or no columns", t.name));
            }
            let mut cols = BTreeSet::new();
            for c in &t.columns {
                if c.name.is_empty() || !cols.insert(c.name.as_str()) {
                    return Err(format!(
                        "table '{}': empty or duplicate column '{}'",
                        t.name, c.name
                    ));
                }
            }
            for fk in &t.foreign_keys {
                if !cols.contains(fk.column.as_str()) {
                    return Err(format!(
                        "table '{}': foreign key on unknown column '{}'",
                        t.name, fk.column
                    ));
                }
                let target = self
                    .tables
                    .iter()
                    .find(|r| r.name == fk.references_table)
                    .filter(|r| seen.contains(r.name.as_str()) || r.name == t.name)
                    .ok_or_else(|| {
                        format!(
                            "table '{}': foreign key references '{}', which is not an earlier table",
                            t.name, fk.references_table
                        )
                    })?;
                if !target
                    .columns
                    .iter()
                    .any(|c| c.name == fk.references_column && c.primary_key)
                {
                    return Err(format!(
                        "table '{}': foreign key references '{}.{}', which is not its primary key",
                        t.name, fk.references_table, fk.references_column
                    ));
                }
            }
            for (i, row) in t.rows.iter().enumerate() {
                if row.len() != t.columns.len() {
                    return Err(format!(
                        "table '{}': row {i} has {} values for {} columns",
                        t.name,
                        row.len(),
                        t.columns.len()
                    ));
                }
                for (v, c) in row.iter().zip(&t.columns) {
                    let null_ok = c.nullable && !c.primary_key;
                    if !v.fits(c.ty) || (*v == DatasetValue::Null && !null_ok) {
                        return Err(format!(
                            "table '{}': row {i} has a {v:?} in column '{}' of type {:?}",
                            t.name, c.name, c.ty
                        ));
                    }
                }
            }
            if !seen.insert(t.name.as_str()) {
                return Err(format!("duplicate table '{}'", t.name));
            }
        }
        Ok(())
    }
}

/// Quotes an identifier with double quotes (SQLite and DuckDB).
pub fn quote_ident(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// Quotes a string literal.
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn sql_type(dialect: Dialect, ty: DatasetType) -> &'static str {
    match (dialect, ty) {
        (_, DatasetType::Integer) => "BIGINT",
        (Dialect::DuckDb, DatasetType::Real) => "DOUBLE",
        (_, DatasetType::Real) => "REAL",
        (Dialect::DuckDb, DatasetType::Text) => "VARCHAR",
        (_, DatasetType::Text) => "TEXT",
        (_, DatasetType::Date) => "DATE",
        (_, DatasetType::Timestamp) => "TIMESTAMP",
        (_, DatasetType::Boolean) => "BOOLEAN",
    }
}

/// The `CREATE TABLE` statement of `table` in `dialect`: types, `NOT NULL`, the primary
/// key and the foreign keys.
pub fn create_table_sql(dialect: Dialect, table: &DatasetTable) -> String {
    let mut parts: Vec<String> = table
        .columns
        .iter()
        .map(|c| {
            let null = if c.nullable && !c.primary_key {
                ""
            } else {
                " NOT NULL"
            };
            format!("{} {}{null}", quote_ident(&c.name), sql_type(dialect, c.ty))
        })
        .collect();
    let pk: Vec<String> = table
        .columns
        .iter()
        .filter(|c| c.primary_key)
        .map(|c| quote_ident(&c.name))
        .collect();
    if !pk.is_empty() {
        parts.push(format!("PRIMARY KEY ({})", pk.join(", ")));
    }
    for fk in &table.foreign_keys {
        parts.push(format!(
            "FOREIGN KEY ({}) REFERENCES {} ({})",
            quote_ident(&fk.column),
            quote_ident(&fk.references_table),
            quote_ident(&fk.references_column)
        ));
    }
    format!(
        "CREATE TABLE {} (\n  {}\n)",
        quote_ident(&table.name),
        parts.join(",\n  ")
    )
}

/// `INSERT INTO t (cols) VALUES (?, …)` for `table`.
pub fn insert_sql(table: &DatasetTable) -> String {
    let cols: Vec<String> = table.columns.iter().map(|c| quote_ident(&c.name)).collect();
    let marks = vec!["?"; cols.len()].join(", ");
    format!(
        "INSERT INTO {} ({}) VALUES ({marks})",
        quote_ident(&table.name),
        cols.join(", ")
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i32 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i32::try_from(month).unwrap_or(1);
    let d = i32::try_from(day).unwrap_or(1);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of `days` since 1970-01-01.
pub fn civil_from_days(days: i32) -> (i32, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if m <= 2 { y + 1 } else { y };
    (
        year,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

/// `YYYY-MM-DD` of `days` since 1970-01-01.
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DD HH:MM:SS` of `seconds` since 1970-01-01T00:00:00.
pub fn format_timestamp(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    let days = i32::try_from(days).unwrap_or(i32::MAX);
    format!(
        "{} {:02}:{:02}:{:02}",
        format_date(days),
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// A write-path error (`EXECUTION_FAILED`) from `node`, naming the file at fault by its
/// name only.
pub fn write_error(node: &str, path: &Path, message: impl std::fmt::Display) -> PipelineError {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    PipelineError::new(
        node,
        ErrorCode::ExecutionFailed,
        Severity::Error,
        format!("cannot write database '{name}': {message}"),
    )
}

/// The temporary sibling of `path` that a database is built in before the rename.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Builds a file atomically: `build` writes the temporary sibling of `path` (see
/// [`temp_path_for`]); on success it is flushed to disk and renamed over `path`, on
/// failure it is removed together with the sidecar files named `<temp><suffix>` (journals,
/// write-ahead logs), and `path` is left as it was.
pub fn build_atomically<T>(
    node: &str,
    path: &Path,
    sidecar_suffixes: &[&str],
    build: impl FnOnce(&Path) -> Result<T, PipelineError>,
) -> Result<T, PipelineError> {
    let temp = temp_path_for(path);
    let cleanup = |temp: &Path| {
        let _ = std::fs::remove_file(temp);
        for suffix in sidecar_suffixes {
            let mut side = temp.as_os_str().to_owned();
            side.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(side));
        }
    };
    cleanup(&temp);
    let finish = || -> Result<T, PipelineError> {
        let out = build(&temp)?;
        std::fs::File::open(&temp)
            .and_then(|f| f.sync_all())
            .map_err(|e| write_error(node, path, e))?;
        std::fs::rename(&temp, path).map_err(|e| write_error(node, path, e))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // Best effort: makes the rename durable where directories can be synced.
            let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(out)
    };
    let result = finish();
    cleanup(&temp);
    result
}

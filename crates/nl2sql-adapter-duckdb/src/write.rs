//! The bulk-write path: builds a DuckDB database file from a [`DatasetSpec`] (demo and
//! test databases).
//!
//! This is an admin write path, NOT the sandboxed query path: it opens a fresh file
//! read-write, without the adapter's sandbox settings, and is never reachable from a
//! question. The database is built in a temporary sibling file (tables with their primary
//! and foreign keys, rows through DuckDB's Appender, table and column descriptions as
//! `COMMENT ON`), checked for dangling foreign keys, checkpointed, and only then renamed
//! over the final path: a reader sees the old file or the whole new one.

use std::path::Path;

use duckdb::types::{TimeUnit, Value};
use duckdb::{Connection, appender_params_from_iter};
use nl2sql_adapter::dataset::{self, DatasetSpec, DatasetValue, quote_ident, quote_literal};
use nl2sql_state::{Dialect, PipelineError};

const NODE: &str = "duckdb_write";

/// Writes `spec` as a new DuckDB database at `path`, replacing any file there only once
/// the new one is complete. Returns the number of rows written. A spec that breaks its
/// own shape, a duplicate key or a dangling foreign key fails with `EXECUTION_FAILED`
/// and leaves neither the final file changed nor a temporary file behind.
pub fn write_database(path: &Path, spec: &DatasetSpec) -> Result<u64, PipelineError> {
    spec.check()
        .map_err(|m| dataset::write_error(NODE, path, m))?;
    dataset::build_atomically(NODE, path, &[".wal"], |temp| {
        let (rows, orphans) =
            write_into(temp, spec).map_err(|e| dataset::write_error(NODE, path, e))?;
        if let Some((table, column, n)) = orphans {
            return Err(dataset::write_error(
                NODE,
                path,
                format!("{n} rows of '{table}.{column}' break a foreign key"),
            ));
        }
        Ok(rows)
    })
}

/// Rows written, and the first foreign key with dangling references (table, column,
/// count), if any.
type Written = (u64, Option<(String, String, i64)>);

fn write_into(temp: &Path, spec: &DatasetSpec) -> duckdb::Result<Written> {
    let conn = Connection::open(temp)?;
    let mut rows = 0u64;
    for table in &spec.tables {
        conn.execute_batch(&dataset::create_table_sql(Dialect::DuckDb, table))?;
        let mut comments = vec![format!(
            "COMMENT ON TABLE {} IS {};",
            quote_ident(&table.name),
            quote_literal(&table.description)
        )];
        for c in table.columns.iter().filter(|c| !c.description.is_empty()) {
            comments.push(format!(
                "COMMENT ON COLUMN {}.{} IS {};",
                quote_ident(&table.name),
                quote_ident(&c.name),
                quote_literal(&c.description)
            ));
        }
        conn.execute_batch(&comments.join("\n"))?;
        let mut appender = conn.appender(&table.name)?;
        for row in &table.rows {
            appender.append_row(appender_params_from_iter(row.iter().map(to_value)))?;
            rows += 1;
        }
        // Constraint violations surface here, not when the appender is dropped.
        appender.flush()?;
    }
    let mut orphans = None;
    'tables: for table in &spec.tables {
        for fk in &table.foreign_keys {
            let sql = format!(
                "SELECT count(*) FROM {t} c WHERE c.{col} IS NOT NULL AND NOT EXISTS \
                 (SELECT 1 FROM {p} p WHERE p.{pk} = c.{col})",
                t = quote_ident(&table.name),
                col = quote_ident(&fk.column),
                p = quote_ident(&fk.references_table),
                pk = quote_ident(&fk.references_column),
            );
            let n: i64 = conn.query_row(&sql, [], |r| r.get(0))?;
            if n > 0 {
                orphans = Some((table.name.clone(), fk.column.clone(), n));
                break 'tables;
            }
        }
    }
    conn.execute_batch("CHECKPOINT")?;
    conn.close().map_err(|(_, e)| e)?;
    Ok((rows, orphans))
}

/// DuckDB's value of one dataset value.
fn to_value(v: &DatasetValue) -> Value {
    match v {
        DatasetValue::Null => Value::Null,
        DatasetValue::Integer(i) => Value::BigInt(*i),
        DatasetValue::Real(f) => Value::Double(*f),
        DatasetValue::Text(s) => Value::Text(s.clone()),
        DatasetValue::Date(d) => Value::Date32(*d),
        DatasetValue::Timestamp(t) => Value::Timestamp(TimeUnit::Second, *t),
        DatasetValue::Boolean(b) => Value::Boolean(*b),
    }
}

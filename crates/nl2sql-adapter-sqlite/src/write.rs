//! The bulk-write path: builds a SQLite database file from a [`DatasetSpec`] (demo and
//! test databases).
//!
//! This is an admin write path, NOT the sandboxed query path: it opens a fresh file
//! read-write, with no authorizer, and is never reachable from a question. The database
//! is built in a temporary sibling file, in one transaction with one prepared `INSERT` per
//! table and `PRAGMA foreign_keys = ON` (so every foreign key is checked while writing),
//! then renamed over the final path: a reader sees the old file or the whole new one.

use std::path::Path;

use nl2sql_adapter::dataset::{self, DatasetSpec, DatasetValue};
use nl2sql_state::{Dialect, PipelineError};
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, OpenFlags};

const NODE: &str = "sqlite_write";

/// Writes `spec` as a new SQLite database at `path`, replacing any file there only once
/// the new one is complete. Returns the number of rows written. A spec that breaks its
/// own shape, a duplicate key or a dangling foreign key fails with `EXECUTION_FAILED`
/// and leaves neither the final file changed nor a temporary file behind.
pub fn write_database(path: &Path, spec: &DatasetSpec) -> Result<u64, PipelineError> {
    spec.check()
        .map_err(|m| dataset::write_error(NODE, path, m))?;
    dataset::build_atomically(NODE, path, &["-journal", "-wal", "-shm"], |temp| {
        let (rows, orphans) =
            write_into(temp, spec).map_err(|e| dataset::write_error(NODE, path, e))?;
        if orphans > 0 {
            return Err(dataset::write_error(
                NODE,
                path,
                format!("{orphans} rows break a foreign key"),
            ));
        }
        Ok(rows)
    })
}

/// Writes every table into the new file at `temp`; returns the rows written and the
/// number of foreign-key violations found afterwards.
fn write_into(temp: &Path, spec: &DatasetSpec) -> rusqlite::Result<(u64, i64)> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(temp, flags)?;
    // The file is renamed into place only when complete, so the journal buys nothing.
    conn.pragma_update(None, "journal_mode", "OFF")?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let tx = conn.transaction()?;
    let mut rows = 0u64;
    for table in &spec.tables {
        tx.execute_batch(&dataset::create_table_sql(Dialect::Sqlite, table))?;
        let mut stmt = tx.prepare(&dataset::insert_sql(table))?;
        for row in &table.rows {
            stmt.execute(rusqlite::params_from_iter(row.iter().map(to_sql)))?;
            rows += 1;
        }
    }
    tx.commit()?;
    // Foreign keys are enforced per statement; this also catches anything deferred.
    let orphans: i64 =
        conn.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })?;
    conn.execute_batch("ANALYZE")?;
    conn.close().map_err(|(_, e)| e)?;
    Ok((rows, orphans))
}

/// SQLite's storage of one value: dates and timestamps as ISO-8601 text, booleans as 0/1.
fn to_sql(v: &DatasetValue) -> ToSqlOutput<'_> {
    match v {
        DatasetValue::Null => ToSqlOutput::Owned(Value::Null),
        DatasetValue::Integer(i) => ToSqlOutput::Owned(Value::Integer(*i)),
        DatasetValue::Real(f) => ToSqlOutput::Owned(Value::Real(*f)),
        DatasetValue::Text(s) => {
            ToSqlOutput::Borrowed(rusqlite::types::ValueRef::Text(s.as_bytes()))
        }
        DatasetValue::Date(d) => ToSqlOutput::Owned(Value::Text(dataset::format_date(*d))),
        DatasetValue::Timestamp(t) => {
            ToSqlOutput::Owned(Value::Text(dataset::format_timestamp(*t)))
        }
        DatasetValue::Boolean(b) => ToSqlOutput::Owned(Value::Integer(i64::from(*b))),
    }
}

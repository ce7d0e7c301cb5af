//! The fixture database (`tests/data/fixtures/manufacturing.db`), the same data in an
//! in-memory DuckDB database, and its schema.

use std::path::PathBuf;

use nl2sql_state::{Dialect, SchemaContract};
use nl2sql_validate::{GuardContext, GuardStatus, SqlGuard, schema_from_ddl};
use rusqlite::{Connection, OpenFlags};

pub(crate) const DIALECTS: [Dialect; 4] = [
    Dialect::DuckDb,
    Dialect::Postgres,
    Dialect::MySql,
    Dialect::Sqlite,
];

fn db_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fixtures/manufacturing.db")
}

/// A read-only connection to the fixture database.
pub(crate) fn connect() -> Connection {
    Connection::open_with_flags(db_path(), OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

/// The CREATE TABLE statements of the fixture database.
fn ddl() -> String {
    let conn = connect();
    let mut stmt = conn
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(|r| r.unwrap() + ";\n").collect()
}

/// The fixture schema as the guard sees it in `dialect`.
pub(crate) fn contract(dialect: Dialect) -> SchemaContract {
    schema_from_ddl(&ddl(), dialect, "manufacturing").unwrap()
}

/// Asserts the guard accepts `sql` in `dialect`.
pub(crate) fn assert_guard_ok(contract: &SchemaContract, dialect: Dialect, sql: &str) {
    let report = SqlGuard::new(GuardContext::new("manufacturing", dialect, contract)).check(sql);
    assert_eq!(
        report.status,
        GuardStatus::Ok,
        "guard rejected {dialect} SQL {sql}: {:?}",
        report.issues
    );
}

/// Runs `sql` on the fixture database and returns the number of rows.
pub(crate) fn run_sqlite(conn: &Connection, sql: &str) -> Result<usize, String> {
    let mut stmt = conn.prepare(sql).map_err(|e| format!("{e}: {sql}"))?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).map_err(|e| format!("{e}: {sql}"))?;
    let mut n = 0;
    while let Some(row) = rows.next().map_err(|e| format!("{e}: {sql}"))? {
        for i in 0..columns {
            row.get_ref(i).map_err(|e| format!("{e}: {sql}"))?;
        }
        n += 1;
    }
    Ok(n)
}

/// An in-memory DuckDB database holding the fixture (from its portable form).
pub(crate) fn connect_duckdb() -> duckdb::Connection {
    let conn = duckdb::Connection::open_in_memory().unwrap();
    for s in nl2sql_adapter::fixture::load_statements(Dialect::DuckDb, None) {
        conn.execute_batch(&s).unwrap();
    }
    conn
}

/// Runs `sql` on DuckDB and returns the number of rows.
pub(crate) fn run_duckdb(conn: &duckdb::Connection, sql: &str) -> Result<usize, String> {
    let mut stmt = conn.prepare(sql).map_err(|e| format!("{e}: {sql}"))?;
    let batches = stmt.query_arrow([]).map_err(|e| format!("{e}: {sql}"))?;
    Ok(batches.map(|b| b.num_rows()).sum())
}

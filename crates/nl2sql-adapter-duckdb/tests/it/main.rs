//! The DuckDB adapter against a real DuckDB file holding the manufacturing fixture: the
//! SPI's conformance suite, the sandbox with the guard bypassed (no writes, no files, no
//! network, no settings, no state between statements), limits, timeouts and bad URLs.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};

use arrow::array::{Array, Int64Array};
use nl2sql_adapter::conformance::{self, Fixture};
use nl2sql_adapter::{AdapterRequest, DatasourceAdapter, Limits, ResultErrorCode};
use nl2sql_adapter_duckdb::DuckDbAdapter;
use nl2sql_state::Dialect;

/// `sql` exactly as written, with no guard in front: these tests prove what the engine's
/// own sandbox, limits and timeouts do.
fn raw(sql: &str) -> nl2sql_validate::GuardedSql {
    nl2sql_validate::GuardedSql::unguarded_for_sandbox_tests(Dialect::DuckDb, sql)
}

mod differential;
mod write;

/// A fresh DuckDB file with the fixture, in a directory of its own.
fn fixture_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nl2sql-duckdb-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("manufacturing.duckdb");
    let conn = duckdb::Connection::open(&path).unwrap();
    for s in nl2sql_adapter::fixture::load_statements(Dialect::DuckDb, None) {
        conn.execute_batch(&s).unwrap();
    }
    drop(conn);
    path
}

fn adapter(path: &Path) -> DuckDbAdapter {
    DuckDbAdapter::open("ops", path, Limits::default()).unwrap()
}

const SLOW_SQL: &str =
    "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = -1";

fn sandbox_statements(dir: &Path) -> Vec<String> {
    let d = dir.display();
    vec![
        "INSERT INTO products VALUES (99, 'X', 'x', 'x')".to_owned(),
        "UPDATE products SET name = 'changed'".to_owned(),
        "DELETE FROM products".to_owned(),
        "CREATE TABLE evil (x INTEGER)".to_owned(),
        "DROP TABLE products".to_owned(),
        "ALTER TABLE products ADD COLUMN evil INTEGER".to_owned(),
        "CREATE SEQUENCE evil_seq".to_owned(),
        format!("ATTACH '{d}/attached.duckdb' AS other"),
        format!("COPY products TO '{d}/copied.csv'"),
        format!("EXPORT DATABASE '{d}/exported'"),
        "SELECT * FROM read_csv('/etc/passwd')".to_owned(),
        "SELECT * FROM read_text('/etc/passwd')".to_owned(),
        "SELECT * FROM glob('/etc/*')".to_owned(),
        "INSTALL httpfs".to_owned(),
        "LOAD httpfs".to_owned(),
        "SELECT * FROM read_parquet('https://example.com/x.parquet')".to_owned(),
        "SET enable_external_access = true".to_owned(),
        "SET lock_configuration = false".to_owned(),
        "SET threads = 1".to_owned(),
        "PRAGMA memory_limit = '1GB'".to_owned(),
        // Not listed: `CHECKPOINT`, which DuckDB accepts on a read-only database as a no-op
        // (there is nothing to flush); the file-hash check below proves nothing changes.
    ]
}

fn fixture(dir: &Path) -> Fixture {
    Fixture {
        schema: "main".to_owned(),
        slow_sql: SLOW_SQL.to_owned(),
        timeout_ms: 300,
        sandbox_statements: sandbox_statements(dir),
    }
}

#[tokio::test]
async fn conformance_suite() {
    let path = fixture_db("conformance");
    let a = adapter(&path);
    let fx = fixture(path.parent().unwrap());
    conformance::run_all(&a, &fx).await.unwrap();
}

fn sha256(path: &Path) -> String {
    nl2sql_state::sha256_hex(&std::fs::read(path).unwrap())
}

#[tokio::test]
async fn sandbox_holds_without_the_guard_and_nothing_changes() {
    let path = fixture_db("sandbox");
    let dir = path.parent().unwrap().to_path_buf();
    let before = sha256(&path);
    let a = adapter(&path);
    for sql in sandbox_statements(&dir) {
        let frame = a.run_sql(&raw(&sql), a.limits()).await;
        assert!(!frame.success, "sandbox let through: {sql}");
        let safe = &frame.error.as_ref().unwrap().safe_message;
        assert!(!safe.contains(dir.to_str().unwrap()), "{sql}: {safe}");
    }
    for f in ["attached.duckdb", "copied.csv", "exported"] {
        assert!(!dir.join(f).exists(), "{f} was written");
    }
    // Writes and file access are refused by the sandbox, as security violations.
    for sql in [
        "DELETE FROM products",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SET enable_external_access = true",
    ] {
        let frame = a.run_sql(&raw(sql), a.limits()).await;
        assert_eq!(
            frame.error_code(),
            Some(ResultErrorCode::SecurityViolation),
            "{sql}: {:?}",
            frame.error
        );
    }
    drop(a);
    assert_eq!(sha256(&path), before, "the database file changed");
}

#[tokio::test]
async fn no_state_outlives_a_statement() {
    let path = fixture_db("state");
    let a = adapter(&path);
    // Whatever one statement may create for itself is gone in the next.
    for setup in [
        "CREATE TEMP TABLE scratch AS SELECT 1 AS x",
        "CREATE TEMP MACRO scratch() AS 1",
        "SET VARIABLE scratch = 1",
    ] {
        let _ = a.run_sql(&raw(setup), a.limits()).await;
    }
    for probe in [
        "SELECT * FROM scratch",
        "SELECT scratch()",
        "SELECT getvariable('scratch') AS v WHERE getvariable('scratch') IS NOT NULL",
    ] {
        let f = a.run_sql(&raw(probe), a.limits()).await;
        assert!(
            !f.success || f.row_count == 0,
            "state survived: {probe} -> {:?}",
            f.batches
        );
    }
}

#[tokio::test]
async fn large_results_stream_until_a_limit() {
    let path = fixture_db("limits");
    let a = adapter(&path);
    let limits = Limits {
        row_limit: 5_000,
        ..a.limits()
    };
    let f = a
        .run_sql(&raw("SELECT range AS x FROM range(100000000)"), limits)
        .await;
    assert!(f.success, "{:?}", f.error);
    assert_eq!(f.row_count, 5_000);
    assert!(f.truncated);
    let xs = f.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!(xs.len(), 5_000);
    // Exactly the limit: not truncated.
    let f = a
        .run_sql(&raw("SELECT range AS x FROM range(5000)"), limits)
        .await;
    assert_eq!((f.row_count, f.truncated), (5_000, false));
}

/// A statement whose caller went away (a cancelled run drops the future) is interrupted:
/// with one blocking thread, the next statement runs at once instead of waiting behind a
/// query that would take minutes.
#[test]
fn a_dropped_statement_is_interrupted() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let path = fixture_db("dropped");
    let a = std::sync::Arc::new(adapter(&path));
    let next = rt.block_on(async {
        let slow = std::sync::Arc::clone(&a);
        let task = tokio::spawn(async move { slow.run_sql(&raw(SLOW_SQL), slow.limits()).await });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        task.abort();
        let _ = task.await;
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            a.run_sql(&raw("SELECT 42 AS x"), a.limits()),
        )
        .await
    });
    // Never wait for a statement that was not interrupted: the test fails instead of hanging.
    rt.shutdown_background();
    let next = next.expect("the slow statement was interrupted, freeing the blocking thread");
    assert!(next.success, "{:?}", next.error);
    assert_eq!(next.row_count, 1);
}

#[tokio::test]
async fn bad_urls_and_files_are_unavailable() {
    let dir = std::env::temp_dir().join(format!("nl2sql-duckdb-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let not_db = dir.join("not.duckdb");
    std::fs::write(&not_db, b"this is not a database").unwrap();
    let missing = dir.join("missing.duckdb");
    for url in [
        format!("duckdb://{}", missing.display()),
        format!("duckdb://{}", not_db.display()),
        "duckdb://".to_owned(),
        "duckdb://:memory:".to_owned(),
        "postgres://x".to_owned(),
    ] {
        let e = DuckDbAdapter::from_url("ops", &url, Limits::default()).unwrap_err();
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable, "{url}");
        assert!(
            !e.safe_message.contains(dir.to_str().unwrap()),
            "{}",
            e.safe_message
        );
    }
    assert!(!missing.exists(), "opening created the file");
    // The adapter works through `execute` too, with the guard in front.
    let path = fixture_db("execute");
    let a = adapter(&path);
    let f = a
        .execute(AdapterRequest::sql("SELECT count(*) AS n FROM machines"))
        .await;
    assert!(f.success, "{:?}", f.error);
}

/// `items(id, colour)`: red, green, blue and amber 10 rows each (ties, inserted out of
/// order), violet 6 and cyan 4; the statement works in every engine.
fn tied_colours_sql(table: &str) -> String {
    let colours = ["red", "green", "blue", "amber"];
    let rows: Vec<String> = (1..=50)
        .map(|id: usize| {
            let colour = match id {
                1..=40 => colours[(id - 1) % 4],
                41..=46 => "violet",
                _ => "cyan",
            };
            format!("({id}, '{colour}')")
        })
        .collect();
    format!(
        "CREATE TABLE {table} (id INTEGER PRIMARY KEY, colour VARCHAR(20) NOT NULL); INSERT INTO {table} VALUES {};",
        rows.join(", ")
    )
}

#[tokio::test]
async fn sample_value_ties_come_out_in_value_order() {
    // GAP-41: the most frequent values first, ties in value order, the same every time.
    let dir = std::env::temp_dir().join(format!("nl2sql-duckdb-{}-ties", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ties.duckdb");
    let conn = duckdb::Connection::open(&path).unwrap();
    conn.execute_batch(&tied_colours_sql("items")).unwrap();
    drop(conn);
    let a = adapter(&path);
    let snapshot = a.schema_snapshot().await.unwrap();
    let metadata = snapshot.metadata.as_ref().unwrap();
    let items = metadata
        .tables
        .values()
        .find(|t| t.table.table_name == "items")
        .unwrap();
    let colour = items.columns["colour"].statistics.clone().unwrap();
    assert_eq!(colour.distinct_count, 6);
    assert_eq!(
        colour.sample_values,
        ["amber", "blue", "green", "red", "violet"].map(serde_json::Value::from)
    );
    assert_eq!(a.schema_snapshot().await.unwrap(), snapshot);
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}

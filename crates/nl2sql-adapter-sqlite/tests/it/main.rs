//! The SQLite adapter against the manufacturing fixture (a real SQLite file): the SPI's
//! conformance suite, the sandbox with the guard bypassed, limits, timeouts and bad URLs.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};

use nl2sql_adapter::conformance::{self, Fixture};
use nl2sql_adapter::{
    AdapterRequest, DatasourceAdapter, Limits, RequestLimits, ResultErrorCode, TruncatedReason,
};
use nl2sql_adapter_sqlite::SqliteAdapter;

/// `sql` exactly as written, with no guard in front: these tests prove what the engine's
/// own sandbox, limits and timeouts do.
fn raw(sql: &str) -> nl2sql_validate::GuardedSql {
    nl2sql_validate::GuardedSql::unguarded_for_sandbox_tests(nl2sql_state::Dialect::Sqlite, sql)
}

mod differential;
mod write;

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fixtures/manufacturing.db")
}

/// A private copy of the fixture, so that a sandbox failure could never damage the
/// repository's file.
fn copy_fixture(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nl2sql-sqlite-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("manufacturing.db");
    std::fs::copy(fixture_path(), &path).unwrap();
    path
}

/// A new database file built by `sql` in a private directory (removed by the caller).
fn database_of(name: &str, sql: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nl2sql-sqlite-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&path);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
    (dir, path)
}

fn adapter(path: &Path) -> SqliteAdapter {
    SqliteAdapter::open("manufacturing", path, Limits::default()).unwrap()
}

const SLOW_SQL: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c";

fn sandbox_statements(dir: &Path) -> Vec<String> {
    let attached = dir.join("attached.db");
    let vacuumed = dir.join("vacuumed.db");
    vec![
        "INSERT INTO products (id, sku, name, category) VALUES (99, 'X', 'x', 'x')".to_owned(),
        "UPDATE products SET name = 'changed'".to_owned(),
        "DELETE FROM products".to_owned(),
        "CREATE TABLE evil (x INTEGER)".to_owned(),
        "DROP TABLE products".to_owned(),
        "CREATE TEMP TABLE t AS SELECT * FROM products".to_owned(),
        format!("ATTACH DATABASE '{}' AS other", attached.display()),
        "SELECT load_extension('/tmp/evil.so')".to_owned(),
        "PRAGMA writable_schema = 1".to_owned(),
        "PRAGMA journal_mode = DELETE".to_owned(),
        "PRAGMA query_only = 0".to_owned(),
        format!("VACUUM INTO '{}'", vacuumed.display()),
        "BEGIN IMMEDIATE".to_owned(),
        "SELECT writefile('/tmp/nl2sql-evil', 'x')".to_owned(),
        "SELECT readfile('/etc/passwd')".to_owned(),
    ]
}

fn fixture(dir: &Path) -> Fixture {
    Fixture {
        schema: "main".to_owned(),
        slow_sql: SLOW_SQL.to_owned(),
        timeout_ms: 200,
        sandbox_statements: sandbox_statements(dir),
    }
}

#[tokio::test]
async fn conformance_suite() {
    let path = copy_fixture("conformance");
    let a = adapter(&path);
    let fx = fixture(path.parent().unwrap());
    conformance::run_all(&a, &fx).await.unwrap();
}

/// The contract's fingerprint follows the structure (a new table, a new column) and
/// ignores the rows; the cheap read never carries statistics.
#[tokio::test]
async fn contract_fingerprint_follows_the_schema_not_the_rows() {
    let path = copy_fixture("contract");
    let a = adapter(&path);
    let before = a.schema_contract().await.unwrap();
    assert_eq!(before, a.schema_snapshot().await.unwrap().contract);
    let fingerprint = before.fingerprint();

    // The adapter is read-only: change the copy through a writable connection of its own.
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer
        .execute_batch(
            "INSERT INTO products (id, sku, name, category) VALUES (99, 'SKU-CONTRACT-99', 'Probe', 'Test');
             DELETE FROM defects WHERE id = (SELECT min(id) FROM defects);",
        )
        .unwrap();
    let rows_changed = a.schema_contract().await.unwrap();
    assert_eq!(
        rows_changed.fingerprint(),
        fingerprint,
        "rows changed the fingerprint"
    );
    assert_eq!(rows_changed, before);

    writer
        .execute_batch("CREATE TABLE audit_notes (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
        .unwrap();
    let created = a.schema_contract().await.unwrap();
    assert!(created.tables.contains_key("main.audit_notes"));
    assert_ne!(
        created.fingerprint(),
        fingerprint,
        "CREATE TABLE kept the fingerprint"
    );

    writer
        .execute_batch("ALTER TABLE products ADD COLUMN weight_kg REAL")
        .unwrap();
    let altered = a.schema_contract().await.unwrap();
    let cols: Vec<&str> = altered.tables["main.products"]
        .columns
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(cols, ["id", "sku", "name", "category", "weight_kg"]);
    assert_ne!(
        altered.fingerprint(),
        created.fingerprint(),
        "ADD COLUMN kept the fingerprint"
    );
    assert_ne!(altered.fingerprint(), fingerprint);
    // The cheap read and the full snapshot still agree after the changes.
    assert_eq!(altered, a.schema_snapshot().await.unwrap().contract);
}

fn sha256(path: &Path) -> Vec<u8> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(path).unwrap();
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).unwrap();
    nl2sql_state::sha256_hex(&bytes).into_bytes()
}

#[tokio::test]
async fn sandbox_holds_without_the_guard_and_nothing_changes() {
    let path = copy_fixture("sandbox");
    let dir = path.parent().unwrap().to_path_buf();
    let before = sha256(&path);
    let a = adapter(&path);
    for sql in sandbox_statements(&dir) {
        let frame = a.run_sql(&raw(&sql), a.limits()).await;
        assert!(!frame.success, "sandbox let through: {sql}");
        let code = frame.error_code().unwrap();
        assert!(
            matches!(
                code,
                ResultErrorCode::SecurityViolation | ResultErrorCode::ExecutionFailed
            ),
            "{sql}: {code:?}"
        );
        // The driver's text (with file paths) never reaches the safe message.
        let safe = &frame.error.as_ref().unwrap().safe_message;
        assert!(!safe.contains(dir.to_str().unwrap()), "{sql}: {safe}");
    }
    assert!(!dir.join("attached.db").exists(), "ATTACH created a file");
    assert!(
        !dir.join("vacuumed.db").exists(),
        "VACUUM INTO wrote a file"
    );
    assert!(
        !Path::new("/tmp/nl2sql-evil").exists(),
        "writefile wrote a file"
    );
    // Writes are refused by the authorizer itself: a security violation, not a mere error.
    let frame = a.run_sql(&raw("DELETE FROM products"), a.limits()).await;
    assert_eq!(frame.error_code(), Some(ResultErrorCode::SecurityViolation));
    drop(a);
    assert_eq!(sha256(&path), before, "the database file changed");
}

#[tokio::test]
async fn reads_still_work_after_refusals_and_values_match_the_file() {
    let path = copy_fixture("values");
    let a = adapter(&path);
    let _ = a.run_sql(&raw("PRAGMA query_only = 0"), a.limits()).await;
    let frame = a
        .execute(AdapterRequest::sql(
            "SELECT p.sku, count(*) AS runs FROM production_runs r JOIN products p ON p.id = r.product_id GROUP BY p.sku ORDER BY p.sku",
        ))
        .await;
    assert!(frame.success, "{:?}", frame.error);
    // The same query through plain rusqlite gives the same rows.
    let conn =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare("SELECT p.sku, count(*) FROM production_runs r JOIN products p ON p.id = r.product_id GROUP BY p.sku ORDER BY p.sku")
        .unwrap();
    let want: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let batch = &frame.batches[0];
    let skus = batch
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .unwrap();
    let runs = batch
        .column(1)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .unwrap();
    let got: Vec<(String, i64)> = (0..batch.num_rows())
        .map(|i| (skus.value(i).to_owned(), runs.value(i)))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

#[tokio::test]
async fn snapshot_matches_the_file() {
    let path = copy_fixture("snapshot");
    let a = adapter(&path);
    let snap = a.schema_snapshot().await.unwrap();
    let conn =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap();
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let keys: Vec<String> = snap.contract.tables.keys().cloned().collect();
    assert_eq!(
        keys,
        tables
            .iter()
            .map(|t| format!("main.{t}"))
            .collect::<Vec<_>>()
    );
    let meta = snap.metadata.as_ref().unwrap();
    for t in &tables {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            meta.tables[&format!("main.{t}")].row_count,
            Some(n as u64),
            "{t}"
        );
        let fks: i64 = conn
            .query_row(
                "SELECT count(DISTINCT id) FROM pragma_foreign_key_list(?1)",
                [t],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            snap.contract.tables[&format!("main.{t}")]
                .foreign_keys
                .iter()
                .filter(|k| !k.inferred)
                .count() as i64,
            fks,
            "{t}"
        );
    }
    let machines = &meta.tables["main.machines"];
    let status = machines
        .columns
        .values()
        .filter_map(|c| c.statistics.as_ref())
        .count();
    assert_eq!(
        status,
        machines.columns.len(),
        "every column has statistics"
    );
}

/// A database that declares no foreign keys (many do) still has the joins its names
/// spell: the snapshot carries them, marked as inferred, and the declared ones as they are.
#[tokio::test]
async fn undeclared_keys_the_names_spell_are_in_the_snapshot() {
    let (dir, path) = database_of(
        "bank",
        "CREATE TABLE Customers (customer_id INTEGER PRIMARY KEY, name TEXT);
         CREATE TABLE Accounts (account_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL,
                                account_name TEXT);
         CREATE TABLE Cards (card_id INTEGER PRIMARY KEY,
                             customer_id INTEGER REFERENCES Customers(customer_id));",
    );
    let a = SqliteAdapter::open("bank", &path, Limits::default()).unwrap();
    let contract = a.schema_contract().await.unwrap();
    let accounts = &contract.tables["main.Accounts"].foreign_keys;
    assert_eq!(accounts.len(), 1, "{accounts:?}");
    assert!(accounts[0].inferred);
    assert_eq!(accounts[0].constrained_columns, vec!["customer_id"]);
    assert_eq!(accounts[0].referred_table.table_name, "Customers");
    assert_eq!(accounts[0].referred_columns, vec!["customer_id"]);
    let cards = &contract.tables["main.Cards"].foreign_keys;
    assert_eq!(cards.len(), 1, "the declared key only: {cards:?}");
    assert!(!cards[0].inferred);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A text column with few values has them all listed (most frequent first), the first
/// five sampled; one with more than 200 values, or numbers, has none listed.
#[tokio::test]
async fn few_values_of_a_text_column_are_all_listed() {
    let (dir, path) = database_of(
        "campus",
        "CREATE TABLE Student (id INTEGER PRIMARY KEY, city_code TEXT, code TEXT, age INTEGER);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
         INSERT INTO Student (city_code, code, age)
         SELECT CASE WHEN i <= 100 THEN 'BAL' WHEN i <= 150 THEN 'HKG' ELSE
                  'C' || (i % 7) END, 'K' || i, i FROM n;",
    );
    let a = SqliteAdapter::open("campus", &path, Limits::default()).unwrap();
    let snap = a.schema_snapshot().await.unwrap();
    let columns = &snap.metadata.as_ref().unwrap().tables["main.Student"].columns;
    let stats = |c: &str| columns[c].statistics.clone().unwrap();
    let city = stats("city_code");
    assert_eq!(city.distinct_count, 9);
    let listed: Vec<&str> = city.values.iter().filter_map(|v| v.as_str()).collect();
    assert_eq!(listed.len(), 9, "{listed:?}");
    assert_eq!(listed[..2], ["BAL", "HKG"], "most frequent first");
    assert_eq!(
        city.sample_values,
        city.values[..5],
        "the first five sampled"
    );
    // 300 distinct codes: neither listed nor sampled; numbers are not listed.
    assert_eq!(stats("code").distinct_count, 300);
    assert!(stats("code").values.is_empty() && stats("code").sample_values.is_empty());
    assert!(stats("age").values.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn limits_truncate_and_say_why() {
    let a = adapter(&fixture_path());
    let req = AdapterRequest::sql("SELECT * FROM production_runs").with_limits(RequestLimits {
        row_limit: Some(2),
        ..RequestLimits::default()
    });
    let frame = a.execute(req).await;
    assert_eq!(frame.row_count, 2);
    assert_eq!(
        frame.execution_stats.truncated_reason,
        Some(TruncatedReason::RowLimit)
    );
    // A configured limit narrower than the request wins.
    let small = SqliteAdapter::open(
        "m",
        &fixture_path(),
        Limits {
            row_limit: 1,
            ..Limits::default()
        },
    )
    .unwrap();
    let frame = small
        .execute(
            AdapterRequest::sql("SELECT id FROM products").with_limits(RequestLimits {
                row_limit: Some(5),
                ..RequestLimits::default()
            }),
        )
        .await;
    assert_eq!((frame.row_count, frame.truncated), (1, true));
}

#[tokio::test]
async fn timeout_is_fast_and_the_adapter_recovers() {
    let a = adapter(&fixture_path());
    let started = std::time::Instant::now();
    let frame = a
        .run_sql(
            &raw(SLOW_SQL),
            Limits {
                statement_timeout_ms: 150,
                ..a.limits()
            },
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(frame.error_code(), Some(ResultErrorCode::ExecutionTimeout));
    assert!(frame.error.as_ref().unwrap().retryable);
    assert!(elapsed.as_secs() < 5, "took {elapsed:?}");
    let ok = a
        .execute(AdapterRequest::sql("SELECT count(*) FROM machines"))
        .await;
    assert!(ok.success, "{:?}", ok.error);
}

/// GAP-11: dropping a call's future (a cancelled run aborts its scan) interrupts the
/// statement. One blocking thread only: the next query can run only once the dropped
/// one stopped, and the dropped one would run for minutes under its 10-minute timeout.
#[test]
fn a_dropped_statement_is_interrupted() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let path = copy_fixture("dropped");
    let a = adapter(&path);
    let patient = Limits {
        statement_timeout_ms: 600_000,
        ..a.limits()
    };
    let (dropped, next) = rt.block_on(async {
        let dropped = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            a.run_sql(&raw(SLOW_SQL), patient),
        )
        .await;
        let next = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            a.run_sql(&raw("SELECT count(*) AS n FROM machines"), a.limits()),
        )
        .await;
        (dropped, next)
    });
    // Never wait for a statement that was not interrupted: the test fails instead of hanging.
    rt.shutdown_background();
    assert!(
        dropped.is_err(),
        "the slow statement finished within 200 ms"
    );
    let next = next.expect("the dropped statement was interrupted, freeing the blocking thread");
    assert!(next.success, "{:?}", next.error);
    assert_eq!(next.row_count, 1);
    let n = next.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .unwrap()
        .value(0);
    assert!(n > 0, "machines has rows");
}

#[tokio::test]
async fn bad_urls_and_missing_files_are_clear_errors() {
    let cases = [
        ("postgres://x/y", "malformed SQLite URL"),
        ("sqlite://", "no file path"),
        ("sqlite:///tmp/x.db?mode=rwc", "query strings"),
        ("sqlite://:memory:", "in-memory"),
        ("sqlite:///definitely/not/here.db", "does not exist"),
    ];
    for (url, want) in cases {
        let err = SqliteAdapter::from_url("x", url, Limits::default()).unwrap_err();
        assert_eq!(err.error_code, ResultErrorCode::ServiceUnavailable, "{url}");
        assert!(
            err.safe_message.contains(want),
            "{url}: {}",
            err.safe_message
        );
        assert!(
            !err.safe_message.contains("/definitely"),
            "{url}: path leaked"
        );
    }
    assert!(!Path::new("/definitely/not/here.db").exists());
    // A file that is not a database.
    let dir = std::env::temp_dir().join(format!("nl2sql-sqlite-{}-notdb", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("notes.db");
    std::fs::write(
        &path,
        "this is not a database, it is a text file of some length",
    )
    .unwrap();
    let err = SqliteAdapter::open("x", &path, Limits::default()).unwrap_err();
    assert_eq!(err.error_code, ResultErrorCode::ServiceUnavailable);
    // Relative URLs resolve against the current directory.
    let rel = format!(
        "sqlite://{}",
        pathdiff(&fixture_path(), &std::env::current_dir().unwrap())
    );
    SqliteAdapter::from_url("m", &rel, Limits::default()).unwrap();
}

/// `path` relative to `base` (both absolute), with `..` steps.
fn pathdiff(path: &Path, base: &Path) -> String {
    let path = path.canonicalize().unwrap();
    let base = base.canonicalize().unwrap();
    let p: Vec<_> = path.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = vec!["..".to_owned(); b.len() - common];
    out.extend(
        p[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    out.join("/")
}

#[tokio::test]
async fn dry_run_and_explain_do_not_execute() {
    let a = adapter(&fixture_path());
    let dry = a
        .dry_run(&raw("SELECT name FROM machines WHERE factory_id = 1"))
        .await;
    assert!(dry.is_valid);
    let plan = a
        .explain(&raw("SELECT name FROM machines WHERE id = 1"))
        .await
        .unwrap();
    assert!(plan.plan_text.contains("machines"), "{}", plan.plan_text);
    // A write is refused by the dry run as well.
    let dry = a.dry_run(&raw("DELETE FROM machines")).await;
    assert!(!dry.is_valid);
    assert_eq!(
        dry.error.unwrap().error_code,
        ResultErrorCode::SecurityViolation
    );
}

/// `manufacturing.json` (the fixture the other engines load) is the `.db` row for row.
#[test]
fn the_portable_fixture_matches_the_sqlite_file() {
    let conn = rusqlite::Connection::open_with_flags(
        fixture_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let tables = nl2sql_adapter::fixture::tables();
    assert_eq!(tables.len(), conformance::FIXTURE_TABLES.len());
    for t in &tables {
        let cols: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("\"{}\"", c.name))
            .collect();
        let sql = format!("SELECT {} FROM \"{}\" ORDER BY 1", cols.join(", "), t.name);
        let mut stmt = conn.prepare(&sql).unwrap();
        let rows: Vec<Vec<serde_json::Value>> = stmt
            .query_map([], |r| {
                Ok((0..cols.len())
                    .map(|i| match r.get_ref(i).unwrap() {
                        rusqlite::types::ValueRef::Null => serde_json::Value::Null,
                        rusqlite::types::ValueRef::Integer(v) => serde_json::json!(v),
                        rusqlite::types::ValueRef::Real(v) => serde_json::json!(v),
                        rusqlite::types::ValueRef::Text(v) => {
                            serde_json::json!(String::from_utf8_lossy(v))
                        }
                        rusqlite::types::ValueRef::Blob(_) => panic!("blob in fixture"),
                    })
                    .collect())
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(rows, t.rows, "table {}", t.name);
    }
}

//! The guard and SQLite read the same statement: for every Spider dev gold query (1,034
//! real queries over 20 schemas), the tables and columns the guard resolved contain every
//! table and column SQLite's own authorizer reports reading while it prepares the
//! statement the guard rendered. A read the guard did not see would be a parser
//! differential: a statement approved for one reading and run with another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use nl2sql_adapter::DatasourceAdapter;
use nl2sql_adapter::differential::{self, Reads, guard_reads, unseen};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_state::Dialect;
use nl2sql_validate::{GuardContext, SqlGuard};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

fn spider_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/spider")
}

/// `(db_id, sql)` of every gold query, in file order.
fn gold() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(spider_dir().join("dev_gold.sql")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (sql, db) = l.rsplit_once('\t').unwrap();
            (db.trim().to_owned(), sql.trim().to_owned())
        })
        .collect()
}

/// An empty database with the schema of `db_id` (preparing needs no rows).
fn database(dir: &Path, db_id: &str) -> PathBuf {
    let ddl =
        std::fs::read_to_string(spider_dir().join("schemas").join(format!("{db_id}.sql"))).unwrap();
    let path = dir.join(format!("{db_id}.sqlite"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&ddl).unwrap();
    path
}

/// What SQLite's authorizer reports reading while it prepares `sql`.
fn engine_reads(path: &Path, sql: &str) -> Result<Reads, String> {
    let mut conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    // As the adapter opens it: a double-quoted name is never a string.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DQS_DML, false)
        .unwrap();
    let seen: Arc<Mutex<Reads>> = Arc::default();
    let sink = Arc::clone(&seen);
    conn.authorizer(Some(move |ctx: AuthContext<'_>| {
        if let AuthAction::Read {
            table_name,
            column_name,
        } = ctx.action
            && !table_name.starts_with("sqlite_")
        {
            let mut seen = sink.lock().unwrap();
            let columns = seen.entry(table_name.to_lowercase()).or_default();
            if !column_name.is_empty() {
                columns.insert(column_name.to_lowercase());
            }
        }
        Authorization::Allow
    }))
    .unwrap();
    conn.prepare(sql).map_err(|e| e.to_string())?;
    drop(conn);
    let reads = seen.lock().unwrap().clone();
    Ok(reads)
}

#[tokio::test]
async fn guard_reads_contain_what_sqlite_reads_for_every_spider_gold_query() {
    let dir = std::env::temp_dir().join(format!("nl2sql-sqlite-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let queries = gold();
    assert_eq!(queries.len(), 1034);
    let mut guards: BTreeMap<String, (PathBuf, SqlGuard)> = BTreeMap::new();
    let mut differences = Vec::new();
    let mut compared = 0;
    let mut equal_tables = 0;
    for (db_id, sql) in &queries {
        if !guards.contains_key(db_id) {
            let path = database(&dir, db_id);
            let adapter =
                SqliteAdapter::open(db_id, &path, nl2sql_adapter::Limits::default()).unwrap();
            let contract = adapter.schema_contract().await.unwrap();
            let guard = SqlGuard::new(GuardContext::new(db_id, Dialect::Sqlite, &contract));
            guards.insert(db_id.clone(), (path, guard));
        }
        let (path, guard) = &guards[db_id];
        let report = guard.check(sql);
        let guarded = report.guarded.clone().unwrap_or_else(|| {
            panic!(
                "the guard refused a gold query: {sql}\n{}",
                report.to_text()
            )
        });
        let engine = engine_reads(path, guarded.as_str())
            .unwrap_or_else(|e| panic!("SQLite refused the rendering of {sql}: {e}\n{guarded}"));
        let guard = guard_reads(&report);
        let missing = unseen(&engine, &guard);
        if !missing.is_empty() {
            differences.push(format!("{db_id}: {sql}\n  SQLite also reads: {missing:?}"));
        }
        if engine.keys().eq(guard.keys()) {
            equal_tables += 1;
        }
        compared += 1;
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(compared, 1034);
    assert!(
        differences.is_empty(),
        "{} of {compared} statements read more than the guard resolved:\n{}",
        differences.len(),
        differences.join("\n")
    );
    // The other direction is no security matter (SQLite may skip a table it need not
    // read), but the two readings should agree on the tables almost always.
    assert!(
        equal_tables >= 1000,
        "tables agree on {equal_tables} of {compared}"
    );
}

#[tokio::test]
async fn guard_reads_contain_what_sqlite_reads_for_the_differential_corpus() {
    let path = crate::copy_fixture("differential");
    let adapter = crate::adapter(&path);
    let contract = adapter.schema_contract().await.unwrap();
    let guard = SqlGuard::new(GuardContext::new(
        "manufacturing",
        Dialect::Sqlite,
        &contract,
    ));
    let mut differences = Vec::new();
    let corpus = differential::corpus();
    for sql in &corpus {
        let report = guard.check(sql);
        let guarded = report
            .guarded
            .clone()
            .unwrap_or_else(|| panic!("the guard refused {sql}\n{}", report.to_text()));
        let engine = engine_reads(&path, guarded.as_str()).unwrap();
        let missing = unseen(&engine, &guard_reads(&report));
        if !missing.is_empty() {
            differences.push(format!("{sql}\n  SQLite also reads: {missing:?}"));
        }
    }
    assert!(corpus.len() > 200);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[tokio::test]
async fn a_double_quoted_name_is_never_read_as_a_string() {
    // SQLite's default would read "no_such_column" as the string 'no_such_column'; the
    // guard reads a name. Pinned off, the engine refuses it as the guard would.
    let path = crate::copy_fixture("dqs");
    let a = crate::adapter(&path);
    let frame = a
        .run_sql(
            &crate::raw(r#"SELECT "no_such_column" FROM products"#),
            a.limits(),
        )
        .await;
    assert!(!frame.success, "read as a string");
    let message = frame.error.unwrap().safe_message;
    assert!(message.contains("no such column"), "{message}");
}

#[tokio::test]
async fn a_gigabyte_value_fails_at_the_length_limit_without_the_guard() {
    let path = crate::copy_fixture("bomb");
    let a = crate::adapter(&path);
    for sql in [
        "SELECT zeroblob(1000000000) AS b",
        "SELECT printf('%.*c', 1000000000, 'x') AS s",
        "SELECT replace(replace(replace(hex(zeroblob(10000000)), '0', '0000'), '0', '0000'), '0', '0000') AS s",
    ] {
        let outcome =
            nl2sql_adapter::conformance::value_bomb_is_bounded(&a, sql, 512 * 1024 * 1024)
                .await
                .unwrap();
        assert!(outcome.contains("too big"), "{sql}: {outcome}");
    }
}

//! Read throughput of each adapter: one `run_sql` reading a table of 1,000,000 rows
//! (`id` integer, `name` text of 10–14 bytes, `value` double) into Arrow, through the
//! sandbox (read-only transaction or connection, limits checked per row or batch).
//!
//! SQLite and DuckDB read files made in a temporary directory; PostgreSQL and MySQL read a
//! table `nl2sql_bench.t` created on first use on the servers of
//! `NL2SQL_TEST_POSTGRES_URL` / `NL2SQL_TEST_MYSQL_URL` (defaults: the local servers).
//! A server that does not answer is skipped with a message.
//!
//! Run with `cargo xtask bench adapter/` (release build: the first one compiles DuckDB
//! with optimisations, about 30 minutes on 2 cores).

use std::path::PathBuf;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use mysql_async::prelude::Queryable as _;
use nl2sql_adapter::{DatasourceAdapter, Limits};

const ROWS: u64 = 1_000_000;
const SELECT: &str = "SELECT id, name, value FROM t";

fn limits() -> Limits {
    Limits {
        row_limit: ROWS,
        statement_timeout_ms: 600_000,
        max_bytes: u64::MAX,
    }
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nl2sql-bench-adapters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

fn sqlite_file(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("bench.db");
    let _ = std::fs::remove_file(&path);
    let conn = rusqlite::Connection::open(&path).expect("create SQLite file");
    conn.execute_batch(&format!(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, value REAL NOT NULL);
         WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < {ROWS})
         INSERT INTO t SELECT i, 'name-' || i, i * 0.5 FROM g;"
    ))
    .expect("fill SQLite file");
    path
}

#[cfg(feature = "duckdb")]
fn duckdb_file(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("bench.duckdb");
    let _ = std::fs::remove_file(&path);
    let conn = duckdb::Connection::open(&path).expect("create DuckDB file");
    conn.execute_batch(&format!(
        "CREATE TABLE t AS SELECT range + 1 AS id, 'name-' || (range + 1) AS name, \
         (range + 1) * 0.5 AS value FROM range({ROWS})"
    ))
    .expect("fill DuckDB file");
    path
}

async fn postgres() -> Option<Box<dyn DatasourceAdapter>> {
    let url = std::env::var("NL2SQL_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let config: tokio_postgres::Config = url.parse().ok()?;
    let Ok((client, conn)) = config.connect(tokio_postgres::NoTls).await else {
        eprintln!("adapter/postgres skipped: no server at {url}");
        return None;
    };
    tokio::spawn(conn);
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'nl2sql_bench' AND tablename = 't'",
            &[],
        )
        .await
        .ok()?
        .get(0);
    if n == 0 {
        client
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS nl2sql_bench;
                 CREATE TABLE nl2sql_bench.t AS SELECT g AS id, 'name-' || g AS name,
                     g * 0.5::float8 AS value FROM generate_series(1, {ROWS}) AS g;"
            ))
            .await
            .ok()?;
    }
    let url = format!("{url}?options=-c%20search_path%3Dnl2sql_bench");
    let adapter = nl2sql_adapter_postgres::PostgresAdapter::from_url("pg", &url, limits())
        .await
        .ok()?;
    Some(Box::new(adapter))
}

async fn mysql() -> Option<Box<dyn DatasourceAdapter>> {
    let url = std::env::var("NL2SQL_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned());
    let opts = mysql_async::Opts::from_url(&url).ok()?;
    let Ok(mut conn) = mysql_async::Conn::new(opts.clone()).await else {
        eprintln!("adapter/mysql skipped: no server at {url}");
        return None;
    };
    let n: Option<i64> = conn
        .query_first(
            "SELECT count(*) FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'nl2sql_bench' AND TABLE_NAME = 't'",
        )
        .await
        .ok()?;
    if n == Some(0) {
        conn.query_drop(
            "CREATE DATABASE IF NOT EXISTS nl2sql_bench;
             CREATE TABLE nl2sql_bench.t (id BIGINT PRIMARY KEY, name VARCHAR(32) NOT NULL,
                 value DOUBLE NOT NULL);
             INSERT INTO nl2sql_bench.t
             SELECT n + 1, CONCAT('name-', n + 1), (n + 1) * 0.5 FROM (
               SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 100000 * g.d AS n
               FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                     UNION ALL SELECT 8 UNION ALL SELECT 9) a,
                    (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                     UNION ALL SELECT 8 UNION ALL SELECT 9) b,
                    (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                     UNION ALL SELECT 8 UNION ALL SELECT 9) c,
                    (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                     UNION ALL SELECT 8 UNION ALL SELECT 9) e,
                    (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                     UNION ALL SELECT 8 UNION ALL SELECT 9) f,
                    (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                     UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
                     UNION ALL SELECT 8 UNION ALL SELECT 9) g) AS digits",
        )
        .await
        .ok()?;
    }
    let url = format!(
        "mysql://{}@{}:{}/nl2sql_bench",
        opts.user().unwrap_or("root"),
        opts.ip_or_hostname(),
        opts.tcp_port()
    );
    let adapter = nl2sql_adapter_mysql::MySqlAdapter::from_url("my", &url, limits())
        .await
        .ok()?;
    Some(Box::new(adapter))
}

fn adapters(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let dir = scratch_dir();
    let mut targets: Vec<(&str, Box<dyn DatasourceAdapter>)> = vec![(
        "sqlite",
        Box::new(
            nl2sql_adapter_sqlite::SqliteAdapter::open("sq", &sqlite_file(&dir), limits())
                .expect("open SQLite"),
        ),
    )];
    #[cfg(feature = "duckdb")]
    targets.push((
        "duckdb",
        Box::new(
            nl2sql_adapter_duckdb::DuckDbAdapter::open("dk", &duckdb_file(&dir), limits())
                .expect("open DuckDB"),
        ),
    ));
    if let Some(a) = rt.block_on(postgres()) {
        targets.push(("postgres", a));
    }
    if let Some(a) = rt.block_on(mysql()) {
        targets.push(("mysql", a));
    }

    let mut group = c.benchmark_group("adapter");
    group.throughput(Throughput::Elements(ROWS));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for (name, adapter) in &targets {
        // Check the result before timing: the bench must read every row.
        let select = nl2sql_adapter::shape_check(adapter.id(), adapter.dialect(), SELECT)
            .expect("the guard accepts the benchmark query");
        let frame = rt.block_on(adapter.run_sql(&select, limits()));
        assert!(frame.success, "{name}: {:?}", frame.error);
        assert_eq!(frame.row_count, ROWS, "{name}");
        assert!(!frame.truncated, "{name}");
        group.bench_function(format!("read_1m_rows/{name}"), |b| {
            b.iter(|| {
                let frame = rt.block_on(adapter.run_sql(&select, limits()));
                assert_eq!(frame.row_count, ROWS);
                frame
            });
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    adapters(&mut criterion);
    criterion.final_summary();
}

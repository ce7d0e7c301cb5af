//! The MySQL/MariaDB adapter against a real server (`NL2SQL_TEST_MYSQL_URL`, default
//! `mysql://root@127.0.0.1:3306/test`): the SPI's conformance suite as a SELECT-only
//! account, the sandbox with the guard bypassed (also as root, where DDL would commit
//! implicitly inside a read-only transaction), session state, types, and dead servers,
//! bad credentials and bad URLs.
//!
//! The fixture is loaded once into database `nl2sql_fixture` (under `GET_LOCK`, and only
//! when its content hash changed), so test processes can run in parallel. Without a
//! server the tests are skipped, except under `CI`, where they fail.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::time::Duration;

use arrow::array::{Array, Float64Array, Int64Array, StringArray, TimestampMicrosecondArray};
use mysql_async::prelude::Queryable as _;
use nl2sql_adapter::conformance::{self, Fixture};
use nl2sql_adapter::{AdapterRequest, DatasourceAdapter, Limits, ResultErrorCode};
use nl2sql_adapter_mysql::MySqlAdapter;
use nl2sql_state::Dialect;

/// `sql` exactly as written, with no guard in front: these tests prove what the engine's
/// own sandbox, limits and timeouts do.
fn raw(sql: &str) -> nl2sql_validate::GuardedSql {
    nl2sql_validate::GuardedSql::unguarded_for_sandbox_tests(Dialect::MySql, sql)
}

mod differential;

const DB: &str = "nl2sql_fixture";
const READER: &str = "nl2sql_reader";

fn base_url() -> String {
    std::env::var("NL2SQL_TEST_MYSQL_URL")
        .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/test".to_owned())
}

struct Server {
    host: String,
    port: u16,
    admin: String,
}

impl Server {
    fn url(&self, user: &str) -> String {
        format!("mysql://{user}@{}:{}/{DB}", self.host, self.port)
    }
}

/// Connects as the configured user, loads the fixture if needed and creates the reader
/// account. `None` (test skipped) when no server answers and `CI` is unset.
async fn server() -> Option<Server> {
    let url = base_url();
    let opts = mysql_async::Opts::from_url(&url).unwrap();
    let server = Server {
        host: opts.ip_or_hostname().to_owned(),
        port: opts.tcp_port(),
        admin: opts.user().unwrap_or("root").to_owned(),
    };
    let mut conn = match mysql_async::Conn::new(opts).await {
        Ok(c) => c,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "MySQL at {url} is needed under CI: {e}"
            );
            eprintln!("skipped: no MySQL at {url}: {e}");
            return None;
        }
    };
    load_fixture(&mut conn).await;
    Some(server)
}

async fn load_fixture(conn: &mut mysql_async::Conn) {
    let mut statements = vec![
        format!("CREATE DATABASE IF NOT EXISTS {DB}"),
        format!("USE {DB}"),
    ];
    statements.extend(nl2sql_adapter::fixture::load_statements(
        Dialect::MySql,
        None,
    ));
    let hash = nl2sql_state::sha256_hex(statements.join(";\n").as_bytes());
    let _: Option<i64> = conn
        .query_first("SELECT GET_LOCK('nl2sql_fixture', 60)")
        .await
        .unwrap();
    conn.query_drop(
        "CREATE DATABASE IF NOT EXISTS nl2sql_test_meta; \
         CREATE TABLE IF NOT EXISTS nl2sql_test_meta.fixture (hash VARCHAR(64) NOT NULL)",
    )
    .await
    .unwrap();
    let current: Option<String> = conn
        .query_first("SELECT hash FROM nl2sql_test_meta.fixture")
        .await
        .unwrap();
    if current.as_deref() != Some(hash.as_str()) {
        conn.query_drop("SET FOREIGN_KEY_CHECKS = 0").await.unwrap();
        for s in &statements {
            conn.query_drop(s).await.unwrap();
        }
        conn.query_drop("SET FOREIGN_KEY_CHECKS = 1").await.unwrap();
        for host in ["%", "localhost", "127.0.0.1"] {
            conn.query_drop(format!(
                "CREATE USER IF NOT EXISTS '{READER}'@'{host}'; \
                 GRANT SELECT ON {DB}.* TO '{READER}'@'{host}'"
            ))
            .await
            .unwrap();
        }
        conn.query_drop(format!(
            "DELETE FROM nl2sql_test_meta.fixture; \
             INSERT INTO nl2sql_test_meta.fixture VALUES ('{hash}')"
        ))
        .await
        .unwrap();
    }
    let _: Option<i64> = conn
        .query_first("SELECT RELEASE_LOCK('nl2sql_fixture')")
        .await
        .unwrap();
}

async fn reader(server: &Server) -> MySqlAdapter {
    MySqlAdapter::from_url("my", &server.url(READER), Limits::default())
        .await
        .unwrap()
}

fn sandbox_statements() -> Vec<String> {
    [
        "INSERT INTO products (id, sku, name, category) VALUES (99, 'X', 'x', 'x')",
        "UPDATE products SET name = 'changed'",
        "DELETE FROM products",
        "TRUNCATE TABLE products",
        "CREATE TABLE evil (x int)",
        "CREATE TEMPORARY TABLE t AS SELECT * FROM products",
        "DROP TABLE products",
        "ALTER TABLE products ADD COLUMN evil INT",
        "SET GLOBAL max_connections = 1",
        "SET SESSION sql_select_limit = DEFAULT",
        "COMMIT",
        "DO SLEEP(0)",
        "SELECT * FROM products INTO OUTFILE '/tmp/nl2sql-my-outfile'",
        "LOAD DATA INFILE '/etc/passwd' INTO TABLE products",
        "CREATE USER evil",
        "GRANT ALL ON *.* TO 'nl2sql_reader'@'%'",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

fn fixture() -> Fixture {
    Fixture {
        schema: DB.to_owned(),
        slow_sql: "SELECT SLEEP(10) AS slept".to_owned(),
        timeout_ms: 300,
        sandbox_statements: sandbox_statements(),
    }
}

#[tokio::test]
async fn conformance_suite_as_a_select_only_account() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let fx = fixture();
    conformance::run_all(&a, &fx).await.unwrap();
    assert_eq!(a.details()["privileged"], false);
    // Without the FILE privilege the server reads no file.
    let f = a
        .run_sql(&raw("SELECT LOAD_FILE('/etc/passwd') AS f"), a.limits())
        .await;
    assert!(f.success, "{:?}", f.error);
    assert!(f.batches[0].column(0).is_null(0), "LOAD_FILE read a file");
}

#[tokio::test]
async fn root_still_cannot_change_data_or_schema() {
    let Some(server) = server().await else { return };
    let a = MySqlAdapter::from_url("my", &server.url(&server.admin), Limits::default())
        .await
        .unwrap();
    assert_eq!(a.details()["privileged"], true);
    let _ = std::fs::remove_file("/tmp/nl2sql-my-outfile");
    for sql in sandbox_statements() {
        let frame = a.run_sql(&raw(&sql), a.limits()).await;
        assert!(!frame.success, "let through as root: {sql}");
    }
    // DDL would commit implicitly inside the read-only transaction: it must never run.
    let frame = a
        .run_sql(&raw("CREATE TABLE evil (x int)"), a.limits())
        .await;
    assert_eq!(frame.error_code(), Some(ResultErrorCode::SecurityViolation));
    let frame = a
        .run_sql(&raw("SELECT count(*) FROM evil"), a.limits())
        .await;
    assert!(!frame.success, "table evil exists");
    let frame = a.run_sql(&raw("DELETE FROM products"), a.limits()).await;
    assert_eq!(frame.error_code(), Some(ResultErrorCode::SecurityViolation));
    assert!(!std::path::Path::new("/tmp/nl2sql-my-outfile").exists());
    let frame = a
        .run_sql(&raw("SELECT count(*) AS n FROM products"), a.limits())
        .await;
    let n = frame.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0);
    assert_eq!(n, 8);
}

fn first_int(frame: &nl2sql_adapter::ResultFrame) -> i64 {
    assert!(frame.success, "{:?}", frame.error);
    frame.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0)
}

#[tokio::test]
async fn no_session_state_outlives_a_statement() {
    let Some(server) = server().await else { return };
    // One connection, so every statement reuses the same session.
    let url = format!("{}?pool_min=0&pool_max=1", server.url(READER));
    let a = MySqlAdapter::from_url("my", &url, Limits::default())
        .await
        .unwrap();
    // A user variable and a named lock set by one statement are gone in the next.
    let f = a
        .run_sql(
            &raw("SELECT @nl2sql_x := 41 AS x, GET_LOCK('nl2sql_state_test', 0) AS l"),
            a.limits(),
        )
        .await;
    assert!(f.success, "{:?}", f.error);
    let f = a
        .run_sql(&raw("SELECT @nl2sql_x IS NULL AS unset"), a.limits())
        .await;
    assert_eq!(first_int(&f), 1, "user variable survived");
    let f = a
        .run_sql(
            &raw("SELECT IS_FREE_LOCK('nl2sql_state_test') AS free"),
            a.limits(),
        )
        .await;
    assert_eq!(first_int(&f), 1, "named lock survived");
}

#[tokio::test]
async fn engine_types_become_arrow_types() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let f = a
        .execute(AdapterRequest::sql(
            "SELECT CAST(12.5 AS DECIMAL(10,2)) AS n, updated_at, warehouse, \
             CAST('06:30:00' AS TIME) AS t FROM inventory WHERE id = 1",
        ))
        .await;
    assert!(f.success, "{:?}", f.error);
    let b = &f.batches[0];
    let n = b.column(0).as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(n.value(0), 12.5);
    let ts = b
        .column(1)
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    assert_eq!(ts.value(0), 1_712_736_000_000_000);
    let text = |i: usize| {
        b.column(i)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .value(0)
            .to_owned()
    };
    assert_eq!(text(2), "WH-Ohio");
    assert_eq!(text(3), "06:30:00");
}

#[tokio::test]
async fn a_large_result_stops_at_the_row_limit() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let limits = Limits {
        row_limit: 2_500,
        ..a.limits()
    };
    // 9 * 9 * 9 * 9 * 9 = 59,049 rows
    let f = a
        .run_sql(
            &raw(
                "WITH RECURSIVE d(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM d WHERE x < 9) \
             SELECT a.x FROM d a, d b, d c, d e, d f",
            ),
            limits,
        )
        .await;
    assert!(f.success, "{:?}", f.error);
    assert_eq!(f.row_count, 2_500);
    assert!(f.truncated);
}

#[tokio::test]
async fn dead_servers_and_bad_credentials_fail_fast_with_stable_codes() {
    let Some(server) = server().await else { return };
    let quick = Duration::from_millis(500);
    let cases = [
        ("mysql://root@127.0.0.1:1/test".to_owned(), "cannot connect"),
        (
            "mysql://root@10.255.255.1:3306/test".to_owned(),
            "timed out",
        ),
        (
            format!(
                "mysql://no_such_user_nl2sql@{}:{}/{DB}",
                server.host, server.port
            ),
            "refused the credentials",
        ),
        (
            format!(
                "mysql://{}@{}:{}/no_such_db_nl2sql",
                server.admin, server.host, server.port
            ),
            "database does not exist",
        ),
    ];
    for (url, needle) in cases {
        let out = tokio::time::timeout(
            Duration::from_secs(10),
            MySqlAdapter::from_url_with_connect_timeout("my", &url, Limits::default(), quick),
        )
        .await
        .expect("connecting hung");
        let e = out.unwrap_err();
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable, "{url}");
        assert!(e.safe_message.contains(needle), "{url}: {}", e.safe_message);
        assert!(!e.safe_message.contains("127.0.0.1"), "{}", e.safe_message);
    }
}

/// A connection as the configured (admin) account, which sees every session.
async fn admin_conn() -> mysql_async::Conn {
    mysql_async::Conn::new(mysql_async::Opts::from_url(&base_url()).unwrap())
        .await
        .unwrap()
}

/// The other connections running a statement whose text holds `marker`.
async fn running(admin: &mut mysql_async::Conn, marker: &str) -> Vec<u64> {
    admin
        .exec(
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE INFO LIKE CONCAT('%', ?, '%') AND ID <> CONNECTION_ID() \
               AND COMMAND <> 'Sleep'",
            (marker,),
        )
        .await
        .unwrap()
}

/// Polls [`running`] until some connection runs `marker` (`present`) or none does, for
/// at most 5 s; returns the last answer.
async fn wait_running(admin: &mut mysql_async::Conn, marker: &str, present: bool) -> Vec<u64> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let ids = running(admin, marker).await;
        if ids.is_empty() != present || std::time::Instant::now() > deadline {
            return ids;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The adapter's next connection: its id.
async fn connection_id(a: &MySqlAdapter) -> i64 {
    first_int(
        &a.run_sql(
            &raw("SELECT CAST(CONNECTION_ID() AS SIGNED) AS id"),
            a.limits(),
        )
        .await,
    )
}

/// GAP-11: dropping a call's future (a cancelled run aborts its scan) kills the
/// statement on the server, which would otherwise run until its 30 s timeout.
/// `BENCHMARK` rather than `SLEEP`: the server ends a `SLEEP` by itself within 5 s once
/// the client's socket closes, but computes on for a client that went away.
#[tokio::test]
async fn a_dropped_statement_is_interrupted() {
    let Some(server) = server().await else { return };
    let mut admin = admin_conn().await;
    let a = std::sync::Arc::new(reader(&server).await);
    let marker = format!("nl2sql_dropped_{}", std::process::id());
    let sql = format!("SELECT BENCHMARK(5000000000, MD5('nl2sql')) AS {marker}");
    let slow = std::sync::Arc::clone(&a);
    let task = tokio::spawn(async move { slow.run_sql(&raw(&sql), slow.limits()).await });
    let started = wait_running(&mut admin, &marker, true).await;
    assert_eq!(started.len(), 1, "the statement never ran");
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    let left = wait_running(&mut admin, &marker, false).await;
    assert!(left.is_empty(), "still running on the server: {left:?}");
    // The adapter still answers.
    assert_eq!(
        first_int(&a.run_sql(&raw("SELECT 7 AS seven"), a.limits()).await),
        7
    );
}

/// GAP-60: the server ends the adapter's idle connection; the next statement still
/// answers, on a new connection.
#[tokio::test]
async fn a_statement_after_its_connection_was_killed_still_answers() {
    let Some(server) = server().await else { return };
    let mut admin = admin_conn().await;
    let a = reader(&server).await;
    let id = connection_id(&a).await;
    admin.query_drop(format!("KILL {id}")).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let alive: Option<i64> = admin
            .exec_first(
                "SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ?",
                (id,),
            )
            .await
            .unwrap();
        if alive.is_none() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "connection {id} lives on"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let expected: Option<i64> = admin
        .query_first(format!("SELECT count(*) FROM {DB}.machines"))
        .await
        .unwrap();
    let f = a
        .run_sql(&raw("SELECT count(*) AS n FROM machines"), a.limits())
        .await;
    assert_eq!(Some(first_int(&f)), expected);
    assert!(expected.unwrap() > 0);
    assert!(a.retried_statements() <= 1);
    assert_ne!(connection_id(&a).await, id);
}

/// GAP-60: the connection is killed under a running statement, before any row: the
/// statement runs once more, on a new connection, and answers.
#[tokio::test]
async fn a_connection_killed_mid_statement_is_retried_once() {
    let Some(server) = server().await else { return };
    let mut admin = admin_conn().await;
    let a = std::sync::Arc::new(reader(&server).await);
    let marker = format!("nl2sql_retry_{}", std::process::id());
    let sql = format!("SELECT 42 + SLEEP(1) AS {marker}");
    let runner = std::sync::Arc::clone(&a);
    let task = tokio::spawn(async move { runner.run_sql(&raw(&sql), runner.limits()).await });
    let ids = wait_running(&mut admin, &marker, true).await;
    assert_eq!(ids.len(), 1, "the statement never ran");
    admin.query_drop(format!("KILL {}", ids[0])).await.unwrap();
    let f = task.await.unwrap();
    assert_eq!(first_int(&f), 42);
    assert_eq!(a.retried_statements(), 1);
}

/// GAP-60: one retry only; when the second connection is killed too, the failure is the
/// usual `SERVICE_UNAVAILABLE`.
#[tokio::test]
async fn a_second_dropped_connection_is_returned_as_unavailable() {
    let Some(server) = server().await else { return };
    let mut admin = admin_conn().await;
    let a = std::sync::Arc::new(reader(&server).await);
    let marker = format!("nl2sql_twice_{}", std::process::id());
    let sql = format!("SELECT 42 + SLEEP(2) AS {marker}");
    let runner = std::sync::Arc::clone(&a);
    let task = tokio::spawn(async move { runner.run_sql(&raw(&sql), runner.limits()).await });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !task.is_finished() {
        assert!(std::time::Instant::now() < deadline, "the statement hung");
        for id in running(&mut admin, &marker).await {
            let _ = admin.query_drop(format!("KILL {id}")).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let f = task.await.unwrap();
    assert_eq!(f.error_code(), Some(ResultErrorCode::ServiceUnavailable));
    assert_eq!(a.retried_statements(), 1);
}

/// GAP-60: an SQL error is the statement's own fault: it is not retried.
#[tokio::test]
async fn an_sql_error_is_not_retried() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let f = a
        .run_sql(&raw("SELECT * FROM no_such_table_nl2sql"), a.limits())
        .await;
    assert_eq!(f.error_code(), Some(ResultErrorCode::ExecutionFailed));
    assert_eq!(a.retried_statements(), 0);
    assert_eq!(
        first_int(&a.run_sql(&raw("SELECT 7 AS seven"), a.limits()).await),
        7
    );
    assert_eq!(a.retried_statements(), 0);
}

/// GAP-40: a dry run never executes. Two statements leave a trace when they run: taking
/// a named lock (visible to every session while its holder lives) and a ten-second
/// `SLEEP`. Their dry runs are accepted, return at once and take no lock.
#[tokio::test]
async fn a_dry_run_never_executes_the_statement() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let dry = a.dry_run(&raw("SELECT GET_LOCK('nl2sql_gap40', 0)")).await;
    assert!(dry.is_valid, "{dry:?}");
    let mut admin = admin_conn().await;
    let holder: Option<Option<u64>> = admin
        .query_first("SELECT IS_USED_LOCK('nl2sql_gap40')")
        .await
        .unwrap();
    assert_eq!(holder, Some(None), "the dry run took the lock");
    let started = std::time::Instant::now();
    let dry = a.dry_run(&raw("SELECT SLEEP(10)")).await;
    assert!(dry.is_valid, "{dry:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the dry run slept: {:?}",
        started.elapsed()
    );
}

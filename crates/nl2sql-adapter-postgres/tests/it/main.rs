//! The PostgreSQL adapter against a real server (`NL2SQL_TEST_POSTGRES_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`): the SPI's conformance suite as a
//! least-privilege reader role, the sandbox with the guard bypassed (also as a
//! superuser), session state, types, and dead servers, bad credentials and bad URLs.
//!
//! The fixture is loaded once into schema `nl2sql_fixture` (under an advisory lock, and
//! only when its content hash changed), so test processes can run in parallel. Without a
//! server the tests are skipped, except under `CI`, where they fail.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::str::FromStr as _;
use std::time::Duration;

use arrow::array::{Array, Float64Array, Int64Array, StringArray, TimestampMicrosecondArray};
use nl2sql_adapter::conformance::{self, Fixture};
use nl2sql_adapter::{AdapterRequest, DatasourceAdapter, Limits, ResultErrorCode};
use nl2sql_adapter_postgres::PostgresAdapter;
use nl2sql_state::Dialect;
use tokio_postgres::NoTls;

/// `sql` exactly as written, with no guard in front: these tests prove what the engine's
/// own sandbox, limits and timeouts do.
fn raw(sql: &str) -> nl2sql_validate::GuardedSql {
    nl2sql_validate::GuardedSql::unguarded_for_sandbox_tests(Dialect::Postgres, sql)
}

mod differential;

const SCHEMA: &str = "nl2sql_fixture";
const READER: &str = "nl2sql_reader";

fn base_url() -> String {
    std::env::var("NL2SQL_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

struct Server {
    host: String,
    port: u16,
    db: String,
    admin: String,
}

impl Server {
    fn url(&self, user: &str) -> String {
        format!(
            "postgres://{user}@{}:{}/{}?options=-c%20search_path%3D{SCHEMA}",
            self.host, self.port, self.db
        )
    }
    fn reader_url(&self) -> String {
        self.url(READER)
    }
    fn admin_url(&self) -> String {
        self.url(&self.admin)
    }
}

/// Connects as the configured user, loads the fixture if needed and creates the reader
/// role. `None` (test skipped) when no server answers and `CI` is unset.
async fn server() -> Option<Server> {
    let url = base_url();
    let config = tokio_postgres::Config::from_str(&url).unwrap();
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let server = Server {
        host,
        port: config.get_ports().first().copied().unwrap_or(5432),
        db: config.get_dbname().unwrap_or("test").to_owned(),
        admin: config.get_user().unwrap_or("postgres").to_owned(),
    };
    let (client, conn) = match config.connect(NoTls).await {
        Ok(pair) => pair,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "PostgreSQL at {url} is needed under CI: {e}"
            );
            eprintln!("skipped: no PostgreSQL at {url}: {e}");
            return None;
        }
    };
    tokio::spawn(conn);
    load_fixture(&client).await;
    Some(server)
}

async fn load_fixture(client: &tokio_postgres::Client) {
    let statements = nl2sql_adapter::fixture::load_statements(Dialect::Postgres, Some(SCHEMA));
    let hash = nl2sql_state::sha256_hex(statements.join(";\n").as_bytes());
    client
        .batch_execute("SELECT pg_advisory_lock(727274)")
        .await
        .unwrap();
    let current: Option<String> = client
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&SCHEMA],
        )
        .await
        .unwrap()
        .and_then(|r| r.get(0));
    if current.as_deref() != Some(hash.as_str()) {
        for s in &statements {
            client.batch_execute(s).await.unwrap();
        }
        client
            .batch_execute(&format!(
                "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER}') \
                 THEN CREATE ROLE {READER} LOGIN; END IF; END $$; \
                 GRANT USAGE ON SCHEMA {SCHEMA} TO {READER}; \
                 GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO {READER}; \
                 COMMENT ON SCHEMA {SCHEMA} IS '{hash}'"
            ))
            .await
            .unwrap();
    }
    client
        .batch_execute("SELECT pg_advisory_unlock(727274)")
        .await
        .unwrap();
}

async fn reader(server: &Server) -> PostgresAdapter {
    PostgresAdapter::from_url("pg", &server.reader_url(), Limits::default())
        .await
        .unwrap()
}

fn sandbox_statements() -> Vec<String> {
    [
        "INSERT INTO products (id, sku, name, category) VALUES (99, 'X', 'x', 'x')",
        "INSERT INTO products (id, sku, name, category) VALUES (98, 'Y', 'y', 'y') RETURNING id",
        "UPDATE products SET name = 'changed'",
        "DELETE FROM products",
        "WITH d AS (DELETE FROM products RETURNING *) SELECT count(*) FROM d",
        "TRUNCATE products",
        "CREATE TABLE evil (x int)",
        "CREATE TEMP TABLE t AS SELECT * FROM products",
        "DROP TABLE products",
        "SET default_transaction_read_only = off",
        "COMMIT",
        "PREPARE p AS SELECT 1",
        "COPY (SELECT 1) TO '/tmp/nl2sql-pg-copy'",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT pg_ls_dir('.')",
        "CREATE EXTENSION IF NOT EXISTS dblink",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

fn fixture() -> Fixture {
    Fixture {
        schema: SCHEMA.to_owned(),
        slow_sql: "SELECT pg_sleep(10)".to_owned(),
        timeout_ms: 300,
        sandbox_statements: sandbox_statements(),
    }
}

#[tokio::test]
async fn conformance_suite_as_a_reader_role() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let fx = fixture();
    conformance::run_all(&a, &fx).await.unwrap();
    assert_eq!(a.details()["privileged"], false);
}

#[tokio::test]
async fn a_superuser_still_cannot_write_rows_or_files() {
    let Some(server) = server().await else { return };
    let a = PostgresAdapter::from_url("pg", &server.admin_url(), Limits::default())
        .await
        .unwrap();
    assert_eq!(a.details()["privileged"], true);
    let _ = std::fs::remove_file("/tmp/nl2sql-pg-copy");
    for sql in sandbox_statements() {
        if sql.contains("pg_read_file") || sql.contains("pg_ls_dir") {
            // A superuser may read server files: the reader role above is refused.
            continue;
        }
        let frame = a.run_sql(&raw(&sql), a.limits()).await;
        assert!(!frame.success, "let through as superuser: {sql}");
        let code = frame.error_code().unwrap();
        assert!(
            matches!(
                code,
                ResultErrorCode::SecurityViolation | ResultErrorCode::ExecutionFailed
            ),
            "{sql}: {code:?}"
        );
    }
    assert!(
        !std::path::Path::new("/tmp/nl2sql-pg-copy").exists(),
        "COPY TO wrote a file"
    );
    // Writes are refused by the engine itself, as a security violation.
    let frame = a.run_sql(&raw("DELETE FROM products"), a.limits()).await;
    assert_eq!(frame.error_code(), Some(ResultErrorCode::SecurityViolation));
    let frame = a
        .run_sql(&raw("CREATE TABLE evil (x int)"), a.limits())
        .await;
    assert_eq!(frame.error_code(), Some(ResultErrorCode::SecurityViolation));
}

fn single_string(frame: &nl2sql_adapter::ResultFrame) -> String {
    assert!(frame.success, "{:?}", frame.error);
    let col = frame.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    col.value(0).to_owned()
}

#[tokio::test]
async fn no_session_state_outlives_a_statement() {
    let Some(server) = server().await else { return };
    // One connection, so every statement reuses the same session.
    let a = reader(&server).await;
    let f = a
        .run_sql(
            &raw("SELECT set_config('default_transaction_read_only', 'off', false)"),
            a.limits(),
        )
        .await;
    assert!(f.success, "{:?}", f.error);
    let f = a
        .run_sql(
            &raw("SELECT current_setting('default_transaction_read_only')"),
            a.limits(),
        )
        .await;
    assert_eq!(single_string(&f), "on");
    let f = a
        .run_sql(
            &raw("SELECT set_config('statement_timeout', '0', false)"),
            a.limits(),
        )
        .await;
    assert!(f.success);
    let f = a
        .run_sql(&raw("SELECT current_setting('search_path')"), a.limits())
        .await;
    assert_eq!(single_string(&f), SCHEMA);
    // A session advisory lock taken by a statement is released after it.
    let f = a
        .run_sql(
            &raw("SELECT 1 AS one FROM (SELECT pg_advisory_lock(4242)) AS s"),
            a.limits(),
        )
        .await;
    assert!(f.success, "{:?}", f.error);
    let f = a
        .run_sql(
            &raw("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242"),
            a.limits(),
        )
        .await;
    let n = f.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0);
    assert_eq!(n, 0, "advisory lock survived the statement");
}

#[tokio::test]
async fn engine_types_become_arrow_types() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let f = a
        .execute(AdapterRequest::sql(
            "SELECT 12.5::numeric AS n, DATE '2024-01-02' AS d, \
             updated_at, '6f1c2a5e-0000-4000-8000-000000000001'::uuid AS u, \
             '{\"a\": 1}'::jsonb AS j, TIME '06:30' AS t, true AS b \
             FROM inventory WHERE id = 1",
        ))
        .await;
    assert!(f.success, "{:?}", f.error);
    let b = &f.batches[0];
    let n = b.column(0).as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(n.value(0), 12.5);
    assert_eq!(b.column(1).data_type(), &arrow::datatypes::DataType::Date32);
    let ts = b
        .column(2)
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    // 2024-04-10T08:00:00
    assert_eq!(ts.value(0), 1_712_736_000_000_000);
    let text = |i: usize| {
        b.column(i)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .value(0)
            .to_owned()
    };
    assert_eq!(text(3), "6f1c2a5e-0000-4000-8000-000000000001");
    assert_eq!(text(4), "{\"a\": 1}");
    assert_eq!(text(5), "06:30:00");
    assert!(!b.column(6).is_null(0));
    // A type the adapter cannot read is a clear, actionable failure.
    let f = a
        .execute(AdapterRequest::sql("SELECT interval '1 day' AS span"))
        .await;
    let e = f.error.unwrap();
    assert_eq!(e.error_code, ResultErrorCode::ExecutionFailed);
    assert!(e.safe_message.contains("'span'") && e.safe_message.contains("cast it to text"));
}

#[tokio::test]
async fn a_large_result_stops_at_the_row_limit() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let limits = Limits {
        row_limit: 2_500,
        ..a.limits()
    };
    let f = a
        .run_sql(
            &raw("SELECT g FROM generate_series(1, 100000000) AS g"),
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
        // Nothing listens on port 1.
        (
            format!("postgres://postgres@127.0.0.1:1/{}", server.db),
            "cannot connect",
        ),
        // A non-routable address: only the connect timeout ends it.
        ("postgres://postgres@10.255.255.1:5432/test".to_owned(), ""),
        (
            format!(
                "postgres://no_such_role_nl2sql@{}:{}/{}",
                server.host, server.port, server.db
            ),
            "refused the credentials",
        ),
        (
            format!(
                "postgres://{}@{}:{}/no_such_db_nl2sql",
                server.admin, server.host, server.port
            ),
            "database does not exist",
        ),
    ];
    for (url, needle) in cases {
        let out = tokio::time::timeout(
            Duration::from_secs(10),
            PostgresAdapter::from_url_with_connect_timeout("pg", &url, Limits::default(), quick),
        )
        .await
        .expect("connecting hung");
        let e = out.unwrap_err();
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable, "{url}");
        assert!(e.safe_message.contains(needle), "{url}: {}", e.safe_message);
        assert!(!e.safe_message.contains("127.0.0.1"), "{}", e.safe_message);
    }
    for url in [
        "postgres://",
        "http://localhost/db",
        "postgres://u@h:notaport/db",
        "postgres://user:secret-pw@:5432/db?bogus_option=1",
    ] {
        let e = PostgresAdapter::from_url("pg", url, Limits::default())
            .await
            .unwrap_err();
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable, "{url}");
        assert!(
            e.safe_message.contains("malformed"),
            "{url}: {}",
            e.safe_message
        );
        assert!(!e.safe_message.contains("secret"), "{}", e.safe_message);
    }
}

#[tokio::test]
async fn sample_value_ties_come_out_in_value_order() {
    // GAP-41: the most frequent values first, ties in value order, the same every time.
    let Some(server) = server().await else { return };
    let schema = format!("nl2sql_ties_{}", std::process::id());
    let (client, conn) = tokio_postgres::connect(&server.admin_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
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
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
             CREATE TABLE {schema}.items (id integer PRIMARY KEY, colour text NOT NULL); \
             INSERT INTO {schema}.items VALUES {};",
            rows.join(", ")
        ))
        .await
        .unwrap();
    let adapter = whole_database_adapter(&server).await;
    let first = adapter.schema_snapshot().await;
    let second = adapter.schema_snapshot().await;
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    let (first, second) = (first.unwrap(), second.unwrap());
    let find = |s: &nl2sql_state::SchemaSnapshot| {
        s.metadata
            .as_ref()
            .unwrap()
            .tables
            .values()
            .find(|t| t.table.schema_name == schema && t.table.table_name == "items")
            .unwrap()
            .clone()
    };
    let items = find(&first);
    assert_eq!(items.row_count, Some(50));
    let colour = items.columns["colour"].statistics.clone().unwrap();
    assert_eq!(colour.distinct_count, 6);
    assert_eq!(
        colour.sample_values,
        ["amber", "blue", "green", "red", "violet"].map(serde_json::Value::from)
    );
    assert_eq!(find(&second), items);
}

/// Another session drops a table while a snapshot reads the database: the snapshot still
/// succeeds, the table keeps its catalogued columns without statistics, and the tables
/// beside it keep theirs. (Test processes creating and dropping schemas beside each other
/// made whole snapshots fail with "relation … does not exist".)
#[tokio::test]
async fn a_table_dropped_during_a_snapshot_does_not_fail_it() {
    let Some(server) = server().await else { return };
    let schema = format!("nl2sql_dropped_{}", std::process::id());
    let admin = admin_client(&server).await;
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
             CREATE TABLE {schema}.kept (id integer, name text); \
             INSERT INTO {schema}.kept VALUES (1, 'a'), (2, 'b'); \
             CREATE TABLE {schema}.gone (id integer, name text); \
             INSERT INTO {schema}.gone VALUES (1, 'x');"
        ))
        .await
        .unwrap();
    // The drop is made and held uncommitted: the snapshot lists the table, then waits
    // for its lock when it reads the rows, and finds it gone once the drop commits.
    let dropper = admin_client(&server).await;
    dropper
        .batch_execute(&format!("BEGIN; DROP TABLE {schema}.gone"))
        .await
        .unwrap();
    let adapter = whole_database_adapter(&server).await;
    let snapshot = tokio::spawn(async move { adapter.schema_snapshot().await });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let waiting: i64 = admin
            .query_one(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE NOT l.granted AND n.nspname = $1 AND c.relname = 'gone'",
                &[&schema],
            )
            .await
            .unwrap()
            .get(0);
        if waiting > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline && !snapshot.is_finished(),
            "the snapshot never waited for the dropped table"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    dropper.batch_execute("COMMIT").await.unwrap();
    let snapshot = snapshot.await.unwrap();
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    let snapshot = snapshot.expect("the snapshot survives the drop");
    let metadata = snapshot.metadata.as_ref().unwrap();
    let table = |name: &str| {
        metadata
            .tables
            .values()
            .find(|t| t.table.schema_name == schema && t.table.table_name == name)
            .unwrap_or_else(|| panic!("{name} is in the snapshot"))
    };
    let kept = table("kept");
    assert_eq!(kept.row_count, Some(2));
    assert!(kept.columns["name"].statistics.is_some());
    let gone = table("gone");
    assert_eq!(gone.row_count, None);
    assert_eq!(gone.columns.len(), 2);
    assert!(gone.columns.values().all(|c| c.statistics.is_none()));
}

/// An adapter as the configured role with no search path: its snapshots read every
/// schema of the database.
async fn whole_database_adapter(server: &Server) -> PostgresAdapter {
    let url = format!(
        "postgres://{}@{}:{}/{}",
        server.admin, server.host, server.port, server.db
    );
    PostgresAdapter::from_url("pg", &url, Limits::default())
        .await
        .unwrap()
}

/// A connection as the configured (superuser) role, which sees every session.
async fn admin_client(server: &Server) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&server.admin_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

/// The backends of other sessions running a statement whose text holds `marker`.
async fn running(admin: &tokio_postgres::Client, marker: &str) -> Vec<i32> {
    admin
        .query(
            "SELECT pid FROM pg_stat_activity WHERE state = 'active' \
             AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()",
            &[&marker],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Polls [`running`] until some backend runs `marker` (`present`) or none does, for at
/// most 5 s; returns the last answer.
async fn wait_running(admin: &tokio_postgres::Client, marker: &str, present: bool) -> Vec<i32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let pids = running(admin, marker).await;
        if pids.is_empty() != present || std::time::Instant::now() > deadline {
            return pids;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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

/// The adapter's next connection: its backend pid.
async fn backend_pid(a: &PostgresAdapter) -> i64 {
    first_int(
        &a.run_sql(&raw("SELECT pg_backend_pid()::bigint AS pid"), a.limits())
            .await,
    )
}

/// GAP-11: dropping a call's future (a cancelled run aborts its scan) cancels the
/// statement on the server, which would otherwise sleep for 30 s.
#[tokio::test]
async fn a_dropped_statement_is_interrupted() {
    let Some(server) = server().await else { return };
    let admin = admin_client(&server).await;
    let a = std::sync::Arc::new(reader(&server).await);
    let marker = format!("nl2sql_dropped_{}", std::process::id());
    let sql = format!("SELECT 1 AS {marker} FROM pg_sleep(30)");
    let slow = std::sync::Arc::clone(&a);
    let task = tokio::spawn(async move { slow.run_sql(&raw(&sql), slow.limits()).await });
    let started = wait_running(&admin, &marker, true).await;
    assert_eq!(started.len(), 1, "the statement never ran");
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    let left = wait_running(&admin, &marker, false).await;
    assert!(left.is_empty(), "still running on the server: {left:?}");
    // The adapter still answers.
    let f = a
        .run_sql(&raw("SELECT 7::bigint AS seven"), a.limits())
        .await;
    assert_eq!(first_int(&f), 7);
}

/// GAP-60: the server ends the adapter's idle connection; the next statement still
/// answers, on a new connection.
#[tokio::test]
async fn a_statement_after_its_connection_was_terminated_still_answers() {
    let Some(server) = server().await else { return };
    let admin = admin_client(&server).await;
    let a = reader(&server).await;
    let pid = backend_pid(&a).await;
    let pid32 = i32::try_from(pid).unwrap();
    let ended: bool = admin
        .query_one("SELECT pg_terminate_backend($1)", &[&pid32])
        .await
        .unwrap()
        .get(0);
    assert!(ended);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while admin
        .query_opt("SELECT 1 FROM pg_stat_activity WHERE pid = $1", &[&pid32])
        .await
        .unwrap()
        .is_some()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "backend {pid} lives on"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let expected: i64 = admin
        .query_one(&format!("SELECT count(*) FROM {SCHEMA}.machines"), &[])
        .await
        .unwrap()
        .get(0);
    let f = a
        .run_sql(&raw("SELECT count(*) AS n FROM machines"), a.limits())
        .await;
    assert_eq!(first_int(&f), expected);
    assert!(expected > 0);
    assert!(a.retried_statements() <= 1);
    assert_ne!(backend_pid(&a).await, pid);
}

/// GAP-60: the connection dies under a running statement, before any row: the
/// statement runs once more, on a new connection, and answers.
#[tokio::test]
async fn a_connection_terminated_mid_statement_is_retried_once() {
    let Some(server) = server().await else { return };
    let admin = admin_client(&server).await;
    let a = std::sync::Arc::new(reader(&server).await);
    let marker = format!("nl2sql_retry_{}", std::process::id());
    let sql = format!("SELECT 42::bigint AS {marker} FROM pg_sleep(1)");
    let runner = std::sync::Arc::clone(&a);
    let task = tokio::spawn(async move { runner.run_sql(&raw(&sql), runner.limits()).await });
    let pids = wait_running(&admin, &marker, true).await;
    assert_eq!(pids.len(), 1, "the statement never ran");
    admin
        .execute("SELECT pg_terminate_backend($1)", &[&pids[0]])
        .await
        .unwrap();
    let f = task.await.unwrap();
    assert_eq!(first_int(&f), 42);
    assert_eq!(a.retried_statements(), 1);
}

/// GAP-60: one retry only; when the second connection dies too, the failure is the
/// usual `SERVICE_UNAVAILABLE`.
#[tokio::test]
async fn a_second_dropped_connection_is_returned_as_unavailable() {
    let Some(server) = server().await else { return };
    let admin = admin_client(&server).await;
    let a = std::sync::Arc::new(reader(&server).await);
    let marker = format!("nl2sql_twice_{}", std::process::id());
    let sql = format!("SELECT 42::bigint AS {marker} FROM pg_sleep(2)");
    let runner = std::sync::Arc::clone(&a);
    let task = tokio::spawn(async move { runner.run_sql(&raw(&sql), runner.limits()).await });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !task.is_finished() {
        assert!(std::time::Instant::now() < deadline, "the statement hung");
        for pid in running(&admin, &marker).await {
            let _ = admin
                .execute("SELECT pg_terminate_backend($1)", &[&pid])
                .await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let f = task.await.unwrap();
    assert_eq!(f.error_code(), Some(ResultErrorCode::ServiceUnavailable));
    assert_eq!(a.retried_statements(), 1);
}

/// GAP-60: an SQL error is the statement's own fault: no retry, and the connection is
/// kept (the same backend answers next).
#[tokio::test]
async fn an_sql_error_is_not_retried() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let pid = backend_pid(&a).await;
    let f = a
        .run_sql(&raw("SELECT * FROM no_such_table_nl2sql"), a.limits())
        .await;
    assert_eq!(f.error_code(), Some(ResultErrorCode::ExecutionFailed));
    assert_eq!(a.retried_statements(), 0);
    assert_eq!(backend_pid(&a).await, pid, "the connection was replaced");
}

/// The options given to the constructor reach the snapshot: a sample size below the
/// table's rows makes its statistics come from the first rows only.
#[tokio::test]
async fn adapter_options_set_the_snapshot_sample() {
    let Some(server) = server().await else { return };
    let options = nl2sql_adapter::AdapterOptions {
        schema_stats_sample_rows: 2,
        ..nl2sql_adapter::AdapterOptions::default()
    };
    let a = PostgresAdapter::from_url_with_options(
        "pg",
        &server.reader_url(),
        Limits::default(),
        options,
    )
    .await
    .unwrap();
    assert_eq!(a.options(), options);
    let whole = reader(&server).await.schema_snapshot().await.unwrap();
    let sampled = a.schema_snapshot().await.unwrap();
    let id_stats = |s: &nl2sql_state::SchemaSnapshot| {
        s.metadata.as_ref().unwrap().tables[&format!("{SCHEMA}.machines")].columns["id"]
            .statistics
            .clone()
            .unwrap()
    };
    assert!(id_stats(&whole).distinct_count > 2);
    assert_eq!(id_stats(&sampled).distinct_count, 2);
}

/// GAP-40: a dry run never executes. Two statements leave a trace when they run: a
/// sequence's `nextval` (refused in the adapter's read-only session, and it would advance
/// the sequence) and a ten-second `pg_sleep`. Their dry runs are accepted, return at once
/// and leave the sequence where it was; running the first is refused.
#[tokio::test]
async fn a_dry_run_never_executes_the_statement() {
    let Some(server) = server().await else { return };
    let admin = admin_client(&server).await;
    admin
        .batch_execute(&format!(
            "CREATE SEQUENCE IF NOT EXISTS {SCHEMA}.gap40_seq; \
             GRANT USAGE, SELECT ON SEQUENCE {SCHEMA}.gap40_seq TO {READER}"
        ))
        .await
        .unwrap();
    let last = |row: tokio_postgres::Row| (row.get::<_, i64>(0), row.get::<_, bool>(1));
    let before = last(
        admin
            .query_one(
                &format!("SELECT last_value, is_called FROM {SCHEMA}.gap40_seq"),
                &[],
            )
            .await
            .unwrap(),
    );
    let a = reader(&server).await;
    let nextval = raw(&format!("SELECT nextval('{SCHEMA}.gap40_seq')"));
    let dry = a.dry_run(&nextval).await;
    assert!(dry.is_valid, "{dry:?}");
    let started = std::time::Instant::now();
    let dry = a.dry_run(&raw("SELECT pg_sleep(10)")).await;
    assert!(dry.is_valid, "{dry:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the dry run slept: {:?}",
        started.elapsed()
    );
    let after = last(
        admin
            .query_one(
                &format!("SELECT last_value, is_called FROM {SCHEMA}.gap40_seq"),
                &[],
            )
            .await
            .unwrap(),
    );
    assert_eq!(before, after, "the dry run advanced the sequence");
    // Running it is what a dry run must not do: the read-only session refuses it.
    let frame = a.run_sql(&nextval, a.limits()).await;
    assert!(!frame.success, "nextval ran in a read-only session");
}

//! `ProcessAdapter` over the `nl2sql-worker` binary answers exactly as the in-process
//! SQLite adapter, and passes the adapter conformance suite.

use nl2sql_adapter::conformance::{self, Fixture};
use nl2sql_adapter::{
    AdapterRequest, DatasourceAdapter, Limits, RequestLimits, ResultError, ResultFrame,
};
use nl2sql_test_support::TempDir;
use nl2sql_worker::{PROTOCOL_VERSION, ProcessAdapter, WorkerOptions};

use crate::{SLOW_SQL, copy_fixture, in_process, spawn_adapter, worker_command};

/// The frames are equal but for timings.
fn check_same_frame(got: &ResultFrame, want: &ResultFrame) {
    assert_eq!(got.success, want.success, "{:?}", got.error);
    assert_eq!(got.schema, want.schema);
    assert_eq!(got.batches, want.batches);
    assert_eq!(got.row_count, want.row_count);
    assert_eq!(got.truncated, want.truncated);
    assert_eq!(got.bytes, want.bytes);
    assert_eq!(got.datasource_id, want.datasource_id);
    assert_eq!(
        got.execution_stats.truncated_reason,
        want.execution_stats.truncated_reason
    );
    assert_eq!(
        got.error.clone().map(without_detail),
        want.error.clone().map(without_detail)
    );
}

/// The error as it crosses the pipe: the driver's text stays in the worker.
fn without_detail(mut e: ResultError) -> ResultError {
    e.detail = None;
    e
}

#[tokio::test]
async fn queries_return_the_same_rows_and_types_as_in_process() {
    let dir = TempDir::new("worker-same-rows");
    let path = copy_fixture(&dir);
    let local = in_process(&path);
    let remote = spawn_adapter(&path, WorkerOptions::default()).await;
    let queries = [
        "SELECT p.sku, p.name, count(*) AS runs, sum(r.quantity) AS qty, avg(r.quantity) AS mean \
         FROM production_runs r JOIN products p ON p.id = r.product_id GROUP BY p.sku, p.name ORDER BY p.sku",
        "SELECT * FROM machines ORDER BY id",
        "SELECT * FROM defects ORDER BY id",
        "SELECT NULL AS nothing, 1.5 AS half, 'text' AS t, x'00ff' AS b",
        "SELECT id FROM products WHERE id < 0",
        "SELECT nope FROM products",
        "DELETE FROM products",
    ];
    for sql in queries {
        let got = remote.execute(AdapterRequest::sql(sql)).await;
        let want = local.execute(AdapterRequest::sql(sql)).await;
        check_same_frame(&got, &want);
    }
    // Limits narrow the same way: truncated by rows, then by bytes.
    for limits in [
        RequestLimits {
            row_limit: Some(3),
            ..RequestLimits::default()
        },
        RequestLimits {
            max_bytes: Some(200),
            ..RequestLimits::default()
        },
    ] {
        let req =
            AdapterRequest::sql("SELECT * FROM production_runs ORDER BY id").with_limits(limits);
        let got = remote.execute(req.clone()).await;
        let want = local.execute(req).await;
        assert!(got.truncated, "{got:?}");
        check_same_frame(&got, &want);
    }
    // run_sql uses exactly the limits given.
    let limits = Limits {
        row_limit: 2,
        ..local.limits()
    };
    let got = remote
        .run_sql(&crate::raw("SELECT * FROM factories"), limits)
        .await;
    let want = local
        .run_sql(&crate::raw("SELECT * FROM factories"), limits)
        .await;
    assert_eq!(got.row_count, 2);
    check_same_frame(&got, &want);
}

#[tokio::test]
async fn dry_run_explain_and_schema_round_trip_equal_to_in_process() {
    let dir = TempDir::new("worker-schema");
    let path = copy_fixture(&dir);
    let local = in_process(&path);
    let remote = spawn_adapter(&path, WorkerOptions::default()).await;

    let snapshot = remote.schema_snapshot().await.unwrap();
    assert_eq!(snapshot, local.schema_snapshot().await.unwrap());
    assert!(snapshot.contract.tables.contains_key("main.products"));
    assert_eq!(
        remote.schema_contract().await.unwrap(),
        local.schema_contract().await.unwrap()
    );

    for sql in [
        "SELECT id FROM products WHERE id > 2",
        "SELECT nope FROM products",
    ] {
        let mut got = remote.dry_run(&crate::raw(sql)).await;
        let mut want = local.dry_run(&crate::raw(sql)).await;
        got.error = got.error.map(without_detail);
        want.error = want.error.map(without_detail);
        assert_eq!(got, want, "{sql}");
    }
    assert_eq!(
        remote
            .explain(&crate::raw("SELECT * FROM products WHERE id = 1"))
            .await
            .unwrap(),
        local
            .explain(&crate::raw("SELECT * FROM products WHERE id = 1"))
            .await
            .unwrap()
    );
    assert_eq!(
        remote
            .explain(&crate::raw("SELECT nope FROM products"))
            .await
            .map_err(without_detail),
        local
            .explain(&crate::raw("SELECT nope FROM products"))
            .await
            .map_err(without_detail)
    );
    // SQLite has no cost model: the same refusal, code and all.
    assert_eq!(
        remote
            .cost_estimate(&crate::raw("SELECT 1"))
            .await
            .map_err(without_detail),
        local
            .cost_estimate(&crate::raw("SELECT 1"))
            .await
            .map_err(without_detail)
    );
    assert_eq!(remote.test_connection().await, Ok(()));
}

#[tokio::test]
async fn the_handshake_reports_the_datasource() {
    let dir = TempDir::new("worker-handshake");
    let path = copy_fixture(&dir);
    let local = in_process(&path);
    let remote = spawn_adapter(&path, WorkerOptions::default()).await;
    assert_eq!(remote.info().protocol_version, PROTOCOL_VERSION);
    assert_eq!(remote.id(), local.id());
    assert_eq!(remote.engine_type(), local.engine_type());
    assert_eq!(remote.dialect(), local.dialect());
    assert_eq!(remote.capabilities(), local.capabilities());
    assert_eq!(remote.limits(), local.limits());
    let details = remote.details();
    assert_eq!(details["file"], local.details()["file"]);
    assert_eq!(details["worker"]["out_of_process"], true);
    // The handshake's child stays in the pool for the next call.
    let pids = remote.worker_pids();
    assert_eq!(pids.len(), 1, "{pids:?}");
    remote.test_connection().await.unwrap();
    assert_eq!(remote.worker_pids(), pids);
}

#[tokio::test]
async fn conformance_suite_through_the_worker() {
    let dir = TempDir::new("worker-conformance");
    let path = copy_fixture(&dir);
    let remote = spawn_adapter(&path, WorkerOptions::default()).await;
    let attached = dir.path().join("attached.db");
    let fx = Fixture {
        schema: "main".to_owned(),
        slow_sql: SLOW_SQL.to_owned(),
        timeout_ms: 200,
        sandbox_statements: vec![
            "INSERT INTO products (id, sku, name, category) VALUES (99, 'X', 'x', 'x')".to_owned(),
            "DROP TABLE products".to_owned(),
            format!("ATTACH DATABASE '{}' AS other", attached.display()),
            "SELECT load_extension('/tmp/evil.so')".to_owned(),
            "PRAGMA query_only = 0".to_owned(),
        ],
    };
    conformance::run_all(&remote, &fx).await.unwrap();
    assert!(!attached.exists());
}

#[tokio::test]
async fn an_unopenable_database_fails_the_handshake_as_service_unavailable() {
    let dir = TempDir::new("worker-missing");
    let missing = dir.path().join("missing.db");
    let err = ProcessAdapter::spawn(worker_command(&missing), WorkerOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.error_code,
        nl2sql_adapter::ResultErrorCode::ServiceUnavailable,
        "{err:?}"
    );
    assert!(!missing.exists(), "the worker created the database file");
}

#[tokio::test]
async fn the_worker_checks_again_what_it_is_sent_and_runs_its_own_rendering() {
    let dir = TempDir::new("worker-recheck");
    let path = copy_fixture(&dir);
    let remote = spawn_adapter(&path, WorkerOptions::default()).await;
    // A statement the parent would never send: the worker's own guard refuses it.
    let frame = remote
        .run_sql(&crate::raw("DELETE FROM products"), Limits::default())
        .await;
    let error = frame.error.expect("refused");
    assert_eq!(
        error.error_code,
        nl2sql_adapter::ResultErrorCode::SecurityViolation
    );
    assert!(
        error.safe_message.starts_with("the worker's guard refused"),
        "{error:?}"
    );
    // A comment that an engine of the MySQL family would run is refused too.
    let frame = remote
        .run_sql(
            &crate::raw("SELECT name FROM products /*M! UNION SELECT name FROM factories */"),
            Limits::default(),
        )
        .await;
    assert_eq!(
        frame.error.map(|e| e.error_code),
        Some(nl2sql_adapter::ResultErrorCode::SecurityViolation)
    );
}

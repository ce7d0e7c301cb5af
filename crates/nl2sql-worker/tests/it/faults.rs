//! A worker that dies, hangs, answers garbage or is abandoned costs one call at most: the
//! call fails with `EXECUTOR_CRASH` or `EXECUTION_TIMEOUT`, the child is killed and
//! reaped, and the next call runs on a fresh child.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use nl2sql_adapter::{
    AdapterRequest, Capability, CapabilitySet, DatasourceAdapter, Limits, ResultErrorCode,
    ResultFrame,
};
use nl2sql_state::{Dialect, ErrorCode};
use nl2sql_test_support::TempDir;
use nl2sql_worker::{PROTOCOL_VERSION, ProcessAdapter, WorkerInfo, WorkerOptions};

use crate::{
    SLOW_SQL, copy_fixture, kill_9, process_state, reapable, running, slow_limits, spawn_adapter,
    wait_until, worker_args,
};

async fn count_products(adapter: &dyn DatasourceAdapter) -> ResultFrame {
    let frame = adapter
        .execute(AdapterRequest::sql("SELECT COUNT(*) AS n FROM products"))
        .await;
    assert!(frame.success, "{:?}", frame.error);
    assert_eq!(frame.row_count, 1);
    frame
}

/// Waits until exactly `n` children serve a call, and returns their pids.
async fn busy(adapter: &ProcessAdapter, n: usize) -> Vec<u32> {
    wait_until("the calls reach their workers", || {
        adapter.busy_pids().len() == n
    })
    .await;
    adapter.busy_pids()
}

#[tokio::test]
async fn a_child_killed_between_calls_is_replaced_before_the_next_call() {
    let dir = TempDir::new("worker-kill-idle");
    let path = copy_fixture(&dir);
    let adapter = spawn_adapter(&path, WorkerOptions::default()).await;
    count_products(&adapter).await;
    let [pid] = adapter.worker_pids()[..] else {
        panic!("expected one worker: {:?}", adapter.worker_pids());
    };
    kill_9(pid);
    // The child is dead (a zombie until the adapter reaps it).
    wait_until("the killed worker has exited", || reapable(pid)).await;

    count_products(&adapter).await;
    let pids = adapter.worker_pids();
    assert_eq!(pids.len(), 1, "{pids:?}");
    assert_ne!(pids[0], pid, "the dead child was reused");
    assert_eq!(process_state(pid), None, "the dead child was not reaped");
}

#[tokio::test]
async fn a_child_killed_during_a_slow_call_fails_that_call_as_executor_crash() {
    let dir = TempDir::new("worker-kill-busy");
    let path = copy_fixture(&dir);
    let adapter = Arc::new(spawn_adapter(&path, WorkerOptions::default()).await);
    let slow = tokio::spawn({
        let adapter = Arc::clone(&adapter);
        async move { adapter.run_sql(&crate::raw(SLOW_SQL), slow_limits()).await }
    });
    let [pid] = busy(&adapter, 1).await[..] else {
        unreachable!()
    };
    kill_9(pid);
    let frame = slow.await.unwrap();
    assert!(!frame.success);
    let error = frame.error.unwrap();
    assert_eq!(
        error.error_code,
        ResultErrorCode::ExecutorCrash,
        "{error:?}"
    );
    assert_eq!(error.error_code.pipeline_code(), ErrorCode::ExecutorCrash);
    assert_eq!(error.stage.as_deref(), Some("execute"));
    assert_eq!(error.datasource_id.as_deref(), Some("manufacturing"));
    assert!(!error.safe_message.contains(&pid.to_string()), "{error:?}");

    // The next call succeeds on a fresh child; the dead one is reaped.
    count_products(adapter.as_ref()).await;
    let pids = adapter.worker_pids();
    assert_eq!(pids.len(), 1, "{pids:?}");
    assert_ne!(pids[0], pid);
    wait_until("the killed worker is reaped", || {
        process_state(pid).is_none()
    })
    .await;
    assert!(adapter.busy_pids().is_empty());
}

#[tokio::test]
async fn a_dropped_call_kills_its_child() {
    let dir = TempDir::new("worker-drop");
    let path = copy_fixture(&dir);
    let adapter = Arc::new(spawn_adapter(&path, WorkerOptions::default()).await);
    let slow = tokio::spawn({
        let adapter = Arc::clone(&adapter);
        async move { adapter.run_sql(&crate::raw(SLOW_SQL), slow_limits()).await }
    });
    let [pid] = busy(&adapter, 1).await[..] else {
        unreachable!()
    };
    assert!(running(pid));
    slow.abort();
    assert!(slow.await.unwrap_err().is_cancelled());
    // The child running the statement is gone, not left computing.
    wait_until("the abandoned worker is gone", || {
        process_state(pid).is_none()
    })
    .await;
    assert!(adapter.busy_pids().is_empty());
    assert!(
        adapter.worker_pids().is_empty(),
        "{:?}",
        adapter.worker_pids()
    );
    count_products(adapter.as_ref()).await;
}

#[tokio::test]
async fn dropping_the_adapter_stops_its_idle_children() {
    let dir = TempDir::new("worker-drop-adapter");
    let path = copy_fixture(&dir);
    let adapter = spawn_adapter(&path, WorkerOptions::default()).await;
    count_products(&adapter).await;
    let pids = adapter.worker_pids();
    assert_eq!(pids.len(), 1, "{pids:?}");
    drop(adapter);
    for pid in pids {
        wait_until("the idle worker is gone", || process_state(pid).is_none()).await;
    }
}

#[tokio::test]
async fn concurrent_calls_run_in_separate_children_and_all_die_when_dropped() {
    let dir = TempDir::new("worker-pool");
    let path = copy_fixture(&dir);
    let options = WorkerOptions {
        pool_size: 2,
        ..WorkerOptions::default()
    };
    let adapter = Arc::new(spawn_adapter(&path, options).await);
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let adapter = Arc::clone(&adapter);
            tokio::spawn(async move { adapter.run_sql(&crate::raw(SLOW_SQL), slow_limits()).await })
        })
        .collect();
    let pids = busy(&adapter, 2).await;
    assert_ne!(pids[0], pids[1]);
    // The pool is full: a third call waits for a free child instead of spawning one.
    let third = tokio::spawn({
        let adapter = Arc::clone(&adapter);
        async move { count_products(adapter.as_ref()).await.row_count }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(adapter.worker_pids(), pids);
    for call in &calls {
        call.abort();
    }
    for pid in pids {
        wait_until("the abandoned workers are gone", || {
            process_state(pid).is_none()
        })
        .await;
    }
    assert_eq!(third.await.unwrap(), 1);
}

/// Info for a child that is not a real worker (no handshake possible).
fn info(statement_timeout_ms: u64) -> WorkerInfo {
    WorkerInfo {
        protocol_version: PROTOCOL_VERSION,
        id: "fake".to_owned(),
        engine_type: "sqlite".to_owned(),
        dialect: Dialect::Sqlite,
        capabilities: CapabilitySet::new(&[Capability::SupportsSql]),
        limits: Limits {
            statement_timeout_ms,
            ..Limits::default()
        },
        details: serde_json::json!({}),
    }
}

#[tokio::test]
async fn a_hung_child_is_killed_at_the_deadline_as_execution_timeout() {
    // `sleep` never answers: only the deadline (timeout + margin) can end the call.
    let mut command = Command::new("sleep");
    command.arg("600");
    let options = WorkerOptions {
        deadline_margin: Duration::from_millis(100),
        ..WorkerOptions::default()
    };
    let adapter = ProcessAdapter::new(command, info(200), options);
    let frame = adapter.execute(AdapterRequest::sql("SELECT 1")).await;
    let error = frame.error.unwrap();
    assert_eq!(
        error.error_code,
        ResultErrorCode::ExecutionTimeout,
        "{error:?}"
    );
    assert_eq!(
        error.error_code.pipeline_code(),
        ErrorCode::ExecutionTimeout
    );
    assert!(
        adapter.worker_pids().is_empty(),
        "{:?}",
        adapter.worker_pids()
    );

    // Every operation has a deadline, not only statements.
    let err = adapter.test_connection().await.unwrap_err();
    assert_eq!(err.error_code, ResultErrorCode::ExecutionTimeout);
    let dry = adapter.dry_run(&crate::raw("SELECT 1")).await;
    assert!(!dry.is_valid);
    assert_eq!(
        dry.error.unwrap().error_code,
        ResultErrorCode::ExecutionTimeout
    );
}

#[tokio::test]
async fn garbage_from_a_child_is_executor_crash_and_the_next_child_is_fresh() {
    let dir = TempDir::new("worker-garbage");
    let path = copy_fixture(&dir);
    let marker = dir.path().join("garbage-sent");
    // The first child reads the request and answers garbage; later children are real
    // workers.
    let worker = format!(
        "{} {}",
        env!("CARGO_BIN_EXE_nl2sql-worker"),
        worker_args(&path).to_args().join(" ")
    );
    let script = format!(
        "if [ -e '{m}' ]; then exec {worker}; else touch '{m}'; read line; echo 'this is not a reply'; fi",
        m = marker.display()
    );
    let mut command = Command::new("sh");
    command.args(["-c", &script]);
    let adapter = ProcessAdapter::new(command, info(30_000), WorkerOptions::default());

    let frame = adapter.execute(AdapterRequest::sql("SELECT 1")).await;
    assert!(marker.exists());
    let error = frame.error.unwrap();
    assert_eq!(
        error.error_code,
        ResultErrorCode::ExecutorCrash,
        "{error:?}"
    );
    assert!(
        adapter.worker_pids().is_empty(),
        "{:?}",
        adapter.worker_pids()
    );

    let frame = count_products(&adapter).await;
    assert_eq!(frame.datasource_id.as_deref(), Some("manufacturing"));

    // A reply to another request id is garbage too: a child that answers before being
    // asked is out of step.
    let bad = dir.path().join("bad.sh");
    let reply = "{\"id\":999999,\"success\":true,\"metrics\":{\"execution_time_ms\":0}}";
    std::fs::write(&bad, format!("read line; echo '{reply}'\n")).unwrap();
    let mut command = Command::new("sh");
    command.arg(&bad);
    let adapter = ProcessAdapter::new(command, info(30_000), WorkerOptions::default());
    let err = adapter.test_connection().await.unwrap_err();
    assert_eq!(err.error_code, ResultErrorCode::ExecutorCrash, "{err:?}");
}

#[tokio::test]
async fn a_child_that_cannot_start_is_executor_crash() {
    let command = Command::new("/nonexistent/nl2sql-worker");
    let adapter = ProcessAdapter::new(command, info(1_000), WorkerOptions::default());
    let frame = adapter.execute(AdapterRequest::sql("SELECT 1")).await;
    assert_eq!(frame.error_code(), Some(ResultErrorCode::ExecutorCrash));
    let err = ProcessAdapter::spawn(
        Command::new("/nonexistent/nl2sql-worker"),
        WorkerOptions::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.error_code, ResultErrorCode::ExecutorCrash);
}

//! GAP-13: the database breaker opens on repeated failures and recovers.

use super::*;

// ---------------------------------------------------------------------------------------
// GAP-13

/// The fixture through the real SQLite adapter, except that while `down` is set every dry
/// run and execution fails as an unreachable database does (`SERVICE_UNAVAILABLE`, which
/// the breaker counts); counts the calls that reached it.
struct FlakyDatabase {
    inner: SqliteAdapter,
    down: std::sync::atomic::AtomicBool,
    executed: std::sync::atomic::AtomicUsize,
}

impl FlakyDatabase {
    /// Counts a call; the failure an unreachable database gives while `down`.
    fn call(&self, stage: &str) -> Option<ResultError> {
        use std::sync::atomic::Ordering;
        self.executed.fetch_add(1, Ordering::SeqCst);
        self.down.load(Ordering::SeqCst).then(|| {
            ResultError::new(
                ResultErrorCode::ServiceUnavailable,
                "The database is unreachable.",
            )
            .at(stage, nl2sql_adapter::DatasourceAdapter::id(&self.inner))
        })
    }
}

wrapping_adapter!(FlakyDatabase, own dry_run {
    async fn dry_run(&self, sql: &nl2sql_validate::GuardedSql) -> nl2sql_adapter::DryRunResult {
        match self.call("dry_run") {
            Some(e) => nl2sql_adapter::DryRunResult {
                is_valid: false,
                error_message: Some(e.safe_message.clone()),
                data: None,
                error: Some(e),
            },
            None => self.inner.dry_run(sql).await,
        }
    }
    async fn execute_guarded(
        &self,
        sql: &nl2sql_validate::GuardedSql,
        limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        match self.call("execute") {
            Some(e) => ResultFrame::failed(e, 0.0),
            None => self.inner.execute_guarded(sql, limits).await,
        }
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap13_the_database_breaker_opens_on_repeated_failures_and_recovers() {
    use std::sync::atomic::Ordering;
    let dir = TempDir::new("gap13-breaker");
    let adapter = Arc::new(FlakyDatabase {
        inner: SqliteAdapter::open("manufacturing", &fixture(), Limits::default()).unwrap(),
        down: std::sync::atomic::AtomicBool::new(true),
        executed: std::sync::atomic::AtomicUsize::new(0),
    });
    let registry = DatasourceRegistry::empty()
        .with_adapter(Arc::clone(&adapter) as Arc<dyn nl2sql_adapter::DatasourceAdapter>)
        .with_breaker_config(nl2sql_adapter::BreakerConfig {
            fail_max: 2,
            reset_timeout: Duration::from_millis(400),
        });
    let options = EngineOptions {
        max_retries: 0,
        ..fast_options()
    };
    let engine = engine_over(
        registry,
        dir.path(),
        Arc::new(OfflinePlanner::new()),
        options,
    )
    .await;
    let ask = || engine.ask("How many factories do we have?", AskOptions::default());
    // Two failures reach the database and open the breaker.
    for n in 1..=2 {
        let r = ask().await;
        assert_eq!(r.status, RunStatus::Failed, "{:#?}", r.errors);
        assert!(
            r.errors
                .iter()
                .any(|e| e.code == ErrorCode::ServiceUnavailable),
            "{:#?}",
            r.errors
        );
        assert_eq!(adapter.executed.load(Ordering::SeqCst), n);
    }
    // Open: the next run fails fast without reaching the database.
    let r = ask().await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(
        r.errors
            .iter()
            .any(|e| e.code == ErrorCode::ServiceUnavailable),
        "{:#?}",
        r.errors
    );
    assert_eq!(
        adapter.executed.load(Ordering::SeqCst),
        2,
        "the breaker held"
    );
    // The database is back; after the reset timeout one trial closes the breaker.
    adapter.down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = ask().await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let r = ask().await;
    assert!(r.success, "{:#?}", r.errors);
    // Each good run is a dry run and an execution.
    assert_eq!(adapter.executed.load(Ordering::SeqCst), 6);
}

//! A run that stops while a SQL statement is running interrupts that statement
//! (GAP-11): the run's global timeout, or its cancellation, drops the scan's
//! `execute` future, and the SQLite adapter interrupts the statement at once instead of
//! letting it run on to its statement timeout.
//!
//! The datasource is a copy of the fixture behind the real SQLite adapter with a 60 s
//! statement timeout; a wrapper replaces the scan's SQL with a read that runs far longer
//! than that. What shows the statement is running, and then that it is not: the fixture
//! is in rollback-journal mode, so a running read statement holds a shared lock on the
//! database file and no other connection can take the exclusive lock. While the statement
//! runs, a probe cannot take it; after the run stops, it can within a few seconds. Were
//! the dropped statement not interrupted, it would keep its lock until its 60 s timeout
//! and the probe's 15 s wait would fail.

#![allow(clippy::unwrap_used)] // reason: test set-up fails the test that calls it

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nl2sql_adapter::{DatasourceAdapter, Limits, ResultFrame};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_orchestrator::{AskOptions, DatasourceRegistry, Engine, EngineOptions, RunResult};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{ErrorCode, RunStatus, ScanStatus};
use nl2sql_test_support::{TempDir, manufacturing_db};
use tokio_util::sync::CancellationToken;

/// The adapter's own statement timeout: what would stop a statement nobody interrupts.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the test waits for the statement's lock to go after the run stopped: far
/// less than [`STATEMENT_TIMEOUT`], far more than an interrupt takes.
const FREED_WITHIN: Duration = Duration::from_secs(15);

/// How long the statement runs before the probe looks at its lock.
const SETTLE: Duration = Duration::from_millis(200);

/// A read that runs for many minutes: the count of a twelve-fold cross join of the
/// eight products (8^12, about 7·10^10 rows). The guard refuses recursive CTEs, so the
/// rows come from a real table, which also makes the statement hold a read transaction.
const SLOW_SQL: &str = "SELECT count(*) FROM products p1, products p2, products p3, \
     products p4, products p5, products p6, products p7, products p8, products p9, \
     products p10, products p11, products p12";

/// What happened to the scan's `execute` call.
#[derive(Debug, Default)]
struct Events {
    /// When the wrapped statement was handed to the SQLite adapter.
    started: Option<Instant>,
    /// The statement timeout the adapter applied to it (milliseconds).
    timeout_ms: Option<u64>,
    /// When the SQLite adapter's future returned (it never should here).
    finished: Option<Instant>,
    /// When the `execute` future went away, returned or dropped.
    gone: Option<Instant>,
}

/// Marks the call gone when the `execute` future is dropped, mid-statement or not.
struct Gone(Arc<Mutex<Events>>);

impl Drop for Gone {
    fn drop(&mut self) {
        self.0.lock().unwrap().gone = Some(Instant::now());
    }
}

/// The SQLite adapter over the copy, whose `execute` runs [`SLOW_SQL`] instead of the
/// scan's statement (dry runs see the scan's own SQL).
struct Stalling {
    inner: Arc<SqliteAdapter>,
    events: Arc<Mutex<Events>>,
}

wrapping_adapter!(Stalling {
    async fn execute_guarded(
        &self,
        _sql: &nl2sql_validate::GuardedSql,
        limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        let _gone = Gone(Arc::clone(&self.events));
        let slow = nl2sql_adapter::shape_check(self.inner.id(), self.inner.dialect(), SLOW_SQL)
            .unwrap();
        {
            let mut events = self.events.lock().unwrap();
            events.started = Some(Instant::now());
            events.timeout_ms = Some(self.inner.limits().narrowed_by(limits).statement_timeout_ms);
        }
        let frame = self.inner.execute_guarded(&slow, limits).await;
        self.events.lock().unwrap().finished = Some(Instant::now());
        frame
    }
});

/// An engine over a copy of the fixture behind [`Stalling`].
struct Harness {
    _dir: TempDir,
    db: PathBuf,
    adapter: Arc<SqliteAdapter>,
    events: Arc<Mutex<Events>>,
    engine: Engine,
}

impl Harness {
    async fn new(label: &str, global_timeout: Duration) -> Harness {
        let dir = TempDir::new(label);
        let db = dir.path().join("manufacturing.db");
        std::fs::copy(manufacturing_db(), &db).unwrap();
        // The lock argument holds in rollback-journal mode (a WAL reader blocks no one).
        let mode: String = rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
        let limits = Limits {
            statement_timeout_ms: u64::try_from(STATEMENT_TIMEOUT.as_millis()).unwrap(),
            ..Limits::default()
        };
        let adapter = Arc::new(SqliteAdapter::open("manufacturing", &db, limits).unwrap());
        let events = Arc::new(Mutex::new(Events::default()));
        let stalling = Stalling {
            inner: Arc::clone(&adapter),
            events: Arc::clone(&events),
        };
        let registry = DatasourceRegistry::empty().with_adapter(Arc::new(stalling));
        let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), dir.path())
            .unwrap()
            .with_options(EngineOptions {
                global_timeout,
                jitter_seed: Some(7),
                today: Some("2024-06-30".to_owned()),
                ..EngineOptions::default()
            });
        let report = engine.index_all().await;
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        Harness {
            _dir: dir,
            db,
            adapter,
            events,
            engine,
        }
    }

    /// Waits until the statement runs, lets it run [`SETTLE`], and returns whether its
    /// lock kept a writer out then, and when that was seen.
    async fn probe_running(&self) -> (bool, Instant) {
        let waiting = Instant::now();
        while self.events.lock().unwrap().started.is_none() {
            assert!(
                waiting.elapsed() < Duration::from_secs(30),
                "the scan never executed"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(SETTLE).await;
        let held = exclusive_lock(self.db.clone(), Duration::ZERO)
            .await
            .is_err_and(|e| e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy));
        (held, Instant::now())
    }

    /// The checks after the run stopped with `status` and `code`: the statement was
    /// running when the probe looked, its lock is gone within [`FREED_WITHIN`] of the run's
    /// end (so it was interrupted, not left to its 60 s timeout), and the adapter still
    /// answers. Returns how long after the run's end the lock went.
    async fn check_stopped(
        &self,
        r: &RunResult,
        ended: Instant,
        probe: (bool, Instant),
        status: RunStatus,
        code: ErrorCode,
    ) -> Duration {
        assert_eq!(r.status, status, "{:#?}", r.errors);
        assert!(!r.success);
        let codes: Vec<ErrorCode> = r.errors.iter().map(|e| e.code).collect();
        assert_eq!(codes, vec![code], "{:#?}", r.errors);
        assert_eq!(r.subqueries.len(), 1);
        assert_eq!(r.subqueries[0].status, ScanStatus::Cancelled);
        assert_eq!(r.rows, None);

        // The statement was running, under the 60 s timeout, when the run stopped.
        let (held, probed) = probe;
        assert!(held, "the statement held no lock while it ran");
        assert!(probed < ended, "the probe came after the run ended");
        let timeout_ms = self.events.lock().unwrap().timeout_ms;
        assert_eq!(
            timeout_ms,
            Some(u64::try_from(STATEMENT_TIMEOUT.as_millis()).unwrap())
        );

        // Its lock goes soon after: the statement was interrupted.
        let freed = exclusive_lock(self.db.clone(), FREED_WITHIN).await;
        let freed_after = ended.elapsed();
        assert!(
            freed.is_ok(),
            "the statement still held its lock {freed_after:?} after the run ended: {freed:?}"
        );
        assert!(freed_after < FREED_WITHIN, "{freed_after:?}");

        // The `execute` future was dropped mid-statement: it never returned a frame.
        {
            let events = self.events.lock().unwrap();
            assert!(events.gone.is_some(), "{events:?}");
            assert_eq!(events.finished, None, "{events:?}");
        }

        // The interrupt did not outlive its statement: the next one runs.
        let one =
            nl2sql_adapter::shape_check(self.adapter.id(), self.adapter.dialect(), "SELECT 1")
                .unwrap();
        let frame = self.adapter.run_sql(&one, Limits::default()).await;
        assert!(frame.success, "{:?}", frame.error);
        assert_eq!(frame.row_count, 1);
        freed_after
    }
}

/// Takes and releases the exclusive lock on `db` from a new read-write connection,
/// waiting at most `wait` for other connections' locks.
async fn exclusive_lock(db: PathBuf, wait: Duration) -> Result<(), rusqlite::Error> {
    tokio::task::spawn_blocking(move || take_exclusive(&db, wait))
        .await
        .unwrap()
}

fn take_exclusive(db: &Path, wait: Duration) -> Result<(), rusqlite::Error> {
    let conn = rusqlite::Connection::open(db)?;
    conn.busy_timeout(wait)?;
    conn.execute_batch("BEGIN EXCLUSIVE; ROLLBACK;")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_global_timeout_interrupts_the_running_statement() {
    let h = Harness::new("timeout-sql", Duration::from_secs(1)).await;
    let asked = Instant::now();
    let ((r, ended), probe) = tokio::join!(
        async {
            let r = h
                .engine
                .ask("How many factories do we have?", AskOptions::default())
                .await;
            (r, Instant::now())
        },
        h.probe_running(),
    );
    let freed_after = h
        .check_stopped(
            &r,
            ended,
            probe,
            RunStatus::TimedOut,
            ErrorCode::PipelineTimeout,
        )
        .await;
    let started = h.events.lock().unwrap().started.unwrap();
    eprintln!(
        "statement started {:?} after the ask, the run ended {:?} after the ask, \
         the lock went {freed_after:?} after the run ended",
        started - asked,
        ended - asked,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_interrupts_the_running_statement() {
    // The global timeout is far away: only the cancellation stops the run.
    let h = Harness::new("cancel-sql", Duration::from_secs(120)).await;
    let cancel = CancellationToken::new();
    let opts = AskOptions {
        cancel: cancel.clone(),
        ..AskOptions::default()
    };
    let ((r, ended), probe) = tokio::join!(
        async {
            let r = h.engine.ask("How many factories do we have?", opts).await;
            (r, Instant::now())
        },
        async {
            let probe = h.probe_running().await;
            cancel.cancel();
            probe
        },
    );
    let freed_after = h
        .check_stopped(&r, ended, probe, RunStatus::Cancelled, ErrorCode::Cancelled)
        .await;
    eprintln!("the lock went {freed_after:?} after the cancelled run ended");
}

//! The worker against the manufacturing fixture (a real SQLite file): the worker loop in
//! memory and as the `nl2sql-worker` binary, and `ProcessAdapter` over real child
//! processes (results equal to the in-process adapter, the conformance suite, crashes,
//! deadlines and cancellation).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nl2sql_adapter::Limits;
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_test_support::{TempDir, manufacturing_db};
use nl2sql_worker::{ProcessAdapter, WorkerArgs, WorkerOptions};

mod binary;
mod faults;
mod process;
mod serve;

/// A statement that runs for minutes unless stopped.
const SLOW_SQL: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c";

/// `sql` as the parent sends it, with no guard in this process: the worker checks it
/// again before its adapter runs it.
fn raw(sql: &str) -> nl2sql_validate::GuardedSql {
    nl2sql_validate::GuardedSql::unguarded_for_sandbox_tests(nl2sql_state::Dialect::Sqlite, sql)
}

/// Limits under which [`SLOW_SQL`] is not stopped by its own timeout during a test.
fn slow_limits() -> Limits {
    Limits {
        statement_timeout_ms: 600_000,
        ..Limits::default()
    }
}

/// A private copy of the fixture in `dir`.
fn copy_fixture(dir: &TempDir) -> PathBuf {
    let path = dir.path().join("manufacturing.db");
    std::fs::copy(manufacturing_db(), &path).unwrap();
    path
}

fn url_of(path: &Path) -> String {
    format!("sqlite://{}", path.display())
}

fn in_process(path: &Path) -> SqliteAdapter {
    SqliteAdapter::from_url("manufacturing", &url_of(path), Limits::default()).unwrap()
}

fn worker_args(path: &Path) -> WorkerArgs {
    WorkerArgs::parse(["--url", &url_of(path), "--id", "manufacturing"]).unwrap()
}

/// The worker binary serving the database at `path`.
fn worker_command(path: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nl2sql-worker"));
    command.args(worker_args(path).to_args());
    command
}

async fn spawn_adapter(path: &Path, options: WorkerOptions) -> ProcessAdapter {
    ProcessAdapter::spawn(worker_command(path), options)
        .await
        .unwrap()
}

/// Waits (up to a generous bound) until `done` holds.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The state letter of process `pid` (`R`, `S`, `Z` for a zombie…), `None` once it is
/// gone (reaped).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.trim_start().chars().next()
}

/// Whether `pid` is running (not a zombie, not gone).
fn running(pid: u32) -> bool {
    matches!(process_state(pid), Some(state) if state != 'Z')
}

/// Whether `pid` has fully exited and waits to be reaped: a zombie whose threads are
/// all gone (a killed multi-threaded process shows its main thread as a zombie while the
/// others are still exiting, and only then can its parent reap it).
fn reapable(pid: u32) -> bool {
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
    process_state(pid) == Some('Z') && threads <= 1
}

fn kill_9(pid: u32) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -9 {pid}")])
        .status()
        .unwrap();
    assert!(status.success(), "kill -9 {pid} failed");
}

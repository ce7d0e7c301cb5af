//! `ProcessAdapter`: a datasource served by disposable child processes.
//!
//! Each call takes an idle child (or spawns one), writes one request line, reads one
//! result line and gives the child back. The line exchange runs on tokio's blocking pool
//! while the call waits for it under a deadline. Whatever goes wrong with the child turns
//! into an error for that call alone, and the child is killed and reaped:
//! - it dies, closes its output or writes something that is not the reply to this
//!   request → `EXECUTOR_CRASH`;
//! - the deadline (statement timeout + margin) passes → `EXECUTION_TIMEOUT`;
//! - the call's future is dropped (cancellation) → nothing is returned, and no statement
//!   keeps running.
//!
//! The next call spawns a fresh child. A child that exited while idle is replaced before
//! the call is sent, so that call does not fail; one still dying when the call reaches it
//! fails that call with `EXECUTOR_CRASH`.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_adapter::{
    AdapterRequest, CapabilitySet, CostEstimate, DatasourceAdapter, DryRunResult, Limits,
    QueryPlan, RequestLimits, ResultError, ResultErrorCode, ResultFrame,
};
use nl2sql_state::{Dialect, SchemaContract, SchemaSnapshot};
use tokio::sync::Semaphore;

use crate::protocol::{
    ExecutionRequest, ExecutionResult, Mode, PROTOCOL_VERSION, ResultData, WorkerInfo,
};

/// Children per adapter by default: the spec's `SANDBOX_EXEC_WORKERS`.
pub const DEFAULT_POOL_SIZE: usize = 4;

/// A reply line may be this long plus three times the call's byte limit (base64 and Arrow
/// IPC framing); a longer one is a broken worker.
const REPLY_LINE_BASE_BYTES: u64 = 64 * 1024 * 1024;

/// How a [`ProcessAdapter`] runs its children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerOptions {
    /// At most this many children run at once (each serves one call at a time); they are
    /// spawned on demand.
    pub pool_size: usize,
    /// Added to a statement's timeout to get the call's deadline: the worker's own
    /// timeout should fire first, the deadline only catches a hung worker.
    pub deadline_margin: Duration,
    /// The deadline of `schema_snapshot` and `schema_contract`.
    pub schema_deadline: Duration,
    /// The deadline of the handshake in [`ProcessAdapter::spawn`] (the child opens its
    /// database before it answers).
    pub handshake_deadline: Duration,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            pool_size: DEFAULT_POOL_SIZE,
            deadline_margin: Duration::from_secs(5),
            schema_deadline: Duration::from_secs(120),
            handshake_deadline: Duration::from_secs(30),
        }
    }
}

/// A [`DatasourceAdapter`] whose every operation runs in a child process speaking the
/// worker protocol (`nl2sql-worker --engine … --url … --id …`, or `nl2sql worker …`), so
/// that a crash in an engine's native code kills a disposable child, not the caller.
pub struct ProcessAdapter {
    info: WorkerInfo,
    pool: Arc<Pool>,
}

impl std::fmt::Debug for ProcessAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessAdapter")
            .field("id", &self.info.id)
            .field("engine_type", &self.info.engine_type)
            .field("pool_size", &self.pool.options.pool_size)
            .finish_non_exhaustive()
    }
}

impl ProcessAdapter {
    /// An adapter for the datasource `info` describes, whose children run `command` (its
    /// stdin and stdout are replaced by pipes; stderr is left as configured). No child
    /// starts before the first call.
    pub fn new(command: Command, info: WorkerInfo, options: WorkerOptions) -> Self {
        ProcessAdapter {
            pool: Arc::new(Pool::new(command, &info.id, options)),
            info,
        }
    }

    /// Starts one child running `command` and asks it what it serves (the `describe`
    /// handshake); the child then stays in the pool for the next call. Fails with the
    /// child's error (e.g. `SERVICE_UNAVAILABLE` when its database cannot be opened), or
    /// `EXECUTOR_CRASH` when the child does not speak the protocol.
    pub async fn spawn(command: Command, options: WorkerOptions) -> Result<Self, ResultError> {
        let deadline = options.handshake_deadline;
        let pool = Arc::new(Pool::new(command, "worker", options));
        let request = ExecutionRequest::new(0, Mode::Describe);
        let info = pool
            .call(request, deadline, REPLY_LINE_BASE_BYTES, |result| {
                expect(result, |data| match data {
                    ResultData::Worker(info) => Ok(info),
                    other => Err(other),
                })
            })
            .await?;
        if info.protocol_version != PROTOCOL_VERSION {
            return Err(ResultError::new(
                ResultErrorCode::ServiceUnavailable,
                format!(
                    "the worker speaks protocol version {}, this build speaks {PROTOCOL_VERSION}",
                    info.protocol_version
                ),
            )
            .at("connect", &info.id));
        }
        pool.set_datasource_id(&info.id);
        Ok(ProcessAdapter { info, pool })
    }

    /// What the adapter serves.
    pub fn info(&self) -> &WorkerInfo {
        &self.info
    }

    /// The process ids of the live children, idle or busy, sorted (for health checks and
    /// tests).
    pub fn worker_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = lock(&self.pool.idle).iter().map(|w| w.pid).collect();
        pids.extend(lock(&self.pool.busy).iter().copied());
        pids.sort_unstable();
        pids
    }

    /// The process ids of the children serving a call right now, sorted.
    pub fn busy_pids(&self) -> Vec<u32> {
        let mut pids = lock(&self.pool.busy).clone();
        pids.sort_unstable();
        pids
    }

    fn statement_deadline(&self, statement_timeout_ms: u64) -> Duration {
        Duration::from_millis(statement_timeout_ms)
            .saturating_add(self.pool.options.deadline_margin)
    }

    async fn frame_call(&self, request: ExecutionRequest, limits: Limits) -> ResultFrame {
        let started = Instant::now();
        let deadline = self.statement_deadline(limits.statement_timeout_ms);
        let max_line = reply_limit(limits.max_bytes);
        let result = self
            .pool
            .call(request, deadline, max_line, |result| {
                let ExecutionResult {
                    success,
                    data,
                    error,
                    ..
                } = result;
                match data {
                    Some(ResultData::Frame(wire)) => wire
                        .into_frame(success, error)
                        .map(Ok)
                        .map_err(|e| e.to_string()),
                    Some(other) => Err(mismatch(&other)),
                    None => failed(success, error),
                }
            })
            .await;
        result.unwrap_or_else(|e| ResultFrame::failed(e, elapsed_ms(started)))
    }
}

#[async_trait]
impl DatasourceAdapter for ProcessAdapter {
    fn id(&self) -> &str {
        &self.info.id
    }

    fn engine_type(&self) -> &str {
        &self.info.engine_type
    }

    fn dialect(&self) -> Dialect {
        self.info.dialect
    }

    fn capabilities(&self) -> &CapabilitySet {
        &self.info.capabilities
    }

    fn limits(&self) -> Limits {
        self.info.limits
    }

    async fn test_connection(&self) -> Result<(), ResultError> {
        let deadline = self.statement_deadline(self.info.limits.statement_timeout_ms);
        let request = ExecutionRequest::new(0, Mode::TestConnection);
        self.pool
            .call(request, deadline, REPLY_LINE_BASE_BYTES, |result| {
                match (result.success, result.data) {
                    (true, None) => Ok(Ok(())),
                    (_, Some(other)) => Err(mismatch(&other)),
                    (false, None) => failed(false, result.error),
                }
            })
            .await
    }

    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        let deadline = self.pool.options.schema_deadline;
        let request = ExecutionRequest::new(0, Mode::FetchSchema);
        self.pool
            .call(request, deadline, REPLY_LINE_BASE_BYTES, |result| {
                expect(result, |data| match data {
                    ResultData::Snapshot(snapshot) => Ok(*snapshot),
                    other => Err(other),
                })
            })
            .await
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let deadline = self.pool.options.schema_deadline;
        let request = ExecutionRequest::new(0, Mode::SchemaContract);
        self.pool
            .call(request, deadline, REPLY_LINE_BASE_BYTES, |result| {
                expect(result, |data| match data {
                    ResultData::Contract(contract) => Ok(*contract),
                    other => Err(other),
                })
            })
            .await
    }

    async fn run_sql(&self, sql: &nl2sql_validate::GuardedSql, limits: Limits) -> ResultFrame {
        let request = ExecutionRequest::new(0, Mode::RunSql)
            .with_sql(sql.as_str())
            .with_limits(RequestLimits {
                row_limit: Some(limits.row_limit),
                timeout_ms: Some(limits.statement_timeout_ms),
                max_bytes: Some(limits.max_bytes),
            });
        self.frame_call(request, limits).await
    }

    async fn dry_run(&self, sql: &nl2sql_validate::GuardedSql) -> DryRunResult {
        let deadline = self.statement_deadline(self.info.limits.statement_timeout_ms);
        let request = ExecutionRequest::new(0, Mode::DryRun).with_sql(sql.as_str());
        let result = self
            .pool
            .call(
                request,
                deadline,
                REPLY_LINE_BASE_BYTES,
                |result| match result.data {
                    Some(ResultData::DryRun(dry)) => Ok(Ok(dry)),
                    Some(other) => Err(mismatch(&other)),
                    None => failed(result.success, result.error),
                },
            )
            .await;
        result.unwrap_or_else(|error| DryRunResult {
            is_valid: false,
            error_message: Some(error.safe_message.clone()),
            data: None,
            error: Some(error),
        })
    }

    async fn cost_estimate(
        &self,
        sql: &nl2sql_validate::GuardedSql,
    ) -> Result<CostEstimate, ResultError> {
        let deadline = self.statement_deadline(self.info.limits.statement_timeout_ms);
        let request = ExecutionRequest::new(0, Mode::CostEstimate).with_sql(sql.as_str());
        self.pool
            .call(request, deadline, REPLY_LINE_BASE_BYTES, |result| {
                expect(result, |data| match data {
                    ResultData::CostEstimate(cost) => Ok(cost),
                    other => Err(other),
                })
            })
            .await
    }

    async fn explain(&self, sql: &nl2sql_validate::GuardedSql) -> Result<QueryPlan, ResultError> {
        let deadline = self.statement_deadline(self.info.limits.statement_timeout_ms);
        let request = ExecutionRequest::new(0, Mode::Explain).with_sql(sql.as_str());
        self.pool
            .call(request, deadline, REPLY_LINE_BASE_BYTES, |result| {
                expect(result, |data| match data {
                    ResultData::Plan(plan) => Ok(plan),
                    other => Err(other),
                })
            })
            .await
    }

    fn details(&self) -> serde_json::Value {
        let mut details = self.info.details.clone();
        if let Some(map) = details.as_object_mut() {
            map.insert(
                "worker".to_owned(),
                serde_json::json!({
                    "out_of_process": true,
                    "pool_size": self.pool.options.pool_size,
                }),
            );
        }
        details
    }

    /// Checks the plan type here, then sends the request to a child, whose adapter checks
    /// the SQL (empty, the guard's shape and security checks) and narrows the limits.
    async fn execute(&self, req: AdapterRequest) -> ResultFrame {
        if req.plan_type != "sql" {
            return ResultFrame::failed(
                ResultError::new(
                    ResultErrorCode::CapabilityViolation,
                    "SQL adapter received non-SQL request.",
                )
                .at("execute", self.id()),
                0.0,
            );
        }
        let limits = self.info.limits.narrowed_by(&req.limits);
        let mut request = ExecutionRequest::new(0, Mode::Execute).with_limits(req.limits);
        request.sql = req.sql_text().map(str::to_owned);
        request.trace_id = req.trace_id;
        self.frame_call(request, limits).await
    }
}

/// What a reply decoder returns: the operation's outcome, or why the reply is not a
/// reply to the request (the child is then treated as crashed).
type Decoded<T> = Result<Result<T, ResultError>, String>;

/// A successful reply whose data `pick` accepts, or a failure.
fn expect<T>(
    result: ExecutionResult,
    pick: impl FnOnce(ResultData) -> Result<T, ResultData>,
) -> Decoded<T> {
    match (result.success, result.data) {
        (true, Some(data)) => pick(data).map(Ok).map_err(|other| mismatch(&other)),
        (true, None) => Err("a successful reply without data".to_owned()),
        (false, Some(other)) => Err(mismatch(&other)),
        (false, None) => failed(false, result.error),
    }
}

/// A reply without data: it must be a failure carrying its error.
fn failed<T>(success: bool, error: Option<ResultError>) -> Decoded<T> {
    match (success, error) {
        (false, Some(error)) => Ok(Err(error)),
        _ => Err("a reply without data or error".to_owned()),
    }
}

fn mismatch(data: &ResultData) -> String {
    format!("a reply of the wrong kind ({})", data.kind())
}

fn reply_limit(max_bytes: u64) -> u64 {
    REPLY_LINE_BASE_BYTES.saturating_add(max_bytes.saturating_mul(3))
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The children of one adapter.
struct Pool {
    command: Mutex<Command>,
    options: WorkerOptions,
    /// The datasource id put on the errors this side raises.
    datasource_id: Mutex<String>,
    idle: Mutex<Vec<Worker>>,
    /// Pids of the children serving a call.
    busy: Mutex<Vec<u32>>,
    permits: Semaphore,
    next_id: AtomicU64,
}

impl Pool {
    fn new(command: Command, datasource_id: &str, options: WorkerOptions) -> Pool {
        let permits = Semaphore::new(options.pool_size.max(1));
        Pool {
            command: Mutex::new(command),
            options,
            datasource_id: Mutex::new(datasource_id.to_owned()),
            idle: Mutex::new(Vec::new()),
            busy: Mutex::new(Vec::new()),
            permits,
            next_id: AtomicU64::new(1),
        }
    }

    fn set_datasource_id(&self, id: &str) {
        *lock(&self.datasource_id) = id.to_owned();
    }

    fn error(
        &self,
        code: ResultErrorCode,
        message: &str,
        detail: String,
        mode: Mode,
    ) -> ResultError {
        let mut error =
            ResultError::new(code, message).at(mode.stage(), &lock(&self.datasource_id));
        error.detail = Some(detail);
        error
    }

    /// Sends `request` to a child and decodes its reply with `decode`, under `deadline`.
    async fn call<T>(
        self: &Arc<Self>,
        mut request: ExecutionRequest,
        deadline: Duration,
        max_line: u64,
        decode: impl FnOnce(ExecutionResult) -> Decoded<T>,
    ) -> Result<T, ResultError> {
        let mode = request.mode;
        let crash = |detail: String| {
            tracing::warn!(target: "nl2sql::worker", mode = mode.as_str(), %detail, "worker process failed; it will be replaced");
            self.error(
                ResultErrorCode::ExecutorCrash,
                "the execution worker process failed; the next call starts a new one",
                detail,
                mode,
            )
        };
        let Ok(_permit) = self.permits.acquire().await else {
            return Err(crash("the worker pool is closed".to_owned()));
        };
        request.id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let line = request
            .to_line()
            .map_err(|e| crash(format!("cannot encode the request: {e}")))?;
        // From here to the end of the call, the child is owned by `in_flight`: dropping
        // the call's future kills it.
        let worker = self
            .take_or_spawn()
            .map_err(|e| crash(format!("cannot start the worker process: {e}")))?;
        let Worker { child, pipes, pid } = worker;
        let in_flight = InFlight::new(child, pid, Arc::clone(self));
        let exchange = tokio::task::spawn_blocking(move || exchange(pipes, line, max_line));
        match tokio::time::timeout(deadline, exchange).await {
            Err(_elapsed) => {
                drop(in_flight);
                tracing::warn!(target: "nl2sql::worker", mode = mode.as_str(), pid, "worker missed its deadline; killed");
                Err(self.error(
                    ResultErrorCode::ExecutionTimeout,
                    "the statement did not finish before its deadline; its worker process was stopped",
                    format!("worker {pid} gave no reply within {deadline:?}"),
                    mode,
                ))
            }
            Ok(Err(join)) => Err(crash(format!(
                "the exchange with worker {pid} failed: {join}"
            ))),
            Ok(Ok((_, Err(fault)))) => Err(crash(format!("worker {pid}: {fault}"))),
            Ok(Ok((pipes, Ok(bytes)))) => {
                let decoded = std::str::from_utf8(&bytes)
                    .map_err(|_| "the reply is not UTF-8".to_owned())
                    .and_then(|text| ExecutionResult::from_line(text).map_err(|e| e.to_string()))
                    .and_then(|result| {
                        if result.id == Some(request.id) {
                            decode(result)
                        } else {
                            Err(format!(
                                "a reply to request {:?}, expected {}",
                                result.id, request.id
                            ))
                        }
                    });
                match decoded {
                    Ok(outcome) => {
                        let child = in_flight.release();
                        self.give_back(Worker { child, pipes, pid });
                        outcome
                    }
                    Err(reason) => Err(crash(format!("worker {pid} sent garbage: {reason}"))),
                }
            }
        }
    }

    /// An idle child that is still alive, else a new one.
    fn take_or_spawn(&self) -> io::Result<Worker> {
        loop {
            let Some(mut worker) = lock(&self.idle).pop() else {
                break;
            };
            match worker.child.try_wait() {
                Ok(None) => return Ok(worker),
                Ok(Some(status)) => {
                    tracing::warn!(target: "nl2sql::worker", pid = worker.pid, %status, "idle worker process died; replacing it");
                }
                Err(e) => {
                    tracing::warn!(target: "nl2sql::worker", pid = worker.pid, error = %e, "cannot check an idle worker process; replacing it");
                }
            }
        }
        self.spawn()
    }

    fn spawn(&self) -> io::Result<Worker> {
        let mut child = {
            let mut command = lock(&self.command);
            command.stdin(Stdio::piped()).stdout(Stdio::piped());
            command.spawn()?
        };
        let pid = child.id();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            kill_and_reap(child);
            return Err(io::Error::other(
                "the worker process has no stdin or stdout pipe",
            ));
        };
        Ok(Worker {
            child: ChildGuard(Some(child)),
            pipes: Pipes {
                stdin,
                stdout: BufReader::new(stdout),
            },
            pid,
        })
    }

    fn give_back(&self, worker: Worker) {
        lock(&self.idle).push(worker);
    }
}

/// One child and its pipes.
struct Worker {
    child: ChildGuard,
    pipes: Pipes,
    pid: u32,
}

struct Pipes {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

/// A child that is killed and reaped when dropped.
struct ChildGuard(Option<Child>);

impl ChildGuard {
    fn try_wait(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        match &mut self.0 {
            Some(child) => child.try_wait(),
            None => Ok(None),
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            kill_and_reap(child);
        }
    }
}

/// Kills `child` and reaps it (on a thread of its own when it has not exited yet).
fn kill_and_reap(mut child: Child) {
    let _ = child.kill();
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("nl2sql-worker-reaper".to_owned())
        .spawn(move || {
            let _ = child.wait();
        });
    if let Err(e) = spawned {
        tracing::warn!(target: "nl2sql::worker", error = %e, "cannot start a thread to reap a worker process");
    }
}

/// The child of a call in flight: listed as busy, killed if the call ends without
/// releasing it (deadline, fault, or the call's future dropped).
struct InFlight {
    child: ChildGuard,
    pid: u32,
    pool: Arc<Pool>,
}

impl InFlight {
    fn new(child: ChildGuard, pid: u32, pool: Arc<Pool>) -> Self {
        lock(&pool.busy).push(pid);
        InFlight { child, pid, pool }
    }

    /// The child, alive and in step with the protocol, for the next call.
    fn release(mut self) -> ChildGuard {
        ChildGuard(self.child.0.take())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut busy = lock(&self.pool.busy);
        if let Some(i) = busy.iter().position(|&p| p == self.pid) {
            busy.swap_remove(i);
        }
        // `self.child`, when still held, is killed as it drops.
    }
}

/// Why an exchange with a child failed.
#[derive(Debug, thiserror::Error)]
enum Fault {
    #[error("cannot send the request: {0}")]
    Send(io::Error),
    #[error("cannot read the reply: {0}")]
    Receive(io::Error),
    #[error("the worker closed its output (it exited or was killed)")]
    Closed,
    #[error("the reply ended without a newline (the worker exited mid-line)")]
    Truncated,
    #[error("the reply is longer than {0} bytes")]
    TooLong(u64),
}

/// Writes `line` and reads one line back (blocking).
fn exchange(mut pipes: Pipes, line: String, max_line: u64) -> (Pipes, Result<Vec<u8>, Fault>) {
    let result = exchange_on(&mut pipes, &line, max_line);
    (pipes, result)
}

fn exchange_on(pipes: &mut Pipes, line: &str, max_line: u64) -> Result<Vec<u8>, Fault> {
    pipes
        .stdin
        .write_all(line.as_bytes())
        .and_then(|()| pipes.stdin.flush())
        .map_err(Fault::Send)?;
    let mut reply = Vec::new();
    let n = (&mut pipes.stdout)
        .take(max_line)
        .read_until(b'\n', &mut reply)
        .map_err(Fault::Receive)?;
    if n == 0 {
        return Err(Fault::Closed);
    }
    if reply.last() != Some(&b'\n') {
        return Err(if n as u64 >= max_line {
            Fault::TooLong(max_line)
        } else {
            Fault::Truncated
        });
    }
    Ok(reply)
}

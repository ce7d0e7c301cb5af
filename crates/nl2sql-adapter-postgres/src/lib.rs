//! The PostgreSQL adapter of nl2sql (spec: adapters.md §6.3), on tokio-postgres.
//!
//! Sandbox, for every statement:
//! - sessions start with `default_transaction_read_only = on`, and every statement runs
//!   in its own `START TRANSACTION READ ONLY` with `SET LOCAL statement_timeout`; the
//!   transaction is always rolled back, which also undoes any `SET` or `set_config` the
//!   statement made, and session-level advisory locks are released afterwards, so no
//!   session state outlives the call;
//! - the statement is prepared first (extended protocol: one statement, never a script),
//!   and a statement that returns no columns (DDL, DML without `RETURNING`, `COPY`,
//!   `PREPARE`, `DECLARE`, `SET`, transaction control…) is refused before it runs;
//! - rows are fetched through a portal in chunks, so a row or byte limit stops the
//!   server from producing more;
//! - connect a role that can only read (`GRANT SELECT`): a read-only transaction cannot
//!   stop a superuser's file functions (`pg_read_file`, `lo_export`). The adapter logs a
//!   warning and reports `"privileged": true` in its details when the role is a superuser.
//!
//! A statement past its timeout is cancelled by the server (`57014`, mapped to
//! `EXECUTION_TIMEOUT`); if the server does not answer within a grace period the client
//! sends a cancel request and drops the connection. A call whose future is dropped (a
//! cancelled or timed-out run) sends a cancel request too, from a spawned task, and its
//! connection never returns to the pool (GAP-11). A statement that fails because its
//! connection dropped (closed, reset or terminated by the server, not an SQL error) runs
//! once more on a fresh connection; a second failure is returned (GAP-60). Connecting is
//! bounded by the connect timeout: a dead server is `SERVICE_UNAVAILABLE`, never a hang.

mod decode;
mod snapshot;

use std::str::FromStr as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_adapter::{
    AdapterOptions, Attempt, Capability, CapabilitySet, CostEstimate, DatasourceAdapter,
    DryRunResult, Limits, Push, QueryPlan, ResultBuilder, ResultError, ResultErrorCode,
    ResultFrame, dialect_mismatch, json_plan, retry_once_when_lost,
};
use nl2sql_state::{Dialect, SchemaContract, SchemaSnapshot};
use nl2sql_validate::GuardedSql;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::error::SqlState;
use tokio_postgres::{CancelToken, Client, NoTls};

/// At most this many connections are open at once.
const MAX_CONNECTIONS: usize = 8;

/// Rows fetched per round trip from the portal.
const FETCH_ROWS: u64 = 1_024;

/// How long the client waits past the statement timeout for the server's own cancel.
const CANCEL_GRACE: Duration = Duration::from_millis(2_000);

/// A PostgreSQL database behind the adapter SPI.
pub struct PostgresAdapter {
    id: String,
    config: tokio_postgres::Config,
    connect_timeout: Duration,
    options: AdapterOptions,
    limits: Limits,
    capabilities: CapabilitySet,
    idle: Arc<Mutex<Vec<Client>>>,
    permits: Arc<Semaphore>,
    privileged: bool,
    server_version: String,
    /// Statements run a second time after their connection dropped (GAP-60).
    retries: AtomicU64,
}

impl std::fmt::Debug for PostgresAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresAdapter")
            .field("id", &self.id)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn unavailable(message: &str, detail: String) -> ResultError {
    let mut e = ResultError::new(ResultErrorCode::ServiceUnavailable, message);
    e.detail = Some(detail);
    e
}

/// A pooled connection and the permit that counts it.
struct Pooled {
    client: Option<Client>,
    _permit: OwnedSemaphorePermit,
}

/// The capabilities every [`PostgresAdapter`] advertises, known without opening a database
/// (for listings such as `nl2sql list-adapters`).
pub fn capabilities() -> CapabilitySet {
    CapabilitySet::new(&[
        Capability::SupportsSql,
        Capability::SupportsSchemaIntrospection,
        Capability::SupportsDryRun,
        Capability::SupportsCostEstimate,
    ])
}

impl PostgresAdapter {
    /// Connects to `postgres://user[:password]@host[:port]/database[?options]` (also
    /// `postgresql://`). The URL is never echoed in errors. The first connection is
    /// opened now, so a dead server or wrong credentials fail here.
    pub async fn from_url(id: &str, url: &str, limits: Limits) -> Result<Self, ResultError> {
        Self::from_url_with_options(id, url, limits, AdapterOptions::default()).await
    }

    /// [`PostgresAdapter::from_url`] with an explicit connect timeout.
    pub async fn from_url_with_connect_timeout(
        id: &str,
        url: &str,
        limits: Limits,
        connect_timeout: Duration,
    ) -> Result<Self, ResultError> {
        let options = AdapterOptions::with_connect_timeout(connect_timeout);
        Self::from_url_with_options(id, url, limits, options).await
    }

    /// [`PostgresAdapter::from_url`] with explicit [`AdapterOptions`]: the connect
    /// timeout, and the statistics budget and sample size of snapshots.
    pub async fn from_url_with_options(
        id: &str,
        url: &str,
        limits: Limits,
        options: AdapterOptions,
    ) -> Result<Self, ResultError> {
        let connect_timeout = Duration::from_millis(options.connect_timeout_ms);
        let mut config = parse_url(url).map_err(|e| e.at("connect", id))?;
        config.connect_timeout(connect_timeout);
        config.application_name("nl2sql");
        let session = match config.get_options() {
            Some(o) if !o.trim().is_empty() => format!("{o} -c default_transaction_read_only=on"),
            _ => "-c default_transaction_read_only=on".to_owned(),
        };
        config.options(session);
        let mut adapter = PostgresAdapter {
            id: id.to_owned(),
            config,
            connect_timeout,
            options,
            limits,
            capabilities: capabilities(),
            idle: Arc::new(Mutex::new(Vec::new())),
            permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            privileged: false,
            server_version: String::new(),
            retries: AtomicU64::new(0),
        };
        let client = adapter.connect().await.map_err(|e| e.at("connect", id))?;
        let row = client
            .query_one(
                "SELECT current_setting('server_version'), rolsuper FROM pg_roles WHERE rolname = current_user",
                &[],
            )
            .await
            .map_err(|e| map_err(&e).at("connect", id))?;
        adapter.server_version = row.try_get(0).unwrap_or_default();
        adapter.privileged = row.try_get(1).unwrap_or(false);
        if adapter.privileged {
            tracing::warn!(
                datasource = id,
                "connected as a PostgreSQL superuser: the read-only transaction does not stop \
                 server file functions; connect a role with SELECT privileges only"
            );
        }
        adapter.give_back(client);
        Ok(adapter)
    }

    /// The adapter's options.
    pub fn options(&self) -> AdapterOptions {
        self.options
    }

    /// How many statements ran a second time, on a fresh connection, because their
    /// connection dropped (GAP-60).
    pub fn retried_statements(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    async fn connect(&self) -> Result<Client, ResultError> {
        let connecting = self.config.connect(NoTls);
        let (client, connection) = match tokio::time::timeout(
            self.connect_timeout
                .saturating_add(Duration::from_millis(500)),
            connecting,
        )
        .await
        {
            Err(_) => {
                return Err(unavailable(
                    "timed out connecting to the PostgreSQL server",
                    format!("no answer within {:?}", self.connect_timeout),
                ));
            }
            Ok(Err(e)) => return Err(connect_error(&e)),
            Ok(Ok(pair)) => pair,
        };
        let id = self.id.clone();
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(datasource = %id, error = %e, "PostgreSQL connection ended");
            }
        });
        Ok(client)
    }

    async fn checkout(&self) -> Result<Pooled, ResultError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|e| unavailable("the connection pool is closed", e.to_string()))?;
        let reused = loop {
            let next = self.idle.lock().ok().and_then(|mut p| p.pop());
            match next {
                Some(c) if c.is_closed() => continue,
                other => break other,
            }
        };
        let client = match reused {
            Some(c) => c,
            None => self.connect().await?,
        };
        Ok(Pooled {
            client: Some(client),
            _permit: permit,
        })
    }

    async fn plan_of(&self, sql: &GuardedSql) -> Result<serde_json::Value, ResultError> {
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return Err(e);
        }
        let sql = sql.as_str();
        match self
            .in_read_only_tx(
                self.limits.statement_timeout_ms,
                Op::Explain(sql.to_owned()),
            )
            .await?
        {
            Out::Plan(p) => Ok(p),
            _ => Err(unexpected()),
        }
    }

    fn give_back(&self, client: Client) {
        if client.is_closed() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_CONNECTIONS
        {
            idle.push(client);
        }
    }

    /// Runs `op` in a read-only transaction with `timeout_ms`, on a pooled connection;
    /// cancels on the server when it overruns or when this future is dropped. When the
    /// connection drops under it, runs it once more on a fresh connection.
    async fn in_read_only_tx(&self, timeout_ms: u64, op: Op) -> Result<Out, ResultError> {
        // The permit is held until the end, also across the retry.
        let mut pooled = self.checkout().await?;
        let Some(client) = pooled.client.take() else {
            return Err(ResultError::new(
                ResultErrorCode::ExecutorCrash,
                "no PostgreSQL connection",
            ));
        };
        // A second attempt runs on a new connection (the idle ones may have dropped too).
        retry_once_when_lost(
            "PostgreSQL",
            &self.id,
            &self.retries,
            self.attempt(client, timeout_ms, op.clone()),
            || async {
                let client = self.connect().await?;
                Ok(self.attempt(client, timeout_ms, op).await)
            },
        )
        .await
    }

    /// One run of `op` on `client`, which goes back to the pool only when it is healthy.
    async fn attempt(&self, mut client: Client, timeout_ms: u64, op: Op) -> Attempt<Out> {
        let mut guard = CancelOnDrop {
            token: Some(client.cancel_token()),
            connect_timeout: self.connect_timeout,
        };
        let limit = Duration::from_millis(timeout_ms).saturating_add(CANCEL_GRACE);
        let outcome = tokio::time::timeout(
            limit,
            run_tx(&mut client, &self.id, timeout_ms, self.privileged, op),
        )
        .await;
        let token = guard.token.take();
        match outcome {
            Ok(Ran { out: Ok(v), lost }) => {
                if !lost {
                    self.give_back(client);
                }
                Attempt::Done(Ok(v))
            }
            Ok(Ran { out: Err(e), lost }) => {
                if lost && e.error_code == ResultErrorCode::ServiceUnavailable {
                    return Attempt::Lost(e);
                }
                if !lost && e.error_code != ResultErrorCode::ServiceUnavailable {
                    self.give_back(client);
                }
                Attempt::Done(Err(e))
            }
            Err(_) => {
                if let Some(token) = token {
                    let _ =
                        tokio::time::timeout(self.connect_timeout, token.cancel_query(NoTls)).await;
                }
                Attempt::Done(Err(timeout_error(format!(
                    "no answer within {timeout_ms} ms plus {CANCEL_GRACE:?}"
                ))))
            }
        }
    }
}

/// Sends a cancel request for the connection's running statement when dropped while
/// armed: the future of a call was dropped (a cancelled or timed-out run). The request
/// goes out from a spawned task, so dropping never blocks.
struct CancelOnDrop {
    token: Option<CancelToken>,
    connect_timeout: Duration,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(token) = self.token.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let limit = self.connect_timeout;
        runtime.spawn(async move {
            if let Ok(Err(e)) = tokio::time::timeout(limit, token.cancel_query(NoTls)).await {
                tracing::debug!(error = %e, "cannot cancel a dropped PostgreSQL statement");
            }
        });
    }
}

/// What runs inside one read-only transaction.
#[derive(Clone)]
enum Op {
    Ping,
    Execute {
        sql: String,
        limits: Limits,
        started: Instant,
    },
    Explain(String),
    Snapshot {
        options: AdapterOptions,
        detail: snapshot::Detail,
    },
}

/// What an [`Op`] returns.
enum Out {
    Unit,
    Frame(ResultFrame),
    Plan(serde_json::Value),
    Snapshot(Box<SchemaSnapshot>),
}

/// What [`run_tx`] did: the op's outcome, and whether the connection is gone.
struct Ran {
    out: Result<Out, ResultError>,
    lost: bool,
}

/// Runs `op` in a read-only transaction, then releases session advisory locks. A
/// connection that cannot run that last statement is gone (`lost`); the op's own
/// outcome stands (its rows were read whole).
async fn run_tx(client: &mut Client, id: &str, timeout_ms: u64, privileged: bool, op: Op) -> Ran {
    let out = in_tx(client, id, timeout_ms, privileged, op).await;
    // Session-level advisory locks survive a rollback: release them.
    match client
        .batch_execute("SELECT pg_advisory_unlock_all()")
        .await
    {
        Ok(()) => Ran { out, lost: false },
        Err(e) if connection_lost(&e) || client.is_closed() => Ran { out, lost: true },
        Err(e) => Ran {
            out: out.and(Err(map_err(&e))),
            lost: false,
        },
    }
}

/// The memory one sort or hash may use before it spills to a temporary file
/// (`work_mem`).
pub const ENGINE_WORK_MEM: &str = "16MB";

/// The temporary files one statement may write (`temp_file_limit`; only a superuser may
/// set it, and a superuser connection is the only kind that could otherwise lift it).
pub const ENGINE_TEMP_FILE_LIMIT: &str = "1GB";

/// What every statement's transaction sets first: its timeouts, the string syntax the
/// guard assumes (`standard_conforming_strings = on`: a backslash in '…' is a plain
/// character, as sqlparser's PostgreSQL dialect reads it), and the memory it may use.
/// `SET LOCAL` ends with the transaction; a setting the server refuses fails the
/// statement (closed), never runs it under another reading.
fn session_pins(timeout_ms: u64, privileged: bool) -> String {
    let mut sql = format!(
        "SET LOCAL statement_timeout = {timeout_ms}; SET LOCAL lock_timeout = {timeout_ms}; \
         SET LOCAL standard_conforming_strings = on; SET LOCAL backslash_quote = off; \
         SET LOCAL work_mem = '{ENGINE_WORK_MEM}'"
    );
    if privileged {
        sql.push_str(&format!(
            "; SET LOCAL temp_file_limit = '{ENGINE_TEMP_FILE_LIMIT}'"
        ));
    }
    sql
}

/// Whether `e` says the connection itself is gone (closed, reset, terminated by the
/// server), as opposed to an error of one statement.
fn connection_lost(e: &tokio_postgres::Error) -> bool {
    let Some(db) = e.as_db_error() else {
        // Without a server error: the socket or the connection task failed.
        return true;
    };
    let code = db.code();
    code == &SqlState::ADMIN_SHUTDOWN
        || code == &SqlState::CRASH_SHUTDOWN
        || code == &SqlState::CANNOT_CONNECT_NOW
        || code.code().starts_with("08")
}

async fn in_tx(
    client: &mut Client,
    id: &str,
    timeout_ms: u64,
    privileged: bool,
    op: Op,
) -> Result<Out, ResultError> {
    let tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .await
        .map_err(|e| map_err(&e))?;
    tx.batch_execute(&session_pins(timeout_ms, privileged))
        .await
        .map_err(|e| map_err(&e))?;
    // Dropping the transaction at the end sends ROLLBACK (pipelined before the next
    // message).
    match op {
        Op::Ping => tx
            .query_one("SELECT 1", &[])
            .await
            .map(|_| Out::Unit)
            .map_err(|e| map_err(&e)),
        Op::Execute {
            sql,
            limits,
            started,
        } => execute_in(&tx, id, &sql, limits, started)
            .await
            .map(Out::Frame),
        Op::Explain(sql) => explain_json(&tx, &sql).await.map(Out::Plan),
        Op::Snapshot { options, detail } => snapshot::snapshot(&tx, id, &options, detail)
            .await
            .map(|s| Out::Snapshot(Box::new(s))),
    }
}

fn unexpected() -> ResultError {
    ResultError::new(
        ResultErrorCode::ExecutorCrash,
        "the PostgreSQL adapter returned an unexpected result kind",
    )
}

fn timeout_error(detail: String) -> ResultError {
    let mut err = ResultError::new(
        ResultErrorCode::ExecutionTimeout,
        "the statement exceeded its timeout and was cancelled",
    );
    err.detail = Some(detail);
    err
}

/// Parses a `postgres://` or `postgresql://` URL without echoing it in the error.
fn parse_url(url: &str) -> Result<tokio_postgres::Config, ResultError> {
    let lower = url.get(..13).unwrap_or(url).to_ascii_lowercase();
    if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
        return Err(ResultError::new(
            ResultErrorCode::ServiceUnavailable,
            "malformed PostgreSQL URL: expected postgres://user@host:port/database",
        ));
    }
    let config = tokio_postgres::Config::from_str(url).map_err(|e| {
        unavailable(
            "malformed PostgreSQL URL: expected postgres://user@host:port/database",
            e.to_string(),
        )
    })?;
    if config.get_hosts().is_empty() {
        return Err(ResultError::new(
            ResultErrorCode::ServiceUnavailable,
            "malformed PostgreSQL URL: no host",
        ));
    }
    Ok(config)
}

fn connect_error(e: &tokio_postgres::Error) -> ResultError {
    let code = e.code();
    let (message, retryable) = if code == Some(&SqlState::INVALID_PASSWORD)
        || code == Some(&SqlState::INVALID_AUTHORIZATION_SPECIFICATION)
    {
        ("PostgreSQL refused the credentials", false)
    } else if code == Some(&SqlState::INVALID_CATALOG_NAME) {
        ("the PostgreSQL database does not exist", false)
    } else if code == Some(&SqlState::TOO_MANY_CONNECTIONS) {
        ("the PostgreSQL server has too many connections", true)
    } else {
        ("cannot connect to the PostgreSQL server", true)
    };
    let mut err = unavailable(message, e.to_string());
    err.retryable = retryable;
    err
}

/// Maps a driver error. The server's message goes through the safe-message filter.
fn map_err(e: &tokio_postgres::Error) -> ResultError {
    let Some(db) = e.as_db_error() else {
        return if e.is_closed() {
            unavailable("the PostgreSQL connection was closed", e.to_string())
        } else {
            unavailable("the PostgreSQL server could not be reached", e.to_string())
        };
    };
    let code = db.code();
    if code == &SqlState::QUERY_CANCELED || code == &SqlState::LOCK_NOT_AVAILABLE {
        return timeout_error(db.message().to_owned());
    }
    let class = &code.code()[..2];
    if code == &SqlState::READ_ONLY_SQL_TRANSACTION || code == &SqlState::INSUFFICIENT_PRIVILEGE {
        let mut err = ResultError::new(
            ResultErrorCode::SecurityViolation,
            "the PostgreSQL sandbox refused the statement: only reading is allowed",
        );
        err.detail = Some(db.message().to_owned());
        return err;
    }
    if matches!(class, "08" | "57" | "53" | "58") {
        return unavailable(
            "the PostgreSQL server is unavailable",
            db.message().to_owned(),
        );
    }
    ResultError::from_engine(ResultErrorCode::ExecutionFailed, db.message())
}

fn not_a_query() -> ResultError {
    ResultError::new(
        ResultErrorCode::SecurityViolation,
        "the PostgreSQL sandbox refused the statement: it returns no rows, so it is not a query",
    )
}

async fn execute_in(
    tx: &tokio_postgres::Transaction<'_>,
    id: &str,
    sql: &str,
    limits: Limits,
    started: Instant,
) -> Result<ResultFrame, ResultError> {
    let stmt = tx.prepare(sql).await.map_err(|e| map_err(&e))?;
    if stmt.columns().is_empty() {
        return Err(not_a_query());
    }
    let names: Vec<String> = stmt.columns().iter().map(|c| c.name().to_owned()).collect();
    let kinds = stmt
        .columns()
        .iter()
        .map(|c| decode::kind_of(c.name(), c.type_()))
        .collect::<Result<Vec<_>, _>>()?;
    // A value larger than the byte limit is never sent: the server checks each value of
    // a variable-length column and sends NULL and a flag instead.
    let checked = size_checked(sql, &stmt, limits.max_bytes);
    let stmt = match &checked {
        Some(wrapped) => tx.prepare(wrapped).await.map_err(|e| map_err(&e))?,
        None => stmt,
    };
    let flag = checked.is_some().then_some(names.len());
    let portal = tx.bind(&stmt, &[]).await.map_err(|e| map_err(&e))?;
    let mut builder = ResultBuilder::new(names, kinds, limits);
    // One row past the limit tells whether the result was cut.
    let chunk = FETCH_ROWS.min(limits.row_limit.saturating_add(1)).max(1);
    let chunk = i32::try_from(chunk).unwrap_or(i32::MAX);
    'fetch: loop {
        let rows = tx
            .query_portal(&portal, chunk)
            .await
            .map_err(|e| map_err(&e))?;
        let n = rows.len();
        for row in rows {
            if let Some(flag) = flag
                && row.try_get::<_, bool>(flag).unwrap_or(true)
            {
                builder.stop_at_max_bytes();
                break 'fetch;
            }
            let cells = (0..flag.unwrap_or(row.len()))
                .map(|i| {
                    row.try_get::<_, decode::Value>(i)
                        .map(|v| v.0)
                        .map_err(|e| {
                            ResultError::from_engine(ResultErrorCode::ExecutorCrash, &e.to_string())
                        })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if builder.push_row(cells) == Push::Stop {
                break 'fetch;
            }
        }
        if n < chunk as usize {
            break;
        }
    }
    Ok(builder.finish(id, started.elapsed().as_secs_f64() * 1000.0))
}

/// `sql` wrapped so that the server replaces each value of a variable-length column
/// larger than `max_bytes` by NULL and says so in one more boolean column (last), or
/// `None` when no column can hold such a value. The statement itself is the guard's
/// rendering, unchanged, inside `FROM (…)`.
fn size_checked(sql: &str, stmt: &tokio_postgres::Statement, max_bytes: u64) -> Option<String> {
    let columns = stmt.columns();
    if !columns
        .iter()
        .any(|c| decode::is_variable_length(c.type_()))
    {
        return None;
    }
    let quote = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    let mut select = Vec::with_capacity(columns.len() + 1);
    let mut over = Vec::new();
    for (i, c) in columns.iter().enumerate() {
        let inner = format!("q.c{i}");
        if decode::is_variable_length(c.type_()) {
            select.push(format!(
                "CASE WHEN pg_column_size({inner}) <= {max_bytes} THEN {inner} END AS {}",
                quote(c.name())
            ));
            over.push(format!(
                "COALESCE(pg_column_size({inner}) > {max_bytes}, false)"
            ));
        } else {
            select.push(format!("{inner} AS {}", quote(c.name())));
        }
    }
    select.push(format!("({}) AS nl2sql_oversized", over.join(" OR ")));
    let aliases: Vec<String> = (0..columns.len()).map(|i| format!("c{i}")).collect();
    // `OFFSET 0` keeps PostgreSQL from pulling the statement up into the wrapper, where
    // each reference to a column would compute its value again.
    Some(format!(
        "SELECT {} FROM (SELECT * FROM ({sql}) AS q0 OFFSET 0) AS q({})",
        select.join(", "),
        aliases.join(", ")
    ))
}

async fn explain_json(
    tx: &tokio_postgres::Transaction<'_>,
    sql: &str,
) -> Result<serde_json::Value, ResultError> {
    let stmt = tx.prepare(sql).await.map_err(|e| map_err(&e))?;
    if stmt.columns().is_empty() {
        return Err(not_a_query());
    }
    drop(stmt);
    let rows = tx
        .simple_query(&format!("EXPLAIN (FORMAT JSON) {sql}"))
        .await
        .map_err(|e| map_err(&e))?;
    let text = rows
        .iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| {
        ResultError::from_engine(
            ResultErrorCode::ExecutorCrash,
            &format!("EXPLAIN output: {e}"),
        )
    })
}

/// The top plan node of `EXPLAIN (FORMAT JSON)`.
/// The top plan node's total cost and row estimate.
fn estimates(plan: &serde_json::Value) -> (Option<f64>, Option<u64>) {
    let top = top_plan(plan);
    (
        top.and_then(|p| p.get("Total Cost"))
            .and_then(serde_json::Value::as_f64),
        top.and_then(|p| p.get("Plan Rows"))
            .and_then(serde_json::Value::as_f64)
            .map(|r| r.max(0.0).round() as u64),
    )
}

fn top_plan(explain: &serde_json::Value) -> Option<&serde_json::Value> {
    explain.get(0)?.get("Plan")
}

#[async_trait]
impl DatasourceAdapter for PostgresAdapter {
    fn id(&self) -> &str {
        &self.id
    }

    fn engine_type(&self) -> &str {
        "postgres"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn capabilities(&self) -> &CapabilitySet {
        &self.capabilities
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    async fn test_connection(&self) -> Result<(), ResultError> {
        match self
            .in_read_only_tx(self.limits.statement_timeout_ms, Op::Ping)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(e.at("test_connection", &self.id)),
        }
    }

    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        let options = self.options;
        match self
            .in_read_only_tx(
                options.snapshot_timeout_ms(&self.limits),
                Op::Snapshot {
                    options,
                    detail: snapshot::Detail::Full,
                },
            )
            .await
        {
            Ok(Out::Snapshot(s)) => Ok(*s),
            Ok(_) => Err(unexpected().at("schema_snapshot", &self.id)),
            Err(e) => Err(e.at("schema_snapshot", &self.id)),
        }
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let options = self.options;
        match self
            .in_read_only_tx(
                options.snapshot_timeout_ms(&self.limits),
                Op::Snapshot {
                    options,
                    detail: snapshot::Detail::Contract,
                },
            )
            .await
        {
            Ok(Out::Snapshot(s)) => Ok(s.contract),
            Ok(_) => Err(unexpected().at("schema_contract", &self.id)),
            Err(e) => Err(e.at("schema_contract", &self.id)),
        }
    }

    async fn run_sql(&self, sql: &GuardedSql, limits: Limits) -> ResultFrame {
        let started = Instant::now();
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return ResultFrame::failed(e.at("execute", &self.id), 0.0);
        }
        let sql = sql.as_str();
        let op = Op::Execute {
            sql: sql.to_owned(),
            limits,
            started,
        };
        let out = self.in_read_only_tx(limits.statement_timeout_ms, op).await;
        let out = match out {
            Ok(Out::Frame(frame)) => Ok(frame),
            Ok(_) => Err(unexpected()),
            Err(e) => Err(e),
        };
        match out {
            Ok(frame) => frame,
            Err(e) => ResultFrame::failed(
                e.at("execute", &self.id),
                started.elapsed().as_secs_f64() * 1000.0,
            ),
        }
    }

    async fn dry_run(&self, sql: &GuardedSql) -> DryRunResult {
        json_plan::dry_run_of(&self.id, self.plan_of(sql).await)
    }

    async fn cost_estimate(&self, sql: &GuardedSql) -> Result<CostEstimate, ResultError> {
        json_plan::cost_of(&self.id, self.plan_of(sql).await, estimates)
    }

    async fn explain(&self, sql: &GuardedSql) -> Result<QueryPlan, ResultError> {
        json_plan::explain_of(&self.id, self.plan_of(sql).await)
    }

    fn details(&self) -> serde_json::Value {
        let host = self.config.get_hosts().first().map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            #[allow(unreachable_patterns)] // reason: Unix sockets exist only on unix
            _ => "unix socket".to_owned(),
        });
        serde_json::json!({
            "id": self.id,
            "engine_type": "postgres",
            "host": host,
            "port": self.config.get_ports().first(),
            "database": self.config.get_dbname(),
            "user": self.config.get_user(),
            "server_version": self.server_version,
            "privileged": self.privileged,
            "limits": self.limits,
            "capabilities": self.capabilities.as_strings(),
        })
    }
}

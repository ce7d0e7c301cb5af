//! The MySQL and MariaDB adapter of nl2sql (spec: adapters.md §6.4), on mysql_async.
//!
//! Sandbox, for every statement:
//! - the session caps its statement time (`max_statement_time` on MariaDB,
//!   `max_execution_time` on MySQL) and its result size (`sql_select_limit`: one row past
//!   the row limit), then runs `START TRANSACTION READ ONLY`, always rolled back;
//! - the statement is prepared first (binary protocol: one statement, never a script);
//!   a statement that returns no columns (DDL, DML, `SET`, `DO`, `CALL`, `LOAD DATA`,
//!   `SELECT … INTO OUTFILE`, transaction control…) is refused before it runs — this
//!   matters because DDL commits implicitly, even inside a read-only transaction;
//! - connections return to the pool through `COM_RESET_CONNECTION`, so no session
//!   variable, user variable, temporary table or lock outlives the call;
//! - connect an account with `SELECT` privileges only: `FILE` lets `LOAD_FILE()` read
//!   server files. The adapter logs a warning and reports `"privileged": true` in its
//!   details when the account holds more than reading privileges.
//!
//! A statement past its timeout is stopped by the server (`EXECUTION_TIMEOUT`); if the
//! server does not answer within a grace period, the client sends `KILL QUERY` from a
//! connection of its own. A call whose future is dropped (a cancelled or timed-out run)
//! sends `KILL QUERY` too, from a spawned task that holds the connection until the kill
//! is done, so the kill can never hit the connection's next user (GAP-11). A statement
//! that fails because its connection dropped (closed, reset or killed, not an SQL error)
//! runs once more on a new connection; a second failure is returned (GAP-60).
//! Connecting is bounded by the connect timeout: a dead server is `SERVICE_UNAVAILABLE`.

mod decode;
mod error;
mod snapshot;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mysql_async::prelude::Queryable as _;
use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};
use nl2sql_adapter::{
    AdapterOptions, Attempt, Capability, CapabilitySet, ConnectRequest, CostEstimate,
    DatasourceAdapter, Driver, DryRunResult, Limits, Push, QueryPlan, ResultBuilder, ResultError,
    ResultErrorCode, ResultFrame, SpawnOnDrop, dialect_mismatch, json_plan, retry_once_when_lost,
};
use nl2sql_state::{Dialect, Engine, SchemaContract, SchemaSnapshot};
use nl2sql_validate::GuardedSql;

use error::{connect_error, map_err, not_a_query, unexpected};

/// At most this many connections are open at once.
const MAX_CONNECTIONS: usize = 8;

/// How long the client waits past the statement timeout for the server's own stop.
const CANCEL_GRACE: Duration = Duration::from_millis(2_000);

/// A MySQL or MariaDB database behind the adapter SPI.
pub struct MySqlAdapter {
    id: String,
    pool: Pool,
    opts: Opts,
    connect_timeout: Duration,
    options: AdapterOptions,
    limits: Limits,
    capabilities: CapabilitySet,
    mariadb: bool,
    privileged: bool,
    server_version: String,
    /// Statements run a second time after their connection dropped (GAP-60).
    retries: AtomicU64,
}

impl std::fmt::Debug for MySqlAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MySqlAdapter")
            .field("id", &self.id)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The `sql_mode` every statement runs under: no `ANSI_QUOTES`, no
/// `NO_BACKSLASH_ESCAPES`, `PIPES_AS_CONCAT` (the reading of sqlparser's MySQL dialect).
pub const ENGINE_SQL_MODE: &str =
    "PIPES_AS_CONCAT,STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// The in-memory temporary table size of one statement (`tmp_table_size`,
/// `max_heap_table_size`): 16 MiB; larger ones go to disk.
const ENGINE_TMP_TABLE_BYTES: u64 = 16 * 1024 * 1024;

/// The longest `GROUP_CONCAT` result: 1 MiB.
const ENGINE_GROUP_CONCAT_BYTES: u64 = 1024 * 1024;

/// The capabilities every [`MySqlAdapter`] advertises, known without opening a database
/// (for listings such as `nl2sql list-adapters`).
pub fn capabilities() -> CapabilitySet {
    CapabilitySet::new(&[
        Capability::SupportsSql,
        Capability::SupportsSchemaIntrospection,
        Capability::SupportsDryRun,
        Capability::SupportsCostEstimate,
    ])
}

impl MySqlAdapter {
    /// Connects to `mysql://user[:password]@host[:port]/database` (also `mariadb://`).
    /// The URL is never echoed in errors. The first connection is opened now, so a dead
    /// server or wrong credentials fail here.
    pub async fn from_url(id: &str, url: &str, limits: Limits) -> Result<Self, ResultError> {
        Self::from_url_with_options(id, url, limits, AdapterOptions::default()).await
    }

    /// [`MySqlAdapter::from_url`] with an explicit connect timeout.
    pub async fn from_url_with_connect_timeout(
        id: &str,
        url: &str,
        limits: Limits,
        connect_timeout: Duration,
    ) -> Result<Self, ResultError> {
        let options = AdapterOptions::with_connect_timeout(connect_timeout);
        Self::from_url_with_options(id, url, limits, options).await
    }

    /// [`MySqlAdapter::from_url`] with explicit [`AdapterOptions`]: the connect timeout,
    /// and the statistics budget and sample size of snapshots.
    pub async fn from_url_with_options(
        id: &str,
        url: &str,
        limits: Limits,
        options: AdapterOptions,
    ) -> Result<Self, ResultError> {
        let connect_timeout = Duration::from_millis(options.connect_timeout_ms);
        let opts = parse_url(url).map_err(|e| e.at("connect", id))?;
        // `?pool_max=N` in the URL may lower the pool size.
        let max = opts
            .pool_opts()
            .constraints()
            .max()
            .clamp(1, MAX_CONNECTIONS);
        let constraints = PoolConstraints::new(0, max).unwrap_or_default();
        let opts: Opts = OptsBuilder::from_opts(opts)
            .pool_opts(
                PoolOpts::default()
                    .with_constraints(constraints)
                    // Keep idle connections for reuse (the default closes them at once).
                    .with_inactive_connection_ttl(Duration::from_secs(60))
                    .with_reset_connection(true),
            )
            .stmt_cache_size(0)
            .prefer_socket(false)
            .into();
        let mut adapter = MySqlAdapter {
            id: id.to_owned(),
            pool: Pool::new(opts.clone()),
            opts,
            connect_timeout,
            options,
            limits,
            capabilities: capabilities(),
            mariadb: false,
            privileged: false,
            server_version: String::new(),
            retries: AtomicU64::new(0),
        };
        let mut conn = adapter.conn().await.map_err(|e| e.at("connect", id))?;
        let version: Option<String> = conn
            .query_first("SELECT VERSION()")
            .await
            .map_err(|e| map_err(&e).at("connect", id))?;
        adapter.server_version = version.unwrap_or_default();
        adapter.mariadb = adapter
            .server_version
            .to_ascii_lowercase()
            .contains("mariadb");
        let grants: Vec<String> = conn
            .query("SHOW GRANTS FOR CURRENT_USER()")
            .await
            .unwrap_or_default();
        adapter.privileged = grants.iter().any(|g| grant_is_privileged(g));
        if adapter.privileged {
            tracing::warn!(
                datasource = id,
                "connected with a MySQL account that may write or read server files; \
                 grant it SELECT only"
            );
        }
        drop(conn);
        Ok(adapter)
    }

    /// The adapter's options.
    pub fn options(&self) -> AdapterOptions {
        self.options
    }

    /// How many statements ran a second time, on a new connection, because their
    /// connection dropped (GAP-60).
    pub fn retried_statements(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// A pooled connection.
    async fn conn(&self) -> Result<Conn, ResultError> {
        connect_within(self.connect_timeout, self.pool.get_conn()).await
    }

    /// A new connection outside the pool (closed when dropped), for the one retry after
    /// a dropped connection: the pool's idle connections may have dropped too.
    async fn fresh_conn(&self) -> Result<Conn, ResultError> {
        connect_within(self.connect_timeout, Conn::new(self.opts.clone())).await
    }

    /// The session settings that pin the guard's reading of a statement and cap it, set
    /// before each one. `sql_mode` is replaced whole: without `ANSI_QUOTES` ("x" is a
    /// string) and `NO_BACKSLASH_ESCAPES` (`\'` escapes), with `PIPES_AS_CONCAT` (`||`
    /// concatenates): the reading of sqlparser's MySQL dialect, which the guard parses
    /// with. A server that refuses a setting fails the statement; it never runs under
    /// another reading.
    fn caps(&self, limits: Limits) -> String {
        let select_limit = limits.row_limit.saturating_add(1);
        let time = if self.mariadb {
            format!(
                "max_statement_time = {:.3}",
                limits.statement_timeout_ms as f64 / 1000.0
            )
        } else {
            format!("max_execution_time = {}", limits.statement_timeout_ms)
        };
        format!(
            "SET SESSION sql_mode = '{ENGINE_SQL_MODE}', sql_select_limit = {select_limit}, {time}, \
             tmp_table_size = {ENGINE_TMP_TABLE_BYTES}, max_heap_table_size = {ENGINE_TMP_TABLE_BYTES}, \
             group_concat_max_len = {ENGINE_GROUP_CONCAT_BYTES}"
        )
    }

    /// Runs `op` in a read-only transaction under `limits`; kills the query on the server
    /// when it overruns or when this future is dropped. When the connection drops under
    /// it, runs it once more on a new connection.
    async fn in_read_only_tx(&self, limits: Limits, op: Op) -> Result<Out, ResultError> {
        let conn = self.conn().await?;
        retry_once_when_lost(
            "MySQL",
            &self.id,
            &self.retries,
            self.attempt(conn, limits, op.clone()),
            || async {
                let conn = self.fresh_conn().await?;
                Ok(self.attempt(conn, limits, op).await)
            },
        )
        .await
    }

    /// One run of `op` on `conn`.
    async fn attempt(&self, conn: Conn, limits: Limits, op: Op) -> Attempt<Out> {
        let conn_id = conn.id();
        // A dropped call (a cancelled or timed-out run) kills the statement from a task
        // that holds the connection until the kill is done, so that it cannot go back to
        // the pool and serve another call first.
        let (opts, limit) = (self.opts.clone(), self.connect_timeout);
        let mut guard = SpawnOnDrop::new(conn, move |victim: Conn| async move {
            kill_query(&opts, victim.id(), limit).await;
            // Back to the pool, which drains what is left of the result and resets it.
            drop(victim);
        });
        let Some(conn) = guard.get_mut() else {
            return Attempt::Done(Err(unexpected()));
        };
        let caps = self.caps(limits);
        let limit = Duration::from_millis(limits.statement_timeout_ms).saturating_add(CANCEL_GRACE);
        let outcome = tokio::time::timeout(limit, run_tx(conn, &self.id, &caps, op)).await;
        // Disarmed: from here on this call decides what happens to the connection.
        let conn = guard.disarm();
        match outcome {
            Ok(Ran {
                out: Err(e),
                lost: true,
            }) if e.error_code == ResultErrorCode::ServiceUnavailable => Attempt::Lost(e),
            Ok(Ran { out, .. }) => Attempt::Done(out),
            Err(_) => {
                // The connection is still held, so the kill reaches this statement only.
                kill_query(&self.opts, conn_id, self.connect_timeout).await;
                drop(conn);
                Attempt::Done(Err(ResultError::timed_out(format!(
                    "no answer within {} ms plus {CANCEL_GRACE:?}",
                    limits.statement_timeout_ms
                ))))
            }
        }
    }

    /// The limits of the schema reads: [`AdapterOptions::snapshot_timeout_ms`] and no
    /// row cap.
    fn snapshot_limits(&self) -> Limits {
        Limits {
            statement_timeout_ms: self.options.snapshot_timeout_ms(&self.limits),
            row_limit: u64::MAX - 1,
            ..self.limits
        }
    }

    async fn plan_of(&self, sql: &GuardedSql) -> Result<serde_json::Value, ResultError> {
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return Err(e);
        }
        let sql = sql.as_str();
        match self
            .in_read_only_tx(self.limits, Op::Explain(sql.to_owned()))
            .await?
        {
            Out::Plan(p) => Ok(p),
            _ => Err(unexpected()),
        }
    }
}

/// Sends `KILL QUERY <conn_id>` from a new connection, bounded by `connect_timeout`.
async fn kill_query(opts: &Opts, conn_id: u32, connect_timeout: Duration) {
    let mut killer = match connect_within(connect_timeout, Conn::new(opts.clone())).await {
        Ok(c) => c,
        Err(e) => {
            tracing::debug!(error = ?e.detail, "cannot connect to kill a MySQL statement");
            return;
        }
    };
    if let Err(e) = killer.query_drop(format!("KILL QUERY {conn_id}")).await {
        tracing::debug!(error = %e, "cannot kill a MySQL statement");
    }
    let _ = killer.disconnect().await;
}

/// Waits for `connecting` at most `limit`.
async fn connect_within(
    limit: Duration,
    connecting: impl Future<Output = Result<Conn, mysql_async::Error>>,
) -> Result<Conn, ResultError> {
    match tokio::time::timeout(limit, connecting).await {
        Err(_) => Err(ResultError::unavailable(
            "timed out connecting to the MySQL server",
            format!("no answer within {limit:?}"),
        )),
        Ok(Err(e)) => Err(connect_error(&e)),
        Ok(Ok(c)) => Ok(c),
    }
}

/// Whether a `SHOW GRANTS` line gives more than reading.
fn grant_is_privileged(grant: &str) -> bool {
    let upper = grant.to_ascii_uppercase();
    let Some(privs) = upper
        .strip_prefix("GRANT ")
        .and_then(|rest| rest.split(" ON ").next())
    else {
        return false;
    };
    privs
        .split(',')
        .map(str::trim)
        .any(|p| !matches!(p, "SELECT" | "USAGE" | "SHOW VIEW" | "SHOW DATABASES"))
}

/// What runs inside one read-only transaction.
type Op = nl2sql_adapter::SessionOp<snapshot::Detail>;
use nl2sql_adapter::{Ran, SessionOut as Out};

/// Runs `op` in a read-only transaction, then rolls it back. A connection that cannot
/// roll back is gone (`lost`); the op's own outcome stands (its rows were read whole).
async fn run_tx(conn: &mut Conn, id: &str, caps: &str, op: Op) -> Ran {
    let out = in_tx(conn, id, caps, op).await;
    // The pool resets the session (COM_RESET_CONNECTION) when the connection returns.
    match conn.query_drop("ROLLBACK").await {
        Ok(()) => Ran { out, lost: false },
        Err(e) if connection_lost(&e) || conn.is_disconnected() => Ran { out, lost: true },
        Err(e) => Ran {
            out: out.and(Err(map_err(&e))),
            lost: false,
        },
    }
}

/// Whether `e` says the connection itself is gone (closed, reset, killed), as opposed
/// to an error of one statement.
fn connection_lost(e: &mysql_async::Error) -> bool {
    match e {
        // The connection was killed; the server is shutting down.
        mysql_async::Error::Server(s) => matches!(s.code, 1927 | 1053),
        // Without a server error: the socket or the protocol failed.
        _ => true,
    }
}

async fn in_tx(conn: &mut Conn, id: &str, caps: &str, op: Op) -> Result<Out, ResultError> {
    conn.query_drop(caps).await.map_err(|e| map_err(&e))?;
    conn.query_drop("START TRANSACTION READ ONLY")
        .await
        .map_err(|e| map_err(&e))?;
    match op {
        Op::Ping => conn
            .query_drop("SELECT 1")
            .await
            .map(|()| Out::Unit)
            .map_err(|e| map_err(&e)),
        Op::Execute {
            sql,
            limits,
            started,
        } => execute_in(conn, id, &sql, limits, started)
            .await
            .map(Out::Frame),
        Op::Explain(sql) => explain_json(conn, &sql).await.map(Out::Plan),
        Op::Snapshot { options, detail } => snapshot::snapshot(conn, id, &options, detail)
            .await
            .map(|s| Out::Snapshot(Box::new(s))),
    }
}

/// Parses a `mysql://` or `mariadb://` URL without echoing it in the error.
fn parse_url(url: &str) -> Result<Opts, ResultError> {
    let malformed = |detail: String| {
        ResultError::unavailable(
            "malformed MySQL URL: expected mysql://user@host:port/database",
            detail,
        )
    };
    let rest = if let Some(r) = url.strip_prefix("mysql://") {
        r
    } else if let Some(r) = url.strip_prefix("mariadb://") {
        r
    } else {
        return Err(malformed("unknown scheme".to_owned()));
    };
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(malformed("no host".to_owned()));
    }
    Opts::from_url(&format!("mysql://{rest}")).map_err(|e| malformed(e.to_string()))
}

async fn execute_in(
    conn: &mut Conn,
    id: &str,
    sql: &str,
    limits: Limits,
    started: Instant,
) -> Result<ResultFrame, ResultError> {
    let stmt = conn.prep(sql).await.map_err(|e| map_err(&e))?;
    if stmt.num_columns() == 0 {
        let _ = conn.close(stmt).await;
        return Err(not_a_query());
    }
    let frame = {
        let mut result = conn.exec_iter(&stmt, ()).await.map_err(|e| map_err(&e))?;
        let columns = result.columns().unwrap_or_else(|| stmt.columns());
        let names: Vec<String> = columns.iter().map(|c| c.name_str().into_owned()).collect();
        let kinds: Vec<_> = columns.iter().map(decode::kind_of).collect();
        let mut builder = ResultBuilder::new(names, kinds.clone(), limits);
        while let Some(row) = result.next().await.map_err(|e| map_err(&e))? {
            let cells = row
                .unwrap_raw()
                .into_iter()
                .zip(&kinds)
                .map(|(v, k)| decode::cell_of(v, k))
                .collect();
            if builder.push_row(cells) == Push::Stop {
                break;
            }
        }
        // Unread rows (at most one past the row limit, by sql_select_limit) are drained.
        result.drop_result().await.map_err(|e| map_err(&e))?;
        builder.finish(id, started.elapsed().as_secs_f64() * 1000.0)
    };
    let _ = conn.close(stmt).await;
    Ok(frame)
}

async fn explain_json(conn: &mut Conn, sql: &str) -> Result<serde_json::Value, ResultError> {
    let stmt = conn.prep(sql).await.map_err(|e| map_err(&e))?;
    let columns = stmt.num_columns();
    let _ = conn.close(stmt).await;
    if columns == 0 {
        return Err(not_a_query());
    }
    let text: Option<String> = conn
        .query_first(format!("EXPLAIN FORMAT=JSON {sql}"))
        .await
        .map_err(|e| map_err(&e))?;
    serde_json::from_str(&text.unwrap_or_default()).map_err(|e| {
        ResultError::from_engine(
            ResultErrorCode::ExecutorCrash,
            &format!("EXPLAIN output: {e}"),
        )
    })
}

/// Sums `rows` (MariaDB) or `rows_examined_per_scan` (MySQL) and reads the query cost
/// (`query_cost` on MySQL, `cost` on MariaDB 11) over every table of the plan.
fn estimates(plan: &serde_json::Value) -> (Option<f64>, Option<u64>) {
    fn walk(v: &serde_json::Value, cost: &mut Option<f64>, rows: &mut Option<u64>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, val) in map {
                    match k.as_str() {
                        "query_cost" | "cost" => {
                            let c = val
                                .as_f64()
                                .or_else(|| val.as_str().and_then(|s| s.parse().ok()));
                            if let Some(c) = c {
                                *cost = Some(cost.map_or(c, |x: f64| x.max(c)));
                            }
                        }
                        "rows" | "rows_examined_per_scan" => {
                            if let Some(r) = val.as_u64() {
                                *rows = Some(rows.map_or(r, |x: u64| x.saturating_mul(r.max(1))));
                            }
                        }
                        _ => walk(val, cost, rows),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, cost, rows)),
            _ => {}
        }
    }
    let (mut cost, mut rows) = (None, None);
    walk(plan, &mut cost, &mut rows);
    (cost, rows)
}

#[async_trait]
impl DatasourceAdapter for MySqlAdapter {
    fn id(&self) -> &str {
        &self.id
    }

    fn engine_type(&self) -> &str {
        "mysql"
    }

    fn dialect(&self) -> Dialect {
        Dialect::MySql
    }

    fn capabilities(&self) -> &CapabilitySet {
        &self.capabilities
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    async fn test_connection(&self) -> Result<(), ResultError> {
        match self.in_read_only_tx(self.limits, Op::Ping).await {
            Ok(_) => Ok(()),
            Err(e) => Err(e.at("test_connection", &self.id)),
        }
    }

    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        let op = Op::Snapshot {
            options: self.options,
            detail: snapshot::Detail::Full,
        };
        match self.in_read_only_tx(self.snapshot_limits(), op).await {
            Ok(Out::Snapshot(s)) => Ok(*s),
            Ok(_) => Err(unexpected().at("schema_snapshot", &self.id)),
            Err(e) => Err(e.at("schema_snapshot", &self.id)),
        }
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let op = Op::Snapshot {
            options: self.options,
            detail: snapshot::Detail::Contract,
        };
        match self.in_read_only_tx(self.snapshot_limits(), op).await {
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
        let out = match self.in_read_only_tx(limits, op).await {
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
        serde_json::json!({
            "id": self.id,
            "engine_type": "mysql",
            "flavor": if self.mariadb { "mariadb" } else { "mysql" },
            "host": self.opts.ip_or_hostname(),
            "port": self.opts.tcp_port(),
            "database": self.opts.db_name(),
            "user": self.opts.user(),
            "server_version": self.server_version,
            "privileged": self.privileged,
            "limits": self.limits,
            "capabilities": self.capabilities.as_strings(),
        })
    }
}

/// The MySQL and MariaDB driver: opens `mysql://` datasources with [`MySqlAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MySqlDriver;

#[async_trait]
impl Driver for MySqlDriver {
    fn engine(&self) -> Engine {
        Engine::Mysql
    }

    fn implementation(&self) -> &'static str {
        env!("CARGO_PKG_NAME")
    }

    fn capabilities(&self) -> CapabilitySet {
        capabilities()
    }

    async fn connect(
        &self,
        request: &ConnectRequest<'_>,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let adapter = MySqlAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )
        .await?;
        Ok(Arc::new(adapter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_beyond_reading_are_privileged() {
        assert!(!grant_is_privileged(
            "GRANT USAGE ON *.* TO `nl2sql_reader`@`%`"
        ));
        assert!(!grant_is_privileged(
            "GRANT SELECT, SHOW VIEW ON `db`.* TO `r`@`%`"
        ));
        assert!(grant_is_privileged(
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"
        ));
        assert!(grant_is_privileged("GRANT SELECT, FILE ON *.* TO `r`@`%`"));
    }

    #[test]
    fn plan_estimates_multiply_rows_and_keep_the_top_cost() {
        let plan = serde_json::json!({"query_block": {"cost_info": {"query_cost": "2.50"},
            "nested_loop": [{"table": {"rows_examined_per_scan": 8}},
                            {"table": {"rows_examined_per_scan": 3}}]}});
        assert_eq!(estimates(&plan), (Some(2.5), Some(24)));
        assert_eq!(estimates(&serde_json::json!({})), (None, None));
    }

    #[test]
    fn urls_are_checked_without_echoing_them() {
        for url in [
            "mysql://",
            "postgres://x@h/db",
            "mysql://:3306/db",
            "mysql://u:pw@/db",
        ] {
            let e = parse_url(url).unwrap_err();
            assert!(e.safe_message.contains("malformed"), "{url}");
            assert!(!e.safe_message.contains("pw"));
        }
        assert!(parse_url("mysql://root@127.0.0.1:3306/test").is_ok());
        assert!(parse_url("mariadb://root@localhost/test").is_ok());
    }
}

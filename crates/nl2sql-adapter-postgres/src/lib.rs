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
mod error;
mod snapshot;
mod tx;

use error::{connect_error, map_err, unexpected};
use tx::*;
pub use tx::{ENGINE_TEMP_FILE_LIMIT, ENGINE_WORK_MEM};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_adapter::{
    AdapterOptions, Attempt, Capability, CapabilitySet, ConnectRequest, CostEstimate,
    DatasourceAdapter, Driver, DryRunResult, Limits, QueryPlan, ResultError, ResultErrorCode,
    ResultFrame, SpawnOnDrop, dialect_mismatch, json_plan, retry_once_when_lost,
};
use nl2sql_state::{Dialect, Engine, SchemaContract, SchemaSnapshot};
use nl2sql_validate::GuardedSql;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::{Client, NoTls};

/// At most this many connections are open at once.
const MAX_CONNECTIONS: usize = 8;

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
                return Err(ResultError::unavailable(
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
            .map_err(|e| {
                ResultError::unavailable("the connection pool is closed", e.to_string())
            })?;
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
        // A dropped call (a cancelled or timed-out run) sends a cancel request.
        let connect_timeout = self.connect_timeout;
        let mut guard = SpawnOnDrop::new(client.cancel_token(), move |token| async move {
            if let Ok(Err(e)) =
                tokio::time::timeout(connect_timeout, token.cancel_query(NoTls)).await
            {
                tracing::debug!(error = %e, "cannot cancel a dropped PostgreSQL statement");
            }
        });
        let limit = Duration::from_millis(timeout_ms).saturating_add(CANCEL_GRACE);
        let outcome = tokio::time::timeout(
            limit,
            run_tx(&mut client, &self.id, timeout_ms, self.privileged, op),
        )
        .await;
        let token = guard.disarm();
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
                Attempt::Done(Err(ResultError::timed_out(format!(
                    "no answer within {timeout_ms} ms plus {CANCEL_GRACE:?}"
                ))))
            }
        }
    }
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
/// The PostgreSQL driver: opens `postgres://` datasources with [`PostgresAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PostgresDriver;

#[async_trait]
impl Driver for PostgresDriver {
    fn engine(&self) -> Engine {
        Engine::Postgres
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
        let adapter = PostgresAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )
        .await?;
        Ok(Arc::new(adapter))
    }
}

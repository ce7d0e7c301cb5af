//! The SQLite adapter of nl2sql (spec: adapters.md §6.2), on rusqlite with a bundled
//! SQLite.
//!
//! Sandbox, applied to every connection before any user statement runs:
//! - the file is opened with `SQLITE_OPEN_READ_ONLY` (never created), then
//!   `PRAGMA query_only = 1`, `SQLITE_DBCONFIG_DEFENSIVE` on and `TRUSTED_SCHEMA` off;
//!   extension loading is never enabled (rusqlite is built without it);
//! - an authorizer allows only reading: `SELECT`, column reads, recursive CTEs and
//!   functions outside a deny list (`load_extension`, `readfile`, `writefile`, `edit`,
//!   `fts3_tokenizer`, …). Writes, DDL, `ATTACH`/`DETACH`, pragmas, transactions and
//!   everything else are denied while the statement is prepared;
//! - a prepared statement that is not read-only (`sqlite3_stmt_readonly`, which catches
//!   `VACUUM INTO`) is refused before it runs.
//!
//! The statement timeout is a progress handler that interrupts the statement at the
//! deadline (`EXECUTION_TIMEOUT`); the busy timeout is the statement timeout. Work runs on
//! tokio's blocking pool, over a small pool of connections. Dropping a call's future (a
//! cancelled or timed-out run) interrupts its statement (`sqlite3_interrupt` and the
//! progress handler), so no query keeps a blocking thread busy for nobody. SQLite has no
//! cost model, so the adapter does not advertise `supports_cost_estimate`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_adapter::{
    AdapterOptions, Capability, CapabilitySet, Cell, ColumnKind, CostEstimate, DatasourceAdapter,
    DryRunResult, Limits, PlanFormat, Push, QueryPlan, ResultBuilder, ResultError, ResultErrorCode,
    ResultFrame, dialect_mismatch,
};
use nl2sql_state::{Dialect, SchemaContract, SchemaSnapshot};
use nl2sql_validate::GuardedSql;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, InterruptHandle, OpenFlags};

mod driver;
mod snapshot;
mod write;

#[cfg(test)]
mod tests;

pub use driver::SqliteDriver;
pub use write::write_database;

use snapshot::{Detail, StatsBudget, snapshot_on};

/// The schema name SQLite gives the main database.
pub const MAIN_SCHEMA: &str = "main";

/// Functions no statement may call, whatever the guard said.
const DENIED_FUNCTIONS: &[&str] = &[
    "load_extension",
    "readfile",
    "writefile",
    "edit",
    "fts3_tokenizer",
    "zipfile",
    "sqlar_compress",
    "sqlar_uncompress",
    "lsdir",
    "shell",
    "system",
];

/// The largest string or blob a statement may build (`SQLITE_LIMIT_LENGTH`; SQLite's own
/// default is 1 GB): 64 MiB.
pub const ENGINE_MAX_VALUE_BYTES: i32 = 64 * 1024 * 1024;

/// The longest statement text (`SQLITE_LIMIT_SQL_LENGTH`); the guard refuses anything
/// above 100 KiB first.
const ENGINE_MAX_SQL_BYTES: i32 = 1024 * 1024;

/// At most this many connections are kept open.
const POOL_SIZE: usize = 4;

/// The progress handler runs every this many virtual machine instructions.
const PROGRESS_STEPS: i32 = 1_000;

/// One pooled connection and the switch that lets the adapter's own introspection
/// queries use pragmas.
struct Conn {
    conn: Connection,
    internal: Arc<AtomicBool>,
}

/// A SQLite database file behind the adapter SPI.
pub struct SqliteAdapter {
    id: String,
    path: PathBuf,
    limits: Limits,
    options: AdapterOptions,
    capabilities: CapabilitySet,
    pool: Arc<Mutex<Vec<Conn>>>,
}

impl std::fmt::Debug for SqliteAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteAdapter")
            .field("id", &self.id)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The capabilities every [`SqliteAdapter`] advertises, known without opening a database
/// (for listings such as `nl2sql list-adapters`).
pub fn capabilities() -> CapabilitySet {
    CapabilitySet::new(&[
        Capability::SupportsSql,
        Capability::SupportsSchemaIntrospection,
        Capability::SupportsDryRun,
    ])
}

impl SqliteAdapter {
    /// Opens the database file at `path` read-only, with the default
    /// [`AdapterOptions`]. A missing file is `SERVICE_UNAVAILABLE`; it is never created.
    pub fn open(id: &str, path: &Path, limits: Limits) -> Result<Self, ResultError> {
        SqliteAdapter::open_with_options(id, path, limits, AdapterOptions::default())
    }

    /// [`SqliteAdapter::open`] with explicit [`AdapterOptions`] (the statistics budget and
    /// sample size of snapshots; a file has no connect timeout).
    pub fn open_with_options(
        id: &str,
        path: &Path,
        limits: Limits,
        options: AdapterOptions,
    ) -> Result<Self, ResultError> {
        if !path.is_file() {
            return Err(ResultError::unavailable(
                "the SQLite database file does not exist or is not a file",
                path.display().to_string(),
            )
            .at("connect", id));
        }
        let adapter = SqliteAdapter {
            id: id.to_owned(),
            path: path.to_path_buf(),
            limits,
            options,
            capabilities: capabilities(),
            pool: Arc::new(Mutex::new(Vec::new())),
        };
        // Open one connection now, so that a file that is not a database fails here.
        let conn = adapter.open_conn().map_err(|e| e.at("connect", id))?;
        adapter.give_back(conn);
        Ok(adapter)
    }

    /// Opens `sqlite:///absolute/path.db` or `sqlite://relative/path.db` (relative to the
    /// current directory).
    pub fn from_url(id: &str, url: &str, limits: Limits) -> Result<Self, ResultError> {
        SqliteAdapter::from_url_with_options(id, url, limits, AdapterOptions::default())
    }

    /// [`SqliteAdapter::from_url`] with explicit [`AdapterOptions`].
    pub fn from_url_with_options(
        id: &str,
        url: &str,
        limits: Limits,
        options: AdapterOptions,
    ) -> Result<Self, ResultError> {
        let path = parse_url(url).map_err(|m| {
            ResultError::new(ResultErrorCode::ServiceUnavailable, m).at("connect", id)
        })?;
        SqliteAdapter::open_with_options(id, &path, limits, options)
    }

    /// The adapter's options.
    pub fn options(&self) -> AdapterOptions {
        self.options
    }

    /// The deadline of a statement that starts now under the configured timeout.
    fn deadline(&self) -> Option<Instant> {
        deadline_after(Instant::now(), self.limits.statement_timeout_ms)
    }

    /// The deadline of a snapshot that starts now
    /// ([`AdapterOptions::snapshot_timeout_ms`], as for the other engines).
    fn snapshot_deadline(&self) -> Option<Instant> {
        deadline_after(
            Instant::now(),
            self.options.snapshot_timeout_ms(&self.limits),
        )
    }

    fn open_conn(&self) -> Result<Conn, ResultError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&self.path, flags).map_err(|e| {
            ResultError::unavailable("cannot open the SQLite database", e.to_string())
        })?;
        let setup = |conn: &Connection| -> rusqlite::Result<()> {
            use rusqlite::config::DbConfig;
            conn.pragma_update(None, "query_only", 1)?;
            conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
            conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
            // The guard reads "x" as a name, as SQL does; SQLite by default reads a
            // double-quoted name that matches no column as a string. Pinned off, and
            // checked: a connection that cannot pin it is not used.
            let dml = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, false)?;
            let ddl = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DDL, false)?;
            if dml || ddl {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "double-quoted string literals could not be turned off".into(),
                ));
            }
            // No string or blob larger than the engine limit can be built, whatever the
            // statement (zeroblob, printf widths, replace, group_concat).
            conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, ENGINE_MAX_VALUE_BYTES)?;
            conn.set_limit(Limit::SQLITE_LIMIT_SQL_LENGTH, ENGINE_MAX_SQL_BYTES)?;
            // Reading the schema proves the file is a database.
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
                r.get::<_, i64>(0)
            })?;
            Ok(())
        };
        setup(&conn).map_err(|e| {
            ResultError::unavailable("the file is not a readable SQLite database", e.to_string())
        })?;
        let internal = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&internal);
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            authorize(&ctx, flag.load(Ordering::Relaxed))
        }))
        .map_err(|e| {
            ResultError::unavailable("cannot install the SQLite authorizer", e.to_string())
        })?;
        Ok(Conn { conn, internal })
    }

    fn take_conn(&self) -> Result<Conn, ResultError> {
        let pooled = self.pool.lock().ok().and_then(|mut p| p.pop());
        match pooled {
            Some(c) => Ok(c),
            None => self.open_conn(),
        }
    }

    fn give_back(&self, conn: Conn) {
        if let Ok(mut pool) = self.pool.lock()
            && pool.len() < POOL_SIZE
        {
            pool.push(conn);
        }
    }

    /// Runs `f` on a pooled connection on tokio's blocking pool. A progress handler
    /// interrupts its statements at `deadline` (`EXECUTION_TIMEOUT`); dropping the
    /// returned future interrupts them at once (GAP-11).
    async fn with_conn<T, F>(&self, deadline: Option<Instant>, f: F) -> Result<T, ResultError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, ResultError> + Send + 'static,
    {
        let pool = Arc::clone(&self.pool);
        let mut conn = self.take_conn()?;
        let call = Arc::new(Call::default());
        let mut guard = InterruptOnDrop {
            call: Arc::clone(&call),
            handle: conn.conn.get_interrupt_handle(),
            armed: true,
        };
        let joined = tokio::task::spawn_blocking(move || {
            let out = run_interruptibly(&mut conn, &call, deadline, f);
            // From here on a late drop must not interrupt the connection's next user.
            *call.running.lock().unwrap_or_else(PoisonError::into_inner) = false;
            if let Ok(mut p) = pool.lock()
                && p.len() < POOL_SIZE
            {
                p.push(conn);
            }
            out
        })
        .await;
        guard.armed = false;
        joined.unwrap_or_else(|e| {
            let mut err = ResultError::new(
                ResultErrorCode::ExecutorCrash,
                "the SQLite worker thread failed",
            );
            err.detail = Some(e.to_string());
            Err(err)
        })
    }
}

impl SqliteAdapter {
    /// `EXPLAIN QUERY PLAN` of a guarded statement of this adapter's dialect.
    async fn plan_of(&self, sql: &GuardedSql) -> Result<String, ResultError> {
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return Err(e);
        }
        let sql = sql.as_str().to_owned();
        self.with_conn(self.deadline(), move |c| explain_on(c, &sql))
            .await
    }
}

/// `start` plus `ms`, or no deadline when that is beyond what the clock can represent.
fn deadline_after(start: Instant, ms: u64) -> Option<Instant> {
    start.checked_add(Duration::from_millis(ms))
}

/// The state of one call, shared by its future and its blocking thread.
struct Call {
    /// Whether the blocking thread still uses the connection; guarded, so that an
    /// interrupt can never reach the connection after it went back to the pool.
    running: Mutex<bool>,
    /// Set when the call's future was dropped: the progress handler stops the statement.
    cancelled: AtomicBool,
}

impl Default for Call {
    fn default() -> Self {
        Call {
            running: Mutex::new(true),
            cancelled: AtomicBool::new(false),
        }
    }
}

/// Interrupts a call's statement when its future is dropped while armed.
struct InterruptOnDrop {
    call: Arc<Call>,
    handle: InterruptHandle,
    armed: bool,
}

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let running = self
            .call
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if *running {
            // The flag stops a statement that starts after this; the interrupt stops the
            // one running now, also where the progress handler is not called.
            self.call.cancelled.store(true, Ordering::SeqCst);
            self.handle.interrupt();
        }
    }
}

/// Runs `f` on `conn` with a progress handler that stops at `deadline` or when `call`
/// is cancelled, and removes the handler afterwards.
fn run_interruptibly<T>(
    conn: &mut Conn,
    call: &Arc<Call>,
    deadline: Option<Instant>,
    f: impl FnOnce(&mut Conn) -> Result<T, ResultError>,
) -> Result<T, ResultError> {
    if call.cancelled.load(Ordering::SeqCst) {
        return Err(ResultError::new(
            ResultErrorCode::ExecutionTimeout,
            "the statement was cancelled before it started",
        ));
    }
    let flag = Arc::clone(call);
    let stop = move || {
        flag.cancelled.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)
    };
    let out = match conn.conn.progress_handler(PROGRESS_STEPS, Some(stop)) {
        Ok(()) => f(conn),
        Err(e) => Err(map_err(&e)),
    };
    // Never leave a handler that would interrupt the next statement.
    let _ = conn.conn.progress_handler(0, None::<fn() -> bool>);
    out
}

/// The path of a `sqlite://` URL.
fn parse_url(url: &str) -> Result<PathBuf, String> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("SQLITE://"))
        .ok_or_else(|| {
            "malformed SQLite URL: expected sqlite:///absolute/path or sqlite://relative/path"
                .to_owned()
        })?;
    if rest.is_empty() || rest == "/" {
        return Err("malformed SQLite URL: no file path".to_owned());
    }
    if rest.contains(['?', '#']) {
        return Err(
            "malformed SQLite URL: query strings and fragments are not supported".to_owned(),
        );
    }
    if rest == ":memory:" {
        return Err("an in-memory SQLite database has no data to query; name a file".to_owned());
    }
    Ok(PathBuf::from(rest))
}

/// The authorizer: reading only. `internal` lets the adapter's own introspection read
/// two pragmas (`pragma_table_info`, `pragma_foreign_key_list`); user SQL never runs
/// with it set.
fn authorize(ctx: &AuthContext<'_>, internal: bool) -> Authorization {
    match ctx.action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => {
            Authorization::Allow
        }
        AuthAction::Function { function_name } => {
            if DENIED_FUNCTIONS
                .iter()
                .any(|d| d.eq_ignore_ascii_case(function_name))
            {
                Authorization::Deny
            } else {
                Authorization::Allow
            }
        }
        AuthAction::Pragma { pragma_name, .. }
            if internal
                && ["table_info", "foreign_key_list"]
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(pragma_name)) =>
        {
            Authorization::Allow
        }
        _ => Authorization::Deny,
    }
}

/// Maps a rusqlite error to a result error. The engine's own message (without the SQL
/// text rusqlite appends) goes through the safe-message filter.
fn map_err(e: &rusqlite::Error) -> ResultError {
    use rusqlite::ErrorCode as C;
    let (ffi, msg) = match e {
        rusqlite::Error::SqliteFailure(f, m) => {
            (Some(f), m.clone().unwrap_or_else(|| f.to_string()))
        }
        rusqlite::Error::SqlInputError { error, msg, .. } => (Some(error), msg.clone()),
        other => (None, other.to_string()),
    };
    let code = match ffi.map(|f| f.code) {
        Some(C::OperationInterrupted) => ResultErrorCode::ExecutionTimeout,
        Some(C::AuthorizationForStatementDenied | C::ReadOnly | C::PermissionDenied) => {
            ResultErrorCode::SecurityViolation
        }
        Some(C::CannotOpen | C::NotADatabase | C::DatabaseCorrupt | C::SystemIoFailure) => {
            ResultErrorCode::ServiceUnavailable
        }
        _ => ResultErrorCode::ExecutionFailed,
    };
    match code {
        ResultErrorCode::ExecutionTimeout => {
            let mut err =
                ResultError::new(code, "the statement exceeded its timeout and was cancelled");
            err.detail = Some(msg);
            err
        }
        ResultErrorCode::SecurityViolation => {
            let mut err = ResultError::new(
                code,
                "the SQLite sandbox refused the statement: only reading is allowed",
            );
            err.detail = Some(msg);
            err
        }
        _ => ResultError::from_engine(code, &msg),
    }
}

/// The Arrow kind of a column from its declared type (SQLite affinity rules).
fn kind_of_decltype(decl: &str) -> Option<ColumnKind> {
    let d = decl.to_ascii_uppercase();
    if d.contains("BOOL") {
        Some(ColumnKind::Boolean)
    } else if d.contains("INT") {
        Some(ColumnKind::Int64)
    } else if d.contains("CHAR") || d.contains("CLOB") || d.contains("TEXT") {
        Some(ColumnKind::Utf8)
    } else if d.contains("BLOB") {
        Some(ColumnKind::Binary)
    } else if ["REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL"]
        .iter()
        .any(|k| d.contains(k))
    {
        Some(ColumnKind::Float64)
    } else {
        // DATE, TIMESTAMP and others are stored as text or numbers: decide by value.
        None
    }
}

fn kind_of_value(v: ValueRef<'_>) -> ColumnKind {
    match v {
        ValueRef::Integer(_) => ColumnKind::Int64,
        ValueRef::Real(_) => ColumnKind::Float64,
        ValueRef::Blob(_) => ColumnKind::Binary,
        ValueRef::Null | ValueRef::Text(_) => ColumnKind::Utf8,
    }
}

fn cell_of(v: ValueRef<'_>, kind: &ColumnKind) -> Cell {
    match (v, kind) {
        (ValueRef::Null, _) => Cell::Null,
        (ValueRef::Integer(i), ColumnKind::Boolean) => Cell::Bool(i != 0),
        (ValueRef::Integer(i), _) => Cell::Int(i),
        (ValueRef::Real(f), _) => Cell::Float(f),
        (ValueRef::Text(t), _) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        (ValueRef::Blob(b), _) => Cell::Bytes(b.to_vec()),
    }
}

/// Runs `sql` under `limits` on `conn` (the deadline is [`SqliteAdapter::with_conn`]'s).
fn run_on(
    conn: &mut Conn,
    id: &str,
    sql: &str,
    limits: Limits,
    started: Instant,
) -> Result<ResultFrame, ResultError> {
    let timeout = Duration::from_millis(limits.statement_timeout_ms);
    conn.conn.busy_timeout(timeout).map_err(|e| map_err(&e))?;
    collect(&conn.conn, id, sql, limits, started)
}

fn collect(
    conn: &Connection,
    id: &str,
    sql: &str,
    limits: Limits,
    started: Instant,
) -> Result<ResultFrame, ResultError> {
    let mut stmt = conn.prepare(sql).map_err(|e| map_err(&e))?;
    if !stmt.readonly() {
        return Err(ResultError::new(
            ResultErrorCode::SecurityViolation,
            "the SQLite sandbox refused the statement: it is not read-only",
        ));
    }
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let declared: Vec<Option<ColumnKind>> = stmt
        .columns()
        .map(|c| c.decl_type().and_then(kind_of_decltype))
        .collect();
    let n = names.len();
    let mut rows = stmt.query([]).map_err(|e| map_err(&e))?;
    let first = rows.next().map_err(|e| map_err(&e))?;
    let kinds: Vec<ColumnKind> = (0..n)
        .map(|i| match &declared[i] {
            Some(k) => k.clone(),
            None => first
                .and_then(|r| r.get_ref(i).ok())
                .map_or(ColumnKind::Utf8, kind_of_value),
        })
        .collect();
    let mut builder = ResultBuilder::new(names, kinds.clone(), limits);
    let mut row = first;
    while let Some(r) = row {
        let cells: Vec<Cell> = (0..n)
            .map(|i| r.get_ref(i).map_or(Cell::Null, |v| cell_of(v, &kinds[i])))
            .collect();
        if builder.push_row(cells) == Push::Stop {
            break;
        }
        row = rows.next().map_err(|e| map_err(&e))?;
    }
    Ok(builder.finish(id, started.elapsed().as_secs_f64() * 1000.0))
}

fn explain_on(conn: &Conn, sql: &str) -> Result<String, ResultError> {
    let stmt = conn.conn.prepare(sql).map_err(|e| map_err(&e))?;
    if !stmt.readonly() {
        return Err(ResultError::new(
            ResultErrorCode::SecurityViolation,
            "the SQLite sandbox refused the statement: it is not read-only",
        ));
    }
    drop(stmt);
    let mut stmt = conn
        .conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .map_err(|e| map_err(&e))?;
    let mut rows = stmt.query([]).map_err(|e| map_err(&e))?;
    let mut lines = Vec::new();
    while let Some(r) = rows.next().map_err(|e| map_err(&e))? {
        let detail: String = r.get(3).unwrap_or_default();
        lines.push(detail);
    }
    Ok(lines.join("\n"))
}

#[async_trait]
impl DatasourceAdapter for SqliteAdapter {
    fn id(&self) -> &str {
        &self.id
    }

    fn engine_type(&self) -> &str {
        "sqlite"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn capabilities(&self) -> &CapabilitySet {
        &self.capabilities
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    async fn test_connection(&self) -> Result<(), ResultError> {
        let id = self.id.clone();
        self.with_conn(self.deadline(), |c| {
            c.conn
                .query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                .map(|_| ())
                .map_err(|e| map_err(&e))
        })
        .await
        .map_err(|e| e.at("test_connection", &id))
    }

    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        let id = self.id.clone();
        let at = id.clone();
        let budget = StatsBudget::of(&self.options);
        self.with_conn(self.snapshot_deadline(), move |c| {
            snapshot_on(c, &id, Detail::Full, budget)
        })
        .await
        .map_err(|e| e.at("schema_snapshot", &at))
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let id = self.id.clone();
        let at = id.clone();
        let budget = StatsBudget::of(&self.options);
        self.with_conn(self.snapshot_deadline(), move |c| {
            snapshot_on(c, &id, Detail::Contract, budget)
        })
        .await
        .map(|s| s.contract)
        .map_err(|e| e.at("schema_contract", &at))
    }

    async fn run_sql(&self, sql: &GuardedSql, limits: Limits) -> ResultFrame {
        let started = Instant::now();
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return ResultFrame::failed(e.at("execute", &self.id), 0.0);
        }
        let id = self.id.clone();
        let sql = sql.as_str().to_owned();
        let at = id.clone();
        let deadline = deadline_after(started, limits.statement_timeout_ms);
        let out = self
            .with_conn(deadline, move |c| run_on(c, &id, &sql, limits, started))
            .await;
        match out {
            Ok(frame) => frame,
            Err(e) => ResultFrame::failed(
                e.at("execute", &at),
                started.elapsed().as_secs_f64() * 1000.0,
            ),
        }
    }

    async fn dry_run(&self, sql: &GuardedSql) -> DryRunResult {
        let id = self.id.clone();
        match self.plan_of(sql).await {
            Ok(plan) => DryRunResult {
                is_valid: true,
                error_message: None,
                data: Some(serde_json::json!({ "plan": plan })),
                error: None,
            },
            Err(e) => DryRunResult {
                is_valid: false,
                error_message: Some(e.safe_message.clone()),
                data: None,
                error: Some(e.at("dry_run", &id)),
            },
        }
    }

    async fn cost_estimate(&self, _sql: &GuardedSql) -> Result<CostEstimate, ResultError> {
        Err(ResultError::new(
            ResultErrorCode::CapabilityViolation,
            "SQLite has no cost model: cost estimates are not supported",
        )
        .at("cost_estimate", &self.id))
    }

    async fn explain(&self, sql: &GuardedSql) -> Result<QueryPlan, ResultError> {
        let id = self.id.clone();
        self.plan_of(sql)
            .await
            .map(|plan_text| QueryPlan {
                plan_text,
                format: PlanFormat::Text,
            })
            .map_err(|e| e.at("explain", &id))
    }

    fn details(&self) -> serde_json::Value {
        let file = self
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned());
        serde_json::json!({
            "id": self.id,
            "engine_type": "sqlite",
            "file": file,
            "limits": self.limits,
            "capabilities": self.capabilities.as_strings(),
        })
    }
}

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
//! tokio's blocking pool, over a small pool of connections. SQLite has no cost model, so
//! the adapter does not advertise `supports_cost_estimate`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_adapter::{
    Capability, CapabilitySet, Cell, ColumnKind, CostEstimate, DEFAULT_SCHEMA_STATS_SAMPLE_ROWS,
    DEFAULT_SCHEMA_STATS_TIMEOUT_MS, DatasourceAdapter, DryRunResult, Limits, PlanFormat, Push,
    QueryPlan, ResultBuilder, ResultError, ResultErrorCode, ResultFrame,
};
use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, Dialect, ForeignKeyContract, SchemaContract,
    SchemaMetadata, SchemaSnapshot, TableContract, TableMetadata, TableRef,
};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

mod write;

#[cfg(test)]
mod tests;

pub use write::write_database;

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

/// At most this many connections are kept open.
const POOL_SIZE: usize = 4;

/// Text columns with at most this many distinct values get sample values.
const LOW_CARDINALITY: u64 = 20;

/// How many sample values a low-cardinality column gets.
const SAMPLE_VALUES: usize = 5;

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

fn unavailable(message: &str, detail: String) -> ResultError {
    let mut e = ResultError::new(ResultErrorCode::ServiceUnavailable, message);
    e.detail = Some(detail);
    e
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
    /// Opens the database file at `path` read-only. A missing file is
    /// `SERVICE_UNAVAILABLE`; it is never created.
    pub fn open(id: &str, path: &Path, limits: Limits) -> Result<Self, ResultError> {
        if !path.is_file() {
            return Err(unavailable(
                "the SQLite database file does not exist or is not a file",
                path.display().to_string(),
            )
            .at("connect", id));
        }
        let adapter = SqliteAdapter {
            id: id.to_owned(),
            path: path.to_path_buf(),
            limits,
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
        let path = parse_url(url).map_err(|m| {
            ResultError::new(ResultErrorCode::ServiceUnavailable, m).at("connect", id)
        })?;
        SqliteAdapter::open(id, &path, limits)
    }

    fn open_conn(&self) -> Result<Conn, ResultError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&self.path, flags)
            .map_err(|e| unavailable("cannot open the SQLite database", e.to_string()))?;
        let setup = |conn: &Connection| -> rusqlite::Result<()> {
            conn.pragma_update(None, "query_only", 1)?;
            conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
            conn.set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA,
                false,
            )?;
            // Reading the schema proves the file is a database.
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
                r.get::<_, i64>(0)
            })?;
            Ok(())
        };
        setup(&conn).map_err(|e| {
            unavailable("the file is not a readable SQLite database", e.to_string())
        })?;
        let internal = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&internal);
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            authorize(&ctx, flag.load(Ordering::Relaxed))
        }))
        .map_err(|e| unavailable("cannot install the SQLite authorizer", e.to_string()))?;
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

    /// Runs `f` on a pooled connection on tokio's blocking pool.
    async fn with_conn<T, F>(&self, f: F) -> Result<T, ResultError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Conn) -> Result<T, ResultError> + Send + 'static,
    {
        let pool = Arc::clone(&self.pool);
        let mut conn = self.take_conn()?;
        let joined = tokio::task::spawn_blocking(move || {
            let out = f(&mut conn);
            if let Ok(mut p) = pool.lock()
                && p.len() < POOL_SIZE
            {
                p.push(conn);
            }
            out
        })
        .await;
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

/// Runs `sql` under `limits` on `conn`.
fn run_on(
    conn: &mut Conn,
    id: &str,
    sql: &str,
    limits: Limits,
) -> Result<ResultFrame, ResultError> {
    let started = Instant::now();
    let timeout = Duration::from_millis(limits.statement_timeout_ms);
    let deadline = started + timeout;
    conn.conn.busy_timeout(timeout).map_err(|e| map_err(&e))?;
    conn.conn
        .progress_handler(1_000, Some(move || Instant::now() >= deadline))
        .map_err(|e| map_err(&e))?;
    let out = collect(&conn.conn, id, sql, limits, started);
    // Never leave a handler that would interrupt the next statement.
    let _ = conn.conn.progress_handler(0, None::<fn() -> bool>);
    out
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

/// Runs an introspection query with pragmas allowed, returning rows of values.
fn internal_rows(
    conn: &Conn,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<Vec<Vec<rusqlite::types::Value>>, ResultError> {
    conn.internal.store(true, Ordering::Relaxed);
    let out = (|| -> rusqlite::Result<Vec<Vec<rusqlite::types::Value>>> {
        let mut stmt = conn.conn.prepare(sql)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(params)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(
                (0..n)
                    .map(|i| r.get(i))
                    .collect::<rusqlite::Result<Vec<_>>>()?,
            );
        }
        Ok(out)
    })();
    conn.internal.store(false, Ordering::Relaxed);
    out.map_err(|e| map_err(&e))
}

fn text(v: &rusqlite::types::Value) -> String {
    match v {
        rusqlite::types::Value::Text(s) => s.clone(),
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Real(f) => f.to_string(),
        _ => String::new(),
    }
}

fn int(v: &rusqlite::types::Value) -> i64 {
    match v {
        rusqlite::types::Value::Integer(i) => *i,
        _ => 0,
    }
}

fn json_of(v: &rusqlite::types::Value) -> Option<serde_json::Value> {
    match v {
        rusqlite::types::Value::Null | rusqlite::types::Value::Blob(_) => None,
        rusqlite::types::Value::Integer(i) => Some(serde_json::json!(i)),
        rusqlite::types::Value::Real(f) => Some(serde_json::json!(f)),
        rusqlite::types::Value::Text(s) => Some(serde_json::json!(s)),
    }
}

/// `"name"` with embedded quotes doubled.
fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// How much of the schema a snapshot reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Tables, columns and keys only: catalog reads, no row counts, statistics or
    /// samples; the snapshot has no metadata.
    Contract,
    /// The contract plus row counts and column statistics within the time budget.
    Full,
}

/// How much work the statistics of a snapshot may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatsBudget {
    /// Columns whose turn comes after this much time get no statistics.
    time: Duration,
    /// Tables with more rows get statistics on their first this many rows.
    sample_rows: u64,
}

impl StatsBudget {
    /// `DEFAULT_SCHEMA_STATS_TIMEOUT_MS` and `DEFAULT_SCHEMA_STATS_SAMPLE_ROWS`.
    const DEFAULT: StatsBudget = StatsBudget {
        time: Duration::from_millis(DEFAULT_SCHEMA_STATS_TIMEOUT_MS),
        sample_rows: DEFAULT_SCHEMA_STATS_SAMPLE_ROWS,
    };
}

fn snapshot_on(
    conn: &Conn,
    id: &str,
    detail: Detail,
    limits: StatsBudget,
) -> Result<SchemaSnapshot, ResultError> {
    let started = Instant::now();
    let budget = limits.time;
    let mut contract = SchemaContract::new(id, "sqlite");
    let mut metadata = SchemaMetadata {
        datasource_id: id.to_owned(),
        engine_type: "sqlite".to_owned(),
        ..SchemaMetadata::default()
    };
    let tables = internal_rows(
        conn,
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        &[],
    )?;
    for t in tables {
        let name = text(&t[0]);
        let table_ref = TableRef {
            schema_name: MAIN_SCHEMA.to_owned(),
            table_name: name.clone(),
        };
        let mut table = TableContract {
            table: table_ref.clone(),
            ..TableContract::default()
        };
        // cid, name, type, notnull, dflt_value, pk
        let cols = internal_rows(
            conn,
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1) ORDER BY cid",
            &[&name],
        )?;
        for c in &cols {
            let col = text(&c[0]);
            let pk = int(&c[3]) > 0;
            table.columns.insert(
                col.clone(),
                ColumnContract {
                    name: col,
                    data_type: text(&c[1]),
                    // SQLite lets a non-INTEGER primary key hold NULL; report the truth.
                    is_nullable: int(&c[2]) == 0,
                    is_primary_key: pk,
                },
            );
        }
        // id, seq, table, from, to, ...
        let fks = internal_rows(
            conn,
            "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
            &[&name],
        )?;
        let mut by_id: Vec<(i64, ForeignKeyContract)> = Vec::new();
        for f in &fks {
            let fk_id = int(&f[0]);
            let to = text(&f[3]);
            let from = text(&f[2]);
            let referred = text(&f[1]);
            if let Some((_, fk)) = by_id.iter_mut().find(|(i, _)| *i == fk_id) {
                fk.constrained_columns.push(from);
                fk.referred_columns.push(to);
            } else {
                by_id.push((
                    fk_id,
                    ForeignKeyContract {
                        constrained_columns: vec![from],
                        referred_table: TableRef {
                            schema_name: MAIN_SCHEMA.to_owned(),
                            table_name: referred,
                        },
                        referred_columns: vec![to],
                        cardinality: nl2sql_state::Cardinality::ManyToOne,
                        business_meaning: None,
                    },
                ));
            }
        }
        table.foreign_keys = by_id.into_iter().map(|(_, fk)| fk).collect();
        if detail == Detail::Contract {
            contract.add_table(table);
            continue;
        }

        let count = internal_rows(conn, &format!("SELECT count(*) FROM {}", quote(&name)), &[])?;
        let row_count = count.first().map(|r| int(&r[0]).max(0) as u64);
        let mut tmeta = TableMetadata {
            table: table_ref,
            row_count,
            ..TableMetadata::default()
        };
        // Statistics on a sample of the first rows of big tables, within the time budget.
        let source = if row_count.unwrap_or(0) > limits.sample_rows {
            format!(
                "(SELECT * FROM {} LIMIT {})",
                quote(&name),
                limits.sample_rows
            )
        } else {
            quote(&name)
        };
        for (col, contract_col) in &table.columns {
            let stats = if started.elapsed() < budget {
                Some(column_stats(conn, &source, col, &contract_col.data_type)?)
            } else {
                None
            };
            tmeta.columns.insert(
                col.clone(),
                ColumnMetadata {
                    statistics: stats,
                    ..ColumnMetadata::default()
                },
            );
        }
        metadata.tables.insert(table.table.full_name(), tmeta);
        contract.add_table(table);
    }
    Ok(SchemaSnapshot {
        contract,
        metadata: (detail == Detail::Full).then_some(metadata),
    })
}

fn column_stats(
    conn: &Conn,
    source: &str,
    col: &str,
    data_type: &str,
) -> Result<ColumnStatistics, ResultError> {
    let c = quote(col);
    let row = internal_rows(
        conn,
        &format!(
            "SELECT count(*), count({c}), count(DISTINCT {c}), min({c}), max({c}) FROM {source}"
        ),
        &[],
    )?;
    let Some(r) = row.first() else {
        return Ok(ColumnStatistics::default());
    };
    let total = int(&r[0]).max(0) as f64;
    let non_null = int(&r[1]).max(0) as f64;
    let distinct = int(&r[2]).max(0) as u64;
    let mut stats = ColumnStatistics {
        null_percentage: if total > 0.0 {
            (total - non_null) / total
        } else {
            0.0
        },
        distinct_count: distinct,
        min_value: json_of(&r[3]),
        max_value: json_of(&r[4]),
        sample_values: Vec::new(),
    };
    let is_text = matches!(kind_of_decltype(data_type), Some(ColumnKind::Utf8) | None);
    if is_text && distinct > 0 && distinct <= LOW_CARDINALITY {
        let samples = internal_rows(
            conn,
            &format!(
                "SELECT {c} FROM {source} WHERE {c} IS NOT NULL GROUP BY {c} ORDER BY count(*) DESC, {c} LIMIT {SAMPLE_VALUES}"
            ),
            &[],
        )?;
        stats.sample_values = samples.iter().filter_map(|s| json_of(&s[0])).collect();
    }
    Ok(stats)
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
        self.with_conn(|c| {
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
        self.with_conn(move |c| snapshot_on(c, &id, Detail::Full, StatsBudget::DEFAULT))
            .await
            .map_err(|e| e.at("schema_snapshot", &at))
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let id = self.id.clone();
        let at = id.clone();
        self.with_conn(move |c| snapshot_on(c, &id, Detail::Contract, StatsBudget::DEFAULT))
            .await
            .map(|s| s.contract)
            .map_err(|e| e.at("schema_contract", &at))
    }

    async fn run_sql(&self, sql: &str, limits: Limits) -> ResultFrame {
        let started = Instant::now();
        let id = self.id.clone();
        let sql = sql.to_owned();
        let at = id.clone();
        match self.with_conn(move |c| run_on(c, &id, &sql, limits)).await {
            Ok(frame) => frame,
            Err(e) => ResultFrame::failed(
                e.at("execute", &at),
                started.elapsed().as_secs_f64() * 1000.0,
            ),
        }
    }

    async fn dry_run(&self, sql: &str) -> DryRunResult {
        let sql = sql.to_owned();
        let id = self.id.clone();
        match self.with_conn(move |c| explain_on(c, &sql)).await {
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

    async fn cost_estimate(&self, _sql: &str) -> Result<CostEstimate, ResultError> {
        Err(ResultError::new(
            ResultErrorCode::CapabilityViolation,
            "SQLite has no cost model: cost estimates are not supported",
        )
        .at("cost_estimate", &self.id))
    }

    async fn explain(&self, sql: &str) -> Result<QueryPlan, ResultError> {
        let sql = sql.to_owned();
        let id = self.id.clone();
        self.with_conn(move |c| explain_on(c, &sql))
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

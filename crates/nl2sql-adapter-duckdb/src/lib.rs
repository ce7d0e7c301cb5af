//! The DuckDB adapter of nl2sql (spec: adapters.md §6.1), the embedded default, on
//! duckdb-rs with a bundled DuckDB.
//!
//! Sandbox, fixed when the database is opened and locked for its lifetime:
//! - the file is opened `READ_ONLY` (never created);
//! - `enable_external_access = false`: no file reads or writes (`read_csv`, `COPY`,
//!   `EXPORT`), no `ATTACH`, no network, no `INSTALL`/`LOAD` of extensions;
//!   extension autoloading and autoinstalling are off;
//! - `memory_limit` 1 GiB, 2 threads, at most 1 GiB of temporary files: a statement
//!   that needs more fails with an out-of-memory error instead of growing the process;
//! - `lock_configuration = true`: no statement can change a setting afterwards;
//! - every statement runs on a fresh connection, dropped afterwards, so temporary
//!   objects, variables and prepared statements never outlive it.
//!
//! Results stream as Arrow record batches straight from DuckDB; the row and byte limits
//! stop reading early. The statement timeout interrupts the query
//! (`EXECUTION_TIMEOUT`). Work runs on tokio's blocking pool.

mod error;
mod snapshot;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::array::{Array, AsArray as _};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use async_trait::async_trait;
use duckdb::{AccessMode, Config, Connection};
use nl2sql_adapter::{
    AdapterOptions, Capability, CapabilitySet, ConnectRequest, CostEstimate, DatasourceAdapter,
    Driver, DryRunResult, ExecutionStats, Limits, QueryPlan, ResultError, ResultErrorCode,
    ResultFrame, TruncatedReason, dialect_mismatch, json_plan,
};
use nl2sql_state::{Dialect, Engine, SchemaContract, SchemaSnapshot};
use nl2sql_validate::GuardedSql;

pub use write::write_database;

use error::map_err;

/// A DuckDB database file behind the adapter SPI.
pub struct DuckDbAdapter {
    id: String,
    path: PathBuf,
    limits: Limits,
    options: AdapterOptions,
    capabilities: CapabilitySet,
    /// The database; each statement runs on a clone (a new connection).
    root: Arc<Mutex<Connection>>,
    version: String,
}

impl std::fmt::Debug for DuckDbAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DuckDbAdapter")
            .field("id", &self.id)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The memory one database may use (`memory_limit`; DuckDB's default is 80% of the
/// machine's memory): 1 GiB. A statement that needs more fails with an out-of-memory
/// error instead of growing the process.
pub const ENGINE_MEMORY_LIMIT: &str = "1GiB";

/// The temporary files one database may write when a statement spills
/// (`max_temp_directory_size`).
pub const ENGINE_TEMP_LIMIT: &str = "1GiB";

/// Threads per database (DuckDB's default is one per core).
const ENGINE_THREADS: i64 = 2;

/// The sandbox configuration every database is opened with.
fn sandbox_config() -> duckdb::Result<Config> {
    Config::default()
        .access_mode(AccessMode::ReadOnly)?
        .enable_external_access(false)?
        .enable_autoload_extension(false)?
        .with("autoinstall_known_extensions", "false")?
        .with("allow_community_extensions", "false")?
        .max_memory(ENGINE_MEMORY_LIMIT)?
        .threads(ENGINE_THREADS)?
        // What spills to disk beyond the memory limit is bounded too.
        .with("max_temp_directory_size", ENGINE_TEMP_LIMIT)?
        .with("lock_configuration", "true")
}

/// The capabilities every [`DuckDbAdapter`] advertises, known without opening a database
/// (for listings such as `nl2sql list-adapters`).
pub fn capabilities() -> CapabilitySet {
    CapabilitySet::new(&[
        Capability::SupportsSql,
        Capability::SupportsSchemaIntrospection,
        Capability::SupportsDryRun,
        Capability::SupportsCostEstimate,
    ])
}

impl DuckDbAdapter {
    /// Opens the database file at `path` read-only and sandboxed, with the default
    /// [`AdapterOptions`]. A missing file is `SERVICE_UNAVAILABLE`; it is never created.
    pub fn open(id: &str, path: &Path, limits: Limits) -> Result<Self, ResultError> {
        DuckDbAdapter::open_with_options(id, path, limits, AdapterOptions::default())
    }

    /// [`DuckDbAdapter::open`] with explicit [`AdapterOptions`] (the statistics budget and
    /// sample size of snapshots; a file has no connect timeout).
    pub fn open_with_options(
        id: &str,
        path: &Path,
        limits: Limits,
        options: AdapterOptions,
    ) -> Result<Self, ResultError> {
        if !path.is_file() {
            return Err(ResultError::unavailable(
                "the DuckDB database file does not exist or is not a file",
                path.display().to_string(),
            )
            .at("connect", id));
        }
        let config = sandbox_config().map_err(|e| {
            ResultError::crash("cannot configure the DuckDB sandbox", e.to_string())
                .at("connect", id)
        })?;
        let conn = Connection::open_with_flags(path, config).map_err(|e| {
            ResultError::unavailable("the file is not a readable DuckDB database", e.to_string())
                .at("connect", id)
        })?;
        let version = conn
            .query_row("SELECT version()", [], |r| r.get::<_, String>(0))
            .unwrap_or_default();
        Ok(DuckDbAdapter {
            version,
            id: id.to_owned(),
            path: path.to_path_buf(),
            limits,
            options,
            capabilities: capabilities(),
            root: Arc::new(Mutex::new(conn)),
        })
    }

    /// Opens `duckdb:///absolute/path.duckdb` or `duckdb://relative/path.duckdb`
    /// (relative to the current directory).
    pub fn from_url(id: &str, url: &str, limits: Limits) -> Result<Self, ResultError> {
        DuckDbAdapter::from_url_with_options(id, url, limits, AdapterOptions::default())
    }

    /// [`DuckDbAdapter::from_url`] with explicit [`AdapterOptions`].
    pub fn from_url_with_options(
        id: &str,
        url: &str,
        limits: Limits,
        options: AdapterOptions,
    ) -> Result<Self, ResultError> {
        let path = parse_url(url).map_err(|m| {
            ResultError::new(ResultErrorCode::ServiceUnavailable, m).at("connect", id)
        })?;
        DuckDbAdapter::open_with_options(id, &path, limits, options)
    }

    /// The adapter's options.
    pub fn options(&self) -> AdapterOptions {
        self.options
    }

    /// A new connection to the database.
    fn connection(&self) -> Result<Connection, ResultError> {
        let root = self.root.lock().map_err(|e| {
            ResultError::crash("the DuckDB connection lock is poisoned", e.to_string())
        })?;
        root.try_clone()
            .map_err(|e| ResultError::unavailable("cannot open a DuckDB connection", e.to_string()))
    }

    /// Runs `f` on a fresh connection on tokio's blocking pool, interrupting it after
    /// `timeout_ms`.
    async fn on_connection<T, F>(&self, timeout_ms: u64, f: F) -> Result<T, ResultError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, ResultError> + Send + 'static,
    {
        let conn = self.connection()?;
        // Dropping this future (a cancelled or timed-out run) interrupts the statement,
        // so no query keeps running on the blocking pool for nobody.
        let mut guard = InterruptOnDrop {
            handle: conn.interrupt_handle(),
            armed: true,
        };
        let timed_out = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&timed_out);
        let mut handle = tokio::task::spawn_blocking(move || f(&conn));
        let joined =
            match tokio::time::timeout(Duration::from_millis(timeout_ms), &mut handle).await {
                Ok(joined) => joined,
                Err(_) => {
                    flag.store(true, Ordering::SeqCst);
                    guard.handle.interrupt();
                    handle.await
                }
            };
        guard.armed = false;
        let out = joined.unwrap_or_else(|e| {
            Err(ResultError::crash(
                "the DuckDB worker thread failed",
                e.to_string(),
            ))
        });
        match out {
            Err(e) if timed_out.load(Ordering::SeqCst) => Err(ResultError::timed_out(
                e.detail.unwrap_or_else(|| e.safe_message.clone()),
            )),
            other => other,
        }
    }

    async fn plan_of(&self, sql: &GuardedSql) -> Result<serde_json::Value, ResultError> {
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return Err(e);
        }
        let sql = sql.as_str();
        let sql = sql.to_owned();
        self.on_connection(self.limits.statement_timeout_ms, move |c| {
            explain_json(c, &sql)
        })
        .await
    }
}

/// Interrupts a connection's running statement when dropped while armed.
struct InterruptOnDrop {
    handle: Arc<duckdb::InterruptHandle>,
    armed: bool,
}

impl Drop for InterruptOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.handle.interrupt();
        }
    }
}

/// The path of a `duckdb://` URL.
fn parse_url(url: &str) -> Result<PathBuf, String> {
    let rest = url
        .strip_prefix("duckdb://")
        .or_else(|| url.strip_prefix("DUCKDB://"))
        .ok_or_else(|| {
            "malformed DuckDB URL: expected duckdb:///absolute/path or duckdb://relative/path"
                .to_owned()
        })?;
    if rest.is_empty() || rest == "/" {
        return Err("malformed DuckDB URL: no file path".to_owned());
    }
    if rest.contains(['?', '#']) {
        return Err(
            "malformed DuckDB URL: query strings and fragments are not supported".to_owned(),
        );
    }
    if rest == ":memory:" || rest == "/:memory:" {
        return Err(
            "a read-only in-memory DuckDB database is empty; name a database file".to_owned(),
        );
    }
    Ok(PathBuf::from(rest))
}

/// Approximate data size of each row of `batch`: fixed widths, string and binary lengths
/// plus an offset, one byte for booleans and nulls (the same measure as the other
/// adapters' `ResultBuilder`).
fn row_sizes(batch: &RecordBatch) -> Vec<u64> {
    let mut sizes = vec![0u64; batch.num_rows()];
    for col in batch.columns() {
        let dt = col.data_type();
        match dt {
            DataType::Utf8 => {
                let a = col.as_string::<i32>();
                for (i, s) in sizes.iter_mut().enumerate() {
                    *s += if a.is_null(i) {
                        1
                    } else {
                        a.value(i).len() as u64 + 4
                    };
                }
            }
            DataType::LargeUtf8 => {
                let a = col.as_string::<i64>();
                for (i, s) in sizes.iter_mut().enumerate() {
                    *s += if a.is_null(i) {
                        1
                    } else {
                        a.value(i).len() as u64 + 8
                    };
                }
            }
            DataType::Utf8View => {
                let a = col.as_string_view();
                for (i, s) in sizes.iter_mut().enumerate() {
                    *s += if a.is_null(i) {
                        1
                    } else {
                        a.value(i).len() as u64 + 4
                    };
                }
            }
            DataType::Binary => {
                let a = col.as_binary::<i32>();
                for (i, s) in sizes.iter_mut().enumerate() {
                    *s += if a.is_null(i) {
                        1
                    } else {
                        a.value(i).len() as u64 + 4
                    };
                }
            }
            _ => {
                let width = dt.primitive_width().map_or_else(
                    || (col.get_array_memory_size() / col.len().max(1)).max(1) as u64,
                    |w| w as u64,
                );
                for s in &mut sizes {
                    *s += width;
                }
            }
        }
    }
    sizes
}

/// Runs `sql` on `conn` under `limits`, streaming batches until a limit stops it.
fn run_on(
    conn: &Connection,
    id: &str,
    sql: &str,
    limits: Limits,
    started: Instant,
) -> Result<ResultFrame, ResultError> {
    let mut stmt = conn.prepare(sql).map_err(|e| map_err(&e))?;
    let mut stream = stmt.stream_arrow([]).map_err(|e| map_err(&e))?;
    let schema: SchemaRef = stream.get_schema();
    let mut batches = Vec::new();
    let (mut rows, mut bytes) = (0u64, 0u64);
    let mut truncated = None;
    for batch in stream.by_ref() {
        let batch = batch.map_err(|e| map_err(&e))?;
        if batch.num_rows() == 0 {
            continue;
        }
        let room = limits.row_limit.saturating_sub(rows);
        let mut take = (batch.num_rows() as u64).min(room);
        let sizes = row_sizes(&batch);
        let mut size: u64 = 0;
        for (i, s) in sizes.iter().take(take as usize).enumerate() {
            if bytes + size + s > limits.max_bytes {
                take = i as u64;
                truncated = Some(TruncatedReason::MaxBytes);
                break;
            }
            size += s;
        }
        if truncated.is_none() && take < batch.num_rows() as u64 {
            truncated = Some(TruncatedReason::RowLimit);
        }
        if take > 0 {
            batches.push(batch.slice(0, take as usize));
        }
        rows += take;
        bytes += size;
        if truncated.is_some() {
            break;
        }
        if rows == limits.row_limit {
            // The limit is met exactly: more rows mean the result was cut.
            if stream.any(|b| b.is_ok_and(|b| b.num_rows() > 0)) {
                truncated = Some(TruncatedReason::RowLimit);
            }
            break;
        }
    }
    // One compact batch, so that a slice does not keep its whole parent alive.
    let batch = arrow::compute::concat_batches(&schema, &batches)
        .map_err(|e| ResultError::crash("cannot assemble the DuckDB result", e.to_string()))?;
    let memory = batch.get_array_memory_size() as u64;
    Ok(ResultFrame {
        success: true,
        schema: Some(schema),
        batches: vec![batch],
        row_count: rows,
        truncated: truncated.is_some(),
        bytes: Some(memory),
        datasource_id: Some(id.to_owned()),
        tenant_id: None,
        execution_stats: ExecutionStats {
            execution_time_ms: started.elapsed().as_secs_f64() * 1000.0,
            truncated_reason: truncated,
        },
        error: None,
    })
}

/// `EXPLAIN (FORMAT JSON)` of `sql`, which binds and plans it without running it.
fn explain_json(conn: &Connection, sql: &str) -> Result<serde_json::Value, ResultError> {
    let mut stmt = conn
        .prepare(&format!("EXPLAIN (FORMAT JSON) {sql}"))
        .map_err(|e| map_err(&e))?;
    let mut rows = stmt.query([]).map_err(|e| map_err(&e))?;
    let mut text = String::new();
    while let Some(row) = rows.next().map_err(|e| map_err(&e))? {
        let v: String = row.get(1).map_err(|e| map_err(&e))?;
        text.push_str(&v);
    }
    serde_json::from_str(&text).map_err(|e| {
        ResultError::crash(
            "cannot read the DuckDB plan",
            format!("EXPLAIN output: {e}"),
        )
    })
}

/// The root's estimated cardinality, and the sum over every operator as the cost.
fn estimates(plan: &serde_json::Value) -> (Option<f64>, Option<u64>) {
    fn cardinality(node: &serde_json::Value) -> Option<f64> {
        let v = node.get("extra_info")?.get("Estimated Cardinality")?;
        v.as_f64().or_else(|| {
            v.as_str()
                .and_then(|s| s.trim_start_matches('~').parse().ok())
        })
    }
    fn walk(node: &serde_json::Value, total: &mut f64, seen: &mut bool) {
        if let Some(c) = cardinality(node) {
            *total += c;
            *seen = true;
        }
        if let Some(children) = node.get("children").and_then(serde_json::Value::as_array) {
            for c in children {
                walk(c, total, seen);
            }
        }
    }
    let roots: Vec<&serde_json::Value> = match plan {
        serde_json::Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let (mut total, mut seen) = (0.0, false);
    for r in &roots {
        walk(r, &mut total, &mut seen);
    }
    let rows = roots
        .first()
        .and_then(|r| {
            // The root may be a projection without an estimate: take the first below.
            let mut node = *r;
            loop {
                if let Some(c) = cardinality(node) {
                    return Some(c);
                }
                node = node.get("children")?.get(0)?;
            }
        })
        .map(|c| c.max(0.0).round() as u64);
    (seen.then_some(total), rows)
}

#[async_trait]
impl DatasourceAdapter for DuckDbAdapter {
    fn id(&self) -> &str {
        &self.id
    }

    fn engine_type(&self) -> &str {
        "duckdb"
    }

    fn dialect(&self) -> Dialect {
        Dialect::DuckDb
    }

    fn capabilities(&self) -> &CapabilitySet {
        &self.capabilities
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    async fn test_connection(&self) -> Result<(), ResultError> {
        self.on_connection(self.limits.statement_timeout_ms, |c| {
            c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))
                .map(|_| ())
                .map_err(|e| map_err(&e))
        })
        .await
        .map_err(|e| e.at("test_connection", &self.id))
    }

    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        let id = self.id.clone();
        let options = self.options;
        let limit = options.snapshot_timeout_ms(&self.limits);
        self.on_connection(limit, move |c| {
            snapshot::snapshot(c, &id, &options, snapshot::Detail::Full)
        })
        .await
        .map_err(|e| e.at("schema_snapshot", &self.id))
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let id = self.id.clone();
        let options = self.options;
        let limit = options.snapshot_timeout_ms(&self.limits);
        self.on_connection(limit, move |c| {
            snapshot::snapshot(c, &id, &options, snapshot::Detail::Contract)
        })
        .await
        .map(|s| s.contract)
        .map_err(|e| e.at("schema_contract", &self.id))
    }

    async fn run_sql(&self, sql: &GuardedSql, limits: Limits) -> ResultFrame {
        let started = Instant::now();
        if let Some(e) = dialect_mismatch(self.dialect(), sql) {
            return ResultFrame::failed(e.at("execute", &self.id), 0.0);
        }
        let sql = sql.as_str();
        let id = self.id.clone();
        let sql = sql.to_owned();
        let out = self
            .on_connection(limits.statement_timeout_ms, move |c| {
                run_on(c, &id, &sql, limits, started)
            })
            .await;
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
        let file = self
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned());
        serde_json::json!({
            "id": self.id,
            "engine_type": "duckdb",
            "file": file,
            "duckdb_version": self.version,
            "limits": self.limits,
            "capabilities": self.capabilities.as_strings(),
        })
    }
}

/// The DuckDB driver: opens `duckdb://` datasources with [`DuckDbAdapter`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DuckDbDriver;

#[async_trait]
impl Driver for DuckDbDriver {
    fn engine(&self) -> Engine {
        Engine::Duckdb
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
        let adapter = DuckDbAdapter::from_url_with_options(
            request.id,
            request.url,
            request.limits,
            request.options,
        )?;
        Ok(Arc::new(adapter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_file() {
        assert_eq!(
            parse_url("duckdb:///data/ops.duckdb").unwrap(),
            PathBuf::from("/data/ops.duckdb")
        );
        assert_eq!(
            parse_url("duckdb://rel/ops.duckdb").unwrap(),
            PathBuf::from("rel/ops.duckdb")
        );
        for bad in [
            "duckdb://",
            "sqlite:///x.db",
            "duckdb:///x.db?mode=rw",
            "duckdb://:memory:",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn plan_estimates_read_cardinalities() {
        let plan = serde_json::json!([{"name": "PROJECTION", "extra_info": {},
            "children": [{"name": "SEQ_SCAN", "extra_info": {"Estimated Cardinality": "8"},
                          "children": []}]}]);
        assert_eq!(estimates(&plan), (Some(8.0), Some(8)));
        assert_eq!(estimates(&serde_json::json!([])), (None, None));
    }
}

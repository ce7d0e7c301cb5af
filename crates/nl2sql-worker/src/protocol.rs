//! The worker protocol (spec: errors-and-recovery.md §5): one [`ExecutionRequest`] per
//! line on the worker's stdin, one [`ExecutionResult`] per line on its stdout, in order.
//!
//! Every value the adapter SPI returns crosses the pipe without loss: result frames as an
//! Arrow IPC stream (base64), so column types, nullability and metadata survive; the other
//! values as their own serde forms (floats round-trip exactly). A [`ResultError`]'s
//! `detail` (the driver's raw text) is never serialised, so it stays in the worker.

use std::io::Cursor;

use arrow::datatypes::{Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use nl2sql_adapter::{
    CapabilitySet, CostEstimate, DatasourceAdapter, DryRunResult, ExecutionStats, Limits,
    QueryPlan, RequestLimits, ResultError, ResultErrorCode, ResultFrame,
};
use nl2sql_state::{Dialect, SchemaContract, SchemaSnapshot};
use serde::{Deserialize, Serialize};

/// The protocol version a worker reports in its [`WorkerInfo`].
pub const PROTOCOL_VERSION: u32 = 1;

/// What a request asks the worker's adapter to do: one mode per SPI operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The handshake: the datasource's id, engine, dialect, capabilities and limits.
    Describe,
    /// `DatasourceAdapter::test_connection`.
    TestConnection,
    /// `DatasourceAdapter::schema_snapshot`.
    FetchSchema,
    /// `DatasourceAdapter::schema_contract`.
    SchemaContract,
    /// `DatasourceAdapter::execute`: request checks and the guard, then the engine.
    Execute,
    /// `DatasourceAdapter::run_sql`: the engine sandbox alone, under exactly the limits
    /// given.
    RunSql,
    /// `DatasourceAdapter::dry_run`.
    DryRun,
    /// `DatasourceAdapter::cost_estimate`.
    CostEstimate,
    /// `DatasourceAdapter::explain`.
    Explain,
}

impl Mode {
    /// The mode's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Describe => "describe",
            Mode::TestConnection => "test_connection",
            Mode::FetchSchema => "fetch_schema",
            Mode::SchemaContract => "schema_contract",
            Mode::Execute => "execute",
            Mode::RunSql => "run_sql",
            Mode::DryRun => "dry_run",
            Mode::CostEstimate => "cost_estimate",
            Mode::Explain => "explain",
        }
    }

    /// The adapter stage a failure of this mode is reported at (`ResultError::stage`).
    pub fn stage(self) -> &'static str {
        match self {
            Mode::Describe => "connect",
            Mode::TestConnection => "test_connection",
            Mode::FetchSchema | Mode::SchemaContract => "schema_snapshot",
            Mode::Execute | Mode::RunSql => "execute",
            Mode::DryRun => "dry_run",
            Mode::CostEstimate => "cost_estimate",
            Mode::Explain => "explain",
        }
    }
}

/// One request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionRequest {
    /// Echoed in the result, so a reply is matched with its request.
    #[serde(default)]
    pub id: u64,
    /// The operation.
    pub mode: Mode,
    /// The statement (`execute`, `run_sql`, `dry_run`, `cost_estimate`, `explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// For `execute`: limits that narrow the datasource's. For `run_sql`: the limits to
    /// run under (a missing value is the datasource's).
    #[serde(default)]
    pub limits: RequestLimits,
    /// The run's trace id (`execute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

impl ExecutionRequest {
    /// A request of `mode` with no SQL and no limits.
    pub fn new(id: u64, mode: Mode) -> Self {
        ExecutionRequest {
            id,
            mode,
            sql: None,
            limits: RequestLimits::default(),
            trace_id: None,
        }
    }

    /// The same request with `sql`.
    #[must_use]
    pub fn with_sql(mut self, sql: impl Into<String>) -> Self {
        self.sql = Some(sql.into());
        self
    }

    /// The same request with `limits`.
    #[must_use]
    pub fn with_limits(mut self, limits: RequestLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The request as one line of JSON, newline included.
    pub fn to_line(&self) -> Result<String, ProtocolError> {
        to_line(self)
    }

    /// Parses one request line (the trailing newline is optional).
    pub fn from_line(line: &str) -> Result<Self, ProtocolError> {
        Ok(serde_json::from_str(line.trim_end_matches(['\n', '\r']))?)
    }
}

/// Timings of one call, measured in the worker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Wall-clock time of the call in the worker, in milliseconds.
    pub execution_time_ms: f64,
}

/// One result line: `success`, the operation's value in `data`, the failure in `error`.
///
/// `success` is the operation's own outcome: a frame's `success`, a dry run's
/// `is_valid`, `Ok` for the others. A failed frame or dry run still carries its value in
/// `data`; the other failed operations carry only `error`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionResult {
    /// The request's id; `None` when the request line could not be read.
    pub id: Option<u64>,
    /// Whether the operation succeeded.
    pub success: bool,
    /// The operation's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ResultData>,
    /// The failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ResultError>,
    /// Timings.
    #[serde(default)]
    pub metrics: Metrics,
}

impl ExecutionResult {
    /// A failed result carrying only `error`.
    pub fn failure(id: Option<u64>, error: ResultError, execution_time_ms: f64) -> Self {
        ExecutionResult {
            id,
            success: false,
            data: None,
            error: Some(error),
            metrics: Metrics { execution_time_ms },
        }
    }

    /// The result as one line of JSON, newline included.
    pub fn to_line(&self) -> Result<String, ProtocolError> {
        to_line(self)
    }

    /// Parses one result line (the trailing newline is optional).
    pub fn from_line(line: &str) -> Result<Self, ProtocolError> {
        Ok(serde_json::from_str(line.trim_end_matches(['\n', '\r']))?)
    }
}

/// The value of a result, tagged with its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum ResultData {
    /// `describe`.
    Worker(WorkerInfo),
    /// `fetch_schema`.
    Snapshot(Box<SchemaSnapshot>),
    /// `schema_contract`.
    Contract(Box<SchemaContract>),
    /// `execute` and `run_sql`.
    Frame(WireFrame),
    /// `dry_run`.
    DryRun(DryRunResult),
    /// `cost_estimate`.
    CostEstimate(CostEstimate),
    /// `explain`.
    Plan(QueryPlan),
}

impl ResultData {
    /// The kind's wire name (`worker`, `snapshot`, `frame`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            ResultData::Worker(_) => "worker",
            ResultData::Snapshot(_) => "snapshot",
            ResultData::Contract(_) => "contract",
            ResultData::Frame(_) => "frame",
            ResultData::DryRun(_) => "dry_run",
            ResultData::CostEstimate(_) => "cost_estimate",
            ResultData::Plan(_) => "plan",
        }
    }
}

/// What a worker serves: the datasource's identity, capabilities and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// The protocol the worker speaks ([`PROTOCOL_VERSION`]).
    pub protocol_version: u32,
    /// The datasource id.
    pub id: String,
    /// The engine type (`sqlite`, `duckdb`).
    pub engine_type: String,
    /// The engine's dialect.
    pub dialect: Dialect,
    /// The adapter's capabilities.
    pub capabilities: CapabilitySet,
    /// The configured limits.
    pub limits: Limits,
    /// The adapter's non-secret summary.
    #[serde(default)]
    pub details: serde_json::Value,
}

impl WorkerInfo {
    /// The description of `adapter`.
    pub fn of(adapter: &dyn DatasourceAdapter) -> Self {
        WorkerInfo {
            protocol_version: PROTOCOL_VERSION,
            id: adapter.id().to_owned(),
            engine_type: adapter.engine_type().to_owned(),
            dialect: adapter.dialect(),
            capabilities: adapter.capabilities().clone(),
            limits: adapter.limits(),
            details: adapter.details(),
        }
    }
}

/// A [`ResultFrame`] on the wire, without `success` and `error` (those are the
/// [`ExecutionResult`]'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireFrame {
    /// The schema and the batches as one Arrow IPC stream, base64 (standard alphabet,
    /// padded); absent when the frame has no schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrow_ipc: Option<String>,
    /// Number of rows returned.
    pub row_count: u64,
    /// Whether a limit stopped reading early.
    pub truncated: bool,
    /// Size of the data returned.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// The datasource.
    #[serde(default)]
    pub datasource_id: Option<String>,
    /// The tenant.
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// Statistics.
    #[serde(default)]
    pub execution_stats: ExecutionStats,
}

impl WireFrame {
    /// The wire form of `frame`.
    pub fn encode(frame: &ResultFrame) -> Result<WireFrame, ProtocolError> {
        let schema = frame
            .schema
            .clone()
            .or_else(|| frame.batches.first().map(RecordBatch::schema));
        let arrow_ipc = match schema {
            Some(schema) => Some(BASE64.encode(ipc_bytes(&schema, &frame.batches)?)),
            None => None,
        };
        Ok(WireFrame {
            arrow_ipc,
            row_count: frame.row_count,
            truncated: frame.truncated,
            bytes: frame.bytes,
            datasource_id: frame.datasource_id.clone(),
            tenant_id: frame.tenant_id.clone(),
            execution_stats: frame.execution_stats.clone(),
        })
    }

    /// The frame again, with the result's `success` and `error`.
    pub fn into_frame(
        self,
        success: bool,
        error: Option<ResultError>,
    ) -> Result<ResultFrame, ProtocolError> {
        let (schema, batches) = match &self.arrow_ipc {
            Some(text) => {
                let (schema, batches) = read_ipc(&BASE64.decode(text)?)?;
                (Some(schema), batches)
            }
            None => (None, Vec::new()),
        };
        Ok(ResultFrame {
            success,
            schema,
            batches,
            row_count: self.row_count,
            truncated: self.truncated,
            bytes: self.bytes,
            datasource_id: self.datasource_id,
            tenant_id: self.tenant_id,
            execution_stats: self.execution_stats,
            error,
        })
    }
}

/// Why a line or a frame could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// Not valid JSON for the expected type.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The Arrow IPC stream could not be written or read.
    #[error("invalid Arrow IPC stream: {0}")]
    Arrow(#[from] ArrowError),
    /// The Arrow IPC stream is not valid base64.
    #[error("invalid base64: {0}")]
    Base64(#[from] base64::DecodeError),
}

/// A [`ResultError`] for a request the worker could not read (a malformed line).
pub fn malformed_request(message: impl Into<String>) -> ResultError {
    let mut error = ResultError::new(
        ResultErrorCode::ExecutionFailed,
        format!("malformed worker request: {}", message.into()),
    );
    error.retryable = false;
    error
}

fn to_line<T: Serialize>(value: &T) -> Result<String, ProtocolError> {
    let mut line = serde_json::to_string(value)?;
    line.push('\n');
    Ok(line)
}

fn ipc_bytes(schema: &Schema, batches: &[RecordBatch]) -> Result<Vec<u8>, ArrowError> {
    let mut writer = StreamWriter::try_new(Vec::new(), schema)?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    writer.into_inner()
}

fn read_ipc(bytes: &[u8]) -> Result<(SchemaRef, Vec<RecordBatch>), ArrowError> {
    let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>()?;
    Ok((schema, batches))
}

#[cfg(test)]
mod tests;

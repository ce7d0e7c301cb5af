//! The worker loop: read a request line, run it on the adapter, write a result line.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use nl2sql_adapter::{
    AdapterRequest, DatasourceAdapter, Limits, ResultError, ResultErrorCode, ResultFrame,
};
use nl2sql_validate::{GuardContext, GuardedSql, SqlGuard};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::protocol::{
    ExecutionRequest, ExecutionResult, Metrics, Mode, ResultData, WireFrame, WorkerInfo,
    malformed_request,
};

/// A request line longer than this is answered with an error and skipped. The SQL guard
/// refuses statements above 100 KiB, so real requests are far below it.
pub const MAX_REQUEST_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What answers the requests: an adapter, or the error that kept it from opening (every
/// request then fails with that error, so the caller sees why).
pub(crate) enum Source {
    Adapter(Arc<dyn DatasourceAdapter>),
    Unavailable(ResultError),
}

/// Serves `adapter` over a pair of streams until `reader` ends: each request line gets
/// exactly one result line, in order. A line that is not a request gets a failed result
/// (`EXECUTION_FAILED`, not retryable) and the loop goes on; only an IO error on the
/// streams ends it early.
///
/// Run by the worker process on its stdin and stdout ([`crate::serve_stdio`]).
pub async fn serve<R, W>(
    adapter: Arc<dyn DatasourceAdapter>,
    reader: R,
    writer: W,
) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    serve_source(&Source::Adapter(adapter), reader, writer).await
}

pub(crate) async fn serve_source<R, W>(
    source: &Source,
    mut reader: R,
    mut writer: W,
) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let result = match read_line(&mut reader, MAX_REQUEST_LINE_BYTES).await? {
            Line::Eof => return Ok(()),
            Line::TooLong => ExecutionResult::failure(
                None,
                malformed_request(format!(
                    "the line is longer than {MAX_REQUEST_LINE_BYTES} bytes"
                )),
                0.0,
            ),
            Line::Text(bytes) => match parse_request(&bytes) {
                Ok(request) => handle(source, request).await,
                Err((id, error)) => {
                    tracing::warn!(target: "nl2sql::worker", reason = %error.safe_message, "malformed worker request");
                    ExecutionResult::failure(id, error, 0.0)
                }
            },
        };
        let line = match result.to_line() {
            Ok(line) => line,
            Err(e) => {
                let error = ResultError::new(
                    ResultErrorCode::ExecutorCrash,
                    "the worker could not encode its result",
                );
                tracing::error!(target: "nl2sql::worker", error = %e, "cannot encode a worker result");
                ExecutionResult::failure(result.id, error, result.metrics.execution_time_ms)
                    .to_line()
                    .map_err(io::Error::other)?
            }
        };
        writer.write_all(line.as_bytes()).await?;
        writer.flush().await?;
    }
}

enum Line {
    Eof,
    TooLong,
    Text(Vec<u8>),
}

/// One line without its line ending; a last line without a newline counts.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> io::Result<Line> {
    let mut bytes = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    let n = (&mut *reader)
        .take(limit)
        .read_until(b'\n', &mut bytes)
        .await?;
    if n == 0 {
        return Ok(Line::Eof);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        return Ok(Line::Text(bytes));
    }
    if bytes.len() > max {
        // Skip the rest of the line.
        loop {
            let mut rest = Vec::new();
            let n = (&mut *reader)
                .take(64 * 1024)
                .read_until(b'\n', &mut rest)
                .await?;
            if n == 0 || rest.last() == Some(&b'\n') {
                return Ok(Line::TooLong);
            }
        }
    }
    Ok(Line::Text(bytes))
}

/// The request on a line, or the id it seems to carry and why it is not a request.
fn parse_request(bytes: &[u8]) -> Result<ExecutionRequest, (Option<u64>, ResultError)> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| (None, malformed_request("the line is not UTF-8")))?;
    ExecutionRequest::from_line(text).map_err(|e| {
        let id = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64));
        (id, malformed_request(e.to_string()))
    })
}

/// Runs one request on the source.
pub(crate) async fn handle(source: &Source, request: ExecutionRequest) -> ExecutionResult {
    let started = Instant::now();
    let id = Some(request.id);
    let adapter = match source {
        Source::Adapter(adapter) => adapter.as_ref(),
        Source::Unavailable(error) => {
            return ExecutionResult::failure(id, error.clone(), elapsed_ms(started));
        }
    };
    let outcome = run(adapter, request).await;
    ExecutionResult {
        id,
        success: outcome.success,
        data: outcome.data,
        error: outcome.error,
        metrics: Metrics {
            execution_time_ms: elapsed_ms(started),
        },
    }
}

struct Outcome {
    success: bool,
    data: Option<ResultData>,
    error: Option<ResultError>,
}

impl Outcome {
    fn of(result: Result<Option<ResultData>, ResultError>) -> Self {
        match result {
            Ok(data) => Outcome {
                success: true,
                data,
                error: None,
            },
            Err(error) => Outcome {
                success: false,
                data: None,
                error: Some(error),
            },
        }
    }

    fn frame(frame: ResultFrame) -> Self {
        match WireFrame::encode(&frame) {
            Ok(wire) => Outcome {
                success: frame.success,
                data: Some(ResultData::Frame(wire)),
                error: frame.error,
            },
            Err(e) => {
                tracing::error!(target: "nl2sql::worker", error = %e, "cannot encode a result frame");
                Outcome::of(Err(ResultError::new(
                    ResultErrorCode::ExecutorCrash,
                    "the worker could not encode the result as Arrow IPC",
                )))
            }
        }
    }
}

async fn run(adapter: &dyn DatasourceAdapter, request: ExecutionRequest) -> Outcome {
    let mode = request.mode;
    let missing_sql = || {
        ResultError::new(
            ResultErrorCode::MissingSql,
            format!("the worker request `{}` has no SQL", mode.as_str()),
        )
        .at(mode.stage(), adapter.id())
    };
    match mode {
        Mode::Describe => Outcome::of(Ok(Some(ResultData::Worker(WorkerInfo::of(adapter))))),
        Mode::TestConnection => Outcome::of(adapter.test_connection().await.map(|()| None)),
        Mode::FetchSchema => Outcome::of(
            adapter
                .schema_snapshot()
                .await
                .map(|s| Some(ResultData::Snapshot(Box::new(s)))),
        ),
        Mode::SchemaContract => Outcome::of(
            adapter
                .schema_contract()
                .await
                .map(|c| Some(ResultData::Contract(Box::new(c)))),
        ),
        Mode::Execute => {
            let payload = match request.sql {
                Some(sql) => serde_json::json!({ "sql": sql }),
                None => serde_json::json!({}),
            };
            let req = AdapterRequest {
                plan_type: "sql".to_owned(),
                payload,
                parameters: serde_json::Value::Null,
                limits: request.limits,
                trace_id: request.trace_id,
            };
            Outcome::frame(adapter.execute(req).await)
        }
        Mode::RunSql => {
            let Some(sql) = request.sql else {
                return Outcome::of(Err(missing_sql()));
            };
            let sql = match recheck(adapter, mode, &sql) {
                Ok(sql) => sql,
                Err(e) => return Outcome::of(Err(e)),
            };
            let base = adapter.limits();
            let limits = Limits {
                row_limit: request.limits.row_limit.unwrap_or(base.row_limit),
                statement_timeout_ms: request
                    .limits
                    .timeout_ms
                    .unwrap_or(base.statement_timeout_ms),
                max_bytes: request.limits.max_bytes.unwrap_or(base.max_bytes),
            };
            Outcome::frame(adapter.run_sql(&sql, limits).await)
        }
        Mode::DryRun => {
            let Some(sql) = request.sql else {
                return Outcome::of(Err(missing_sql()));
            };
            let sql = match recheck(adapter, mode, &sql) {
                Ok(sql) => sql,
                Err(e) => return Outcome::of(Err(e)),
            };
            let dry = adapter.dry_run(&sql).await;
            Outcome {
                success: dry.is_valid,
                data: Some(ResultData::DryRun(dry)),
                error: None,
            }
        }
        Mode::CostEstimate => {
            let Some(sql) = request.sql else {
                return Outcome::of(Err(missing_sql()));
            };
            let sql = match recheck(adapter, mode, &sql) {
                Ok(sql) => sql,
                Err(e) => return Outcome::of(Err(e)),
            };
            Outcome::of(
                adapter
                    .cost_estimate(&sql)
                    .await
                    .map(|c| Some(ResultData::CostEstimate(c))),
            )
        }
        Mode::Explain => {
            let Some(sql) = request.sql else {
                return Outcome::of(Err(missing_sql()));
            };
            let sql = match recheck(adapter, mode, &sql) {
                Ok(sql) => sql,
                Err(e) => return Outcome::of(Err(e)),
            };
            Outcome::of(
                adapter
                    .explain(&sql)
                    .await
                    .map(|p| Some(ResultData::Plan(p))),
            )
        }
    }
}

/// The statement of a request, checked again in this process: the parent sends the text
/// of a [`GuardedSql`], and an adapter takes nothing else. The policy's switches were the
/// parent's to decide ([`GuardContext::rechecking`]).
fn recheck(
    adapter: &dyn DatasourceAdapter,
    mode: Mode,
    sql: &str,
) -> Result<GuardedSql, ResultError> {
    SqlGuard::new(GuardContext::rechecking(adapter.id(), adapter.dialect()))
        .guard(sql)
        .map_err(|report| {
            let message = report
                .issues
                .first()
                .map_or("statement rejected by the SQL guard", |i| {
                    i.message.as_str()
                });
            ResultError::new(
                ResultErrorCode::SecurityViolation,
                format!("the worker's guard refused the statement: {message}"),
            )
            .at(mode.stage(), adapter.id())
        })
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

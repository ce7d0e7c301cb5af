//! One statement's life on a pooled connection: the read-only transaction with its
//! session pins and timeout, the mapping of driver errors to `ResultError`s, and EXPLAIN's estimates.

use nl2sql_adapter::{Limits, Push, ResultBuilder, ResultError, ResultErrorCode, ResultFrame};
use std::str::FromStr as _;
use std::time::Instant;
use tokio_postgres::Client;
use tokio_postgres::error::SqlState;

use crate::error::{map_err, not_a_query};
use crate::{decode, snapshot};

/// Rows fetched per round trip from the portal.
const FETCH_ROWS: u64 = 1_024;

/// What runs inside one read-only transaction.
pub(super) type Op = nl2sql_adapter::SessionOp<snapshot::Detail>;
pub(super) use nl2sql_adapter::{Ran, SessionOut as Out};

/// Runs `op` in a read-only transaction, then releases session advisory locks. A
/// connection that cannot run that last statement is gone (`lost`); the op's own
/// outcome stands (its rows were read whole).
pub(super) async fn run_tx(
    client: &mut Client,
    id: &str,
    timeout_ms: u64,
    privileged: bool,
    op: Op,
) -> Ran {
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
pub(super) fn session_pins(timeout_ms: u64, privileged: bool) -> String {
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
pub(super) fn connection_lost(e: &tokio_postgres::Error) -> bool {
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

pub(super) async fn in_tx(
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

/// Parses a `postgres://` or `postgresql://` URL without echoing it in the error.
pub(super) fn parse_url(url: &str) -> Result<tokio_postgres::Config, ResultError> {
    let lower = url.get(..13).unwrap_or(url).to_ascii_lowercase();
    if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
        return Err(ResultError::new(
            ResultErrorCode::ServiceUnavailable,
            "malformed PostgreSQL URL: expected postgres://user@host:port/database",
        ));
    }
    let config = tokio_postgres::Config::from_str(url).map_err(|e| {
        ResultError::unavailable(
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

pub(super) async fn execute_in(
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
pub(super) fn size_checked(
    sql: &str,
    stmt: &tokio_postgres::Statement,
    max_bytes: u64,
) -> Option<String> {
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
            let size = decode::size_sent(&inner, c.type_());
            select.push(format!(
                "CASE WHEN {size} <= {max_bytes} THEN {inner} END AS {}",
                quote(c.name())
            ));
            over.push(format!("COALESCE({size} > {max_bytes}, false)"));
        } else {
            select.push(format!("{inner} AS {}", quote(c.name())));
        }
    }
    select.push(format!("({}) AS nl2sql_oversized", over.join(" OR ")));
    let aliases: Vec<String> = (0..columns.len()).map(|i| format!("c{i}")).collect();
    // `OFFSET 0` keeps PostgreSQL from pulling the statement up into the wrapper, where
    // each reference to a computed column would compute its value again. A column the
    // server says it reads straight from a table (or a view) is read again for nothing,
    // so when every checked column is one, the statement may be pulled up (and the
    // wrapper then costs one expression per value, not a subquery scan per row).
    let fence = if columns
        .iter()
        .filter(|c| decode::is_variable_length(c.type_()))
        .all(|c| c.table_oid().is_some())
    {
        ""
    } else {
        " OFFSET 0"
    };
    Some(format!(
        "SELECT {} FROM (SELECT * FROM ({sql}) AS q0{fence}) AS q({})",
        select.join(", "),
        aliases.join(", ")
    ))
}

pub(super) async fn explain_json(
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
pub(super) fn estimates(plan: &serde_json::Value) -> (Option<f64>, Option<u64>) {
    let top = top_plan(plan);
    (
        top.and_then(|p| p.get("Total Cost"))
            .and_then(serde_json::Value::as_f64),
        top.and_then(|p| p.get("Plan Rows"))
            .and_then(serde_json::Value::as_f64)
            .map(|r| r.max(0.0).round() as u64),
    )
}

pub(super) fn top_plan(explain: &serde_json::Value) -> Option<&serde_json::Value> {
    explain.get(0)?.get("Plan")
}

//! How PostgreSQL's errors become `ResultError`s: SQLSTATE classes read, messages
//! through the safe-message filter.

use nl2sql_adapter::{ResultError, ResultErrorCode};
use tokio_postgres::error::SqlState;

pub(crate) fn unexpected() -> ResultError {
    ResultError::new(
        ResultErrorCode::ExecutorCrash,
        "the PostgreSQL adapter returned an unexpected result kind",
    )
}

pub(crate) fn connect_error(e: &tokio_postgres::Error) -> ResultError {
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
    let mut err = ResultError::unavailable(message, e.to_string());
    err.retryable = retryable;
    err
}

/// Maps a driver error. The server's message goes through the safe-message filter.
pub(crate) fn map_err(e: &tokio_postgres::Error) -> ResultError {
    let Some(db) = e.as_db_error() else {
        return if e.is_closed() {
            ResultError::unavailable("the PostgreSQL connection was closed", e.to_string())
        } else {
            ResultError::unavailable("the PostgreSQL server could not be reached", e.to_string())
        };
    };
    let code = db.code();
    if code == &SqlState::QUERY_CANCELED || code == &SqlState::LOCK_NOT_AVAILABLE {
        return ResultError::timed_out(db.message().to_owned());
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
        return ResultError::unavailable(
            "the PostgreSQL server is unavailable",
            db.message().to_owned(),
        );
    }
    ResultError::from_engine(ResultErrorCode::ExecutionFailed, db.message())
}

pub(crate) fn not_a_query() -> ResultError {
    ResultError::new(
        ResultErrorCode::SecurityViolation,
        "the PostgreSQL sandbox refused the statement: it returns no rows, so it is not a query",
    )
}

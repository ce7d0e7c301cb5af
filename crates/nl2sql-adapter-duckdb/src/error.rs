//! How DuckDB's errors become `ResultError`s, by the class DuckDB gives each error.

use nl2sql_adapter::{ResultError, ResultErrorCode};

/// Maps a DuckDB error by its class (the message prefix DuckDB gives every error).
pub(crate) fn map_err(e: &duckdb::Error) -> ResultError {
    let message = e.to_string();
    let class = message.split(" Error").next().unwrap_or_default();
    let lower = message.to_ascii_lowercase();
    let security = class == "Permission"
        || lower.contains("read-only")
        || lower.contains("read only")
        || lower.contains("external access")
        || lower.contains("lock_configuration")
        || lower.contains("configuration has been locked")
        || lower.contains("disabled by configuration");
    if class == "INTERRUPT" || lower.contains("interrupted") {
        return ResultError::timed_out(message);
    }
    if security {
        let mut err = ResultError::new(
            ResultErrorCode::SecurityViolation,
            "the DuckDB sandbox refused the statement: only reading the database is allowed",
        );
        err.detail = Some(message);
        return err;
    }
    if class == "IO" {
        return ResultError::unavailable("the DuckDB database cannot be read", message);
    }
    ResultError::from_engine(ResultErrorCode::ExecutionFailed, &message)
}

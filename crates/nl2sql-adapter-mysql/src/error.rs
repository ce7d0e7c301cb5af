//! How MySQL's errors become `ResultError`s: server codes read, messages through the
//! safe-message filter.

use nl2sql_adapter::{ResultError, ResultErrorCode};

pub(crate) fn unexpected() -> ResultError {
    ResultError::new(
        ResultErrorCode::ExecutorCrash,
        "the MySQL adapter returned an unexpected result kind",
    )
}

pub(crate) fn server_code(e: &mysql_async::Error) -> Option<(u16, &str)> {
    match e {
        mysql_async::Error::Server(s) => Some((s.code, s.message.as_str())),
        _ => None,
    }
}

pub(crate) fn connect_error(e: &mysql_async::Error) -> ResultError {
    let (message, retryable) = match server_code(e).map(|(c, _)| c) {
        Some(1045 | 1044 | 1698) => ("MySQL refused the credentials", false),
        Some(1049) => ("the MySQL database does not exist", false),
        Some(1040 | 1203) => ("the MySQL server has too many connections", true),
        _ => ("cannot connect to the MySQL server", true),
    };
    let mut err = ResultError::unavailable(message, e.to_string());
    err.retryable = retryable;
    err
}

/// Maps a driver error. The server's message goes through the safe-message filter.
pub(crate) fn map_err(e: &mysql_async::Error) -> ResultError {
    let Some((code, message)) = server_code(e) else {
        return ResultError::unavailable("the MySQL server could not be reached", e.to_string());
    };
    match code {
        // max_statement_time (MariaDB), max_execution_time (MySQL), KILL QUERY
        1969 | 3024 | 1317 | 1028 => ResultError::timed_out(message.to_owned()),
        // read-only transaction, access denied, --read-only, secure_file_priv
        1792 | 1142 | 1143 | 1044 | 1045 | 1227 | 1370 | 1290 | 1036 => {
            let mut err = ResultError::new(
                ResultErrorCode::SecurityViolation,
                "the MySQL sandbox refused the statement: only reading is allowed",
            );
            err.detail = Some(message.to_owned());
            err
        }
        // connection killed, server shutting down, too many connections, out of resources
        1927 | 1053 | 1040 | 1203 | 1041 | 1037 => {
            ResultError::unavailable("the MySQL server is unavailable", message.to_owned())
        }
        _ => ResultError::from_engine(ResultErrorCode::ExecutionFailed, message),
    }
}

pub(crate) fn not_a_query() -> ResultError {
    ResultError::new(
        ResultErrorCode::SecurityViolation,
        "the MySQL sandbox refused the statement: it returns no rows, so it is not a query",
    )
}

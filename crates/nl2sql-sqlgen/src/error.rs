//! The generator's error: `SQL_GEN_FAILED`.

use nl2sql_state::{ErrorCode, Node, PipelineError, Severity};

/// A `SQL_GEN_FAILED` error (severity ERROR) from the generator node.
pub(crate) fn gen_error(message: impl Into<String>) -> PipelineError {
    PipelineError::new(
        Node::SqlGenerator,
        ErrorCode::SqlGenFailed,
        Severity::Error,
        message,
    )
}

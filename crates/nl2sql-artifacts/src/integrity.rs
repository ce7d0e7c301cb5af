//! Reading back, shared by every backend: the stored bytes are hashed, compared with the
//! reference's `content_hash`, and only then decoded (the bytes decoded are the bytes
//! hashed, so a file replaced in between cannot slip through).

use bytes::Bytes;
use nl2sql_state::Node;
use nl2sql_state::{ErrorCode, PipelineError, Severity, sha256_hex};

use crate::{ArtifactTable, parquet_io};

/// Verifies that `bytes` (read from `uri`) hash to `expected`, then decodes them.
pub(crate) fn verify_and_decode(
    uri: &str,
    expected: &str,
    bytes: Bytes,
) -> Result<ArtifactTable, PipelineError> {
    let hash = sha256_hex(&bytes);
    if hash != expected {
        return Err(read_error(format!(
            "artifact '{uri}' does not match its content hash (expected {expected}, found {hash})"
        )));
    }
    parquet_io::decode(bytes)
        .map_err(|e| read_error(format!("artifact '{uri}' is not readable parquet: {e}")))
}

/// An `AGGREGATOR_FAILED` error of the artifact store (reading).
pub(crate) fn read_error(message: String) -> PipelineError {
    PipelineError::new(
        Node::ArtifactStore,
        ErrorCode::AggregatorFailed,
        Severity::Error,
        message,
    )
}

/// An `EXECUTION_FAILED` error of the artifact store (writing).
pub(crate) fn write_error(location: &str, message: &str) -> PipelineError {
    PipelineError::new(
        Node::ArtifactStore,
        ErrorCode::ExecutionFailed,
        Severity::Error,
        format!("cannot write artifact '{location}': {message}"),
    )
}

/// An `INVALID_STATE` configuration error of the artifact store.
pub(crate) fn config_error(message: String) -> PipelineError {
    PipelineError::new(
        Node::ArtifactStore,
        ErrorCode::InvalidState,
        Severity::Error,
        message,
    )
}

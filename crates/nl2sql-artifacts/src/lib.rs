//! The parquet artifact store of nl2sql (spec: storage.md §1): every successful scan writes
//! its Arrow result as one zstd-compressed parquet object, named by a path template
//! (tenant, request, sub-graph, DAG node, schema version) and described by an
//! `ArtifactRef` whose `content_hash` is the SHA-256 of the bytes written.
//!
//! The entry point is the [`ArtifactStore`] trait; [`LocalArtifactStore`] is the local
//! filesystem backend (the default). Writes are atomic: the object is written under a
//! temporary name in the same directory, synced, then renamed, so a crash never leaves a
//! partial object under the final name. Reading recomputes the hash and refuses a mismatch.
//! Object-storage backends (S3, Azure, GCS) are not implemented yet.
//!
//! **Invariant:** an artifact either exists complete under its final name or not at all.

mod local;
mod parquet_io;
mod template;
mod time;

#[cfg(test)]
mod tests;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use nl2sql_state::{ArtifactRef, PipelineError};

pub use local::LocalArtifactStore;
pub use template::{DEFAULT_PATH_TEMPLATE, PathTemplate};

/// Who and what an artifact belongs to: the values of the path template.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArtifactMeta {
    /// Tenant of the caller.
    pub tenant_id: String,
    /// Request (trace) id.
    pub request_id: String,
    /// Sub-graph name (e.g. `sql_agent`).
    pub subgraph_name: String,
    /// The DAG node the result belongs to.
    pub dag_node_id: String,
    /// Schema version the scan ran against; rendered as `unversioned` when absent.
    pub schema_version: Option<String>,
}

/// A table read back from an artifact.
#[derive(Debug, Clone)]
pub struct ArtifactTable {
    /// The Arrow schema.
    pub schema: SchemaRef,
    /// The record batches, in file order.
    pub batches: Vec<RecordBatch>,
}

impl ArtifactTable {
    /// Total number of rows.
    pub fn row_count(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Where scan results are stored.
pub trait ArtifactStore {
    /// `local`, `s3` or `adls`.
    fn backend(&self) -> &'static str;

    /// Writes `batches` (all with `schema`) as one parquet object under the rendered path
    /// of `meta`, atomically; the same `meta` overwrites the same object (idempotent
    /// retries). Errors: `INVALID_STATE` for a bad path value, `EXECUTION_FAILED` for IO.
    fn write(
        &self,
        meta: &ArtifactMeta,
        schema: SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<ArtifactRef, PipelineError>;

    /// Reads an artifact back, verifying its content hash. Errors (`AGGREGATOR_FAILED`):
    /// missing object, wrong URI scheme, hash mismatch, unreadable parquet.
    fn read(&self, artifact: &ArtifactRef) -> Result<ArtifactTable, PipelineError>;
}

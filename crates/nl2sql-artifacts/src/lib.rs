//! The parquet artifact store of nl2sql (spec: storage.md §1): every successful scan writes
//! its Arrow result as one zstd-compressed parquet object, named by a path template
//! (tenant, request, sub-graph, DAG node, schema version) and described by an
//! `ArtifactRef` whose `content_hash` is the SHA-256 of the bytes written.
//!
//! The entry point is the async, object-safe [`ArtifactStore`] trait (`Arc<dyn
//! ArtifactStore>` is `Send + Sync`), with two backends:
//! - [`LocalArtifactStore`], the local filesystem (the default): the object is written under
//!   a temporary name in the same directory, then renamed (and `fsync`ed, file and
//!   directory, with `ArtifactDurability::Synced`); its blocking file work runs on tokio's
//!   blocking pool.
//! - [`ObjectArtifactStore`], object storage through the `object_store` crate, configured by
//!   URL ([`ObjectArtifactStore::from_url`]): S3 (`s3://bucket/prefix`, backend `s3`), Azure
//!   Data Lake / Blob (`abfs[s]://container@account.dfs.core.windows.net/prefix` or
//!   `az://container/prefix`, backend `adls`), Google Cloud Storage (`gs://bucket/prefix`,
//!   backend `gcs`) and an in-memory store (`memory://prefix`, backend `memory`, for tests and
//!   ephemeral runs). The parquet bytes are encoded in memory and uploaded in one `put`, so
//!   the object exists only once complete. Credentials come only from the environment or the
//!   options, never from the URL, and are never shown.
//!
//! [`open_artifact_store`] picks the backend from a base URI (a path or `file://` URL → local,
//! any other URL → object storage). Both backends render keys the same way and recompute the
//! hash on every read, refusing a mismatch, a URI of another scheme or store, and a URI
//! outside the store. Parquet encoding and decoding run on tokio's blocking pool when a
//! runtime is present.
//!
//! **Invariant:** an artifact either exists complete under its final name or not at all.

mod integrity;
mod local;
mod object;
mod parquet_io;
mod template;
mod time;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use nl2sql_state::{ArtifactDurability, ArtifactRef, PipelineError};

pub use local::LocalArtifactStore;
pub use object::ObjectArtifactStore;
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

/// Where scan results are stored. Object-safe: use it as `&dyn ArtifactStore` or
/// `Arc<dyn ArtifactStore>`. `Debug` never shows credentials.
#[async_trait]
pub trait ArtifactStore: Send + Sync + std::fmt::Debug {
    /// `local`, `s3`, `adls`, `gcs` or `memory`.
    fn backend(&self) -> &'static str;

    /// Writes `batches` (all with `schema`) as one parquet object under the rendered path
    /// of `meta`, atomically; the same `meta` overwrites the same object (idempotent
    /// retries). Errors: `INVALID_STATE` for a bad path value, `EXECUTION_FAILED` for IO.
    async fn write(
        &self,
        meta: &ArtifactMeta,
        schema: SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<ArtifactRef, PipelineError>;

    /// Reads an artifact back, verifying its content hash. Errors (`AGGREGATOR_FAILED`):
    /// missing object, wrong URI scheme, hash mismatch, unreadable parquet.
    async fn read(&self, artifact: &ArtifactRef) -> Result<ArtifactTable, PipelineError>;
}

/// The store for `base_uri` (spec: storage.md §1.2 `base_uri`): a filesystem path or a
/// `file://` URL gives a [`LocalArtifactStore`], any other URL an [`ObjectArtifactStore`]
/// built by [`ObjectArtifactStore::from_url`] with `options`. Errors are `INVALID_STATE`.
///
/// `durability` applies to a local store; an object store's single `put` is atomic and as
/// durable as its service makes it.
pub fn open_artifact_store<I, K, V>(
    base_uri: &str,
    template: PathTemplate,
    durability: ArtifactDurability,
    options: I,
) -> Result<Arc<dyn ArtifactStore>, PipelineError>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: Into<String>,
{
    let local = base_uri
        .strip_prefix("file://")
        .or_else(|| (!base_uri.contains("://")).then_some(base_uri));
    if let Some(path) = local {
        return Ok(Arc::new(
            LocalArtifactStore::new(path, template)?.with_durability(durability),
        ));
    }
    Ok(Arc::new(ObjectArtifactStore::from_url(
        base_uri, template, options,
    )?))
}

/// Runs blocking `work` (file IO, parquet encoding and decoding) on tokio's blocking pool
/// when a runtime is present, so that it does not stall the async workers, and inline
/// otherwise. A panic in `work` becomes the error `on_panic` makes.
async fn run_blocking<T, F>(
    work: F,
    on_panic: impl FnOnce(String) -> PipelineError,
) -> Result<T, PipelineError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, PipelineError> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => match handle.spawn_blocking(work).await {
            Ok(result) => result,
            Err(e) => Err(on_panic(e.to_string())),
        },
        Err(_) => work(),
    }
}

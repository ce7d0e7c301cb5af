//! Indexing datasources (spec: retrieval.md §1): snapshot → schema store → chunks → index,
//! with progress reports. Enrichment (§2) is skipped: no model is configured offline.

use std::cell::RefCell;
use std::collections::BTreeMap;

use futures_util::StreamExt as _;
use nl2sql_adapter::DatasourceAdapter;
use nl2sql_state::PipelineError;
use serde::Serialize;

use crate::chunk::{ChunkType, build_chunks};
use crate::docs::{DatasourceDocs, apply_docs};
use crate::index::SchemaIndex;
use crate::store::SchemaStore;

/// What indexing one datasource produced (§1 step 7).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IndexStats {
    /// The datasource.
    pub datasource_id: String,
    /// The version registered in the schema store.
    pub schema_version: String,
    /// Versions the store evicted; their documents were deleted from the index.
    pub evicted_versions: Vec<String>,
    /// True when the contract was already stored (its metadata was replaced).
    pub updated: bool,
    /// Chunks written, by chunk type (`schema.table` → 6, …); serialised flat, next to
    /// the other keys, as the spec's stats object.
    #[serde(flatten)]
    pub chunks: BTreeMap<String, usize>,
}

/// A step of indexing one datasource, reported to the progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexStep {
    /// Reading the schema snapshot from the adapter.
    Snapshot,
    /// Registering it in the schema store.
    Register,
    /// Building chunks.
    Chunk,
    /// Deleting old documents and adding the new ones.
    Refresh,
}

/// A progress report; `position` counts datasources from 1 up to `total`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum IndexProgress {
    /// A step of one datasource started.
    Step {
        /// The datasource.
        datasource_id: String,
        /// Its position among the datasources being indexed.
        position: usize,
        /// How many datasources are being indexed.
        total: usize,
        /// The step.
        step: IndexStep,
    },
    /// A datasource was indexed.
    Done {
        /// Its position among the datasources being indexed.
        position: usize,
        /// How many datasources are being indexed.
        total: usize,
        /// What was indexed.
        stats: IndexStats,
    },
    /// A datasource failed; the others continue.
    Failed {
        /// The datasource.
        datasource_id: String,
        /// Its position among the datasources being indexed.
        position: usize,
        /// How many datasources are being indexed.
        total: usize,
        /// The error, as `[CODE] message`.
        message: String,
    },
}

/// The outcome of [`index_all`].
#[derive(Debug, Default)]
pub struct IndexReport {
    /// Datasources indexed, in input order.
    pub indexed: Vec<IndexStats>,
    /// Datasources that failed, with their error, in input order.
    pub failed: Vec<(String, PipelineError)>,
}

/// Indexes one datasource (§1 steps 1, 2, 4–7): takes its schema snapshot, registers it,
/// builds the chunks of the registered version, deletes the documents of evicted versions
/// and of that version, adds the new ones, and returns the stats. `progress` receives a
/// report before each step and when done.
pub async fn index_datasource(
    adapter: &dyn DatasourceAdapter,
    store: &SchemaStore,
    index: &dyn SchemaIndex,
    docs: &DatasourceDocs,
    progress: &mut dyn FnMut(IndexProgress),
) -> nl2sql_state::Result<IndexStats> {
    index_one(adapter, store, index, docs, progress, 1, 1).await
}

/// Indexes every adapter in turn; one failing datasource is reported (to `progress` and in
/// the report) and the others continue. `docs` holds descriptions and examples by
/// datasource id. The caller clears the index first when it wants a fresh one.
pub async fn index_all(
    adapters: &[&dyn DatasourceAdapter],
    store: &SchemaStore,
    index: &dyn SchemaIndex,
    docs: &BTreeMap<String, DatasourceDocs>,
    progress: &mut dyn FnMut(IndexProgress),
) -> IndexReport {
    index_all_with_workers(adapters, store, index, docs, 1, progress).await
}

/// [`index_all`] with at most `workers` datasources (at least 1) being snapshotted and
/// indexed at once (`SANDBOX_INDEX_WORKERS`): their snapshots, the slow part, overlap.
/// Progress events of different datasources may interleave; each carries its position.
/// The report lists datasources in input order whatever order they finished in.
pub async fn index_all_with_workers(
    adapters: &[&dyn DatasourceAdapter],
    store: &SchemaStore,
    index: &dyn SchemaIndex,
    docs: &BTreeMap<String, DatasourceDocs>,
    workers: usize,
    progress: &mut dyn FnMut(IndexProgress),
) -> IndexReport {
    let total = adapters.len();
    let none = DatasourceDocs::default();
    // The futures run on this task, one poll at a time; each borrows the callback only
    // while it reports, never across an await.
    let progress = RefCell::new(progress);
    let outcomes: Vec<(String, nl2sql_state::Result<IndexStats>)> =
        futures_util::stream::iter(adapters.iter().enumerate())
            .map(|(i, adapter)| {
                let (progress, none) = (&progress, &none);
                async move {
                    let mut relay = |p: IndexProgress| {
                        let mut report = progress.borrow_mut();
                        (*report)(p);
                    };
                    let ds_docs = docs.get(adapter.id()).unwrap_or(none);
                    let outcome =
                        index_one(*adapter, store, index, ds_docs, &mut relay, i + 1, total).await;
                    if let Err(error) = &outcome {
                        tracing::warn!(datasource = adapter.id(), %error, "indexing failed");
                        relay(IndexProgress::Failed {
                            datasource_id: adapter.id().to_owned(),
                            position: i + 1,
                            total,
                            message: error.to_string(),
                        });
                    }
                    (adapter.id().to_owned(), outcome)
                }
            })
            .buffered(workers.max(1))
            .collect()
            .await;
    let mut report = IndexReport::default();
    for (id, outcome) in outcomes {
        match outcome {
            Ok(stats) => report.indexed.push(stats),
            Err(error) => report.failed.push((id, error)),
        }
    }
    report
}

async fn index_one(
    adapter: &dyn DatasourceAdapter,
    store: &SchemaStore,
    index: &dyn SchemaIndex,
    docs: &DatasourceDocs,
    progress: &mut dyn FnMut(IndexProgress),
    position: usize,
    total: usize,
) -> nl2sql_state::Result<IndexStats> {
    let ds = adapter.id().to_owned();
    let mut step = |step: IndexStep| {
        progress(IndexProgress::Step {
            datasource_id: ds.clone(),
            position,
            total,
            step,
        });
    };
    step(IndexStep::Snapshot);
    let mut snapshot = adapter
        .schema_snapshot()
        .await
        .map_err(|e| e.to_pipeline_error("index"))?;
    // Snapshots are stored and chunked under the configured datasource id.
    snapshot.contract.datasource_id.clone_from(&ds);
    if let Some(metadata) = &mut snapshot.metadata {
        metadata.datasource_id.clone_from(&ds);
    }
    apply_docs(&mut snapshot, docs);
    step(IndexStep::Register);
    let registration = store.register_snapshot(snapshot.clone())?;
    let version = registration.schema_version.clone();
    step(IndexStep::Chunk);
    let chunks = build_chunks(
        &snapshot,
        &version,
        docs.description.as_deref(),
        &docs.examples,
    );
    let mut counts: BTreeMap<String, usize> = ChunkType::ALL
        .iter()
        .filter(|t| **t != ChunkType::Metric)
        .map(|t| (t.as_str().to_owned(), 0))
        .collect();
    for chunk in &chunks {
        *counts
            .entry(chunk.chunk_type.as_str().to_owned())
            .or_insert(0) += 1;
    }
    step(IndexStep::Refresh);
    for evicted in &registration.evicted_versions {
        index.delete(&ds, evicted)?;
    }
    index.replace(&ds, &version, chunks)?;
    let stats = IndexStats {
        datasource_id: ds,
        schema_version: version,
        evicted_versions: registration.evicted_versions,
        updated: registration.updated,
        chunks: counts,
    };
    progress(IndexProgress::Done {
        position,
        total,
        stats: stats.clone(),
    });
    Ok(stats)
}

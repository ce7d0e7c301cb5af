//! Schema snapshots, schema chunks, the schema index and retrieval for nl2sql
//! (spec: retrieval.md, storage.md §2).
//!
//! The authoritative schema lives in the [`SchemaStore`]: versioned snapshots per
//! datasource, the version derived from the contract fingerprint
//! ([`schema_version_of`]), the last few versions kept, persisted as JSON files under the
//! data directory. [`build_chunks`] turns one snapshot version into deterministic
//! [`Chunk`]s (datasource, table, column and relationship documents) that a
//! [`SchemaIndex`] searches; [`LexicalIndex`] is the default index (BM25, MMR re-ranking,
//! a result cache, one JSON file). The index only points at tables: [`SchemaRetriever`]
//! runs the table, column and planning stages over the index and then resolves the
//! recorded tables against the store, returning the snapshot restricted to the relevant
//! tables and columns ([`SchemaContext`]); [`retrieve_datasources`] proposes candidate
//! datasources for a question.
//!
//! Entry points: [`index_datasource`] / [`index_all_with_workers`] at indexing time,
//! [`route_datasources`] and [`SchemaRetriever::retrieve`] at question time. Their settings
//! (versions kept, indexing workers, router thresholds, schema context limits) are
//! [`IndexSettings`], read from the environment by [`IndexSettings::with_env`].

mod chunk;
mod docs;
mod fsio;
mod index;
mod indexing;
mod lexical;
mod retrieve;
mod settings;
mod store;
mod text;

#[cfg(test)]
mod tests;

pub use chunk::{
    Chunk, ChunkType, build_chunks, column_chunk_id, datasource_chunk_id, relationship_chunk_id,
    table_chunk_id,
};
pub use docs::{
    DOCS_VERSION, DatasourceDocs, TableDocs, add_questions, add_schema_docs, apply_docs,
};
pub use index::{SchemaIndex, SearchFilter};
pub use indexing::{
    IndexProgress, IndexReport, IndexStats, IndexStep, index_all, index_all_with_workers,
    index_datasource,
};
pub use lexical::{BM25_B, BM25_K1, CacheStats, LexicalIndex, MMR_FETCH_FACTOR, MMR_LAMBDA};
pub use retrieve::{
    COLUMN_STAGE_K, DATASOURCE_K, DatasourceCandidate, DatasourceMetadata, DatasourceRouting,
    FALLBACK_WARNING, PLANNING_STAGE_K, SchemaContext, SchemaRequest, SchemaRetriever,
    TABLE_STAGE_K, retrieve_datasources, route_datasources,
};
pub use settings::{
    DEFAULT_INDEX_WORKERS, DEFAULT_ROUTER_L1_THRESHOLD, DEFAULT_ROUTER_L2_THRESHOLD,
    INDEX_ENV_VARS, IndexSettings, RetrievalSettings, RouterThresholds, SCHEMA_CONTEXT_MAX_COLUMNS,
    SCHEMA_CONTEXT_MAX_TABLES, router_distance,
};
pub use store::{
    DEFAULT_MAX_VERSIONS, Registration, SCHEMA_VERSION_LEN, SchemaStore, schema_version_of,
};
pub use text::{stem, tokenize};

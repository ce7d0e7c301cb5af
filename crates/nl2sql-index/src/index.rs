//! The `SchemaIndex` trait and its search filter (spec: retrieval.md §5.3).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::chunk::{Chunk, ChunkType};
use crate::settings::RetrievalSettings;

/// A search index over schema chunks.
///
/// Implementations rank with their own relevance measure, re-rank with maximal marginal
/// relevance and break ties by chunk id, so the same index and query always give the same
/// list. Methods take `&self`: implementations synchronise internally.
pub trait SchemaIndex: Send + Sync {
    /// Adds `chunks`, replacing any chunk with the same id.
    fn upsert(&self, chunks: Vec<Chunk>) -> nl2sql_state::Result<()>;

    /// Removes every chunk of `datasource_id` at `schema_version`; returns how many.
    fn delete(&self, datasource_id: &str, schema_version: &str) -> nl2sql_state::Result<usize>;

    /// The at most `k` best chunks for `query` among those `filter` accepts, with their
    /// relevance scores, best first.
    fn search(
        &self,
        query: &str,
        filter: &SearchFilter,
        k: usize,
    ) -> nl2sql_state::Result<Vec<(Chunk, f64)>>;

    /// Removes every chunk (the CLI `index` command starts from an empty index).
    fn clear(&self) -> nl2sql_state::Result<()>;

    /// The settings retrieval over this index uses: the router thresholds, on this
    /// index's distance scale, and the schema context limits (`ROUTER_L*_THRESHOLD`,
    /// `SCHEMA_CONTEXT_MAX_*`). The default: [`RetrievalSettings::default`].
    fn retrieval_settings(&self) -> RetrievalSettings {
        RetrievalSettings::default()
    }

    /// Replaces the chunks of `datasource_id` at `schema_version` by `chunks`
    /// (re-indexing a version is a replacement).
    fn replace(
        &self,
        datasource_id: &str,
        schema_version: &str,
        chunks: Vec<Chunk>,
    ) -> nl2sql_state::Result<()> {
        self.delete(datasource_id, schema_version)?;
        self.upsert(chunks)
    }
}

/// Which chunks a search may return. Every `None` accepts everything; the conditions that
/// are set must all hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SearchFilter {
    /// Only chunks of these datasources.
    pub datasource_ids: Option<BTreeSet<String>>,
    /// Only chunks of these types.
    pub chunk_types: Option<BTreeSet<ChunkType>>,
    /// Only chunks about one of these table keys: table and column chunks by their table,
    /// relationship chunks by either end; datasource chunks never match.
    pub tables: Option<BTreeSet<String>>,
    /// Only chunks of this schema version.
    pub schema_version: Option<String>,
}

impl SearchFilter {
    /// A filter that accepts every chunk.
    pub fn new() -> Self {
        SearchFilter::default()
    }

    /// Also accepts chunks of `datasource_id` (the first call restricts to it).
    #[must_use]
    pub fn datasource(mut self, datasource_id: impl Into<String>) -> Self {
        self.datasource_ids
            .get_or_insert_with(BTreeSet::new)
            .insert(datasource_id.into());
        self
    }

    /// Restricts to `datasource_ids` (an empty list accepts nothing).
    #[must_use]
    pub fn datasources<I, S>(mut self, datasource_ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.datasource_ids = Some(datasource_ids.into_iter().map(Into::into).collect());
        self
    }

    /// Restricts to chunks of `types`.
    #[must_use]
    pub fn chunk_types(mut self, types: &[ChunkType]) -> Self {
        self.chunk_types = Some(types.iter().copied().collect());
        self
    }

    /// Restricts to chunks about `tables` (table keys).
    #[must_use]
    pub fn tables<I, S>(mut self, tables: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tables = Some(tables.into_iter().map(Into::into).collect());
        self
    }

    /// Restricts to chunks of `schema_version`.
    #[must_use]
    pub fn schema_version(mut self, schema_version: impl Into<String>) -> Self {
        self.schema_version = Some(schema_version.into());
        self
    }

    /// True when `chunk` passes every condition.
    pub fn matches(&self, chunk: &Chunk) -> bool {
        self.datasource_ids
            .as_ref()
            .is_none_or(|ids| ids.contains(&chunk.datasource_id))
            && self
                .chunk_types
                .as_ref()
                .is_none_or(|types| types.contains(&chunk.chunk_type))
            && self
                .schema_version
                .as_ref()
                .is_none_or(|v| *v == chunk.schema_version)
            && self
                .tables
                .as_ref()
                .is_none_or(|tables| chunk.tables().iter().any(|t| tables.contains(*t)))
    }
}

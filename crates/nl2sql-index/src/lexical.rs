//! `LexicalIndex`: the default [`SchemaIndex`], BM25 over each chunk's page content and
//! keywords, re-ranked by maximal marginal relevance with the Jaccard similarity of term
//! sets, persisted as one JSON file and fronted by an in-memory result cache.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use moka::sync::Cache;
use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::fsio;
use crate::index::{SchemaIndex, SearchFilter};
use crate::settings::RetrievalSettings;
use crate::text::tokenize;

/// BM25 term-frequency saturation.
pub const BM25_K1: f64 = 1.2;
/// BM25 length normalisation.
pub const BM25_B: f64 = 0.75;
/// MMR weight of relevance against diversity.
pub const MMR_LAMBDA: f64 = 0.7;
/// MMR looks at `MMR_FETCH_FACTOR · k` candidates.
pub const MMR_FETCH_FACTOR: usize = 4;

/// The index file under the data directory.
const INDEX_FILE: &str = "index/lexical_index.json";
/// The format of the index file.
const FORMAT_VERSION: u32 = 1;
/// How many search results the cache keeps.
const CACHE_CAPACITY: u64 = 1024;

/// Hit and miss counts of the search cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Searches answered from the cache.
    pub hits: u64,
    /// Searches computed.
    pub misses: u64,
}

/// A chunk with its terms.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) chunk: Chunk,
    /// Term → occurrences.
    tf: BTreeMap<String, u32>,
    /// Number of terms.
    len: u32,
}

impl Doc {
    /// Tokenises the chunk's page content and keywords.
    pub(crate) fn new(chunk: Chunk) -> Self {
        let mut tf: BTreeMap<String, u32> = BTreeMap::new();
        let mut len = 0u32;
        let texts = std::iter::once(chunk.page_content.as_str())
            .chain(chunk.keywords.iter().map(String::as_str));
        for text in texts {
            for term in tokenize(text) {
                *tf.entry(term).or_insert(0) += 1;
                len += 1;
            }
        }
        Doc { chunk, tf, len }
    }

    fn jaccard(&self, other: &Doc) -> f64 {
        let shared = self.tf.keys().filter(|t| other.tf.contains_key(*t)).count();
        let union = self.tf.len() + other.tf.len() - shared;
        if union == 0 {
            0.0
        } else {
            shared as f64 / union as f64
        }
    }
}

/// BM25 scores of `docs` for `query`, with the corpus statistics (N, document frequency,
/// average length) taken over `docs` themselves; only positive scores, best first, ties by
/// chunk id.
pub(crate) fn bm25_rank<'a>(query: &str, docs: &[&'a Doc]) -> Vec<(&'a Doc, f64)> {
    let terms: BTreeSet<String> = tokenize(query).into_iter().collect();
    if terms.is_empty() || docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let avgdl = docs.iter().map(|d| f64::from(d.len)).sum::<f64>() / n;
    let idf: Vec<(&String, f64)> = terms
        .iter()
        .map(|t| {
            let df = docs.iter().filter(|d| d.tf.contains_key(t)).count() as f64;
            (t, (1.0 + (n - df + 0.5) / (df + 0.5)).ln())
        })
        .collect();
    let mut scored: Vec<(&Doc, f64)> = docs
        .iter()
        .map(|d| {
            let dl = f64::from(d.len);
            let norm = if avgdl > 0.0 {
                1.0 - BM25_B + BM25_B * dl / avgdl
            } else {
                1.0
            };
            let score = idf
                .iter()
                .map(|(t, w)| {
                    let f = f64::from(d.tf.get(*t).copied().unwrap_or(0));
                    w * f * (BM25_K1 + 1.0) / (f + BM25_K1 * norm)
                })
                .sum::<f64>();
            (*d, score)
        })
        .filter(|(_, s)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| tie_order(&a.0.chunk).cmp(&tie_order(&b.0.chunk)))
    });
    scored
}

/// Equal scores are ordered by chunk id, then datasource id.
fn tie_order(chunk: &Chunk) -> (&str, &str) {
    (&chunk.id, &chunk.datasource_id)
}

/// Maximal marginal relevance over `ranked` (best first): repeatedly picks the candidate
/// maximising `λ·rel − (1−λ)·max Jaccard(candidate, picked)`, where `rel` is the score
/// divided by the best score; ties go to the smaller chunk id.
pub(crate) fn mmr<'a>(ranked: &[(&'a Doc, f64)], k: usize) -> Vec<(&'a Doc, f64)> {
    let best = ranked.first().map_or(0.0, |r| r.1);
    let mut remaining: Vec<(&Doc, f64)> = ranked.to_vec();
    let mut picked: Vec<(&Doc, f64)> = Vec::new();
    while picked.len() < k && !remaining.is_empty() {
        let mut choice: Option<(usize, f64)> = None;
        for (i, (doc, score)) in remaining.iter().enumerate() {
            let rel = if best > 0.0 { score / best } else { 0.0 };
            let redundancy = picked
                .iter()
                .map(|(p, _)| doc.jaccard(p))
                .fold(0.0, f64::max);
            let value = MMR_LAMBDA * rel - (1.0 - MMR_LAMBDA) * redundancy;
            let better = match choice {
                None => true,
                Some((j, v)) => match value.total_cmp(&v) {
                    std::cmp::Ordering::Greater => true,
                    std::cmp::Ordering::Equal => {
                        tie_order(&doc.chunk) < tie_order(&remaining[j].0.chunk)
                    }
                    std::cmp::Ordering::Less => false,
                },
            };
            if better {
                choice = Some((i, value));
            }
        }
        match choice {
            Some((i, _)) => picked.push(remaining.remove(i)),
            None => break,
        }
    }
    picked
}

/// A cached search: the query, filter and k, and the generation of the data it read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    query: String,
    filter: SearchFilter,
    k: usize,
    /// Per datasource in the filter, its generation; without a datasource filter, the
    /// global generation.
    generations: Vec<(String, u64)>,
}

impl CacheKey {
    fn reads(&self, datasource_id: &str) -> bool {
        match &self.filter.datasource_ids {
            Some(ids) => ids.contains(datasource_id),
            None => true,
        }
    }
}

type Hits = Arc<Vec<(Chunk, f64)>>;

#[derive(Debug, Default)]
struct Inner {
    /// Chunks by (datasource id, chunk id): chunk ids are only unique within a datasource.
    docs: BTreeMap<(String, String), Doc>,
    /// Bumped whenever a datasource's chunks change.
    generations: BTreeMap<String, u64>,
    global: u64,
}

impl Inner {
    fn touch(&mut self, datasource_id: &str) {
        *self
            .generations
            .entry(datasource_id.to_owned())
            .or_insert(0) += 1;
        self.global += 1;
    }

    fn generations_for(&self, filter: &SearchFilter) -> Vec<(String, u64)> {
        match &filter.datasource_ids {
            Some(ids) => ids
                .iter()
                .map(|id| (id.clone(), self.generations.get(id).copied().unwrap_or(0)))
                .collect(),
            None => vec![(String::new(), self.global)],
        }
    }
}

fn doc_key(chunk: &Chunk) -> (String, String) {
    (chunk.datasource_id.clone(), chunk.id.clone())
}

/// The persisted form.
#[derive(Debug, Serialize, Deserialize)]
struct IndexFile {
    format_version: u32,
    chunks: Vec<Chunk>,
}

/// The default [`SchemaIndex`]: BM25 (k1 = 1.2, b = 0.75) over page content and keywords,
/// MMR re-ranking (λ = 0.7, fetching 4k candidates), no network.
///
/// Corpus statistics are taken over the chunks the filter accepts, so one datasource's
/// scores do not depend on what else is indexed. Returned scores are BM25 scores, listed
/// in MMR order. Results are cached per (query, filter, k) and invalidated whenever a
/// datasource the search read is upserted, deleted or cleared. An index opened on a data
/// directory writes its file (atomically) after every change.
pub struct LexicalIndex {
    path: Option<PathBuf>,
    settings: RetrievalSettings,
    inner: RwLock<Inner>,
    cache: Cache<CacheKey, Hits>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex")
            .field("path", &self.path)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl LexicalIndex {
    /// An empty index that lives in memory only.
    pub fn in_memory() -> Self {
        LexicalIndex::with_path(None, Inner::default())
    }

    /// Opens the index file under `data_dir` (`index/lexical_index.json`), or starts an
    /// empty index that will be written there.
    pub fn open(data_dir: &Path) -> nl2sql_state::Result<Self> {
        LexicalIndex::open_file(&data_dir.join(INDEX_FILE))
    }

    /// Opens the index file `path` (its directory is created on the first write), or
    /// starts an empty index that will be written there.
    pub fn open_file(path: &Path) -> nl2sql_state::Result<Self> {
        let path = path.to_path_buf();
        if let Some(dir) = path.parent() {
            fsio::remove_leftovers(dir);
        }
        let mut inner = Inner::default();
        if let Some(file) = fsio::read_json::<IndexFile>(&path)? {
            for chunk in file.chunks {
                inner.docs.insert(doc_key(&chunk), Doc::new(chunk));
            }
        }
        Ok(LexicalIndex::with_path(Some(path), inner))
    }

    /// The same index with `settings` for retrieval over it (router thresholds, schema
    /// context limits).
    #[must_use]
    pub fn with_retrieval_settings(mut self, settings: RetrievalSettings) -> Self {
        self.settings = settings;
        self
    }

    /// The file the index is persisted to, when it has one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.read().docs.len()
    }

    /// True when the index holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every chunk, sorted by datasource id, then chunk id.
    pub fn chunks(&self) -> Vec<Chunk> {
        self.read().docs.values().map(|d| d.chunk.clone()).collect()
    }

    /// Hit and miss counts of the search cache since the index was created.
    pub fn cache_stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    fn with_path(path: Option<PathBuf>, inner: Inner) -> Self {
        LexicalIndex {
            path,
            settings: RetrievalSettings::default(),
            inner: RwLock::new(inner),
            cache: Cache::builder()
                .max_capacity(CACHE_CAPACITY)
                .support_invalidation_closures()
                .build(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies `change` to the documents, persists them and invalidates the cache for
    /// the datasources `change` reports as touched.
    fn mutate<T>(
        &self,
        change: impl FnOnce(&mut BTreeMap<(String, String), Doc>) -> (T, BTreeSet<String>),
    ) -> nl2sql_state::Result<T> {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        let mut docs = inner.docs.clone();
        let (out, touched) = change(&mut docs);
        if touched.is_empty() {
            return Ok(out);
        }
        if let Some(path) = &self.path {
            let file = IndexFile {
                format_version: FORMAT_VERSION,
                chunks: docs.values().map(|d| d.chunk.clone()).collect(),
            };
            fsio::write_json(path, &file)?;
        }
        inner.docs = docs;
        for ds in &touched {
            inner.touch(ds);
            let ds = ds.clone();
            if self
                .cache
                .invalidate_entries_if(move |key, _| key.reads(&ds))
                .is_err()
            {
                self.cache.invalidate_all();
            }
        }
        Ok(out)
    }
}

impl SchemaIndex for LexicalIndex {
    fn upsert(&self, chunks: Vec<Chunk>) -> nl2sql_state::Result<()> {
        self.mutate(|docs| {
            let mut touched = BTreeSet::new();
            for chunk in chunks {
                touched.insert(chunk.datasource_id.clone());
                docs.insert(doc_key(&chunk), Doc::new(chunk));
            }
            ((), touched)
        })
    }

    fn delete(&self, datasource_id: &str, schema_version: &str) -> nl2sql_state::Result<usize> {
        self.mutate(|docs| {
            let before = docs.len();
            docs.retain(|_, d| {
                !(d.chunk.datasource_id == datasource_id
                    && d.chunk.schema_version == schema_version)
            });
            let removed = before - docs.len();
            let mut touched = BTreeSet::new();
            if removed > 0 {
                touched.insert(datasource_id.to_owned());
            }
            (removed, touched)
        })
    }

    fn search(
        &self,
        query: &str,
        filter: &SearchFilter,
        k: usize,
    ) -> nl2sql_state::Result<Vec<(Chunk, f64)>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let inner = self.read();
        let key = CacheKey {
            query: query.to_owned(),
            filter: filter.clone(),
            k,
            generations: inner.generations_for(filter),
        };
        if let Some(hit) = self.cache.get(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(hit.as_ref().clone());
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let docs: Vec<&Doc> = inner
            .docs
            .values()
            .filter(|d| filter.matches(&d.chunk))
            .collect();
        let mut ranked = bm25_rank(query, &docs);
        ranked.truncate(k.saturating_mul(MMR_FETCH_FACTOR));
        let hits: Vec<(Chunk, f64)> = mmr(&ranked, k)
            .into_iter()
            .map(|(d, s)| (d.chunk.clone(), s))
            .collect();
        self.cache.insert(key, Arc::new(hits.clone()));
        Ok(hits)
    }

    fn retrieval_settings(&self) -> RetrievalSettings {
        self.settings
    }

    fn clear(&self) -> nl2sql_state::Result<()> {
        self.mutate(|docs| {
            let touched: BTreeSet<String> = docs
                .values()
                .map(|d| d.chunk.datasource_id.clone())
                .collect();
            docs.clear();
            ((), touched)
        })
    }
}

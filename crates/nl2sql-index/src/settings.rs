//! The settings of the schema side (spec: config-and-security.md §2, retrieval.md §5.3,
//! storage.md §2): how many schema versions the store keeps, how many datasources are
//! indexed at once, the router's distance thresholds and how much of a snapshot retrieval
//! hands to a planner. [`IndexSettings::with_env`] reads them from an injected lookup; a
//! value that does not parse is an error naming the variable.
//!
//! The router thresholds of the spec are cosine distances of an embedding index. The
//! lexical index has no embeddings, so its distance between a question and a document is
//! the share of the question's terms (after stop words and stemming, as the index
//! tokenises) that the document does not contain: 0 when every term occurs, 1 when none
//! does ([`router_distance`]). The thresholds are off unless a variable sets one (the
//! index then keeps every datasource whose documents match, best first, up to the
//! resolver's `k`); with one set, [`crate::route_datasources`] keeps the candidates within
//! L1, else those within L2, else the single closest one with a warning.

use nl2sql_state::ConfigError;

use crate::chunk::Chunk;
use crate::store::DEFAULT_MAX_VERSIONS;
use crate::text::tokenize;

/// The environment variables [`IndexSettings::with_env`] reads.
pub const INDEX_ENV_VARS: [&str; 6] = [
    "SCHEMA_STORE_MAX_VERSIONS",
    "SANDBOX_INDEX_WORKERS",
    "ROUTER_L1_THRESHOLD",
    "ROUTER_L2_THRESHOLD",
    "SCHEMA_CONTEXT_MAX_COLUMNS",
    "SCHEMA_CONTEXT_MAX_TABLES",
];

/// How many datasources are snapshotted and indexed at once by default
/// (`SANDBOX_INDEX_WORKERS`).
pub const DEFAULT_INDEX_WORKERS: usize = 2;

/// The strict router threshold when only `ROUTER_L2_THRESHOLD` is set.
pub const DEFAULT_ROUTER_L1_THRESHOLD: f64 = 0.4;

/// The relaxed router threshold when only `ROUTER_L1_THRESHOLD` is set.
pub const DEFAULT_ROUTER_L2_THRESHOLD: f64 = 0.6;

/// A recorded table with at most this many columns is handed over whole
/// (`SCHEMA_CONTEXT_MAX_COLUMNS`).
pub const SCHEMA_CONTEXT_MAX_COLUMNS: usize = 40;

/// The fallback hands over at most this many tables (`SCHEMA_CONTEXT_MAX_TABLES`).
pub const SCHEMA_CONTEXT_MAX_TABLES: usize = 30;

/// The router's distance thresholds (`ROUTER_L1_THRESHOLD`, `ROUTER_L2_THRESHOLD`), on the
/// scale of [`router_distance`]: `0 ≤ l1 ≤ l2 ≤ 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RouterThresholds {
    /// Candidates within this distance are kept when there is any.
    pub l1: f64,
    /// Otherwise, candidates within this distance are kept when there is any; otherwise
    /// the single closest one, with a warning.
    pub l2: f64,
}

/// What retrieval over an index uses besides the question: the router thresholds and the
/// schema context limits of the schema retriever.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalSettings {
    /// The router thresholds; `None` (the default) keeps every matching datasource.
    pub router: Option<RouterThresholds>,
    /// `SCHEMA_CONTEXT_MAX_COLUMNS`: a recorded table with at most this many columns is
    /// handed over whole; a wider one is narrowed to the columns retrieval found and its
    /// keys.
    pub max_columns: usize,
    /// `SCHEMA_CONTEXT_MAX_TABLES`: the fallback (retrieval found nothing) hands over at
    /// most this many tables.
    pub max_tables: usize,
}

impl Default for RetrievalSettings {
    fn default() -> Self {
        RetrievalSettings {
            router: None,
            max_columns: SCHEMA_CONTEXT_MAX_COLUMNS,
            max_tables: SCHEMA_CONTEXT_MAX_TABLES,
        }
    }
}

/// The settings of the schema store, indexing and retrieval. `Default` gives the spec's
/// defaults (router thresholds off, see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexSettings {
    /// `SCHEMA_STORE_MAX_VERSIONS`: schema versions kept per datasource (default 3).
    pub store_max_versions: usize,
    /// `SANDBOX_INDEX_WORKERS`: datasources snapshotted and indexed at once by
    /// [`crate::index_all_with_workers`] (default 2).
    pub index_workers: usize,
    /// Router thresholds and schema context limits.
    pub retrieval: RetrievalSettings,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            store_max_versions: DEFAULT_MAX_VERSIONS,
            index_workers: DEFAULT_INDEX_WORKERS,
            retrieval: RetrievalSettings::default(),
        }
    }
}

fn invalid(key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_owned(),
        message,
    }
}

fn positive(key: &str, v: &str) -> Result<usize, ConfigError> {
    match v.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(key, format!("'{v}' is not a whole number > 0"))),
    }
}

fn distance(key: &str, v: &str) -> Result<f64, ConfigError> {
    match v.trim().parse::<f64>() {
        Ok(d) if (0.0..=1.0).contains(&d) => Ok(d),
        _ => Err(invalid(
            key,
            format!(
                "'{v}' is not a distance between 0 and 1 (the share of a question's terms a document lacks)"
            ),
        )),
    }
}

impl IndexSettings {
    /// These settings with the variables of [`INDEX_ENV_VARS`] that `lookup` finds (empty
    /// values count as unset). Setting either router threshold turns the thresholds on;
    /// the other one then takes its spec default (0.4, 0.6). Errors name the variable: a
    /// count that is not a whole number above 0, a threshold outside `[0, 1]`, or an L1
    /// threshold above the L2 threshold.
    pub fn with_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = get("SCHEMA_STORE_MAX_VERSIONS") {
            self.store_max_versions = positive("SCHEMA_STORE_MAX_VERSIONS", &v)?;
        }
        if let Some(v) = get("SANDBOX_INDEX_WORKERS") {
            self.index_workers = positive("SANDBOX_INDEX_WORKERS", &v)?;
        }
        if let Some(v) = get("SCHEMA_CONTEXT_MAX_COLUMNS") {
            self.retrieval.max_columns = positive("SCHEMA_CONTEXT_MAX_COLUMNS", &v)?;
        }
        if let Some(v) = get("SCHEMA_CONTEXT_MAX_TABLES") {
            self.retrieval.max_tables = positive("SCHEMA_CONTEXT_MAX_TABLES", &v)?;
        }
        let l1 = get("ROUTER_L1_THRESHOLD")
            .map(|v| distance("ROUTER_L1_THRESHOLD", &v))
            .transpose()?;
        let l2 = get("ROUTER_L2_THRESHOLD")
            .map(|v| distance("ROUTER_L2_THRESHOLD", &v))
            .transpose()?;
        if l1.is_some() || l2.is_some() {
            let current = self.retrieval.router;
            let l1 = l1
                .or(current.map(|t| t.l1))
                .unwrap_or(DEFAULT_ROUTER_L1_THRESHOLD);
            let l2 = l2
                .or(current.map(|t| t.l2))
                .unwrap_or(DEFAULT_ROUTER_L2_THRESHOLD);
            if l1 > l2 {
                return Err(invalid(
                    "ROUTER_L1_THRESHOLD",
                    format!(
                        "the strict threshold {l1} is above the relaxed ROUTER_L2_THRESHOLD {l2}"
                    ),
                ));
            }
            self.retrieval.router = Some(RouterThresholds { l1, l2 });
        }
        Ok(self)
    }
}

/// The lexical router distance between `question` and `chunk`: the share of the
/// question's distinct terms (tokenised as the index tokenises: stop words dropped,
/// plurals stemmed) that occur neither in the chunk's page content nor in its keywords.
/// 0 when all occur, 1 when none does or the question has no term.
pub fn router_distance(question: &str, chunk: &Chunk) -> f64 {
    let terms: std::collections::BTreeSet<String> = tokenize(question).into_iter().collect();
    if terms.is_empty() {
        return 1.0;
    }
    let present: std::collections::BTreeSet<String> = std::iter::once(chunk.page_content.as_str())
        .chain(chunk.keywords.iter().map(String::as_str))
        .flat_map(tokenize)
        .collect();
    let missing = terms.iter().filter(|t| !present.contains(*t)).count();
    missing as f64 / terms.len() as f64
}

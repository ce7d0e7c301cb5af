//! Retrieval (spec: retrieval.md §5): datasource candidates for a question (§5.2, with
//! the router thresholds of §5.3 when the index has them) and the schema retriever that
//! turns one sub-query into the tables and columns the planner sees (§5.1).

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_state::{
    ErrorCode, PipelineError, SchemaContract, SchemaMetadata, SchemaSnapshot, Severity,
    TableContract,
};
use serde::Serialize;

use crate::chunk::{Chunk, ChunkType, build_chunks};
use crate::fsio::NODE;
use crate::index::{SchemaIndex, SearchFilter};
use crate::lexical::{Doc, bm25_rank};
use crate::settings::{RouterThresholds, router_distance};
use crate::store::SchemaStore;

/// How many datasource candidates the resolver asks for.
pub const DATASOURCE_K: usize = 5;
/// Hits of the table stage.
pub const TABLE_STAGE_K: usize = 8;
/// Hits of the column stage.
pub const COLUMN_STAGE_K: usize = 8;
/// Hits of the planning stage.
pub const PLANNING_STAGE_K: usize = 12;
/// The warning of the fallback path.
pub const FALLBACK_WARNING: &str =
    "Retrieval produced no candidates; using the full schema snapshot.";

/// What the resolver knows about one candidate datasource.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasourceCandidate {
    /// The datasource.
    pub datasource_id: String,
    /// The schema version of the matching document.
    pub schema_version: String,
    /// Its relevance score.
    pub score: f64,
    /// The router distance of the document that matched ([`router_distance`]): the
    /// share of the question's terms it lacks, from 0 to 1.
    pub distance: f64,
    /// Semantic metadata for the decomposer prompt.
    pub metadata: DatasourceMetadata,
}

/// A datasource's description, domains and example questions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DatasourceMetadata {
    /// Description (configured, else the snapshot's, else empty).
    pub description: String,
    /// Business domains.
    pub domains: Vec<String>,
    /// Example questions.
    pub examples: Vec<String>,
}

/// The datasource candidates for `question` and the warnings of routing them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DatasourceRouting {
    /// The candidates, best first.
    pub candidates: Vec<DatasourceCandidate>,
    /// Set when no candidate was within the router thresholds and the single closest one
    /// was kept.
    pub warnings: Vec<String>,
}

/// The datasource candidates for `question` (§5.2), at most `k` (the resolver uses
/// [`DATASOURCE_K`]): [`route_datasources`] without its warnings.
pub fn retrieve_datasources(
    index: &dyn SchemaIndex,
    question: &str,
    allowed: Option<&[String]>,
    k: usize,
) -> nl2sql_state::Result<Vec<DatasourceCandidate>> {
    route_datasources(index, question, allowed, k).map(|r| r.candidates)
}

/// The datasource candidates for `question` (§5.2), at most `k`, one per datasource:
/// those whose datasource document matches, best first, then those whose table or column
/// documents match (their metadata left empty). `allowed` restricts the datasources
/// (`None`: all; an empty list: none).
///
/// When the index has router thresholds ([`SchemaIndex::retrieval_settings`],
/// `ROUTER_L1_THRESHOLD` / `ROUTER_L2_THRESHOLD`), the candidates are then filtered by
/// the [`router_distance`] of the document that matched (§5.3): those within L1 if any,
/// else those within L2 if any, else only the closest one (ties: the better ranked), with
/// a warning. Order is kept.
pub fn route_datasources(
    index: &dyn SchemaIndex,
    question: &str,
    allowed: Option<&[String]>,
    k: usize,
) -> nl2sql_state::Result<DatasourceRouting> {
    let mut filter = SearchFilter::new().chunk_types(&[ChunkType::Datasource]);
    if let Some(ids) = allowed {
        filter = filter.datasources(ids.iter().cloned());
    }
    // An index holds several versions per datasource: ask for more, keep the best of each.
    let hits = index.search(question, &filter, k.saturating_mul(4))?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (chunk, score) in hits {
        if out.len() == k {
            break;
        }
        if !seen.insert(chunk.datasource_id.clone()) {
            continue;
        }
        out.push(DatasourceCandidate {
            metadata: DatasourceMetadata {
                description: chunk.meta_str("description").unwrap_or("").to_owned(),
                domains: chunk.meta_list("domains"),
                examples: chunk.meta_list("examples"),
            },
            distance: router_distance(question, &chunk),
            datasource_id: chunk.datasource_id,
            schema_version: chunk.schema_version,
            score,
        });
    }
    // A datasource whose own document shares no word with the question may still hold
    // the tables it names ("returns" in a sales database described as orders and
    // customers): rank the rest by their best table or column document, after those.
    if out.len() < k {
        let mut filter = SearchFilter::new().chunk_types(&[ChunkType::Table, ChunkType::Column]);
        if let Some(ids) = allowed {
            filter = filter.datasources(ids.iter().cloned());
        }
        for (chunk, score) in index.search(question, &filter, k.saturating_mul(16))? {
            if out.len() == k {
                break;
            }
            if !seen.insert(chunk.datasource_id.clone()) {
                continue;
            }
            out.push(DatasourceCandidate {
                metadata: DatasourceMetadata::default(),
                distance: router_distance(question, &chunk),
                datasource_id: chunk.datasource_id,
                schema_version: chunk.schema_version,
                score,
            });
        }
    }
    let mut routing = DatasourceRouting {
        candidates: out,
        warnings: Vec::new(),
    };
    if let Some(thresholds) = index.retrieval_settings().router {
        apply_thresholds(&mut routing, thresholds);
    }
    Ok(routing)
}

/// Keeps the candidates within L1, else within L2, else the closest one with a warning.
fn apply_thresholds(routing: &mut DatasourceRouting, t: RouterThresholds) {
    let candidates = &mut routing.candidates;
    if candidates.is_empty() {
        return;
    }
    for limit in [t.l1, t.l2] {
        if candidates.iter().any(|c| c.distance <= limit) {
            candidates.retain(|c| c.distance <= limit);
            return;
        }
    }
    let closest = candidates
        .iter()
        .enumerate()
        .min_by(|(i, a), (j, b)| a.distance.total_cmp(&b.distance).then(i.cmp(j)))
        .map_or(0, |(i, _)| i);
    let kept = candidates.swap_remove(closest);
    candidates.clear();
    let warning = format!(
        "No datasource is within the router thresholds (ROUTER_L1_THRESHOLD {}, ROUTER_L2_THRESHOLD {}); using the closest, '{}' (distance {:.2}).",
        t.l1, t.l2, kept.datasource_id, kept.distance
    );
    tracing::warn!("{warning}");
    routing.warnings.push(warning);
    candidates.push(kept);
}

/// The parts of a sub-query the schema retriever reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaRequest {
    /// The sub-query's datasource.
    pub datasource_id: String,
    /// The schema version to resolve against; the latest when `None`.
    pub schema_version: Option<String>,
    /// What the sub-query asks.
    pub intent: String,
    /// Filters as (column, values).
    pub filters: Vec<(String, Vec<String>)>,
    /// Group-by columns.
    pub group_by: Vec<String>,
    /// Expected output columns.
    pub expected_schema: Vec<String>,
    /// Metric names.
    pub metrics: Vec<String>,
}

impl SchemaRequest {
    /// A request for `datasource_id` with only an intent.
    pub fn new(datasource_id: impl Into<String>, intent: impl Into<String>) -> Self {
        SchemaRequest {
            datasource_id: datasource_id.into(),
            intent: intent.into(),
            ..SchemaRequest::default()
        }
    }

    /// The query text: the non-empty lines among the intent, `filters: a=v; b=v1, v2`,
    /// `group_by: a, b`, `expected_schema: a, b` and `metrics: m1, m2`.
    pub fn query_text(&self) -> String {
        let mut lines = Vec::new();
        if !self.intent.trim().is_empty() {
            lines.push(self.intent.trim().to_owned());
        }
        if !self.filters.is_empty() {
            let parts: Vec<String> = self
                .filters
                .iter()
                .map(|(column, values)| format!("{column}={}", values.join(", ")))
                .collect();
            lines.push(format!("filters: {}", parts.join("; ")));
        }
        for (label, items) in [
            ("group_by", &self.group_by),
            ("expected_schema", &self.expected_schema),
            ("metrics", &self.metrics),
        ] {
            if !items.is_empty() {
                lines.push(format!("{label}: {}", items.join(", ")));
            }
        }
        lines.join("\n")
    }
}

/// The schema handed to the planner for one sub-query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaContext {
    /// The schema version resolved against.
    pub schema_version: String,
    /// The relevant tables and columns: the snapshot restricted to them (contract and
    /// metadata), tables sorted by key.
    pub snapshot: SchemaSnapshot,
    /// True when retrieval found nothing and the full snapshot (capped) was used.
    pub fallback: bool,
    /// Tables the fallback left out, sorted.
    pub omitted_tables: Vec<String>,
    /// Warnings for the run's warnings list (and a `warning` reasoning entry).
    pub warnings: Vec<String>,
}

/// The schema retriever (§5.1): table stage, column stage, planning stage, resolution
/// against the schema store, and the capped full-snapshot fallback.
#[derive(Clone, Copy)]
pub struct SchemaRetriever<'a> {
    index: &'a dyn SchemaIndex,
    store: &'a SchemaStore,
    max_tables: usize,
    max_columns: usize,
}

impl<'a> SchemaRetriever<'a> {
    /// A retriever over `index` resolving against `store`, with the index's schema
    /// context limits ([`SchemaIndex::retrieval_settings`]: `SCHEMA_CONTEXT_MAX_TABLES`,
    /// `SCHEMA_CONTEXT_MAX_COLUMNS`).
    pub fn new(index: &'a dyn SchemaIndex, store: &'a SchemaStore) -> Self {
        let settings = index.retrieval_settings();
        SchemaRetriever {
            index,
            store,
            max_tables: settings.max_tables.max(1),
            max_columns: settings.max_columns,
        }
    }

    /// The same retriever with another fallback table cap (at least 1).
    #[must_use]
    pub fn max_tables(mut self, max_tables: usize) -> Self {
        self.max_tables = max_tables.max(1);
        self
    }

    /// The same retriever with another whole-table column limit.
    #[must_use]
    pub fn max_columns(mut self, max_columns: usize) -> Self {
        self.max_columns = max_columns;
        self
    }

    /// The tables and columns relevant to `request`.
    ///
    /// Errors (`SCHEMA_RETRIEVAL_FAILED`): no stored snapshot for the datasource or
    /// version, an index failure, or an empty result (a snapshot without tables).
    pub fn retrieve(&self, request: &SchemaRequest) -> nl2sql_state::Result<SchemaContext> {
        let ds = request.datasource_id.as_str();
        let (version, snapshot) = self.snapshot_for(request)?;
        let query = request.query_text();
        let scope = SearchFilter::new()
            .datasource(ds)
            .schema_version(version.clone());
        let mut recorded = Recorded::default();

        let tables = self.index.search(
            &query,
            &scope
                .clone()
                .chunk_types(&[ChunkType::Table, ChunkType::Metric]),
            TABLE_STAGE_K,
        )?;
        for (chunk, _) in &tables {
            if let Some(table) = chunk.meta_str("table") {
                recorded.table(table);
            }
        }
        if recorded.is_empty() {
            let columns = self.index.search(
                &query,
                &scope.clone().chunk_types(&[ChunkType::Column]),
                COLUMN_STAGE_K,
            )?;
            for (chunk, _) in &columns {
                recorded.column_hit(chunk);
            }
        }
        if !recorded.is_empty() {
            let planning = self.index.search(
                &query,
                &scope
                    .clone()
                    .chunk_types(&[ChunkType::Column, ChunkType::Relationship])
                    .tables(recorded.tables.keys().cloned()),
                PLANNING_STAGE_K,
            )?;
            for (chunk, _) in &planning {
                match chunk.chunk_type {
                    ChunkType::Relationship => recorded.relationship_hit(chunk),
                    _ => recorded.column_hit(chunk),
                }
            }
        }

        let selection = self.resolve(&snapshot.contract, &recorded);
        if !selection.is_empty() {
            return Ok(SchemaContext {
                snapshot: restrict(&snapshot, &selection),
                schema_version: version,
                fallback: false,
                omitted_tables: Vec::new(),
                warnings: Vec::new(),
            });
        }
        self.fallback(&query, version, &snapshot)
    }

    fn snapshot_for(
        &self,
        request: &SchemaRequest,
    ) -> nl2sql_state::Result<(String, SchemaSnapshot)> {
        let ds = request.datasource_id.as_str();
        let version = match &request.schema_version {
            Some(v) => v.clone(),
            None => self.store.latest_version(ds).ok_or_else(|| {
                failure(format!(
                    "no schema snapshot is stored for datasource '{ds}'"
                ))
            })?,
        };
        let snapshot = self.store.get_snapshot(ds, &version).ok_or_else(|| {
            failure(format!(
                "no schema snapshot of version '{version}' is stored for datasource '{ds}'"
            ))
        })?;
        Ok((version, snapshot))
    }

    /// Recorded tables present in the contract, with their final column lists.
    fn resolve(&self, contract: &SchemaContract, recorded: &Recorded) -> Selection {
        let mut selection = Selection::new();
        for (key, columns) in &recorded.tables {
            let Some(table) = contract.tables.get(key) else {
                continue;
            };
            let keep = if columns.is_empty() || table.columns.len() <= self.max_columns {
                table.columns.keys().cloned().collect()
            } else {
                let keys = key_columns(table);
                table
                    .columns
                    .keys()
                    .filter(|c| columns.contains(*c) || keys.contains(*c))
                    .cloned()
                    .collect()
            };
            selection.insert(key.clone(), keep);
        }
        add_connectors(contract, &mut selection);
        selection
    }

    /// Every table of the snapshot, at most `max_tables`, chosen by BM25 score of their
    /// table documents against the query (then by key).
    fn fallback(
        &self,
        query: &str,
        version: String,
        snapshot: &SchemaSnapshot,
    ) -> nl2sql_state::Result<SchemaContext> {
        let contract = &snapshot.contract;
        if contract.tables.is_empty() {
            return Err(failure(format!(
                "the schema snapshot of datasource '{}' has no tables",
                contract.datasource_id
            )));
        }
        let docs: Vec<Doc> = build_chunks(snapshot, &version, None, &[])
            .into_iter()
            .filter(|c| c.chunk_type == ChunkType::Table)
            .map(Doc::new)
            .collect();
        let refs: Vec<&Doc> = docs.iter().collect();
        let mut order: Vec<String> = bm25_rank(query, &refs)
            .into_iter()
            .filter_map(|(d, _)| d.chunk.meta_str("table").map(str::to_owned))
            .collect();
        for key in contract.tables.keys() {
            if !order.contains(key) {
                order.push(key.clone());
            }
        }
        let omitted: BTreeSet<String> = order
            .split_off(self.max_tables.min(order.len()))
            .into_iter()
            .collect();
        let selection: Selection = order
            .into_iter()
            .filter_map(|key| {
                contract
                    .tables
                    .get(&key)
                    .map(|t| (key, t.columns.keys().cloned().collect()))
            })
            .collect();
        let mut warning = FALLBACK_WARNING.to_owned();
        if !omitted.is_empty() {
            let names: Vec<&str> = omitted.iter().map(String::as_str).collect();
            warning.push_str(&format!(
                " Omitted {} table(s) beyond SCHEMA_CONTEXT_MAX_TABLES ({}): {}.",
                omitted.len(),
                self.max_tables,
                names.join(", ")
            ));
        }
        tracing::warn!(datasource = %contract.datasource_id, "{warning}");
        Ok(SchemaContext {
            snapshot: restrict(snapshot, &selection),
            schema_version: version,
            fallback: true,
            omitted_tables: omitted.into_iter().collect(),
            warnings: vec![warning],
        })
    }
}

/// Table key → columns to keep, in table order.
type Selection = BTreeMap<String, Vec<String>>;

/// Tables found by the stages; an empty column set means "all columns".
#[derive(Debug, Default)]
struct Recorded {
    tables: BTreeMap<String, BTreeSet<String>>,
    /// Tables recorded by the table stage: they keep every column.
    whole: BTreeSet<String>,
}

impl Recorded {
    fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    fn table(&mut self, table: &str) {
        self.tables.entry(table.to_owned()).or_default();
        self.whole.insert(table.to_owned());
    }

    fn add(&mut self, table: &str, columns: impl IntoIterator<Item = String>) {
        let whole = self.whole.contains(table);
        let set = self.tables.entry(table.to_owned()).or_default();
        if !whole {
            set.extend(columns);
        }
    }

    fn column_hit(&mut self, chunk: &Chunk) {
        if let (Some(table), Some(column)) = (chunk.meta_str("table"), chunk.meta_str("column")) {
            self.add(table, [column.to_owned()]);
        }
    }

    fn relationship_hit(&mut self, chunk: &Chunk) {
        if let Some(from) = chunk.meta_str("from_table") {
            self.add(from, chunk.meta_list("from_columns"));
        }
        if let Some(to) = chunk.meta_str("to_table") {
            self.add(to, chunk.meta_list("to_columns"));
        }
    }
}

/// The primary-key and foreign-key columns of `table`.
/// The longest chain of unselected tables [`add_connectors`] adds between two selected ones.
const MAX_CONNECTORS: usize = 2;

/// Adds to `selection` the tables (with their key columns) on the shortest foreign-key path
/// between selected tables that no selected table connects, so that a plan can join what
/// retrieval found ("units produced per production line" finds `production_runs` and
/// `production_lines`, joined only through `machines`). Paths longer than
/// [`MAX_CONNECTORS`] unselected tables are left out.
fn add_connectors(contract: &SchemaContract, selection: &mut Selection) {
    if selection.len() < 2 {
        return;
    }
    // Undirected foreign-key adjacency over the contract's tables.
    let mut adjacent: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (key, table) in &contract.tables {
        for fk in &table.foreign_keys {
            let other = fk.referred_table.full_name();
            if other != *key && contract.tables.contains_key(&other) {
                adjacent
                    .entry(key.as_str())
                    .or_default()
                    .insert(other.clone());
                if let Some((k, _)) = contract.tables.get_key_value(&other) {
                    adjacent.entry(k.as_str()).or_default().insert(key.clone());
                }
            }
        }
    }
    let selected: Vec<String> = selection.keys().cloned().collect();
    let mut added: BTreeSet<String> = BTreeSet::new();
    for (i, from) in selected.iter().enumerate() {
        for to in &selected[i + 1..] {
            // Breadth-first from `from`; a path may pass through selected or added tables
            // freely and through at most MAX_CONNECTORS others.
            let mut previous: BTreeMap<String, String> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([from.clone()]);
            let mut seen = BTreeSet::from([from.clone()]);
            while let Some(at) = queue.pop_front() {
                if at == *to {
                    break;
                }
                for next in adjacent.get(at.as_str()).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        previous.insert(next.clone(), at.clone());
                        queue.push_back(next.clone());
                    }
                }
            }
            let mut path = Vec::new();
            let mut at = to.clone();
            while let Some(p) = previous.get(&at) {
                if *p != *from {
                    path.push(p.clone());
                }
                at = p.clone();
            }
            if at != *from {
                continue; // not connected at all
            }
            let outside: Vec<&String> = path
                .iter()
                .filter(|t| !selection.contains_key(*t) && !added.contains(*t))
                .collect();
            if outside.len() <= MAX_CONNECTORS {
                added.extend(outside.into_iter().cloned());
            }
        }
    }
    for key in added {
        if let Some(table) = contract.tables.get(&key) {
            let keys = key_columns(table);
            let keep = table
                .columns
                .keys()
                .filter(|c| keys.contains(*c))
                .cloned()
                .collect();
            selection.insert(key, keep);
        }
    }
}

fn key_columns(table: &TableContract) -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = table
        .columns
        .values()
        .filter(|c| c.is_primary_key)
        .map(|c| c.name.clone())
        .collect();
    for fk in &table.foreign_keys {
        keys.extend(fk.constrained_columns.iter().cloned());
    }
    keys
}

/// `snapshot` with only the selected tables and columns (contract and metadata).
fn restrict(snapshot: &SchemaSnapshot, selection: &Selection) -> SchemaSnapshot {
    let source = &snapshot.contract;
    let mut contract = SchemaContract::new(&source.datasource_id, &source.engine_type);
    for (key, columns) in selection {
        if let Some(table) = source.tables.get(key) {
            let mut table = table.clone();
            table.columns.retain(|name, _| columns.contains(name));
            contract.tables.insert(key.clone(), table);
        }
    }
    let metadata = snapshot.metadata.as_ref().map(|m| SchemaMetadata {
        tables: m
            .tables
            .iter()
            .filter_map(|(key, table)| {
                let columns = selection.get(key)?;
                let mut table = table.clone();
                table.columns.retain(|name, _| columns.contains(name));
                Some((key.clone(), table))
            })
            .collect(),
        ..m.clone()
    });
    SchemaSnapshot { contract, metadata }
}

fn failure(message: String) -> PipelineError {
    PipelineError::new(
        NODE,
        ErrorCode::SchemaRetrievalFailed,
        Severity::Error,
        message,
    )
}

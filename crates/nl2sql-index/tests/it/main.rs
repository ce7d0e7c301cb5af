//! Integration tests of nl2sql-index over the manufacturing fixture database, read through
//! the SQLite adapter: indexing with progress, schema retrieval, the fallback, datasource
//! candidates and one failing datasource among several.

use std::collections::BTreeMap;

use nl2sql_adapter::{
    CapabilitySet, CostEstimate, DatasourceAdapter, DryRunResult, Limits, QueryPlan, ResultError,
    ResultErrorCode, ResultFrame,
};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_index::{
    ChunkType, DatasourceDocs, FALLBACK_WARNING, IndexProgress, IndexStep, LexicalIndex,
    SchemaContext, SchemaIndex, SchemaRequest, SchemaRetriever, SchemaStore, SearchFilter,
    index_all, index_all_with_workers, index_datasource, retrieve_datasources,
};
use nl2sql_state::{Dialect, ErrorCode, SchemaSnapshot};

use nl2sql_test_support::manufacturing_db as fixture;

fn manufacturing() -> SqliteAdapter {
    SqliteAdapter::open("manufacturing", &fixture(), Limits::default()).expect("open fixture")
}

fn docs() -> DatasourceDocs {
    DatasourceDocs {
        description: Some("Factory production, machines, maintenance and inventory".to_owned()),
        examples: vec!["Which machines had the most downtime last month?".to_owned()],
        ..DatasourceDocs::default()
    }
}

/// Indexes the fixture into a fresh in-memory store and index.
async fn indexed() -> (SchemaStore, LexicalIndex, String) {
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    let stats = index_datasource(&manufacturing(), &store, &index, &docs(), &mut |_| {})
        .await
        .expect("index");
    (store, index, stats.schema_version)
}

fn tables_of(ctx: &SchemaContext) -> Vec<&str> {
    ctx.snapshot
        .contract
        .tables
        .keys()
        .map(String::as_str)
        .collect()
}

fn columns_of<'a>(ctx: &'a SchemaContext, table: &str) -> Vec<&'a str> {
    ctx.snapshot.contract.tables[table]
        .columns
        .keys()
        .map(String::as_str)
        .collect()
}

#[tokio::test]
async fn indexing_reports_progress_and_counts_chunks() {
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    let mut events = Vec::new();
    let stats = index_datasource(&manufacturing(), &store, &index, &docs(), &mut |e| {
        events.push(e)
    })
    .await
    .expect("index");
    let steps: Vec<IndexStep> = events
        .iter()
        .filter_map(|e| match e {
            IndexProgress::Step { step, .. } => Some(*step),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        [
            IndexStep::Snapshot,
            IndexStep::Register,
            IndexStep::Chunk,
            IndexStep::Refresh
        ]
    );
    assert!(matches!(events.last(), Some(IndexProgress::Done { stats: s, .. }) if *s == stats));

    let snapshot = store.latest_snapshot("manufacturing").expect("stored");
    let tables = snapshot.contract.tables.len();
    let columns: usize = snapshot
        .contract
        .tables
        .values()
        .map(|t| t.columns.len())
        .sum();
    let fks: usize = snapshot
        .contract
        .tables
        .values()
        .map(|t| t.foreign_keys.len())
        .sum();
    assert_eq!(tables, 9);
    assert_eq!(stats.chunks["schema.datasource"], 1);
    assert_eq!(stats.chunks["schema.table"], tables);
    assert_eq!(stats.chunks["schema.column"], columns);
    assert_eq!(stats.chunks["schema.relationship"], fks);
    assert_eq!(index.len(), 1 + tables + columns + fks);
    assert_eq!(stats.schema_version, &snapshot.contract.fingerprint()[..12]);
    assert!(!stats.updated && stats.evicted_versions.is_empty());

    // Re-indexing the same schema replaces the documents of that version.
    let again = index_datasource(&manufacturing(), &store, &index, &docs(), &mut |_| {})
        .await
        .expect("reindex");
    assert!(again.updated);
    assert_eq!(again.schema_version, stats.schema_version);
    assert_eq!(index.len(), 1 + tables + columns + fks);
}

#[tokio::test]
async fn retrieves_maintenance_logs_and_machines_for_downtime() {
    let (store, index, version) = indexed().await;
    let ctx = SchemaRetriever::new(&index, &store)
        .retrieve(&SchemaRequest::new(
            "manufacturing",
            "machines with downtime in maintenance",
        ))
        .expect("retrieve");
    assert_eq!(ctx.schema_version, version);
    assert!(!ctx.fallback, "{:?}", ctx.warnings);
    // Every table whose document names machines or maintenance, sorted by key; the
    // table stage keeps them whole.
    let tables = tables_of(&ctx);
    assert_eq!(
        tables,
        [
            "main.machine_types",
            "main.machines",
            "main.maintenance_logs",
            "main.production_runs",
        ]
    );
    assert_eq!(
        columns_of(&ctx, "main.maintenance_logs"),
        [
            "id",
            "machine_id",
            "performed_at",
            "maintenance_type",
            "notes",
            "downtime_minutes",
            "performed_by",
        ]
    );
    let machines = columns_of(&ctx, "main.machines");
    for column in ["id", "name", "factory_id"] {
        assert!(
            machines.contains(&column),
            "{column} missing from {machines:?}"
        );
    }
    // The restricted snapshot carries the matching metadata (statistics, row counts).
    let metadata = ctx.snapshot.metadata.as_ref().expect("metadata");
    assert_eq!(
        metadata
            .tables
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        tables
    );
    assert!(metadata.tables["main.maintenance_logs"].row_count.is_some());
}

#[tokio::test]
async fn retrieval_is_deterministic() {
    let (store, index, _) = indexed().await;
    let request = SchemaRequest {
        datasource_id: "manufacturing".to_owned(),
        intent: "scrap count per product".to_owned(),
        group_by: vec!["products.name".to_owned()],
        metrics: vec!["total scrap".to_owned()],
        ..SchemaRequest::default()
    };
    let first = SchemaRetriever::new(&index, &store)
        .retrieve(&request)
        .expect("retrieve");
    let (store2, index2, _) = indexed().await;
    let second = SchemaRetriever::new(&index2, &store2)
        .retrieve(&request)
        .expect("retrieve");
    assert_eq!(first, second);
    let tables = tables_of(&first);
    assert!(tables.contains(&"main.production_runs"), "{tables:?}");
    assert!(tables.contains(&"main.products"), "{tables:?}");
}

#[tokio::test]
async fn falls_back_to_a_capped_snapshot_when_the_index_is_empty() {
    let (store, _, version) = indexed().await;
    let empty = LexicalIndex::in_memory();
    let ctx = SchemaRetriever::new(&empty, &store)
        .max_tables(3)
        .retrieve(&SchemaRequest::new(
            "manufacturing",
            "machines with downtime in maintenance",
        ))
        .expect("retrieve");
    assert!(ctx.fallback);
    assert_eq!(ctx.schema_version, version);
    assert_eq!(ctx.snapshot.contract.tables.len(), 3);
    assert!(tables_of(&ctx).contains(&"main.maintenance_logs"));
    assert!(tables_of(&ctx).contains(&"main.machines"));
    assert_eq!(ctx.omitted_tables.len(), 6);
    assert_eq!(ctx.warnings.len(), 1);
    let warning = &ctx.warnings[0];
    assert!(warning.starts_with(FALLBACK_WARNING), "{warning}");
    assert!(warning.contains("Omitted 6 table(s)"), "{warning}");
    for omitted in &ctx.omitted_tables {
        assert!(
            warning.contains(omitted.as_str()),
            "{omitted} not named in {warning}"
        );
    }
    // Every kept table is whole.
    let full = store.latest_snapshot("manufacturing").expect("stored");
    for (key, table) in &ctx.snapshot.contract.tables {
        assert_eq!(table, &full.contract.tables[key]);
    }
}

#[tokio::test]
async fn proposes_the_manufacturing_datasource() {
    let (_, index, version) = indexed().await;
    let got = retrieve_datasources(&index, "Which machine had the most downtime?", None, 5)
        .expect("candidates");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].datasource_id, "manufacturing");
    assert_eq!(got[0].schema_version, version);
    assert_eq!(
        got[0].metadata.description,
        docs().description.expect("set")
    );
    assert_eq!(got[0].metadata.examples, docs().examples);
    assert!(got[0].score > 0.0);
}

#[tokio::test]
async fn lexical_index_persists_the_indexed_fixture() {
    let dir = std::env::temp_dir().join(format!("nl2sql-index-it-persist-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = SchemaStore::open(&dir).expect("store");
    let index = LexicalIndex::open(&dir).expect("index");
    index_datasource(&manufacturing(), &store, &index, &docs(), &mut |_| {})
        .await
        .expect("index");
    let filter = SearchFilter::new()
        .datasource("manufacturing")
        .chunk_types(&[ChunkType::Column]);
    let before = index.search("defect severity", &filter, 5).expect("search");
    assert!(!before.is_empty());
    drop(index);
    drop(store);

    let index = LexicalIndex::open(&dir).expect("reopen index");
    let store = SchemaStore::open(&dir).expect("reopen store");
    assert_eq!(
        index.search("defect severity", &filter, 5).expect("search"),
        before
    );
    let ctx = SchemaRetriever::new(&index, &store)
        .retrieve(&SchemaRequest::new("manufacturing", "defects by severity"))
        .expect("retrieve");
    assert!(tables_of(&ctx).contains(&"main.defects"));
    let _ = std::fs::remove_dir_all(&dir);
}

const SCHEMA_DOCS: &str = r#"{ "version": 1, "datasources": { "manufacturing": {
  "description": "ignored: the configuration's description wins",
  "tables": {
    "inventory": { "description": "Stock kept in each warehouse bin", "row_count": 4,
      "columns": { "on_hand": "Units physically sitting on the shelf", "nope": "no such column" } },
    "no_such_table": { "description": "ignored" } } } } }"#;

const QUESTIONS: &str = r#"{ "version": 1,
  "datasources": { "manufacturing": ["How much stock is on the shelf?"] },
  "cross_source": ["Compare this with that"] }"#;

#[tokio::test]
async fn documentation_files_describe_tables_and_columns_without_changing_the_version() {
    let mut all = BTreeMap::new();
    all.insert("manufacturing".to_owned(), docs());
    nl2sql_index::add_schema_docs(&mut all, SCHEMA_DOCS).expect("schema docs");
    nl2sql_index::add_questions(&mut all, QUESTIONS).expect("questions");
    let with = all["manufacturing"].clone();
    assert_eq!(
        with.description,
        docs().description,
        "the configuration's wins"
    );
    assert_eq!(with.examples.len(), 2);
    assert_eq!(with.examples[1], "How much stock is on the shelf?");

    let (_, _, plain_version) = indexed().await;
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    let stats = index_datasource(&manufacturing(), &store, &index, &with, &mut |_| {})
        .await
        .expect("index");
    assert_eq!(
        stats.schema_version, plain_version,
        "docs are metadata only"
    );
    let snapshot = store.latest_snapshot("manufacturing").expect("stored");
    let meta = &snapshot.metadata.expect("metadata").tables["main.inventory"];
    assert_eq!(
        meta.description.as_deref(),
        Some("Stock kept in each warehouse bin")
    );
    assert_eq!(
        meta.columns["on_hand"].description.as_deref(),
        Some("Units physically sitting on the shelf")
    );
    // A word found only in a description now finds the column.
    let filter = SearchFilter::new()
        .datasource("manufacturing")
        .chunk_types(&[ChunkType::Column]);
    let hits = index.search("shelf", &filter, 3).expect("search");
    assert_eq!(
        hits.first().map(|(c, _)| c.metadata["column"].clone()),
        Some(serde_json::json!("on_hand")),
        "{hits:?}"
    );
    let (_, plain) = indexed_index().await;
    assert!(
        plain
            .search("shelf", &filter, 3)
            .expect("search")
            .is_empty()
    );

    // Malformed files are errors that say which file and what.
    let err = nl2sql_index::add_schema_docs(&mut all, "{").unwrap_err();
    assert!(err.starts_with("schema docs:"), "{err}");
    let err =
        nl2sql_index::add_questions(&mut all, r#"{"version": 2, "datasources": {}}"#).unwrap_err();
    assert!(err.contains("unsupported version 2"), "{err}");
}

/// The fixture indexed with the plain docs; the index only.
async fn indexed_index() -> (SchemaStore, LexicalIndex) {
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    index_datasource(&manufacturing(), &store, &index, &docs(), &mut |_| {})
        .await
        .expect("index");
    (store, index)
}

#[tokio::test]
async fn tables_that_only_connect_the_retrieved_ones_come_with_their_keys() {
    let (store, index, _) = indexed().await;
    let ctx = SchemaRetriever::new(&index, &store)
        .retrieve(&SchemaRequest::new(
            "manufacturing",
            "downtime minutes per product category",
        ))
        .expect("retrieve");
    let tables = tables_of(&ctx);
    // maintenance_logs and production_runs both point at machines, which no stage found:
    // it joins them.
    for t in [
        "main.maintenance_logs",
        "main.production_runs",
        "main.products",
        "main.machines",
    ] {
        assert!(tables.contains(&t), "{t} missing from {tables:?}");
    }
    assert_eq!(
        columns_of(&ctx, "main.machines"),
        ["id", "factory_id"],
        "a connector keeps its keys only"
    );
}

#[tokio::test]
async fn a_datasource_is_proposed_for_its_tables_when_its_document_does_not_match() {
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    // No description and no examples: the datasource document says nothing of defects.
    index_datasource(
        &manufacturing(),
        &store,
        &index,
        &DatasourceDocs::default(),
        &mut |_| {},
    )
    .await
    .expect("index");
    let got = retrieve_datasources(&index, "Which defect types are most severe?", None, 5)
        .expect("candidates");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].datasource_id, "manufacturing");
    assert!(got[0].metadata.description.is_empty());
    // Nothing of the question anywhere: no candidate.
    let none = retrieve_datasources(&index, "xyzzy plugh", None, 5).expect("candidates");
    assert!(none.is_empty(), "{none:?}");
}

/// An adapter whose schema snapshot always fails.
struct Unreachable {
    caps: CapabilitySet,
}

fn unavailable() -> ResultError {
    ResultError::new(ResultErrorCode::ServiceUnavailable, "connection refused")
}

#[async_trait::async_trait]
impl DatasourceAdapter for Unreachable {
    fn id(&self) -> &str {
        "warehouse"
    }
    fn engine_type(&self) -> &str {
        "postgres"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
    fn capabilities(&self) -> &CapabilitySet {
        &self.caps
    }
    fn limits(&self) -> Limits {
        Limits::default()
    }
    async fn test_connection(&self) -> Result<(), ResultError> {
        Err(unavailable())
    }
    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        Err(unavailable())
    }
    async fn run_sql(&self, _sql: &nl2sql_validate::GuardedSql, _limits: Limits) -> ResultFrame {
        ResultFrame::failed(unavailable(), 0.0)
    }
    async fn dry_run(&self, _sql: &nl2sql_validate::GuardedSql) -> DryRunResult {
        DryRunResult {
            is_valid: false,
            error_message: Some("connection refused".to_owned()),
            data: None,
            error: Some(unavailable()),
        }
    }
    async fn cost_estimate(
        &self,
        _sql: &nl2sql_validate::GuardedSql,
    ) -> Result<CostEstimate, ResultError> {
        Err(unavailable())
    }
    async fn explain(&self, _sql: &nl2sql_validate::GuardedSql) -> Result<QueryPlan, ResultError> {
        Err(unavailable())
    }
    fn details(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

#[tokio::test]
async fn one_failing_datasource_does_not_stop_the_others() {
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    let failing = Unreachable {
        caps: CapabilitySet::new(&[]),
    };
    let good = manufacturing();
    let adapters: [&dyn DatasourceAdapter; 2] = [&failing, &good];
    let mut docs_by_id = BTreeMap::new();
    docs_by_id.insert("manufacturing".to_owned(), docs());
    let mut events = Vec::new();
    let report = index_all(&adapters, &store, &index, &docs_by_id, &mut |e| {
        events.push(e)
    })
    .await;

    assert_eq!(report.failed.len(), 1);
    assert_eq!(report.failed[0].0, "warehouse");
    assert_eq!(report.failed[0].1.code, ErrorCode::ServiceUnavailable);
    assert_eq!(report.indexed.len(), 1);
    assert_eq!(report.indexed[0].datasource_id, "manufacturing");
    assert!(events.iter().any(|e| matches!(
        e,
        IndexProgress::Failed { datasource_id, position: 1, total: 2, .. } if datasource_id == "warehouse"
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        IndexProgress::Done {
            position: 2,
            total: 2,
            ..
        }
    )));
    assert_eq!(store.datasource_ids(), ["manufacturing"]);
    let err = SchemaRetriever::new(&index, &store)
        .retrieve(&SchemaRequest::new("warehouse", "anything"))
        .expect_err("never indexed");
    assert_eq!(err.code, ErrorCode::SchemaRetrievalFailed);
}

/// An adapter whose snapshot counts how many snapshots are in flight at once and yields a
/// few times while it is "reading", so that concurrent snapshots overlap.
struct Counting {
    id: String,
    caps: CapabilitySet,
    in_flight: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    peak: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

#[async_trait::async_trait]
impl DatasourceAdapter for Counting {
    fn id(&self) -> &str {
        &self.id
    }
    fn engine_type(&self) -> &str {
        "sqlite"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn capabilities(&self) -> &CapabilitySet {
        &self.caps
    }
    fn limits(&self) -> Limits {
        Limits::default()
    }
    async fn test_connection(&self) -> Result<(), ResultError> {
        Ok(())
    }
    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        use std::sync::atomic::Ordering;
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        manufacturing().schema_snapshot().await
    }
    async fn run_sql(&self, _sql: &nl2sql_validate::GuardedSql, _limits: Limits) -> ResultFrame {
        ResultFrame::failed(unavailable(), 0.0)
    }
    async fn dry_run(&self, _sql: &nl2sql_validate::GuardedSql) -> DryRunResult {
        DryRunResult {
            is_valid: false,
            error_message: None,
            data: None,
            error: Some(unavailable()),
        }
    }
    async fn cost_estimate(
        &self,
        _sql: &nl2sql_validate::GuardedSql,
    ) -> Result<CostEstimate, ResultError> {
        Err(unavailable())
    }
    async fn explain(&self, _sql: &nl2sql_validate::GuardedSql) -> Result<QueryPlan, ResultError> {
        Err(unavailable())
    }
    fn details(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

#[tokio::test]
async fn index_workers_bound_how_many_datasources_are_snapshotted_at_once() {
    for (workers, expected_peak) in [(1, 1), (2, 2), (3, 3), (8, 5)] {
        let in_flight = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let adapters: Vec<Counting> = (1..=5)
            .map(|i| Counting {
                id: format!("ds{i}"),
                caps: CapabilitySet::new(&[]),
                in_flight: std::sync::Arc::clone(&in_flight),
                peak: std::sync::Arc::clone(&peak),
            })
            .collect();
        let refs: Vec<&dyn DatasourceAdapter> = adapters
            .iter()
            .map(|a| a as &dyn DatasourceAdapter)
            .collect();
        let store = SchemaStore::in_memory();
        let index = LexicalIndex::in_memory();
        let mut done = Vec::new();
        let report =
            index_all_with_workers(&refs, &store, &index, &BTreeMap::new(), workers, &mut |e| {
                if let IndexProgress::Done { position, .. } = e {
                    done.push(position);
                }
            })
            .await;
        assert_eq!(
            peak.load(std::sync::atomic::Ordering::SeqCst),
            expected_peak,
            "{workers} workers"
        );
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        // The report keeps input order whatever order the snapshots finished in.
        let ids: Vec<&str> = report
            .indexed
            .iter()
            .map(|s| s.datasource_id.as_str())
            .collect();
        assert_eq!(ids, ["ds1", "ds2", "ds3", "ds4", "ds5"]);
        done.sort_unstable();
        assert_eq!(done, [1, 2, 3, 4, 5]);
        assert_eq!(store.datasource_ids().len(), 5);
    }
}

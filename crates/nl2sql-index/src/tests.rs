//! Unit tests of nl2sql-index: tokeniser, chunks, BM25 and MMR, filters, persistence, the
//! cache, the schema store and the schema retriever on a small handcrafted snapshot.

use std::collections::BTreeMap;

use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, ErrorCode, ForeignKeyContract,
    SchemaContract, SchemaMetadata, SchemaSnapshot, TableContract, TableMetadata, TableRef,
};
use serde_json::json;

use crate::*;

// ---------------------------------------------------------------- fixtures

fn column(name: &str, data_type: &str, pk: bool) -> (String, ColumnContract) {
    (
        name.to_owned(),
        ColumnContract {
            name: name.to_owned(),
            data_type: data_type.to_owned(),
            is_nullable: !pk,
            is_primary_key: pk,
        },
    )
}

fn table_ref(name: &str) -> TableRef {
    TableRef {
        schema_name: "main".to_owned(),
        table_name: name.to_owned(),
    }
}

/// `shop`: customers (id, name, email) and orders (id, customer_id → customers.id,
/// status, total), with descriptions, statistics, synonyms and a pii flag.
fn shop() -> SchemaSnapshot {
    shop_named("shop")
}

fn shop_named(ds: &str) -> SchemaSnapshot {
    let mut contract = SchemaContract::new(ds, "sqlite");
    contract.add_table(TableContract {
        table: table_ref("customers"),
        columns: [
            column("id", "INTEGER", true),
            column("name", "TEXT", false),
            column("email", "TEXT", false),
        ]
        .into_iter()
        .collect(),
        foreign_keys: Vec::new(),
    });
    contract.add_table(TableContract {
        table: table_ref("orders"),
        columns: [
            column("id", "INTEGER", true),
            column("customer_id", "INTEGER", false),
            column("status", "TEXT", false),
            column("total", "REAL", false),
        ]
        .into_iter()
        .collect(),
        foreign_keys: vec![ForeignKeyContract {
            constrained_columns: vec!["customer_id".to_owned()],
            referred_table: table_ref("customers"),
            referred_columns: vec!["id".to_owned()],
            cardinality: Default::default(),
            business_meaning: Some("the customer who placed the order".to_owned()),
        }],
    });
    let mut tables = BTreeMap::new();
    tables.insert(
        "main.customers".to_owned(),
        TableMetadata {
            table: table_ref("customers"),
            columns: [(
                "email".to_owned(),
                ColumnMetadata {
                    description: None,
                    statistics: None,
                    synonyms: Some(vec!["mail address".to_owned()]),
                    pii: true,
                },
            )]
            .into_iter()
            .collect(),
            row_count: Some(3),
            description: None,
        },
    );
    tables.insert(
        "main.orders".to_owned(),
        TableMetadata {
            table: table_ref("orders"),
            columns: [
                (
                    "status".to_owned(),
                    ColumnMetadata {
                        statistics: Some(ColumnStatistics {
                            null_percentage: 0.0,
                            distinct_count: 2,
                            min_value: Some(json!("pending")),
                            max_value: Some(json!("shipped")),
                            sample_values: vec![json!("shipped"), json!("pending")],
                        }),
                        ..ColumnMetadata::default()
                    },
                ),
                (
                    "total".to_owned(),
                    ColumnMetadata {
                        description: Some("Order total in EUR".to_owned()),
                        ..ColumnMetadata::default()
                    },
                ),
            ]
            .into_iter()
            .collect(),
            row_count: Some(42),
            description: Some("Customer orders".to_owned()),
        },
    );
    SchemaSnapshot {
        contract,
        metadata: Some(SchemaMetadata {
            datasource_id: ds.to_owned(),
            engine_type: "sqlite".to_owned(),
            description: Some("Online shop".to_owned()),
            domains: Some(vec!["sales".to_owned()]),
            tables,
        }),
    }
}

/// A chunk with only page content, for ranking tests.
fn doc(id: &str, text: &str) -> Chunk {
    Chunk {
        id: id.to_owned(),
        chunk_type: ChunkType::Table,
        datasource_id: "ds".to_owned(),
        schema_version: "v1".to_owned(),
        page_content: text.to_owned(),
        metadata: BTreeMap::new(),
        keywords: Vec::new(),
    }
}

/// One block per chunk: its id, its page content, then metadata and keywords.
fn render_chunks(chunks: &[Chunk]) -> String {
    let mut out = String::new();
    for chunk in chunks {
        out.push_str(&format!("== {}\n{}\n", chunk.id, chunk.page_content));
        for (key, value) in &chunk.metadata {
            if !matches!(key.as_str(), "id" | "datasource_id" | "schema_version") {
                out.push_str(&format!("  {key}: {value}\n"));
            }
        }
        out.push_str(&format!("  keywords: {}\n", chunk.keywords.join(" | ")));
    }
    out
}

fn ids(hits: &[(Chunk, f64)]) -> Vec<&str> {
    hits.iter().map(|(c, _)| c.id.as_str()).collect()
}

fn index_with(chunks: Vec<Chunk>) -> LexicalIndex {
    let index = LexicalIndex::in_memory();
    index.upsert(chunks).expect("upsert");
    index
}

// ---------------------------------------------------------------- tokeniser

fn check_tokens(input: &str, expect: &[&str]) {
    assert_eq!(tokenize(input), expect, "tokens of {input:?}");
}

#[test]
fn tokenizer_splits_identifiers() {
    check_tokens(
        "maintenance_logs.downtime_minutes",
        &["maintenance", "log", "downtime", "minute"],
    );
    check_tokens("camelCaseID", &["camel", "case", "id"]);
    check_tokens("HTTPServer2Log", &["http", "server", "2", "log"]);
    check_tokens("line3", &["line", "3"]);
    check_tokens("Table: main.orders", &["table", "main", "order"]);
}

#[test]
fn tokenizer_drops_stop_words_and_single_letters() {
    check_tokens(
        "Which machines have the most categories in 2024?",
        &["machine", "most", "category", "2024"],
    );
    check_tokens("N/A", &[]);
}

#[test]
fn stemmer_makes_plurals_singular() {
    for (word, stem_) in [
        ("machines", "machine"),
        ("categories", "category"),
        ("batches", "batch"),
        ("boxes", "box"),
        ("processes", "process"),
        ("minutes", "minute"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("address", "address"),
        ("gas", "gas"),
        ("ties", "tie"),
    ] {
        assert_eq!(stem(word), stem_, "stem of {word}");
    }
}

#[test]
fn stop_words_are_sorted_for_binary_search() {
    // Every stop word is dropped, which only works when the list is sorted.
    for word in ["a", "about", "which", "with", "whose", "many", "per", "the"] {
        assert!(tokenize(word).is_empty(), "{word} is a stop word");
    }
}

// ---------------------------------------------------------------- chunks

#[test]
fn chunk_ids_are_deterministic_and_sorted() {
    let chunks = build_chunks(
        &shop(),
        "v1",
        None,
        &["How many orders shipped?".to_owned()],
    );
    let got: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        got,
        [
            "schema.column:main.customers:email:v1",
            "schema.column:main.customers:id:v1",
            "schema.column:main.customers:name:v1",
            "schema.column:main.orders:customer_id:v1",
            "schema.column:main.orders:id:v1",
            "schema.column:main.orders:status:v1",
            "schema.column:main.orders:total:v1",
            "schema.datasource:shop:v1",
            "schema.relationship:main.orders->main.customers:v1:customer_id",
            "schema.table:main.customers:v1",
            "schema.table:main.orders:v1",
        ]
    );
    assert_eq!(
        chunks,
        build_chunks(
            &shop(),
            "v1",
            None,
            &["How many orders shipped?".to_owned()]
        )
    );
}

#[test]
fn chunk_contents_match_the_spec_table() {
    let chunks = build_chunks(
        &shop(),
        "v1",
        None,
        &["How many orders shipped?".to_owned()],
    );
    let by_id: BTreeMap<&str, &Chunk> = chunks.iter().map(|c| (c.id.as_str(), c)).collect();
    let table = by_id["schema.table:main.orders:v1"];
    assert_eq!(
        table.page_content,
        "Table: main.orders\nDescription: Customer orders\nPrimary key: id\nColumns: customer_id, id, status, total"
    );
    assert_eq!(
        table.metadata["foreign_keys"],
        json!("main.orders -> main.customers")
    );
    assert_eq!(table.metadata["row_count"], json!(42));
    let rel = by_id["schema.relationship:main.orders->main.customers:v1:customer_id"];
    assert_eq!(
        rel.page_content,
        "Relationship between main.orders and main.customers\nBusiness meaning: the customer who placed the order"
    );
    assert_eq!(rel.meta_list("to_columns"), ["id"]);
    let ds = by_id["schema.datasource:shop:v1"];
    assert_eq!(
        ds.page_content,
        "Datasource: shop\nDescription: Online shop\nDomains: sales\nExample questions: How many orders shipped?"
    );
    insta::assert_snapshot!(render_chunks(&chunks));
}

#[test]
fn configured_description_wins_and_missing_lists_are_na() {
    let mut snapshot = shop();
    snapshot.metadata = None;
    let chunks = build_chunks(&snapshot, "v9", Some("Configured"), &[]);
    let ds = chunks
        .iter()
        .find(|c| c.chunk_type == ChunkType::Datasource)
        .expect("datasource chunk");
    assert_eq!(
        ds.page_content,
        "Datasource: shop\nDescription: Configured\nDomains: N/A\nExample questions: N/A"
    );
    let table = chunks
        .iter()
        .find(|c| c.id == "schema.table:main.customers:v9")
        .expect("table chunk");
    assert_eq!(
        table.page_content,
        "Table: main.customers\nDescription: N/A\nPrimary key: id\nColumns: email, id, name"
    );
}

#[test]
fn two_foreign_keys_between_the_same_tables_get_distinct_ids() {
    let mut snapshot = shop();
    let orders = snapshot
        .contract
        .tables
        .get_mut("main.orders")
        .expect("orders");
    orders.columns.insert(
        "referrer_id".to_owned(),
        column("referrer_id", "INTEGER", false).1,
    );
    let mut second = orders.foreign_keys[0].clone();
    second.constrained_columns = vec!["referrer_id".to_owned()];
    orders.foreign_keys.push(second);
    let rels: Vec<String> = build_chunks(&snapshot, "v1", None, &[])
        .into_iter()
        .filter(|c| c.chunk_type == ChunkType::Relationship)
        .map(|c| c.id)
        .collect();
    assert_eq!(
        rels,
        [
            "schema.relationship:main.orders->main.customers:v1:customer_id",
            "schema.relationship:main.orders->main.customers:v1:referrer_id",
        ]
    );
}

// ---------------------------------------------------------------- BM25 and MMR

#[test]
fn bm25_scores_match_hand_computation() {
    // N = 3, avgdl = 7/3; "apple" is in d1 (tf 1, dl 2) and d2 (tf 2, dl 3).
    // idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln 1.6 = 0.470004
    // d2: 0.470004 · 2 · 2.2 / (2 + 1.2 · (0.25 + 0.75 · 3 / (7/3))) = 0.598187
    // d1: 0.470004 · 1 · 2.2 / (1 + 1.2 · (0.25 + 0.75 · 2 / (7/3))) = 0.499176
    let index = index_with(vec![
        doc("d1", "apple banana"),
        doc("d2", "apple apple cherry"),
        doc("d3", "cherry date"),
    ]);
    let hits = index
        .search("apples", &SearchFilter::new(), 10)
        .expect("search");
    assert_eq!(ids(&hits), ["d2", "d1"]);
    assert!(
        (hits[0].1 - 0.598187).abs() < 1e-6,
        "d2 score {}",
        hits[0].1
    );
    assert!(
        (hits[1].1 - 0.499176).abs() < 1e-6,
        "d1 score {}",
        hits[1].1
    );
}

#[test]
fn bm25_ranks_rarer_terms_higher_and_ignores_non_matches() {
    let index = index_with(vec![
        doc("a", "order status shipped"),
        doc("b", "order total amount"),
        doc("c", "order date"),
        doc("d", "customer name"),
    ]);
    let hits = index
        .search("order status", &SearchFilter::new(), 10)
        .expect("search");
    assert_eq!(ids(&hits), ["a", "c", "b"]);
    assert!(
        index
            .search("zebra", &SearchFilter::new(), 10)
            .expect("search")
            .is_empty()
    );
    assert!(
        index
            .search("order", &SearchFilter::new(), 0)
            .expect("search")
            .is_empty()
    );
}

#[test]
fn ties_are_broken_by_chunk_id() {
    let index = index_with(vec![
        doc("z", "alpha beta"),
        doc("m", "alpha beta"),
        doc("a", "alpha beta"),
    ]);
    let hits = index
        .search("alpha", &SearchFilter::new(), 1)
        .expect("search");
    assert_eq!(ids(&hits), ["a"]);
}

#[test]
fn mmr_prefers_a_diverse_document_over_a_duplicate() {
    // All three score the same; d2 duplicates d1 (Jaccard 1), d3 shares half its terms
    // (Jaccard 2/4): after d1, d2 is worth 0.7 − 0.3 = 0.4 and d3 0.7 − 0.15 = 0.55.
    let index = index_with(vec![
        doc("d1", "sales revenue region"),
        doc("d2", "sales revenue region"),
        doc("d3", "revenue sales forecast"),
    ]);
    let hits = index
        .search("sales revenue", &SearchFilter::new(), 2)
        .expect("search");
    assert_eq!(ids(&hits), ["d1", "d3"]);
    let all = index
        .search("sales revenue", &SearchFilter::new(), 3)
        .expect("search");
    assert_eq!(ids(&all), ["d1", "d3", "d2"]);
}

// ---------------------------------------------------------------- filters

#[test]
fn filters_restrict_datasource_type_tables_and_version() {
    let mut chunks = build_chunks(&shop(), "v1", None, &[]);
    chunks.extend(build_chunks(&shop(), "v2", None, &[]));
    chunks.extend(build_chunks(&shop_named("crm"), "v1", None, &[]));
    let index = index_with(chunks);
    let q = "orders customers status email";

    let hits = index
        .search(q, &SearchFilter::new().datasource("crm"), 100)
        .expect("search");
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|(c, _)| c.datasource_id == "crm"));

    let hits = index
        .search(
            q,
            &SearchFilter::new()
                .datasource("shop")
                .schema_version("v2")
                .chunk_types(&[ChunkType::Table]),
            100,
        )
        .expect("search");
    assert_eq!(
        ids(&hits)
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>(),
        [
            "schema.table:main.customers:v2",
            "schema.table:main.orders:v2"
        ]
        .into_iter()
        .collect()
    );

    let only_customers = SearchFilter::new()
        .datasource("shop")
        .schema_version("v1")
        .chunk_types(&[ChunkType::Column, ChunkType::Relationship])
        .tables(["main.customers"]);
    let hits = index.search(q, &only_customers, 100).expect("search");
    let mut got: Vec<&str> = ids(&hits);
    got.sort_unstable();
    // The relationship matches through its `to` end.
    assert_eq!(
        got,
        [
            "schema.column:main.customers:email:v1",
            "schema.column:main.customers:id:v1",
            "schema.column:main.customers:name:v1",
            "schema.relationship:main.orders->main.customers:v1:customer_id",
        ]
    );

    let nothing = SearchFilter::new().datasources(Vec::<String>::new());
    assert!(index.search(q, &nothing, 100).expect("search").is_empty());
}

// ---------------------------------------------------------------- persistence and cache

#[test]
fn lexical_index_round_trips_through_its_file() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let index = LexicalIndex::open(dir).expect("open");
    index
        .upsert(build_chunks(&shop(), "v1", None, &[]))
        .expect("upsert");
    let filter = SearchFilter::new().datasource("shop");
    let before = index
        .search("order status shipped", &filter, 5)
        .expect("search");
    assert!(!before.is_empty());
    let path = index.path().expect("path").to_path_buf();
    assert!(path.is_file());
    drop(index);

    let reopened = LexicalIndex::open(dir).expect("reopen");
    assert_eq!(reopened.len(), 11);
    let after = reopened
        .search("order status shipped", &filter, 5)
        .expect("search");
    assert_eq!(before, after);

    assert_eq!(reopened.delete("shop", "v1").expect("delete"), 11);
    let emptied = LexicalIndex::open(dir).expect("reopen");
    assert!(emptied.is_empty());
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("list")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn cache_is_invalidated_when_the_version_changes() {
    let index = index_with(build_chunks(&shop(), "v1", None, &[]));
    index
        .upsert(build_chunks(&shop_named("crm"), "v1", None, &[]))
        .expect("upsert");
    let filter = SearchFilter::new()
        .datasource("shop")
        .chunk_types(&[ChunkType::Table]);
    let first = index.search("orders", &filter, 1).expect("search");
    assert_eq!(ids(&first), ["schema.table:main.orders:v1"]);
    let again = index.search("orders", &filter, 1).expect("search");
    assert_eq!(first, again);
    assert_eq!(index.cache_stats(), CacheStats { hits: 1, misses: 1 });

    // Another datasource changing leaves this entry alone.
    index.delete("crm", "v1").expect("delete");
    index.search("orders", &filter, 1).expect("search");
    assert_eq!(index.cache_stats(), CacheStats { hits: 2, misses: 1 });

    // A new version of this datasource replaces the cached answer.
    index.delete("shop", "v1").expect("delete");
    index
        .upsert(build_chunks(&shop(), "v2", None, &[]))
        .expect("upsert");
    let fresh = index.search("orders", &filter, 1).expect("search");
    assert_eq!(ids(&fresh), ["schema.table:main.orders:v2"]);
    assert_eq!(index.cache_stats(), CacheStats { hits: 2, misses: 2 });

    index.clear().expect("clear");
    assert!(
        index
            .search("orders", &filter, 1)
            .expect("search")
            .is_empty()
    );
}

// ---------------------------------------------------------------- schema store

fn with_extra_table(snapshot: &SchemaSnapshot, name: &str) -> SchemaSnapshot {
    let mut next = snapshot.clone();
    next.contract.add_table(TableContract {
        table: table_ref(name),
        columns: [column("id", "INTEGER", true)].into_iter().collect(),
        foreign_keys: Vec::new(),
    });
    next
}

#[test]
fn store_versions_come_from_the_fingerprint() {
    let store = SchemaStore::in_memory();
    let snapshot = shop();
    let first = store.register_snapshot(snapshot.clone()).expect("register");
    assert_eq!(first.schema_version, &snapshot.contract.fingerprint()[..12]);
    assert_eq!(first.schema_version, schema_version_of(&snapshot.contract));
    assert!(!first.updated);

    // Same contract, new statistics: same version, metadata replaced.
    let mut refreshed = snapshot.clone();
    if let Some(m) = &mut refreshed.metadata {
        m.description = Some("Refreshed".to_owned());
    }
    let again = store.register_snapshot(refreshed).expect("register");
    assert_eq!(again.schema_version, first.schema_version);
    assert!(again.updated);
    assert!(again.evicted_versions.is_empty());
    let stored = store.latest_snapshot("shop").expect("latest");
    assert_eq!(
        stored.metadata.and_then(|m| m.description).as_deref(),
        Some("Refreshed")
    );
    assert_eq!(store.list_versions("shop"), [first.schema_version.as_str()]);
    assert!(
        store
            .get_table_contract("shop", &first.schema_version, "main.orders")
            .is_some()
    );
    assert_eq!(
        store
            .get_table_metadata("shop", &first.schema_version, "main.orders")
            .and_then(|t| t.row_count),
        Some(42)
    );
    assert!(store.get_snapshot("shop", "nope").is_none());
}

#[test]
fn store_keeps_the_last_versions_and_reports_evictions() {
    let store = SchemaStore::in_memory();
    let v1 = shop();
    let v2 = with_extra_table(&v1, "a");
    let v3 = with_extra_table(&v2, "b");
    let v4 = with_extra_table(&v3, "c");
    let ids: Vec<String> = [&v1, &v2, &v3, &v4]
        .iter()
        .map(|s| schema_version_of(&s.contract))
        .collect();
    for s in [&v1, &v2, &v3] {
        assert!(
            store
                .register_snapshot((*s).clone())
                .expect("register")
                .evicted_versions
                .is_empty()
        );
    }
    let fourth = store.register_snapshot(v4).expect("register");
    assert_eq!(fourth.evicted_versions, [ids[0].clone()]);
    assert_eq!(store.list_versions("shop"), ids[1..]);
    assert_eq!(store.latest_version("shop"), Some(ids[3].clone()));

    // Re-registering an older contract makes it the latest again, without eviction.
    let back = store.register_snapshot(v2).expect("register");
    assert!(back.updated && back.evicted_versions.is_empty());
    assert_eq!(
        store.list_versions("shop"),
        [ids[2].clone(), ids[3].clone(), ids[1].clone()]
    );
}

#[test]
fn store_persists_across_reopen() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let store = SchemaStore::open(dir).expect("open").with_max_versions(2);
    let v1 = shop();
    let v2 = with_extra_table(&v1, "extra");
    store.register_snapshot(v1.clone()).expect("register");
    store.register_snapshot(v2.clone()).expect("register");
    store
        .register_snapshot(shop_named("crm"))
        .expect("register");
    drop(store);

    let reopened = SchemaStore::open(dir).expect("reopen");
    assert_eq!(reopened.datasource_ids(), ["crm", "shop"]);
    assert_eq!(
        reopened.list_versions("shop"),
        [
            schema_version_of(&v1.contract),
            schema_version_of(&v2.contract)
        ]
    );
    assert_eq!(reopened.latest_snapshot("shop"), Some(v2));
}

#[test]
fn store_rejects_a_snapshot_without_datasource() {
    let err = SchemaStore::in_memory()
        .register_snapshot(SchemaSnapshot::default())
        .expect_err("no id");
    assert_eq!(err.code, ErrorCode::InvalidState);
}

// ---------------------------------------------------------------- retrieval

fn indexed_shop() -> (LexicalIndex, SchemaStore, String) {
    let store = SchemaStore::in_memory();
    let index = LexicalIndex::in_memory();
    let version = store
        .register_snapshot(shop())
        .expect("register")
        .schema_version;
    index
        .upsert(build_chunks(
            &shop(),
            &version,
            None,
            &["How many orders shipped?".to_owned()],
        ))
        .expect("upsert");
    (index, store, version)
}

fn columns_of(ctx: &SchemaContext) -> Vec<String> {
    ctx.snapshot
        .contract
        .tables
        .iter()
        .flat_map(|(k, t)| t.columns.keys().map(move |c| format!("{k}.{c}")))
        .collect()
}

#[test]
fn query_text_lists_the_non_empty_parts() {
    let request = SchemaRequest {
        datasource_id: "shop".to_owned(),
        schema_version: None,
        intent: "revenue by status".to_owned(),
        filters: vec![
            ("a".to_owned(), vec!["v".to_owned()]),
            ("b".to_owned(), vec!["v1".to_owned(), "v2".to_owned()]),
        ],
        group_by: vec!["a".to_owned(), "b".to_owned()],
        expected_schema: Vec::new(),
        metrics: vec!["m1".to_owned()],
    };
    assert_eq!(
        request.query_text(),
        "revenue by status\nfilters: a=v; b=v1, v2\ngroup_by: a, b\nmetrics: m1"
    );
}

#[test]
fn retriever_keeps_table_stage_tables_whole() {
    let (index, store, version) = indexed_shop();
    let ctx = SchemaRetriever::new(&index, &store)
        .retrieve(&SchemaRequest::new("shop", "order totals by status"))
        .expect("retrieve");
    assert_eq!(ctx.schema_version, version);
    assert!(!ctx.fallback && ctx.warnings.is_empty());
    // The relationship hit of the planning stage records customers through its `to` end.
    assert_eq!(
        columns_of(&ctx),
        [
            "main.customers.id",
            "main.customers.name",
            "main.customers.email",
            "main.orders.id",
            "main.orders.customer_id",
            "main.orders.status",
            "main.orders.total",
        ]
    );
    let metadata = ctx.snapshot.metadata.expect("metadata");
    assert_eq!(
        metadata.tables.keys().collect::<Vec<_>>(),
        ["main.customers", "main.orders"]
    );
    assert_eq!(metadata.tables["main.orders"].columns.len(), 2);
}

#[test]
fn retriever_narrows_wide_tables_to_hits_and_keys() {
    let (index, store, _) = indexed_shop();
    // "shipped" is only a sample value: the table stage finds nothing, the column stage
    // finds orders.status.
    let request = SchemaRequest::new("shop", "shipped");
    let whole = SchemaRetriever::new(&index, &store)
        .retrieve(&request)
        .expect("retrieve");
    assert_eq!(columns_of(&whole).len(), 4, "{:?}", columns_of(&whole));
    let narrow = SchemaRetriever::new(&index, &store)
        .max_columns(2)
        .retrieve(&request)
        .expect("retrieve");
    assert_eq!(
        columns_of(&narrow),
        [
            "main.orders.id",
            "main.orders.customer_id",
            "main.orders.status"
        ]
    );
}

#[test]
fn retriever_falls_back_to_the_capped_snapshot_with_a_warning() {
    let (_, store, version) = indexed_shop();
    let empty = LexicalIndex::in_memory();
    let ctx = SchemaRetriever::new(&empty, &store)
        .max_tables(1)
        .retrieve(&SchemaRequest::new("shop", "customer email"))
        .expect("retrieve");
    assert!(ctx.fallback);
    assert_eq!(ctx.schema_version, version);
    assert_eq!(
        ctx.snapshot.contract.tables.keys().collect::<Vec<_>>(),
        ["main.customers"]
    );
    assert_eq!(ctx.omitted_tables, ["main.orders"]);
    assert_eq!(
        ctx.warnings,
        [format!(
            "{FALLBACK_WARNING} Omitted 1 table(s) beyond SCHEMA_CONTEXT_MAX_TABLES (1): main.orders."
        )]
    );

    let uncapped = SchemaRetriever::new(&empty, &store)
        .retrieve(&SchemaRequest::new("shop", "zebra"))
        .expect("retrieve");
    assert_eq!(uncapped.snapshot.contract.tables.len(), 2);
    assert_eq!(uncapped.warnings, [FALLBACK_WARNING]);
}

#[test]
fn retriever_fails_on_an_empty_snapshot_or_unknown_datasource() {
    let store = SchemaStore::in_memory();
    store
        .register_snapshot(SchemaSnapshot {
            contract: SchemaContract::new("empty", "sqlite"),
            metadata: None,
        })
        .expect("register");
    let index = LexicalIndex::in_memory();
    let retriever = SchemaRetriever::new(&index, &store);
    let err = retriever
        .retrieve(&SchemaRequest::new("empty", "anything"))
        .expect_err("no tables");
    assert_eq!(err.code, ErrorCode::SchemaRetrievalFailed);
    assert!(
        err.message.contains("'empty' has no tables"),
        "{}",
        err.message
    );
    let err = retriever
        .retrieve(&SchemaRequest::new("ghost", "anything"))
        .expect_err("no snapshot");
    assert_eq!(err.code, ErrorCode::SchemaRetrievalFailed);
    let mut pinned = SchemaRequest::new("empty", "anything");
    pinned.schema_version = Some("000000000000".to_owned());
    let err = retriever.retrieve(&pinned).expect_err("no such version");
    assert!(err.message.contains("'000000000000'"), "{}", err.message);
}

#[test]
fn datasource_candidates_carry_description_domains_and_examples() {
    let index = index_with(build_chunks(
        &shop(),
        "v1",
        None,
        &["How many orders shipped?".to_owned()],
    ));
    index
        .upsert(build_chunks(
            &shop(),
            "v2",
            None,
            &["How many orders shipped?".to_owned()],
        ))
        .expect("upsert");
    index
        .upsert(build_chunks(
            &shop_named("crm"),
            "v1",
            Some("Customer relations"),
            &[],
        ))
        .expect("upsert");
    let got =
        retrieve_datasources(&index, "online shop sales", None, DATASOURCE_K).expect("retrieve");
    // One entry per datasource although shop has two versions.
    assert_eq!(
        got.iter()
            .map(|c| c.datasource_id.as_str())
            .collect::<Vec<_>>(),
        ["shop", "crm"]
    );
    assert_eq!(
        got[0].metadata,
        DatasourceMetadata {
            description: "Online shop".to_owned(),
            domains: vec!["sales".to_owned()],
            examples: vec!["How many orders shipped?".to_owned()],
        }
    );
    let allowed = ["crm".to_owned()];
    let only = retrieve_datasources(&index, "online shop sales", Some(&allowed), DATASOURCE_K)
        .expect("retrieve");
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].metadata.description, "Customer relations");
    assert!(
        retrieve_datasources(&index, "online shop sales", Some(&[]), DATASOURCE_K)
            .expect("retrieve")
            .is_empty()
    );
}

// ---------------------------------------------------------------- settings

fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| (*v).to_owned())
    }
}

/// A datasource chunk of `ds` whose document is `text`.
fn datasource_doc(ds: &str, text: &str) -> Chunk {
    Chunk {
        id: format!("{ds}::datasource"),
        chunk_type: ChunkType::Datasource,
        datasource_id: ds.to_owned(),
        schema_version: "v1".to_owned(),
        page_content: text.to_owned(),
        metadata: BTreeMap::new(),
        keywords: Vec::new(),
    }
}

#[test]
fn index_settings_come_from_the_environment_and_bad_values_name_the_variable() {
    let defaults = IndexSettings::default();
    assert_eq!(defaults.store_max_versions, 3);
    assert_eq!(defaults.index_workers, 2);
    assert_eq!(defaults.retrieval, RetrievalSettings::default());
    assert_eq!(
        defaults.retrieval.router, None,
        "thresholds are off by default"
    );
    assert_eq!(
        (
            defaults.retrieval.max_columns,
            defaults.retrieval.max_tables
        ),
        (40, 30)
    );

    let set = IndexSettings::default()
        .with_env(lookup(&[
            ("SCHEMA_STORE_MAX_VERSIONS", "5"),
            ("SANDBOX_INDEX_WORKERS", " 4 "),
            ("SCHEMA_CONTEXT_MAX_COLUMNS", "12"),
            ("SCHEMA_CONTEXT_MAX_TABLES", "7"),
            ("ROUTER_L1_THRESHOLD", "0.25"),
            ("ROUTER_L2_THRESHOLD", ""),
        ]))
        .expect("settings");
    assert_eq!(set.store_max_versions, 5);
    assert_eq!(set.index_workers, 4);
    assert_eq!(set.retrieval.max_columns, 12);
    assert_eq!(set.retrieval.max_tables, 7);
    assert_eq!(
        set.retrieval.router,
        Some(RouterThresholds { l1: 0.25, l2: 0.6 }),
        "the unset threshold takes its spec default"
    );
    let only_l2 = IndexSettings::default()
        .with_env(lookup(&[("ROUTER_L2_THRESHOLD", "0.9")]))
        .expect("settings");
    assert_eq!(
        only_l2.retrieval.router,
        Some(RouterThresholds { l1: 0.4, l2: 0.9 })
    );

    for (pairs, key) in [
        (
            &[("SCHEMA_STORE_MAX_VERSIONS", "0")][..],
            "SCHEMA_STORE_MAX_VERSIONS",
        ),
        (
            &[("SANDBOX_INDEX_WORKERS", "two")][..],
            "SANDBOX_INDEX_WORKERS",
        ),
        (
            &[("SCHEMA_CONTEXT_MAX_COLUMNS", "-1")][..],
            "SCHEMA_CONTEXT_MAX_COLUMNS",
        ),
        (
            &[("SCHEMA_CONTEXT_MAX_TABLES", "0")][..],
            "SCHEMA_CONTEXT_MAX_TABLES",
        ),
        (&[("ROUTER_L1_THRESHOLD", "1.5")][..], "ROUTER_L1_THRESHOLD"),
        (
            &[("ROUTER_L2_THRESHOLD", "near")][..],
            "ROUTER_L2_THRESHOLD",
        ),
        (
            &[
                ("ROUTER_L1_THRESHOLD", "0.7"),
                ("ROUTER_L2_THRESHOLD", "0.5"),
            ][..],
            "ROUTER_L1_THRESHOLD",
        ),
        (&[("ROUTER_L1_THRESHOLD", "0.8")][..], "ROUTER_L1_THRESHOLD"),
    ] {
        let pairs: &'static [(&'static str, &'static str)] =
            Box::leak(pairs.to_vec().into_boxed_slice());
        let err = IndexSettings::default()
            .with_env(lookup(pairs))
            .expect_err("bad value");
        assert!(err.to_string().starts_with(key), "{pairs:?}: {err}");
    }
}

#[test]
fn router_distance_is_the_share_of_question_terms_a_document_lacks() {
    let chunk = datasource_doc("ops", "Factories, machines and production runs");
    assert_eq!(
        router_distance("How many factories are there?", &chunk),
        0.0
    );
    // "we" is a term too (only the listed stop words are dropped).
    assert_eq!(
        router_distance("How many factories do we have?", &chunk),
        0.5
    );
    // Terms: factory, order, shipment; only "factory" occurs.
    let d = router_distance("factories orders shipments", &chunk);
    assert!((d - 2.0 / 3.0).abs() < 1e-12, "{d}");
    assert_eq!(router_distance("zebras", &chunk), 1.0);
    assert_eq!(router_distance("how many?", &chunk), 1.0, "no term at all");
}

/// Three datasources; for "factories orders shipments" (terms factory, order, shipment)
/// `both` lacks one term (distance 1/3), `ops` and `sales` two (2/3).
fn routed(router: Option<RouterThresholds>) -> DatasourceRouting {
    let index = LexicalIndex::in_memory().with_retrieval_settings(RetrievalSettings {
        router,
        ..RetrievalSettings::default()
    });
    index
        .upsert(vec![
            datasource_doc("ops", "factories machines production"),
            datasource_doc("sales", "orders customers invoices"),
            datasource_doc("both", "factories and their orders"),
        ])
        .expect("upsert");
    route_datasources(&index, "factories orders shipments", None, DATASOURCE_K).expect("route")
}

fn routed_ids(routing: &DatasourceRouting) -> Vec<&str> {
    let mut ids: Vec<&str> = routing
        .candidates
        .iter()
        .map(|c| c.datasource_id.as_str())
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn router_thresholds_keep_l1_then_l2_then_the_closest_with_a_warning() {
    // Off (the default): every matching datasource.
    let all = routed(None);
    assert_eq!(routed_ids(&all), ["both", "ops", "sales"]);
    assert!(all.warnings.is_empty());
    let both = all
        .candidates
        .iter()
        .find(|c| c.datasource_id == "both")
        .expect("both");
    assert!(
        (both.distance - 1.0 / 3.0).abs() < 1e-12,
        "{}",
        both.distance
    );

    // Within L1 (0.4): only `both`.
    let strict = routed(Some(RouterThresholds { l1: 0.4, l2: 0.7 }));
    assert_eq!(routed_ids(&strict), ["both"]);
    assert!(strict.warnings.is_empty());

    // Nothing within L1 (0.2), everything within L2 (0.7).
    let relaxed = routed(Some(RouterThresholds { l1: 0.2, l2: 0.7 }));
    assert_eq!(routed_ids(&relaxed), ["both", "ops", "sales"]);
    assert!(relaxed.warnings.is_empty());

    // Nothing within L2 (0.3): the closest alone, with a warning naming it.
    let none = routed(Some(RouterThresholds { l1: 0.1, l2: 0.3 }));
    assert_eq!(routed_ids(&none), ["both"]);
    assert_eq!(none.warnings.len(), 1);
    assert!(
        none.warnings[0].contains("'both'") && none.warnings[0].contains("ROUTER_L2_THRESHOLD 0.3"),
        "{:?}",
        none.warnings
    );
}

#[test]
fn the_index_s_context_limits_cap_what_the_retriever_hands_over() {
    let (_, store, _) = indexed_shop();
    let capped = LexicalIndex::in_memory().with_retrieval_settings(RetrievalSettings {
        max_tables: 1,
        ..RetrievalSettings::default()
    });
    let ctx = SchemaRetriever::new(&capped, &store)
        .retrieve(&SchemaRequest::new("shop", "customer email"))
        .expect("retrieve");
    assert!(ctx.fallback);
    assert_eq!(ctx.omitted_tables, ["main.orders"]);

    // "shipped" finds orders.status in the column stage: with a column limit of 2 the
    // four-column table is narrowed to the hit and its keys.
    let (index, store, _) = indexed_shop();
    let narrow = index.with_retrieval_settings(RetrievalSettings {
        max_columns: 2,
        ..RetrievalSettings::default()
    });
    let ctx = SchemaRetriever::new(&narrow, &store)
        .retrieve(&SchemaRequest::new("shop", "shipped"))
        .expect("retrieve");
    assert_eq!(
        columns_of(&ctx),
        [
            "main.orders.id",
            "main.orders.customer_id",
            "main.orders.status"
        ]
    );
}

#[test]
fn the_store_and_index_open_where_they_are_told() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let store = SchemaStore::open_dir(&dir.join("snapshots"))
        .expect("open")
        .with_max_versions(1);
    assert_eq!(store.max_versions(), 1);
    store.register_snapshot(shop()).expect("register");
    let second = store
        .register_snapshot(with_extra_table(&shop(), "returns"))
        .expect("register");
    assert_eq!(second.evicted_versions.len(), 1, "one version kept");
    assert!(
        dir.join("snapshots")
            .read_dir()
            .expect("dir")
            .next()
            .is_some()
    );
    assert!(!dir.join("schema_store").exists());

    let file = dir.join("vectors").join("collection.json");
    let index = LexicalIndex::open_file(&file).expect("open");
    index.upsert(vec![doc("a", "alpha")]).expect("upsert");
    assert!(file.is_file());
    assert_eq!(LexicalIndex::open_file(&file).expect("reopen").len(), 1);
}

//! The schema retriever and the datasource candidates.

use super::*;

// ---------------------------------------------------------------- retrieval

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

//! Settings from the environment, the datasource router and where things live.

use super::*;

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

//! Persistence, the cache and the schema store.

use super::*;

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

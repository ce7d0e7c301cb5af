//! BM25 and MMR ranking, and the filters.

use super::*;

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

//! The tokeniser and the chunks: identifiers, stop words, stems; chunk ids, contents, descriptions.

use super::*;

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

//! Unit tests of nl2sql-index: tokeniser, chunks, BM25 and MMR, filters, persistence, the
//! cache, the schema store and the schema retriever on a small handcrafted snapshot.

use std::collections::BTreeMap;

use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, ErrorCode, ForeignKeyContract,
    SchemaContract, SchemaMetadata, SchemaSnapshot, TableContract, TableMetadata, TableRef,
};
use serde_json::json;

use crate::*;

mod ranking;
mod retrieval;
mod settings;
mod store;
mod tokens;

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
            inferred: false,
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
                            values: Vec::new(),
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

fn with_extra_table(snapshot: &SchemaSnapshot, name: &str) -> SchemaSnapshot {
    let mut next = snapshot.clone();
    next.contract.add_table(TableContract {
        table: table_ref(name),
        columns: [column("id", "INTEGER", true)].into_iter().collect(),
        foreign_keys: Vec::new(),
    });
    next
}

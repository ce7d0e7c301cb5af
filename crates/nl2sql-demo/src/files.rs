//! The demo's text files: `nl2sql.toml`, `policy.json`, `questions.json` and
//! `schema_docs.json`, written from the generated specs so that they always agree.

use nl2sql_adapter::DatasetSpec;
use serde_json::{Map, Value, json};

use super::Source;

/// Limits every demo datasource gets.
const STATEMENT_TIMEOUT_MS: u64 = 15_000;
const ROW_LIMIT: u64 = 10_000;
const MAX_BYTES: u64 = 64 * 1024 * 1024;

fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `nl2sql.toml`: the three datasources with relative URLs, descriptions, limits, tags
/// (one `table.<name>` tag per table with its description) and the policy path.
pub(crate) fn config_toml(sources: &[Source<'_>]) -> String {
    let mut out = String::from(
        "# The nl2sql demo: a manufacturing company in three databases (written by\n\
         # `nl2sql demo`; the same every time). Paths are relative to this file.\n\
         version = 1\n\
         policy = \"policy.json\"\n\
         schema_docs = \"schema_docs.json\"\n\
         questions = \"questions.json\"\n",
    );
    for s in sources {
        out.push_str(&format!(
            "\n[[datasources]]\nid = {}\ndescription = {}\nurl = {}\n\
             statement_timeout_ms = {STATEMENT_TIMEOUT_MS}\nrow_limit = {ROW_LIMIT}\n\
             max_bytes = {MAX_BYTES}\n\n[datasources.tags]\ndomain = \"manufacturing\"\n",
            toml_str(s.id),
            toml_str(s.description),
            toml_str(&format!("{}://{}", s.engine, s.file)),
        ));
        for t in &s.spec.tables {
            out.push_str(&format!(
                "{} = {}\n",
                toml_str(&format!("table.{}", t.name)),
                toml_str(&t.description)
            ));
        }
    }
    out
}

/// `policy.json`: `admin` reads everything; `analyst` reads the three datasources but
/// not the contact e-mail addresses; `supply_viewer` reads only supply; `plant_manager`
/// reads operations and the supply inventory.
pub(crate) fn policy_json() -> String {
    let policy = json!({
        "version": 1,
        "roles": {
            "admin": {
                "description": "Everything, including personal data",
                "role": "admin",
                "allowed_datasources": ["*"],
                "allowed_tables": ["*"]
            },
            "analyst": {
                "description": "Business analyst: all three datasources, no contact e-mail addresses",
                "role": "analyst",
                "allowed_datasources": ["operations", "supply", "sales"],
                "allowed_tables": ["operations.*", "supply.*", "sales.*"],
                "denied_columns": ["sales.customers.email", "supply.suppliers.contact_email"]
            },
            "supply_viewer": {
                "description": "Procurement: the supply datasource only",
                "role": "supply_viewer",
                "allowed_datasources": ["supply"],
                "allowed_tables": ["supply.*"],
                "denied_columns": ["supply.suppliers.contact_email"]
            },
            "plant_manager": {
                "description": "Plant management: operations, plus stock levels and purchase orders",
                "role": "plant_manager",
                "allowed_datasources": ["operations", "supply"],
                "allowed_tables": ["operations.*", "supply.inventory", "supply.purchase_orders", "supply.materials"]
            }
        }
    });
    pretty(&policy)
}

/// `questions.json`: example questions per datasource, and questions that need two.
pub(crate) fn questions_json() -> String {
    let questions = json!({
        "version": 1,
        "datasources": {
            "operations": [
                "How many machines are currently Offline in each factory?",
                "Which production line produced the most units in 2024?",
                "What is the scrap rate by product category per quarter?",
                "Which machines had the most unplanned downtime minutes last year?",
                "Average energy per unit produced by factory in 2023",
                "How many production runs were aborted on Night shifts?"
            ],
            "supply": [
                "Which suppliers deliver late most often?",
                "Total purchase order value per supplier country in 2024",
                "Which materials are below their reorder point at the Detroit plant (DET)?",
                "How many purchase orders are still open?",
                "What share of delivered quantity was rejected, by carrier?"
            ],
            "sales": [
                "Top 10 customers by revenue in 2024",
                "Monthly revenue by product category",
                "Which products have the highest return rate?",
                "Revenue by sales channel and customer segment",
                "How many orders were cancelled per month in 2024?"
            ]
        },
        "cross_source": [
            "Compare units produced with units sold per product SKU in 2024",
            "For each factory code, compare purchase order spend with sales shipped from it",
            "Which products made at the Stuttgart plant (STR) had the most downtime and the most returns?",
            "Does unplanned downtime per factory track late supplier deliveries to that factory?"
        ]
    });
    pretty(&questions)
}

/// `schema_docs.json`: every datasource's domains and every table's and column's
/// description, by datasource (the configuration file holds only datasource
/// descriptions and table tags).
pub(crate) fn schema_docs_json(sources: &[Source<'_>]) -> String {
    let mut datasources = Map::new();
    for s in sources {
        datasources.insert(
            s.id.to_owned(),
            tables_doc(s.description, s.domains, s.spec),
        );
    }
    pretty(&json!({ "version": 1, "datasources": datasources }))
}

fn tables_doc(description: &str, domains: &[&str], spec: &DatasetSpec) -> Value {
    let mut tables = Map::new();
    for t in &spec.tables {
        let mut columns = Map::new();
        for c in &t.columns {
            columns.insert(c.name.clone(), Value::String(c.description.clone()));
        }
        let fks: Vec<String> = t
            .foreign_keys
            .iter()
            .map(|f| {
                format!(
                    "{} -> {}.{}",
                    f.column, f.references_table, f.references_column
                )
            })
            .collect();
        tables.insert(
            t.name.clone(),
            json!({
                "description": t.description,
                "row_count": t.rows.len(),
                "columns": columns,
                "foreign_keys": fks,
            }),
        );
    }
    json!({ "description": description, "domains": domains, "tables": tables })
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

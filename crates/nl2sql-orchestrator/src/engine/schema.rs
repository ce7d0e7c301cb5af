//! The schema a scan plans with: the retriever's request for its sub-query, and the
//! snapshot narrowed to what the caller may read.

use nl2sql_index::SchemaRequest;
use nl2sql_plan::{FilterValue, SubQuery};
use nl2sql_state::{AccessPolicy, SchemaSnapshot};
use serde_json::Value;

/// The schema retriever's request for a sub-query.
pub(super) fn schema_request(sq: &SubQuery) -> SchemaRequest {
    SchemaRequest {
        datasource_id: sq.datasource_id.clone(),
        schema_version: sq.schema_version.clone(),
        intent: sq.intent.clone(),
        filters: sq
            .filters
            .iter()
            .map(|f| (f.attribute.clone(), filter_values(&f.value)))
            .collect(),
        group_by: sq.group_by.iter().map(|g| g.attribute.clone()).collect(),
        expected_schema: sq.expected_schema.iter().map(|c| c.name.clone()).collect(),
        metrics: sq.metrics.iter().map(|m| m.name.clone()).collect(),
    }
}

fn filter_values(v: &FilterValue) -> Vec<String> {
    match serde_json::to_value(v) {
        Ok(Value::Array(items)) => items.iter().map(value_text).collect(),
        Ok(other) => vec![value_text(&other)],
        Err(_) => Vec::new(),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Removes the tables `access` does not allow and the columns it denies from `snapshot`
/// (contract and metadata).
pub(super) fn hide_denied(
    snapshot: &mut SchemaSnapshot,
    access: &AccessPolicy,
    datasource_id: &str,
) {
    snapshot.contract.tables.retain(|_, t| {
        access.table_allowed(
            datasource_id,
            Some(&t.table.schema_name),
            &t.table.table_name,
        )
    });
    for table in snapshot.contract.tables.values_mut() {
        let name = table.table.table_name.clone();
        table
            .columns
            .retain(|column, _| !access.column_denied(datasource_id, &name, column));
    }
    if let Some(metadata) = snapshot.metadata.as_mut() {
        let contract = &snapshot.contract;
        metadata
            .tables
            .retain(|key, _| contract.tables.contains_key(key));
        for (key, table) in metadata.tables.iter_mut() {
            if let Some(kept) = contract.tables.get(key) {
                table
                    .columns
                    .retain(|column, _| kept.columns.contains_key(column));
            }
        }
    }
}

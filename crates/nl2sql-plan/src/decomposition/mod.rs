//! The decomposer contracts (spec: plan-model.md §3): the [`DecomposerResponse`] types,
//! parsing with JSON paths ([`parse_decomposition`]), deterministic normalisation with
//! content-hashed ids ([`normalize`]) and the word-level semantic-only rule
//! ([`semantic_violations`]).

mod normalize;
mod semantic;
mod types;

#[cfg(test)]
mod tests;

pub use normalize::{
    DatasourceResolution, Normalized, normalize, stable_op_id, stable_subquery_id,
};
pub use semantic::{SemanticViolation, attribute_violation, intent_violation, semantic_violations};
pub use types::{
    Aggregation, CombineGroup, CombineInput, CombineOperation, DecomposerResponse, Dtype,
    ExpectedColumn, FilterOperator, FilterSpec, FilterValue, GroupBySpec, JoinKeyPair, MetricSpec,
    OrderBySpec, PostCombineOp, PostOperation, Role, SortDirection, SubQuery, SubQueryKind,
    UnmappedReason, UnmappedSubQuery,
};

use crate::{MAX_DOCUMENT_BYTES, MAX_LIST_LEN};

/// The JSON Schema of a DecomposerResponse, for a model's structured-output mode
/// (plan-model.md §1 R5).
pub fn decomposition_json_schema() -> serde_json::Value {
    schemars::schema_for!(DecomposerResponse).to_value()
}

/// Why a DecomposerResponse document was rejected, with the JSON path of the offending
/// element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecompositionParseError {
    /// JSON path such as `$.sub_queries[1].filters[0].operator`.
    pub path: String,
    /// A short reason.
    pub reason: String,
}

impl std::fmt::Display for DecompositionParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for DecompositionParseError {}

/// Parses a DecomposerResponse: JSON, types, required keys, enums, unknown keys (rejected
/// at every level except inside `metadata`) and the size limits of plan-model.md §1 R4.
pub fn parse_decomposition(json: &str) -> Result<DecomposerResponse, DecompositionParseError> {
    if json.len() > MAX_DOCUMENT_BYTES {
        return Err(DecompositionParseError {
            path: "$".to_owned(),
            reason: format!(
                "document is {} bytes, more than {MAX_DOCUMENT_BYTES}",
                json.len()
            ),
        });
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let response: DecomposerResponse = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." || path.is_empty() {
            "$".to_owned()
        } else {
            format!("$.{path}")
        };
        DecompositionParseError {
            path,
            reason: e.into_inner().to_string(),
        }
    })?;
    de.end().map_err(|e| DecompositionParseError {
        path: "$".to_owned(),
        reason: e.to_string(),
    })?;
    check_list_lengths(&response)?;
    Ok(response)
}

fn check_list_lengths(r: &DecomposerResponse) -> Result<(), DecompositionParseError> {
    let mut lists: Vec<(String, usize)> = vec![
        ("$.sub_queries".to_owned(), r.sub_queries.len()),
        ("$.combine_groups".to_owned(), r.combine_groups.len()),
        ("$.post_combine_ops".to_owned(), r.post_combine_ops.len()),
        (
            "$.unmapped_subqueries".to_owned(),
            r.unmapped_subqueries.len(),
        ),
    ];
    for (i, sq) in r.sub_queries.iter().enumerate() {
        let at = format!("$.sub_queries[{i}]");
        lists.push((format!("{at}.metrics"), sq.metrics.len()));
        lists.push((format!("{at}.filters"), sq.filters.len()));
        lists.push((format!("{at}.group_by"), sq.group_by.len()));
        lists.push((format!("{at}.expected_schema"), sq.expected_schema.len()));
        for (j, f) in sq.filters.iter().enumerate() {
            if let Some(n) = f.value.list_len() {
                lists.push((format!("{at}.filters[{j}].value"), n));
            }
        }
    }
    for (i, g) in r.combine_groups.iter().enumerate() {
        let at = format!("$.combine_groups[{i}]");
        lists.push((format!("{at}.inputs"), g.inputs.len()));
        lists.push((format!("{at}.join_keys"), g.join_keys.len()));
    }
    for (i, op) in r.post_combine_ops.iter().enumerate() {
        let at = format!("$.post_combine_ops[{i}]");
        lists.push((format!("{at}.filters"), op.filters.len()));
        lists.push((format!("{at}.metrics"), op.metrics.len()));
        lists.push((format!("{at}.group_by"), op.group_by.len()));
        lists.push((format!("{at}.order_by"), op.order_by.len()));
        lists.push((format!("{at}.expected_schema"), op.expected_schema.len()));
        for (j, f) in op.filters.iter().enumerate() {
            if let Some(n) = f.value.list_len() {
                lists.push((format!("{at}.filters[{j}].value"), n));
            }
        }
    }
    match lists.into_iter().find(|(_, n)| *n > MAX_LIST_LEN) {
        Some((path, n)) => Err(DecompositionParseError {
            path,
            reason: format!("list has {n} items, more than {MAX_LIST_LEN}"),
        }),
        None => Ok(()),
    }
}

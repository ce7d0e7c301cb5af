//! Level 3 — data flow (validators.md §1.3): the DAG's schema derivation reports every key a
//! node reads that its inputs do not provide; this module turns those issues into findings
//! that point back into the decomposer's document (its ids and JSON paths).

use std::collections::BTreeMap;

use nl2sql_plan::{DecomposerResponse, FlowIssue, Normalized};

use super::DecompositionFinding;

const FLOW_HINT: &str = "Make every attribute used after combining appear in the expected_schema of the sub-queries that produce it.";

/// Findings for `issues`, each with the model's id and the JSON path of the attribute.
pub(super) fn findings(
    original: &DecomposerResponse,
    normalized: &Normalized,
    issues: &[FlowIssue],
) -> Vec<DecompositionFinding> {
    // Stable node id → (model id, JSON path of the element); first model element wins.
    let mut origin: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (i, sq) in original.sub_queries.iter().enumerate() {
        if let Some(stable) = normalized.subquery_ids.get(&sq.id) {
            origin
                .entry(stable.clone())
                .or_insert_with(|| (sq.id.clone(), format!("$.sub_queries[{i}]")));
        }
    }
    for (i, g) in original.combine_groups.iter().enumerate() {
        origin
            .entry(format!("combine_{}", g.group_id))
            .or_insert_with(|| (g.group_id.clone(), format!("$.combine_groups[{i}]")));
    }
    for (i, op) in original.post_combine_ops.iter().enumerate() {
        if let Some(stable) = normalized.op_ids.get(&op.op_id) {
            origin
                .entry(stable.clone())
                .or_insert_with(|| (op.op_id.clone(), format!("$.post_combine_ops[{i}]")));
        }
    }
    issues
        .iter()
        .map(|issue| {
            let mut message = issue.message.clone();
            let mut finding = DecompositionFinding::new(String::new(), FLOW_HINT);
            if let Some((model_id, path)) = origin.get(&issue.node_id) {
                if *model_id != issue.node_id && !issue.node_id.ends_with(model_id.as_str()) {
                    message.push_str(&format!(" (your id '{model_id}')"));
                }
                let path = if issue.attribute == "output_schema" {
                    path.clone()
                } else {
                    format!("{path}.{}", issue.attribute)
                };
                finding = finding.path(path);
            }
            finding.message = message;
            finding = finding.node(&issue.node_id);
            if let Some(key) = &issue.key {
                finding = finding.key(key);
            }
            finding
        })
        .collect()
}

//! Generated decompositions for the DAG planning bench: `n` sub-queries in combine groups of
//! every kind (compare, join, union, standalone), each group with a chain of post ops, valid
//! at every level of progressive validation.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_plan::DatasourceResolution;
use nl2sql_validate::{DecompositionReport, validate_decomposition};
use serde_json::{Value, json};

/// The datasources the generated sub-queries read, in turn.
pub const DAG_DATASOURCES: [&str; 4] = ["sales", "archive", "warehouse", "crm"];

/// The kind of a generated combine group, with the post ops that follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// Two scans (base, compare) joined on `region`; then filter, sort and limit.
    Compare,
    /// Two scans (left, right) joined on `region`; then project and sort.
    Join,
    /// Two or three scans stacked; then aggregate, sort and limit.
    Union,
    /// One scan passed through; then sort and limit.
    Standalone,
}

impl GroupKind {
    /// The post ops generated after a group of this kind.
    pub fn post_ops(self) -> usize {
        match self {
            GroupKind::Compare | GroupKind::Union => 3,
            GroupKind::Join | GroupKind::Standalone => 2,
        }
    }
}

/// How `n` sub-queries are grouped: compare (2), join (2) and union (3, or 2 when only two
/// are left) in turn, and a standalone group for a last single sub-query.
pub fn group_layout(n: usize) -> Vec<(GroupKind, usize)> {
    let mut groups = Vec::new();
    let mut left = n;
    while left > 0 {
        let group = if left == 1 {
            (GroupKind::Standalone, 1)
        } else {
            match groups.len() % 3 {
                0 => (GroupKind::Compare, 2),
                1 => (GroupKind::Join, 2),
                _ => (GroupKind::Union, left.min(3)),
            }
        };
        left -= group.1;
        groups.push(group);
    }
    groups
}

/// The number of DAG nodes the decomposition of `n` sub-queries plans to: one scan per
/// sub-query, one combine per group and one node per post op.
pub fn expected_node_count(n: usize) -> usize {
    let layout = group_layout(n);
    n + layout.len() + layout.iter().map(|(k, _)| k.post_ops()).sum::<usize>()
}

/// A DecomposerResponse document with `n` sub-queries, laid out by [`group_layout`].
///
/// Every sub-query reads revenue per region (`region` string, `revenue` float) for its own
/// period, so no two are merged by normalisation. `n` is at most 256 (the list limit of
/// the DecomposerResponse); larger documents do not parse.
pub fn decomposition(n: usize) -> Value {
    let sub_queries: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "id": format!("q{i}"),
                "datasource_id": DAG_DATASOURCES[i % DAG_DATASOURCES.len()],
                "intent": format!("revenue per region in period {i}"),
                "metrics": [{"name": "revenue", "aggregation": "sum"}],
                "filters": [{"attribute": "period", "operator": "=", "value": i}],
                "group_by": [{"attribute": "region"}],
                "expected_schema": [
                    {"name": "region", "dtype": "string"},
                    {"name": "revenue", "dtype": "float"}
                ]
            })
        })
        .collect();
    let mut combine_groups = Vec::new();
    let mut post_combine_ops = Vec::new();
    let mut next = 0;
    for (k, (kind, size)) in group_layout(n).into_iter().enumerate() {
        let group_id = format!("g{k}");
        let ids: Vec<String> = (next..next + size).map(|i| format!("q{i}")).collect();
        next += size;
        let region = json!([{"left": "region", "right": "region"}]);
        let (operation, inputs, join_keys) = match kind {
            GroupKind::Compare => (
                "compare",
                json!([{"subquery_id": ids[0], "role": "base"},
                       {"subquery_id": ids[1], "role": "compare"}]),
                region,
            ),
            GroupKind::Join => (
                "join",
                json!([{"subquery_id": ids[0], "role": "left"},
                       {"subquery_id": ids[1], "role": "right"}]),
                region,
            ),
            GroupKind::Union | GroupKind::Standalone => (
                if kind == GroupKind::Union {
                    "union"
                } else {
                    "standalone"
                },
                ids.iter().map(|id| json!({"subquery_id": id})).collect(),
                json!([]),
            ),
        };
        combine_groups.push(json!({
            "group_id": group_id,
            "operation": operation,
            "inputs": inputs,
            "join_keys": join_keys
        }));
        let ops = match kind {
            GroupKind::Compare => vec![
                json!({"operation": "filter",
                       "filters": [{"attribute": "revenue_diff", "operator": ">", "value": 0}]}),
                json!({"operation": "sort",
                       "order_by": [{"attribute": "revenue_diff", "direction": "desc"}]}),
                json!({"operation": "limit", "limit": 5}),
            ],
            GroupKind::Join => vec![
                json!({"operation": "project",
                       "expected_schema": [{"name": "region"}, {"name": "revenue"}]}),
                json!({"operation": "sort",
                       "order_by": [{"attribute": "revenue", "direction": "desc"}]}),
            ],
            GroupKind::Union => vec![
                json!({"operation": "aggregate",
                       "group_by": [{"attribute": "region"}],
                       "metrics": [{"name": "revenue", "aggregation": "sum"}]}),
                json!({"operation": "sort", "order_by": [{"attribute": "region"}]}),
                json!({"operation": "limit", "limit": 10}),
            ],
            GroupKind::Standalone => vec![
                json!({"operation": "sort",
                       "order_by": [{"attribute": "revenue", "direction": "desc"}]}),
                json!({"operation": "limit", "limit": 3}),
            ],
        };
        for (j, mut op) in ops.into_iter().enumerate() {
            if let Some(fields) = op.as_object_mut() {
                fields.insert("op_id".to_owned(), json!(format!("{group_id}_op{j}")));
                fields.insert("target_group_id".to_owned(), json!(group_id));
            }
            post_combine_ops.push(op);
        }
    }
    json!({
        "sub_queries": sub_queries,
        "combine_groups": combine_groups,
        "post_combine_ops": post_combine_ops
    })
}

/// [`decomposition`] as the JSON text a decomposer returns.
pub fn decomposition_json(n: usize) -> String {
    decomposition(n).to_string()
}

/// What the datasource resolver knows in a request: the [`DAG_DATASOURCES`], all resolved
/// and allowed, each with a schema version.
pub fn dag_resolution() -> DatasourceResolution {
    let ids: BTreeSet<String> = DAG_DATASOURCES.iter().map(|d| (*d).to_owned()).collect();
    DatasourceResolution {
        resolved: Some(ids.clone()),
        allowed: Some(ids),
        unsupported: BTreeSet::new(),
        schema_versions: DAG_DATASOURCES
            .iter()
            .map(|d| ((*d).to_owned(), format!("{d}-v1")))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// What a request does with the decomposer's answer: progressive validation (parse, static
/// checks, normalisation, planning, data flow), which builds the `ExecutionDag`.
pub fn plan_dag(json: &str, resolution: &DatasourceResolution) -> DecompositionReport {
    validate_decomposition(json, resolution)
}

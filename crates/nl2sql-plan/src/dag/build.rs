//! The global planner (spec: execution-dag.md §2): a normalised `DecomposerResponse` →
//! an `ExecutionDag`.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_state::{ErrorCode, PipelineError, Severity};
use serde_json::json;

use crate::decomposition::{DecomposerResponse, PostCombineOp, PostOperation};

use super::schema::{self, FlowIssue, Input, Spec};
use super::{DAG_VERSION, ExecutionDag, LogicalEdge, LogicalNode, NodeKind, RelationSchema};

/// A planned DAG with the data-flow issues found while deriving its schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedDag {
    /// The DAG (schemas best-effort where there are issues).
    pub dag: ExecutionDag,
    /// Data-flow breaks (validators.md §1.3), in layer order; empty when the DAG is valid.
    pub flow_issues: Vec<FlowIssue>,
}

impl ExecutionDag {
    /// Plans the DAG of a normalised response. Structural impossibilities (unknown target
    /// group, unknown edge endpoint, duplicate node id, cycle) are a `PLANNER_FAILED`
    /// error; data-flow breaks are returned as [`FlowIssue`]s beside the DAG.
    pub fn plan(response: &DecomposerResponse) -> Result<PlannedDag, PipelineError> {
        let mut nodes: Vec<(LogicalNode, Spec<'_>)> = Vec::new();
        let mut edges = Vec::new();
        for sq in &response.sub_queries {
            let attributes = json!({
                "datasource_id": sq.datasource_id,
                "intent": sq.intent,
                "metrics": sq.metrics,
                "filters": sq.filters,
                "group_by": sq.group_by,
                "expected_schema": sq.expected_schema,
            });
            nodes.push((
                node(&sq.id, NodeKind::Scan, Vec::new(), attributes),
                Spec::Scan(sq),
            ));
        }
        let mut group_nodes = BTreeMap::new();
        for g in &response.combine_groups {
            let id = format!("combine_{}", g.group_id);
            for input in &g.inputs {
                edges.push(edge(&input.subquery_id, &id, input.role));
            }
            let attributes = json!({
                "operation": g.operation,
                "group_id": g.group_id,
                "inputs": g.inputs,
                "join_keys": g.join_keys,
            });
            let inputs = g.inputs.iter().map(|i| i.subquery_id.clone()).collect();
            group_nodes.insert(g.group_id.as_str(), id.clone());
            nodes.push((
                node(&id, NodeKind::Combine, inputs, attributes),
                Spec::Combine(g),
            ));
        }
        let mut chains: BTreeMap<&str, Vec<&PostCombineOp>> = BTreeMap::new();
        for op in &response.post_combine_ops {
            chains
                .entry(op.target_group_id.as_str())
                .or_default()
                .push(op);
        }
        for (group_id, mut ops) in chains {
            let Some(combine_id) = group_nodes.get(group_id) else {
                return Err(failed(
                    format!(
                        "unknown combine group '{group_id}' targeted by post op '{}'",
                        ops.first().map(|o| o.op_id.as_str()).unwrap_or_default()
                    ),
                    json!({"group_id": group_id}),
                ));
            };
            ops.sort_by(|a, b| (a.seq, &a.op_id).cmp(&(b.seq, &b.op_id)));
            let mut previous = combine_id.clone();
            for op in ops {
                edges.push(edge(&previous, &op.op_id, None));
                let attributes = json!({
                    "target_group_id": op.target_group_id,
                    "operation": op.operation,
                    "filters": op.filters,
                    "metrics": op.metrics,
                    "group_by": op.group_by,
                    "order_by": op.order_by,
                    "limit": op.limit,
                    "expected_schema": op.expected_schema,
                    "metadata": op.metadata,
                    "seq": op.seq,
                });
                let kind = match op.operation {
                    PostOperation::Filter => NodeKind::PostFilter,
                    PostOperation::Aggregate => NodeKind::PostAggregate,
                    PostOperation::Project => NodeKind::PostProject,
                    PostOperation::Sort => NodeKind::PostSort,
                    PostOperation::Limit => NodeKind::PostLimit,
                };
                nodes.push((
                    node(&op.op_id, kind, vec![previous], attributes),
                    Spec::Post(op),
                ));
                previous = op.op_id.clone();
            }
        }

        // Duplicate ids and edge endpoints.
        let mut ids = BTreeSet::new();
        for (n, _) in &nodes {
            if !ids.insert(n.node_id.as_str()) {
                return Err(failed(
                    format!("duplicate node id '{}'", n.node_id),
                    json!({"node_id": n.node_id}),
                ));
            }
        }
        for e in &edges {
            for end in [&e.from_id, &e.to_id] {
                if !ids.contains(end.as_str()) {
                    return Err(failed(
                        format!("edge '{}' has the unknown endpoint '{end}'", e.edge_id),
                        json!({"edge_id": e.edge_id, "node_id": end}),
                    ));
                }
            }
        }

        nodes.sort_by(|a, b| a.0.node_id.cmp(&b.0.node_id));
        edges.sort_by(|a, b| {
            let key = |e: &LogicalEdge| {
                (
                    e.from_id.clone(),
                    e.to_id.clone(),
                    e.role.map(|r| r.as_str()).unwrap_or(""),
                )
            };
            key(a).cmp(&key(b))
        });
        let node_ids: Vec<String> = nodes.iter().map(|(n, _)| n.node_id.clone()).collect();
        let layers = super::layered_topological_sort(&node_ids, &edges)?;

        // Output schemas by data flow, layer by layer.
        let position: BTreeMap<String, usize> = node_ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect();
        let mut schemas: BTreeMap<String, RelationSchema> = BTreeMap::new();
        let mut flow_issues = Vec::new();
        for id in layers.iter().flatten() {
            let Some(&at) = position.get(id) else {
                continue;
            };
            let (n, spec) = &nodes[at];
            let inputs: Vec<Input<'_>> = n
                .inputs
                .iter()
                .filter_map(|input_id| {
                    let schema = schemas.get(input_id)?;
                    let left = edges
                        .iter()
                        .find(|e| &e.from_id == input_id && e.to_id == n.node_id)
                        .and_then(|e| e.role)
                        .map(|r| r.is_left());
                    Some(Input {
                        id: input_id,
                        schema,
                        left,
                    })
                })
                .collect();
            let derived = schema::derive(&n.node_id, *spec, &inputs, &mut flow_issues);
            schemas.insert(n.node_id.clone(), derived);
        }
        let nodes = nodes
            .into_iter()
            .map(|(mut n, _)| {
                n.output_schema = schemas.remove(&n.node_id).unwrap_or_default();
                n
            })
            .collect();
        let mut dag = ExecutionDag {
            dag_id: None,
            content_hash: None,
            nodes,
            edges,
            layers,
            version: DAG_VERSION.to_owned(),
        };
        dag.seal();
        Ok(PlannedDag { dag, flow_issues })
    }
}

fn node(
    id: &str,
    kind: NodeKind,
    inputs: Vec<String>,
    attributes: serde_json::Value,
) -> LogicalNode {
    LogicalNode {
        node_id: id.to_owned(),
        kind,
        inputs,
        output_schema: RelationSchema::default(),
        attributes,
    }
}

fn edge(from: &str, to: &str, role: Option<crate::decomposition::Role>) -> LogicalEdge {
    LogicalEdge {
        edge_id: format!("edge_{from}_{to}"),
        from_id: from.to_owned(),
        to_id: to.to_owned(),
        role,
    }
}

fn failed(message: String, details: serde_json::Value) -> PipelineError {
    PipelineError::new(
        "global_planner",
        ErrorCode::PlannerFailed,
        Severity::Error,
        format!("Planning failed: {message}"),
    )
    .with_details(details)
}

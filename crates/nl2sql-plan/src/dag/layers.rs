//! Layered topological sort (spec: execution-dag.md §5) over a petgraph `DiGraph`. Petgraph
//! indices never leave this module: layers are ordered by node id (byte order).

use std::collections::BTreeMap;

use nl2sql_state::{ErrorCode, PipelineError, Severity};
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};

use super::LogicalEdge;

/// Layers of `node_ids`: layer 0 holds the nodes without inputs, each next layer the nodes
/// whose inputs are all in earlier layers; ids sorted within a layer. Edges with an unknown
/// endpoint are ignored. A cycle is a `PLANNER_FAILED` error naming the nodes on it.
pub fn layered_topological_sort(
    node_ids: &[String],
    edges: &[LogicalEdge],
) -> Result<Vec<Vec<String>>, PipelineError> {
    let mut graph: DiGraph<&str, ()> = DiGraph::new();
    let mut index: BTreeMap<&str, NodeIndex> = BTreeMap::new();
    for id in node_ids {
        index
            .entry(id.as_str())
            .or_insert_with(|| graph.add_node(id.as_str()));
    }
    for e in edges {
        if let (Some(&a), Some(&b)) = (index.get(e.from_id.as_str()), index.get(e.to_id.as_str())) {
            graph.add_edge(a, b, ());
        }
    }
    let mut indegree: BTreeMap<NodeIndex, usize> = graph
        .node_indices()
        .map(|n| (n, graph.neighbors_directed(n, Direction::Incoming).count()))
        .collect();
    let mut ready: Vec<NodeIndex> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(n, _)| *n)
        .collect();
    sort_by_id(&graph, &mut ready);
    let mut layers = Vec::new();
    let mut placed = 0;
    while !ready.is_empty() {
        placed += ready.len();
        let mut next = Vec::new();
        for &n in &ready {
            let mut dependents: Vec<NodeIndex> =
                graph.neighbors_directed(n, Direction::Outgoing).collect();
            sort_by_id(&graph, &mut dependents);
            for c in dependents {
                if let Some(d) = indegree.get_mut(&c) {
                    *d -= 1;
                    if *d == 0 {
                        next.push(c);
                    }
                }
            }
        }
        layers.push(ready.iter().map(|n| graph[*n].to_owned()).collect());
        sort_by_id(&graph, &mut next);
        next.dedup();
        ready = next;
    }
    if placed != graph.node_count() {
        let mut on_cycle: Vec<&str> = indegree
            .iter()
            .filter(|(_, d)| **d > 0)
            .map(|(n, _)| graph[*n])
            .collect();
        on_cycle.sort_unstable();
        return Err(PipelineError::new(
            "global_planner",
            ErrorCode::PlannerFailed,
            Severity::Error,
            format!(
                "ExecutionDAG contains a cycle through [{}]",
                on_cycle.join(", ")
            ),
        )
        .with_details(serde_json::json!({"cycle_nodes": on_cycle})));
    }
    Ok(layers)
}

fn sort_by_id(graph: &DiGraph<&str, ()>, nodes: &mut [NodeIndex]) {
    nodes.sort_by(|a, b| graph[*a].cmp(graph[*b]));
}

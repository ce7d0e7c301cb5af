//! The `ExecutionDag` and the global planner (spec: execution-dag.md): scan nodes per
//! sub-query, a combine node per group, post-op nodes chained per group in `seq` order
//! (GAP-19), edges with roles, output schemas derived by data flow (GAP-21), a layered
//! topological sort on petgraph, and a content hash over canonical JSON so the same
//! normalised response always yields the same DAG, byte for byte.
//!
//! The entry point is [`ExecutionDag::plan`]; renderings are [`ExecutionDag::to_json_pretty`],
//! [`ExecutionDag::to_dot`], [`ExecutionDag::to_mermaid`] and [`ExecutionDag::to_text`].

mod build;
mod layers;
mod render;
mod schema;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::decomposition::{Dtype, Role};

pub use build::PlannedDag;
pub use layers::layered_topological_sort;
pub use schema::FlowIssue;

/// The DAG format version.
pub const DAG_VERSION: &str = "v1";

/// One column of a relation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnSpec {
    /// Column name.
    pub name: String,
    /// Data type, when known.
    pub dtype: Option<Dtype>,
}

/// The columns a node produces, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelationSchema {
    /// The columns.
    pub columns: Vec<ColumnSpec>,
}

impl RelationSchema {
    /// The column called `name`, if any.
    pub fn column(&self, name: &str) -> Option<&ColumnSpec> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column names in order.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

/// What a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// Runs one sub-query against its datasource.
    Scan,
    /// Combines sub-query results.
    Combine,
    /// Keeps matching rows.
    PostFilter,
    /// Groups and aggregates.
    PostAggregate,
    /// Keeps named columns.
    PostProject,
    /// Sorts.
    PostSort,
    /// Keeps the first rows.
    PostLimit,
}

impl NodeKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Scan => "scan",
            NodeKind::Combine => "combine",
            NodeKind::PostFilter => "post_filter",
            NodeKind::PostAggregate => "post_aggregate",
            NodeKind::PostProject => "post_project",
            NodeKind::PostSort => "post_sort",
            NodeKind::PostLimit => "post_limit",
        }
    }
}

/// One node of the DAG.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogicalNode {
    /// Unique in the DAG: `sq_…`, `combine_<group>` or `op_…`.
    pub node_id: String,
    /// What it does.
    pub kind: NodeKind,
    /// Upstream node ids, in input order.
    pub inputs: Vec<String>,
    /// The columns it produces.
    pub output_schema: RelationSchema,
    /// Kind-specific attributes (execution-dag.md §1.2), every key present.
    pub attributes: serde_json::Value,
}

/// A data-flow edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogicalEdge {
    /// `edge_<from>_<to>`.
    pub edge_id: String,
    /// Upstream node.
    pub from_id: String,
    /// Downstream node.
    pub to_id: String,
    /// The combine input role; null for post edges.
    pub role: Option<Role>,
}

/// A deterministic compute plan: scans, combines and post ops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionDag {
    /// `"dag_"` + the first 12 hex of `content_hash`.
    pub dag_id: Option<String>,
    /// SHA-256 of the canonical JSON of nodes, edges and version.
    pub content_hash: Option<String>,
    /// Sorted by `node_id`.
    pub nodes: Vec<LogicalNode>,
    /// Sorted by (`from_id`, `to_id`, `role`).
    pub edges: Vec<LogicalEdge>,
    /// Layered topological order.
    pub layers: Vec<Vec<String>>,
    /// `"v1"`.
    pub version: String,
}

impl ExecutionDag {
    /// The DAG of no sub-queries: no nodes, no layers.
    pub fn empty() -> Self {
        let mut dag = ExecutionDag {
            dag_id: None,
            content_hash: None,
            nodes: Vec::new(),
            edges: Vec::new(),
            layers: Vec::new(),
            version: DAG_VERSION.to_owned(),
        };
        dag.seal();
        dag
    }

    /// The node called `id`, if any.
    pub fn node(&self, id: &str) -> Option<&LogicalNode> {
        self.nodes.iter().find(|n| n.node_id == id)
    }

    /// Nodes that feed no other node: the results delivered.
    pub fn terminal_nodes(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| !self.edges.iter().any(|e| e.from_id == n.node_id))
            .map(|n| n.node_id.as_str())
            .collect()
    }

    /// The canonical JSON that is hashed: `{"edges","nodes","version"}`.
    pub fn hash_payload(&self) -> String {
        let payload = serde_json::json!({
            "nodes": self.nodes,
            "edges": self.edges,
            "version": self.version,
        });
        nl2sql_state::canonical_json(&payload)
    }

    /// Sets `content_hash` and `dag_id` from the content.
    fn seal(&mut self) {
        let hash = nl2sql_state::sha256_hex(self.hash_payload().as_bytes());
        self.dag_id = Some(format!("dag_{}", &hash[..12]));
        self.content_hash = Some(hash);
    }
}

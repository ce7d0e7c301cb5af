//! Renderings of an `ExecutionDag` (spec: execution-dag.md §6): pretty JSON, Graphviz DOT,
//! Mermaid, and an indented text form for snapshots. Vertices come in node order and arrows
//! in edge order, so every rendering is stable.

use std::fmt::Write as _;

use super::{ExecutionDag, LogicalNode, NodeKind};

impl ExecutionDag {
    /// The DAG as pretty-printed JSON (the object of execution-dag.md §1.4).
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// The DAG as a Graphviz `digraph`.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph execution_dag {\n  rankdir=TB;\n  node [shape=box];\n");
        for n in &self.nodes {
            let _ = writeln!(
                out,
                "  {} [label={}];",
                dot_quote(&n.node_id),
                dot_quote(&label_lines(n).join("\n"))
            );
        }
        for e in &self.edges {
            let label = e
                .role
                .map(|r| format!(" [label={}]", dot_quote(r.as_str())))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {} -> {}{label};",
                dot_quote(&e.from_id),
                dot_quote(&e.to_id)
            );
        }
        out.push_str("}\n");
        out
    }

    /// The DAG as a Mermaid flowchart; vertices are `n0`, `n1`… in node order.
    pub fn to_mermaid(&self) -> String {
        let mut out = String::from("flowchart TD\n");
        let alias = |id: &str| {
            self.nodes
                .iter()
                .position(|n| n.node_id == id)
                .map(|i| format!("n{i}"))
                .unwrap_or_else(|| "missing".to_owned())
        };
        for (i, n) in self.nodes.iter().enumerate() {
            let label: Vec<String> = label_lines(n).iter().map(|l| mermaid_escape(l)).collect();
            let _ = writeln!(out, "  n{i}[\"{}\"]", label.join("<br/>"));
        }
        for e in &self.edges {
            let (from, to) = (alias(&e.from_id), alias(&e.to_id));
            match e.role {
                Some(role) => {
                    let _ = writeln!(out, "  {from} -->|{}| {to}", role.as_str());
                }
                None => {
                    let _ = writeln!(out, "  {from} --> {to}");
                }
            }
        }
        out
    }

    /// The DAG as indented text, layer by layer, with each node's kind, inputs, columns and
    /// the first 12 hex of its content hash; then the dag id.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} ({})",
            self.dag_id.as_deref().unwrap_or("dag_?"),
            self.version
        );
        for (i, layer) in self.layers.iter().enumerate() {
            let _ = writeln!(out, "layer {i}:");
            for id in layer {
                let Some(n) = self.node(id) else { continue };
                let hash = nl2sql_state::sha256_hex(
                    nl2sql_state::canonical_json(&serde_json::to_value(n).unwrap_or_default())
                        .as_bytes(),
                );
                let columns: Vec<String> = n
                    .output_schema
                    .columns
                    .iter()
                    .map(|c| format!("{}:{}", c.name, c.dtype.map_or("?", |d| d.as_str())))
                    .collect();
                let _ = writeln!(
                    out,
                    "  {} {} #{}\n    inputs [{}]\n    columns [{}]",
                    n.node_id,
                    label_lines(n)[1..].join(" "),
                    &hash[..12],
                    n.inputs.join(", "),
                    columns.join(", ")
                );
            }
        }
        out
    }
}

/// `node_id`, kind, then the operation (combine, post) or the datasource (scan).
fn label_lines(n: &LogicalNode) -> Vec<String> {
    let mut lines = vec![n.node_id.clone(), n.kind.as_str().to_owned()];
    let extra = match n.kind {
        NodeKind::Scan => n.attributes.get("datasource_id"),
        _ => n.attributes.get("operation"),
    };
    if let Some(s) = extra.and_then(|v| v.as_str()) {
        lines.push(s.to_owned());
    }
    lines
}

fn dot_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn mermaid_escape(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' => "#quot;".to_owned(),
            '<' => "#lt;".to_owned(),
            '>' => "#gt;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

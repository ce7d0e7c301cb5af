//! Output-schema derivation by data flow (spec: execution-dag.md §3; the data-flow level of
//! validators.md §1.3): each node's columns from its inputs' columns, with an issue for
//! every attribute a node reads that its inputs do not provide.

use std::collections::BTreeSet;

use crate::decomposition::{
    Aggregation, CombineGroup, CombineOperation, Dtype, ExpectedColumn, PostCombineOp,
    PostOperation, SubQuery,
};

use super::{ColumnSpec, RelationSchema};

/// One data-flow break: a node reads a key its inputs do not provide, or its schemas are
/// inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowIssue {
    /// The node at fault.
    pub node_id: String,
    /// The attribute of the node involved (`join_keys`, `order_by`, `expected_schema`…).
    pub attribute: String,
    /// The key (column name) that is missing or inconsistent, when there is one.
    pub key: Option<String>,
    /// What is wrong, naming node, key and the columns available.
    pub message: String,
}

/// What a node is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spec<'a> {
    Scan(&'a SubQuery),
    Combine(&'a CombineGroup),
    Post(&'a PostCombineOp),
}

/// One input of a node: its id, schema and combine role.
pub(crate) struct Input<'a> {
    pub(crate) id: &'a str,
    pub(crate) schema: &'a RelationSchema,
    pub(crate) left: Option<bool>,
}

/// The node's output schema and the issues found deriving it.
pub(crate) fn derive(
    node_id: &str,
    spec: Spec<'_>,
    inputs: &[Input<'_>],
    issues: &mut Vec<FlowIssue>,
) -> RelationSchema {
    let mut cx = Cx {
        node_id,
        issues,
        what: match spec {
            Spec::Scan(_) => format!("scan '{node_id}'"),
            Spec::Combine(g) => {
                format!("combine group '{}' ({})", g.group_id, g.operation.as_str())
            }
            Spec::Post(op) => format!("post op '{node_id}' ({})", op.operation.as_str()),
        },
    };
    let schema = match spec {
        Spec::Scan(sq) => {
            if sq.expected_schema.is_empty() {
                cx.issue(
                    "expected_schema",
                    None,
                    "has an empty expected_schema".to_owned(),
                );
            }
            to_schema(&sq.expected_schema)
        }
        Spec::Combine(g) => combine(&mut cx, g, inputs),
        Spec::Post(op) => post(&mut cx, op, inputs.first().map(|i| i.schema)),
    };
    let mut seen = BTreeSet::new();
    for c in &schema.columns {
        if !seen.insert(c.name.as_str()) {
            cx.issue(
                "output_schema",
                Some(&c.name),
                format!("produces the column '{}' twice", c.name),
            );
        }
    }
    schema
}

struct Cx<'a> {
    node_id: &'a str,
    issues: &'a mut Vec<FlowIssue>,
    what: String,
}

impl Cx<'_> {
    fn issue(&mut self, attribute: &str, key: Option<&str>, message: String) {
        self.issues.push(FlowIssue {
            node_id: self.node_id.to_owned(),
            attribute: attribute.to_owned(),
            key: key.map(str::to_owned),
            message: format!("{} {message}", self.what),
        });
    }

    /// Records an issue when `key` is not a column of `schema`.
    fn require(
        &mut self,
        attribute: &str,
        verb: &str,
        key: &str,
        schema: &RelationSchema,
        from: &str,
    ) {
        if schema.column(key).is_none() {
            self.issue(
                attribute,
                Some(key),
                format!(
                    "{verb} '{key}' but {from} provides [{}]",
                    schema.names().join(", ")
                ),
            );
        }
    }
}

fn to_schema(cols: &[ExpectedColumn]) -> RelationSchema {
    RelationSchema {
        columns: cols
            .iter()
            .map(|c| ColumnSpec {
                name: c.name.clone(),
                dtype: c.dtype,
            })
            .collect(),
    }
}

fn combine(cx: &mut Cx<'_>, g: &CombineGroup, inputs: &[Input<'_>]) -> RelationSchema {
    match g.operation {
        CombineOperation::Standalone => {
            if inputs.len() != 1 {
                cx.issue(
                    "inputs",
                    None,
                    format!("has {} inputs, not exactly 1", inputs.len()),
                );
            }
            inputs.first().map(|i| i.schema.clone()).unwrap_or_default()
        }
        CombineOperation::Union => union(cx, inputs),
        CombineOperation::Join | CombineOperation::Compare => {
            let (left, right) = sides(inputs);
            let (Some(left), Some(right)) = (left, right) else {
                cx.issue(
                    "inputs",
                    None,
                    "needs one left-side and one right-side input".to_owned(),
                );
                return inputs.first().map(|i| i.schema.clone()).unwrap_or_default();
            };
            for k in &g.join_keys {
                let from = format!("its left input '{}'", left.id);
                cx.require(
                    "join_keys",
                    "joins on left key",
                    &k.left,
                    left.schema,
                    &from,
                );
                let from = format!("its right input '{}'", right.id);
                cx.require(
                    "join_keys",
                    "joins on right key",
                    &k.right,
                    right.schema,
                    &from,
                );
            }
            if g.operation == CombineOperation::Join {
                join_schema(g, left.schema, right.schema)
            } else {
                compare_schema(g, left.schema, right.schema)
            }
        }
    }
}

fn sides<'a, 'b>(inputs: &'b [Input<'a>]) -> (Option<&'b Input<'a>>, Option<&'b Input<'a>>) {
    let by_role = |want_left: bool| inputs.iter().find(|i| i.left == Some(want_left));
    match (by_role(true), by_role(false)) {
        (Some(l), Some(r)) => (Some(l), Some(r)),
        _ if inputs.len() == 2 && inputs.iter().all(|i| i.left.is_none()) => {
            (inputs.first(), inputs.get(1))
        }
        (l, r) => (l, r),
    }
}

fn union(cx: &mut Cx<'_>, inputs: &[Input<'_>]) -> RelationSchema {
    let Some(first) = inputs.first() else {
        cx.issue("inputs", None, "has no inputs".to_owned());
        return RelationSchema::default();
    };
    let names: BTreeSet<&str> = first.schema.names().into_iter().collect();
    for other in &inputs[1..] {
        let other_names: BTreeSet<&str> = other.schema.names().into_iter().collect();
        for missing in names.symmetric_difference(&other_names) {
            cx.issue(
                "inputs",
                Some(missing),
                format!(
                    "unions '{}' [{}] with '{}' [{}]: column '{missing}' is not in both",
                    first.id,
                    first.schema.names().join(", "),
                    other.id,
                    other.schema.names().join(", ")
                ),
            );
        }
        for c in &first.schema.columns {
            if let Some(o) = other.schema.column(&c.name)
                && let (Some(a), Some(b)) = (c.dtype, o.dtype)
                && a != b
            {
                cx.issue(
                    "inputs",
                    Some(&c.name),
                    format!(
                        "unions column '{}' as {} from '{}' and as {} from '{}'",
                        c.name,
                        a.as_str(),
                        first.id,
                        b.as_str(),
                        other.id
                    ),
                );
            }
        }
    }
    first.schema.clone()
}

fn push_suffixed(out: &mut Vec<ColumnSpec>, c: &ColumnSpec) {
    let name = if out.iter().any(|o| o.name == c.name) {
        format!("{}_right", c.name)
    } else {
        c.name.clone()
    };
    out.push(ColumnSpec {
        name,
        dtype: c.dtype,
    });
}

fn join_schema(g: &CombineGroup, left: &RelationSchema, right: &RelationSchema) -> RelationSchema {
    let mut out = left.columns.clone();
    for c in &right.columns {
        if !g.join_keys.iter().any(|k| k.right == c.name) {
            push_suffixed(&mut out, c);
        }
    }
    RelationSchema { columns: out }
}

fn compare_schema(
    g: &CombineGroup,
    left: &RelationSchema,
    right: &RelationSchema,
) -> RelationSchema {
    let mut out: Vec<ColumnSpec> = g
        .join_keys
        .iter()
        .filter_map(|k| left.column(&k.left).cloned())
        .collect();
    let left_rest: Vec<&ColumnSpec> = left
        .columns
        .iter()
        .filter(|c| !g.join_keys.iter().any(|k| k.left == c.name))
        .collect();
    let right_rest: Vec<&ColumnSpec> = right
        .columns
        .iter()
        .filter(|c| !g.join_keys.iter().any(|k| k.right == c.name))
        .collect();
    out.extend(left_rest.iter().map(|c| (*c).clone()));
    for c in &right_rest {
        push_suffixed(&mut out, c);
    }
    for l in &left_rest {
        if let Some(r) = right_rest.iter().find(|r| r.name == l.name)
            && let (Some(a), Some(b)) = (l.dtype, r.dtype)
            && a.is_numeric()
            && b.is_numeric()
        {
            let dtype = if a == Dtype::Float || b == Dtype::Float {
                Dtype::Float
            } else {
                Dtype::Int
            };
            out.push(ColumnSpec {
                name: format!("{}_diff", l.name),
                dtype: Some(dtype),
            });
        }
    }
    RelationSchema { columns: out }
}

fn post(cx: &mut Cx<'_>, op: &PostCombineOp, input: Option<&RelationSchema>) -> RelationSchema {
    let empty = RelationSchema::default();
    let input = input.unwrap_or(&empty);
    let from = "its input";
    let schema = match op.operation {
        PostOperation::Filter => {
            for f in &op.filters {
                cx.require("filters", "filters on", &f.attribute, input, from);
            }
            input.clone()
        }
        PostOperation::Sort => {
            for o in &op.order_by {
                cx.require("order_by", "sorts by", &o.attribute, input, from);
            }
            input.clone()
        }
        PostOperation::Limit => input.clone(),
        PostOperation::Project => {
            let mut columns = Vec::new();
            for c in &op.expected_schema {
                cx.require("expected_schema", "projects", &c.name, input, from);
                let dtype = c
                    .dtype
                    .or_else(|| input.column(&c.name).and_then(|i| i.dtype));
                columns.push(ColumnSpec {
                    name: c.name.clone(),
                    dtype,
                });
            }
            return RelationSchema { columns };
        }
        PostOperation::Aggregate => {
            let mut columns = Vec::new();
            for g in &op.group_by {
                cx.require("group_by", "groups by", &g.attribute, input, from);
                columns.push(ColumnSpec {
                    name: g.attribute.clone(),
                    dtype: input.column(&g.attribute).and_then(|c| c.dtype),
                });
            }
            for m in &op.metrics {
                cx.require("metrics", "aggregates", &m.name, input, from);
                let input_dtype = input.column(&m.name).and_then(|c| c.dtype);
                let dtype = match m.aggregation {
                    Some(Aggregation::Count) => Some(Dtype::Int),
                    Some(Aggregation::Avg) => Some(Dtype::Float),
                    Some(Aggregation::Sum | Aggregation::Min | Aggregation::Max) => input_dtype,
                    None => {
                        cx.issue(
                            "metrics",
                            Some(&m.name),
                            format!("has metric '{}' without an aggregation", m.name),
                        );
                        input_dtype
                    }
                };
                columns.push(ColumnSpec {
                    name: m.name.clone(),
                    dtype,
                });
            }
            RelationSchema { columns }
        }
    };
    if !op.expected_schema.is_empty() {
        let want: BTreeSet<&str> = op.expected_schema.iter().map(|c| c.name.as_str()).collect();
        let got: BTreeSet<&str> = schema.names().into_iter().collect();
        if want != got {
            cx.issue(
                "expected_schema",
                want.symmetric_difference(&got).next().copied(),
                format!(
                    "expects columns [{}] but produces [{}]",
                    op.expected_schema
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    schema.names().join(", ")
                ),
            );
        }
    }
    schema
}

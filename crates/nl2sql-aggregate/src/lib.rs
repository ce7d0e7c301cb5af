//! The aggregation engine of nl2sql (spec: aggregation.md): evaluates the combine and
//! post-op nodes of an `ExecutionDag`, layer by layer, over Arrow data loaded from scan
//! artifacts, with Arrow compute kernels (no database).
//!
//! The entry points are [`aggregate`] (scans supplied by a loader) and
//! the async [`aggregate_from_store`] (every scan read first, concurrently, from any
//! `ArtifactStore` backend, hashes verified; then the same synchronous evaluation).
//! Evaluation is partial: a failed node records one `AGGREGATOR_FAILED` error naming it,
//! its dependants are skipped with one error each, and every other node still runs.

mod combine;
mod keys;
mod post;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use arrow::error::ArrowError;
use futures_util::future::join_all;
use nl2sql_artifacts::ArtifactStore;
use nl2sql_plan::{
    CombineOperation, ExecutionDag, ExpectedColumn, FilterSpec, GroupBySpec, JoinKeyPair,
    MetricSpec, NodeKind, OrderBySpec, Role,
};
use nl2sql_state::{ArtifactRef, ErrorCode, Node, PipelineError, Severity};
use serde_json::Value;

/// What an aggregation run produced.
#[derive(Debug, Clone, Default)]
pub struct AggregationOutcome {
    /// The table of every node that was computed, by node id.
    pub tables: BTreeMap<String, RecordBatch>,
    /// The terminal nodes that were computed, in node order: the results.
    pub results: Vec<String>,
    /// One `AGGREGATOR_FAILED` error per failed or skipped node, in evaluation order.
    pub errors: Vec<PipelineError>,
}

impl AggregationOutcome {
    /// True when some node failed but others produced results.
    pub fn is_partial(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// Evaluates `dag`; `load_scan` returns the table of a scan node.
pub fn aggregate(
    dag: &ExecutionDag,
    mut load_scan: impl FnMut(&str) -> Result<RecordBatch, PipelineError>,
) -> AggregationOutcome {
    let mut out = AggregationOutcome::default();
    let mut failed: BTreeSet<String> = BTreeSet::new();
    for id in dag.layers.iter().flatten() {
        let Some(node) = dag.node(id) else { continue };
        let result = if node.kind == NodeKind::Scan {
            load_scan(id)
        } else {
            let inputs = ordered_inputs(dag, id);
            if let Some(bad) = inputs.iter().find(|(i, _)| !out.tables.contains_key(*i)) {
                let cause = if failed.contains(bad.0) {
                    format!("input '{}' failed", bad.0)
                } else {
                    format!("input '{}' was not computed", bad.0)
                };
                Err(error(id, &format!("skipped: {cause}")))
            } else {
                let tables: Vec<(Option<Role>, &RecordBatch)> = inputs
                    .iter()
                    .filter_map(|(i, role)| out.tables.get(*i).map(|t| (*role, t)))
                    .collect();
                evaluate(node.kind, &node.attributes, &tables)
                    .map_err(|e| error(id, &e.to_string()))
            }
        };
        match result {
            Ok(table) => {
                out.tables.insert(id.clone(), table);
            }
            Err(e) => {
                failed.insert(id.clone());
                out.errors.push(e);
            }
        }
    }
    out.results = dag
        .terminal_nodes()
        .into_iter()
        .filter(|id| out.tables.contains_key(*id))
        .map(str::to_owned)
        .collect();
    out
}

/// Evaluates `dag` with scans read from `store` through `artifacts` (scan node id →
/// reference). Every scan artifact is read first, concurrently, then the nodes are
/// evaluated as by [`aggregate`]. A scan without a reference, or whose object is missing or
/// does not match its hash, fails (and only its dependants are skipped).
pub async fn aggregate_from_store(
    dag: &ExecutionDag,
    store: &dyn ArtifactStore,
    artifacts: &BTreeMap<String, ArtifactRef>,
) -> AggregationOutcome {
    let scans: Vec<&str> = dag
        .layers
        .iter()
        .flatten()
        .filter(|id| dag.node(id).is_some_and(|n| n.kind == NodeKind::Scan))
        .map(String::as_str)
        .collect();
    let loaded = join_all(scans.iter().map(|id| load_scan(store, artifacts, id))).await;
    let mut tables: BTreeMap<&str, Result<RecordBatch, PipelineError>> =
        scans.into_iter().zip(loaded).collect();
    aggregate(dag, |id| {
        tables
            .remove(id)
            .unwrap_or_else(|| Err(error(id, &format!("Missing artifact for scan node {id}."))))
    })
}

/// The table of scan `id`, read through its reference in `artifacts`.
async fn load_scan(
    store: &dyn ArtifactStore,
    artifacts: &BTreeMap<String, ArtifactRef>,
    id: &str,
) -> Result<RecordBatch, PipelineError> {
    let Some(artifact) = artifacts.get(id) else {
        return Err(error(id, &format!("Missing artifact for scan node {id}.")));
    };
    let table = store
        .read(artifact)
        .await
        .map_err(|e| error(id, &e.message))?;
    concat_batches(&table.schema, &table.batches).map_err(|e| error(id, &e.to_string()))
}

/// Incoming edges of `id` ordered by (role rank, from id).
fn ordered_inputs<'a>(dag: &'a ExecutionDag, id: &str) -> Vec<(&'a str, Option<Role>)> {
    let mut inputs: Vec<(&str, Option<Role>)> = dag
        .edges
        .iter()
        .filter(|e| e.to_id == id)
        .map(|e| (e.from_id.as_str(), e.role))
        .collect();
    let rank = |r: Option<Role>| match r {
        Some(r) if r.is_left() => 0,
        Some(_) => 1,
        None => 2,
    };
    inputs.sort_by(|a, b| (rank(a.1), a.0).cmp(&(rank(b.1), b.0)));
    inputs
}

fn evaluate(
    kind: NodeKind,
    attributes: &Value,
    inputs: &[(Option<Role>, &RecordBatch)],
) -> Result<RecordBatch, ArrowError> {
    if kind == NodeKind::Combine {
        let operation: CombineOperation = attr(attributes, "operation")?;
        let keys: Vec<JoinKeyPair> = attr(attributes, "join_keys")?;
        // Arity is checked by `combine`; with two inputs, their roles must say which side
        // each one is on (inputs are ordered left-side first).
        if matches!(
            operation,
            CombineOperation::Join | CombineOperation::Compare
        ) && inputs.len() == 2
            && !matches!(inputs, [(Some(l), _), (Some(r), _)] if l.is_left() && !r.is_left())
        {
            return Err(ArrowError::InvalidArgumentError(
                "join and compare need one left-side input (left, base, primary) and one right-side input (right, compare, secondary)".to_owned(),
            ));
        }
        let tables: Vec<&RecordBatch> = inputs.iter().map(|(_, t)| *t).collect();
        return combine::combine(operation, &tables, &keys);
    }
    let [(_, input)] = inputs else {
        return Err(ArrowError::InvalidArgumentError(
            "Post-combine node expects a single input.".to_owned(),
        ));
    };
    match kind {
        NodeKind::PostFilter => {
            post::filter(input, &attr::<Vec<FilterSpec>>(attributes, "filters")?)
        }
        NodeKind::PostAggregate => post::aggregate(
            input,
            &attr::<Vec<GroupBySpec>>(attributes, "group_by")?,
            &attr::<Vec<MetricSpec>>(attributes, "metrics")?,
        ),
        NodeKind::PostProject => post::project(
            input,
            &attr::<Vec<ExpectedColumn>>(attributes, "expected_schema")?,
        ),
        NodeKind::PostSort => post::sort(input, &attr::<Vec<OrderBySpec>>(attributes, "order_by")?),
        NodeKind::PostLimit => post::limit(input, attr::<Option<i64>>(attributes, "limit")?),
        NodeKind::Scan | NodeKind::Combine => Err(ArrowError::InvalidArgumentError(
            "Unsupported logical node kind".to_owned(),
        )),
    }
}

fn attr<T: serde::de::DeserializeOwned>(attributes: &Value, key: &str) -> Result<T, ArrowError> {
    serde_json::from_value(attributes.get(key).cloned().unwrap_or(Value::Null)).map_err(|e| {
        ArrowError::InvalidArgumentError(format!("attribute '{key}' is malformed: {e}"))
    })
}

fn error(node_id: &str, cause: &str) -> PipelineError {
    PipelineError::new(
        Node::Aggregator,
        ErrorCode::AggregatorFailed,
        Severity::Error,
        format!("node '{node_id}': {cause}"),
    )
    .with_details(serde_json::json!({"node_id": node_id}))
}

//! `aggregator` (pipeline.md §2.5): the combine and post-op nodes over the scans'
//! artifacts.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_aggregate::aggregate_from_store;
use nl2sql_plan::ExecutionDag;
use nl2sql_state::{GraphState, GraphStateDelta, Node};
use serde_json::json;

use super::ctx::RunCtx;
use super::result::TerminalTable;
use super::rows::{column_names, json_rows};
use super::state::{aggregator_response, warnings_of};

/// `aggregator` (pipeline.md §2.5): partial evaluation over the scans' artifacts. Its
/// state delta: the terminal tables (`aggregator_response`), errors and warnings.
pub(super) async fn aggregator(
    ctx: &RunCtx,
    dag: &ExecutionDag,
    st: &GraphState,
) -> GraphStateDelta {
    const NODE: &str = Node::Aggregator.as_str();
    let t = ctx.start(NODE, None, None);
    let outcome = aggregate_from_store(dag, ctx.shared.artifacts.as_ref(), &st.artifact_refs).await;
    let mut delta = GraphStateDelta::default();
    for e in &outcome.errors {
        let mut e = e.clone();
        e.node = NODE.into();
        delta.errors.push(e);
    }
    let mut warnings = Vec::new();
    let max = ctx.shared.options.answer_rows;
    // A terminal node that could not be computed (one of its inputs failed) gives way to
    // the nearest parts upstream of it that were: a partial answer, said so in words.
    let mut shown: Vec<String> = outcome.results.clone();
    for terminal in dag.terminal_nodes() {
        if outcome.results.iter().any(|r| r == terminal) {
            continue;
        }
        let parts = computed_parts(dag, terminal, &outcome.tables);
        if parts.is_empty() {
            continue;
        }
        warnings.push(format!(
            "The combined result '{terminal}' could not be computed; showing what could be: {}.",
            parts.join(", ")
        ));
        for p in parts {
            if !shown.contains(&p) {
                shown.push(p);
            }
        }
    }
    let mut terminal = Vec::new();
    for id in &shown {
        if let Some(batch) = outcome.tables.get(id) {
            terminal.push(TerminalTable {
                node_id: id.clone(),
                columns: column_names(batch),
                rows: json_rows(batch, usize::MAX),
                total_rows: u64::try_from(batch.num_rows()).unwrap_or(u64::MAX),
            });
        }
    }
    ctx.log_node(NODE,
        t,
        json!({
            "results": shown,
            "row_counts": terminal.iter().map(|t| (t.node_id.clone(), t.total_rows)).collect::<BTreeMap<_, _>>(),
            "max_rows_to_answer": max,
        }),
        &outcome.errors,
    );
    delta.warnings = warnings_of(NODE, warnings);
    delta.aggregator_response = Some(aggregator_response(&terminal));
    delta
}

/// The nodes nearest upstream of `node` (itself included) whose table was computed, in
/// input order.
pub(super) fn computed_parts<T>(
    dag: &ExecutionDag,
    node: &str,
    tables: &BTreeMap<String, T>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![node.to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if tables.contains_key(&id) {
            out.push(id);
            continue;
        }
        if let Some(n) = dag.node(&id) {
            stack.extend(n.inputs.iter().rev().cloned());
        }
    }
    out
}

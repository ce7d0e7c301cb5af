//! `aggregator` (pipeline.md §2.5): the combine and post-op nodes over the scans'
//! artifacts.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_aggregate::aggregate_from_store;
use nl2sql_plan::ExecutionDag;
use nl2sql_state::Node;
use serde_json::json;

use super::ctx::RunCtx;
use super::result::TerminalTable;
use super::rows::{column_names, json_rows};
use super::state::State;

/// `aggregator` (pipeline.md §2.5): partial evaluation over the artifacts.
pub(super) async fn aggregator(ctx: &RunCtx, dag: &ExecutionDag, st: &mut State) {
    let t = ctx.start(Node::Aggregator.as_str(), None, None);
    let outcome = aggregate_from_store(dag, ctx.shared.artifacts.as_ref(), &st.artifacts).await;
    for e in &outcome.errors {
        let mut e = e.clone();
        e.node = Node::Aggregator.into();
        st.error(&e);
    }
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
        st.warnings.push(format!(
            "The combined result '{terminal}' could not be computed; showing what could be: {}.",
            parts.join(", ")
        ));
        for p in parts {
            if !shown.contains(&p) {
                shown.push(p);
            }
        }
    }
    for id in &shown {
        if let Some(batch) = outcome.tables.get(id) {
            st.terminal.push(TerminalTable {
                node_id: id.clone(),
                columns: column_names(batch),
                rows: json_rows(batch, usize::MAX),
                total_rows: u64::try_from(batch.num_rows()).unwrap_or(u64::MAX),
            });
        }
    }
    st.aggregator_ran = true;
    ctx.log_node(Node::Aggregator.as_str(),
        t,
        json!({
            "results": shown,
            "row_counts": st.terminal.iter().map(|t| (t.node_id.clone(), t.total_rows)).collect::<BTreeMap<_, _>>(),
            "max_rows_to_answer": max,
        }),
        &outcome.errors,
    );
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

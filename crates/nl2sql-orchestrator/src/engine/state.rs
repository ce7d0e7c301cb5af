//! The run's state is seed 002's [`GraphState`] (kept outside the raced future so that a
//! cancelled or timed-out run still reports what it had). Stages return
//! [`GraphStateDelta`]s; [`merge`] applies them with the fields' reducers, and the
//! functions below read back the responses the state holds as opaque JSON.

use nl2sql_plan::{DecomposerResponse, SubQuery, UnmappedSubQuery};
use nl2sql_planner::{FinalAnswer, TerminalResult};
use nl2sql_state::{GraphState, GraphStateDelta, PipelineError, WarningEntry};
use serde::{Deserialize as _, Serialize};
use serde_json::{Value, json};

/// Merges `delta` into the run's state. Only a second, different write to a set-once
/// field fails (no stage writes one); that error is kept and the state is unchanged.
pub(super) fn merge(st: &mut GraphState, delta: GraphStateDelta) {
    if let Err(e) = st.apply(delta) {
        st.errors.push(e);
    }
}

/// Warnings of `node`, as state entries.
pub(super) fn warnings_of(
    node: &str,
    texts: impl IntoIterator<Item = String>,
) -> Vec<WarningEntry> {
    texts
        .into_iter()
        .map(|content| WarningEntry {
            node: node.to_owned(),
            content,
        })
        .collect()
}

/// The scan id of sub-query `id` in run `trace_id` (`sql_agent:<node_id>:<trace_id>`).
pub(super) fn subgraph_id(id: &str, trace_id: &str) -> String {
    format!("sql_agent:{id}:{trace_id}")
}

/// The decomposition's sub-queries (by id) and the parts of the question no datasource
/// answers, decoded once from `decomposer_response` (empty before the decomposer succeeded).
pub(super) fn decomposed(st: &GraphState) -> (Vec<SubQuery>, Vec<UnmappedSubQuery>) {
    let Some(d) = st
        .decomposer_response
        .as_ref()
        .and_then(|v| DecomposerResponse::deserialize(v).ok())
    else {
        return (Vec::new(), Vec::new());
    };
    let mut queries = d.sub_queries;
    queries.sort_by(|a, b| a.id.cmp(&b.id));
    (queries, d.unmapped_subqueries)
}

/// True when part of the question maps to no datasource (read without decoding).
pub(super) fn has_unmapped(st: &GraphState) -> bool {
    st.decomposer_response
        .as_ref()
        .and_then(|v| v.get("unmapped_subqueries"))
        .and_then(Value::as_array)
        .is_some_and(|u| !u.is_empty())
}

/// Errors of the main graph (not of a scan) that block the answer.
pub(super) fn run_blocking(st: &GraphState) -> Vec<PipelineError> {
    st.errors
        .iter()
        .filter(|e| e.subgraph_id.is_none() && e.is_blocking())
        .cloned()
        .collect()
}

/// The aggregator's response: the terminal tables, in DAG order.
pub(super) fn aggregator_response(tables: &[impl Serialize]) -> Value {
    json!({ "terminal_results": tables })
}

/// The terminal results with at most `max` rows each, as the answer synthesizer gets
/// them (read from the state without copying the rows it does not show).
pub(super) fn terminal_results(st: &GraphState, max: usize) -> Vec<TerminalResult> {
    let Some(tables) = st
        .aggregator_response
        .as_ref()
        .and_then(|v| v.get("terminal_results"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    tables
        .iter()
        .map(|t| TerminalResult {
            node_id: t["node_id"].as_str().unwrap_or_default().to_owned(),
            columns: t["columns"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .map(|c| c.as_str().unwrap_or_default().to_owned())
                        .collect()
                })
                .unwrap_or_default(),
            rows: t["rows"]
                .as_array()
                .map(|rows| {
                    rows.iter()
                        .take(max)
                        .map(|r| r.as_array().cloned().unwrap_or_default())
                        .collect()
                })
                .unwrap_or_default(),
            total_rows: t["total_rows"].as_u64().unwrap_or(0),
        })
        .collect()
}

/// True when the aggregator computed at least one terminal table.
pub(super) fn has_terminal(st: &GraphState) -> bool {
    st.aggregator_response
        .as_ref()
        .and_then(|v| v.get("terminal_results"))
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
}

/// The answer synthesizer's response.
pub(super) fn answer_response(answer: &FinalAnswer) -> Value {
    json!({ "final_answer": answer })
}

/// The state as the run log's last entry keeps it: terminal rows are not inlined (the
/// run log references results, spec graph-state.md §7), their counts are.
pub(super) fn for_log(st: &mut GraphState) -> Value {
    let aggregated = st.aggregator_response.take();
    let mut value = serde_json::to_value(&*st).unwrap_or(Value::Null);
    if let (Some(agg), Some(obj)) = (&aggregated, value.as_object_mut()) {
        obj.insert("aggregator_response".to_owned(), without_rows(agg));
    }
    st.aggregator_response = aggregated;
    value
}

/// The aggregator response without its tables' `rows`.
fn without_rows(agg: &Value) -> Value {
    let tables: Vec<Value> = agg
        .get("terminal_results")
        .and_then(Value::as_array)
        .map(|tables| {
            tables
                .iter()
                .map(|t| {
                    json!({
                        "node_id": t["node_id"],
                        "columns": t["columns"],
                        "total_rows": t["total_rows"],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({ "terminal_results": tables })
}

//! `layer_router` (pipeline.md §2.4): the DAG's scans, layer by layer.

use std::collections::BTreeMap;
use std::sync::Arc;

use nl2sql_plan::{ExecutionDag, SubQuery};
use nl2sql_state::{
    ErrorCode, GraphState, GraphStateDelta, Node, PipelineError, ScanStatus, Severity,
};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tracing::Instrument as _;

use super::ctx::RunCtx;
use super::scan::run_scan;
use super::state::{merge, subgraph_id};

/// `layer_router` (pipeline.md §2.4): each layer's pending scans, concurrently, at most
/// `max_parallel_scans` at a time. A layer's scans are marked running before they start;
/// their deltas are merged when the layer ends, in node-id order
/// ([`GraphState::merge_parallel`]), so the state does not depend on scheduling.
pub(super) async fn layer_router(
    ctx: &Arc<RunCtx>,
    dag: &ExecutionDag,
    queries: &BTreeMap<String, SubQuery>,
    st: &mut GraphState,
) {
    let permits = Arc::new(Semaphore::new(ctx.shared.options.max_parallel_scans.max(1)));
    for layer in &dag.layers {
        let pending: Vec<&SubQuery> = layer
            .iter()
            .filter_map(|id| queries.get(id))
            .filter(|q| st.scan_status.get(&q.id) == Some(&ScanStatus::Pending))
            .collect();
        if pending.is_empty() {
            continue;
        }
        let t = ctx.start(Node::LayerRouter.as_str(), None, None);
        merge(
            st,
            GraphStateDelta {
                scan_status: pending
                    .iter()
                    .map(|q| (q.id.clone(), ScanStatus::Running))
                    .collect(),
                ..GraphStateDelta::default()
            },
        );
        let mut set: JoinSet<GraphStateDelta> = JoinSet::new();
        let mut task_ids = BTreeMap::new();
        for q in &pending {
            let ctx = Arc::clone(ctx);
            let permits = Arc::clone(&permits);
            let q = (*q).clone();
            let scan_id = q.id.clone();
            let handle = set.spawn(
                async move {
                    let _permit = tokio::select! {
                        biased;
                        () = ctx.cancel.cancelled() => None,
                        p = permits.acquire_owned() => p.ok(),
                    };
                    run_scan(ctx, q).await
                }
                .in_current_span(),
            );
            task_ids.insert(handle.id(), scan_id);
        }
        let mut deltas = Vec::new();
        while let Some(joined) = set.join_next_with_id().await {
            let task = match &joined {
                Ok((task, _)) => *task,
                Err(e) => e.id(),
            };
            let id = task_ids.get(&task).cloned().unwrap_or_default();
            let delta = match joined {
                Ok((_, delta)) => delta,
                // A panic inside a scan: that scan failed, the others go on.
                Err(e) => crashed(&id, &ctx.trace_id, &e.to_string()),
            };
            deltas.push((id, delta));
        }
        let ids: Vec<&str> = pending.iter().map(|q| q.id.as_str()).collect();
        ctx.log_node(
            Node::LayerRouter.as_str(),
            t,
            json!({"dispatched": ids}),
            &[],
        );
        if let Err(e) = st.merge_parallel(deltas) {
            merge(st, GraphStateDelta::error(e));
        }
    }
}

/// The delta of scan `id`, whose task failed (panicked) before it returned one.
fn crashed(id: &str, trace_id: &str, why: &str) -> GraphStateDelta {
    let err = PipelineError::new(
        "sql_agent",
        ErrorCode::ExecutorCrash,
        Severity::Critical,
        format!("The scan task failed: {why}"),
    )
    .in_subgraph(&subgraph_id(id, trace_id));
    GraphStateDelta {
        scan_status: BTreeMap::from([(id.to_owned(), ScanStatus::Failed)]),
        errors: vec![err],
        ..GraphStateDelta::default()
    }
}

#[cfg(test)]
mod tests {
    use nl2sql_state::{ErrorCode, GraphState, ScanStatus};

    use super::crashed;

    #[test]
    fn a_scan_that_panicked_fails_alone_with_an_error_of_its_own() {
        let mut st = GraphState::new("t", "q", nl2sql_state::UserContext::default());
        st.scan_status.insert("a".into(), ScanStatus::Running);
        st.scan_status.insert("b".into(), ScanStatus::Running);
        st.merge_parallel(vec![("a".into(), crashed("a", "t", "boom"))])
            .expect("one branch");
        assert_eq!(st.scan_status["a"], ScanStatus::Failed);
        assert_eq!(st.scan_status["b"], ScanStatus::Running);
        let e = &st.errors[0];
        assert_eq!(e.code, ErrorCode::ExecutorCrash);
        assert_eq!(e.subgraph_id.as_deref(), Some("sql_agent:a:t"));
        assert!(e.message.contains("boom"), "{}", e.message);
    }
}

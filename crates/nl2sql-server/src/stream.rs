//! `POST /query` with `Accept: text/event-stream`: the run's events as they happen
//! (documented in `docs/rest-api.md`).
//!
//! The engine sends each node as it starts and each run-log entry as it is written
//! ([`RunEvent`]); [`EventView`] turns them into what a client is shown, without the
//! nodes' payloads (prompts, plans and rows stay in the run log):
//!
//! | event | when | data |
//! |---|---|---|
//! | `run` | first | `{trace_id}` |
//! | `node_started` | a node starts | `{node, subgraph_id, attempt, started_at}` |
//! | `node_finished` | a node ends | `{node, subgraph_id, attempt, started_at, duration_ms, errors}` |
//! | `datasources` | the resolver chose | `{datasource_ids}` |
//! | `sql` | a sub-query's SQL passed the physical validator | `{subgraph_id, attempt, sql}` |
//! | `partial_result` | a sub-query ran | `{subgraph_id, row_count, bytes}` |
//! | `answer` | last, when the run answered | the `POST /query` response |
//! | `error` | last, when it did not | `{status, error_code, message, details}` |
//!
//! A client that disconnects drops the stream, which cancels the run (its statement is
//! interrupted, as on shutdown); the run is still recorded, as cancelled.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use nl2sql_orchestrator::{RunEvent, RunEvents, RunResult};
use nl2sql_state::{Node, TraceId};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::query::{Prepared, QueryResponse, outcome};
use crate::state::AppState;

const RESOLVER: &str = Node::DatasourceResolver.as_str();
const GENERATOR: &str = Node::SqlGenerator.as_str();
const PHYSICAL: &str = Node::PhysicalValidator.as_str();
const EXECUTOR: &str = Node::Executor.as_str();

/// One thing a client is shown: an event name and its data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Shown {
    pub(crate) name: &'static str,
    pub(crate) data: Value,
}

/// Turns a run's events into what a client is shown; remembers each scan's last SQL
/// draft so that it is shown once validated.
#[derive(Debug, Default)]
pub(crate) struct EventView {
    drafts: HashMap<String, String>,
}

impl EventView {
    /// What `event` shows (none, one or two events).
    pub(crate) fn show(&mut self, event: &RunEvent) -> Vec<Shown> {
        match event {
            RunEvent::NodeStarted {
                node,
                subgraph_id,
                attempt,
                started_at,
                ..
            } => vec![Shown {
                name: "node_started",
                data: json!({
                    "node": node,
                    "subgraph_id": subgraph_id,
                    "attempt": attempt,
                    "started_at": started_at,
                }),
            }],
            RunEvent::NodeFinished(entry) => {
                let mut shown = vec![Shown {
                    name: "node_finished",
                    data: json!({
                        "node": entry.node,
                        "subgraph_id": entry.subgraph_id,
                        "attempt": entry.attempt,
                        "started_at": entry.started_at,
                        "duration_ms": entry.duration_ms,
                        "errors": entry.errors.iter().map(|e| json!({
                            "code": e.code.as_str(),
                            "severity": e.severity.as_str(),
                            "message": e.safe_message(),
                        })).collect::<Vec<_>>(),
                    }),
                }];
                let blocked = entry.errors.iter().any(|e| e.is_blocking());
                let scan = entry.subgraph_id.clone().unwrap_or_default();
                let node = entry.node.as_str();
                if node == RESOLVER && !blocked {
                    shown.push(Shown {
                        name: "datasources",
                        data: json!({"datasource_ids": entry.delta["resolved"]}),
                    });
                } else if node == GENERATOR {
                    if let Some(sql) = entry.delta["sql_draft"].as_str() {
                        self.drafts.insert(scan, sql.to_owned());
                    }
                } else if node == PHYSICAL && !blocked {
                    if let Some(sql) = self.drafts.get(&scan) {
                        shown.push(Shown {
                            name: "sql",
                            data: json!({
                                "subgraph_id": entry.subgraph_id,
                                "attempt": entry.attempt,
                                "sql": sql,
                            }),
                        });
                    }
                } else if node == EXECUTOR && !blocked && entry.delta["metrics"].is_object() {
                    shown.push(Shown {
                        name: "partial_result",
                        data: json!({
                            "subgraph_id": entry.subgraph_id,
                            "row_count": entry.delta["metrics"]["row_count"],
                            "bytes": entry.delta["metrics"]["bytes_returned"],
                        }),
                    });
                }
                shown
            }
        }
    }
}

fn sse(shown: &Shown) -> Event {
    Event::default()
        .event(shown.name)
        .data(shown.data.to_string())
}

/// Runs `prepared` under `cancel` and shows each of its events to `show` as it happens
/// (with the events still queued when it ends); when `stop` completes first, the run is
/// cancelled and still awaited (so it is recorded). Returns the finished run.
pub(crate) async fn follow<F, Fut>(
    prepared: Prepared,
    trace_id: TraceId,
    cancel: CancellationToken,
    stop: impl Future<Output = ()>,
    mut show: F,
) -> Result<(RunResult, QueryResponse), tokio::task::JoinError>
where
    F: FnMut(Shown) -> Fut,
    Fut: Future<Output = ()>,
{
    let (sender, mut run_events) = RunEvents::channel();
    let mut run = prepared.spawn(trace_id, cancel.clone(), Some(sender));
    let mut view = EventView::default();
    tokio::pin!(stop);
    let joined = loop {
        tokio::select! {
            biased;
            () = &mut stop, if !cancel.is_cancelled() => cancel.cancel(),
            Some(event) = run_events.recv() => {
                for shown in view.show(&event) {
                    show(shown).await;
                }
            }
            joined = &mut run => break joined,
        }
    };
    while let Ok(event) = run_events.try_recv() {
        for shown in view.show(&event) {
            show(shown).await;
        }
    }
    joined
}

/// The event stream of `prepared`'s run.
pub(crate) fn events(
    state: &AppState,
    prepared: Prepared,
) -> Sse<impl Stream<Item = Result<Event, Infallible>> + use<>> {
    let cancel = state.shutdown_token().child_token();
    let trace_id = TraceId::new();
    let (out, out_rx) = tokio::sync::mpsc::channel::<Event>(64);
    let run_cancel = cancel.clone();
    tokio::spawn(async move {
        let first = Shown {
            name: "run",
            data: json!({"trace_id": trace_id.as_str()}),
        };
        // Sends fail only when the client went away: the run is then cancelled by the
        // stream's guard, and what is left is not sent.
        let _ = out.send(sse(&first)).await;
        let joined = follow(
            prepared,
            trace_id,
            run_cancel,
            std::future::pending(),
            |shown| {
                let out = out.clone();
                async move {
                    let _ = out.send(sse(&shown)).await;
                }
            },
        )
        .await;
        let last = match joined {
            Ok((result, response)) => match outcome(&result, response) {
                Ok(response) => Shown {
                    name: "answer",
                    data: serde_json::to_value(&response).unwrap_or(Value::Null),
                },
                Err(e) => Shown {
                    name: "error",
                    data: json!({
                        "status": e.status.as_u16(),
                        "error_code": e.body.error_code,
                        "message": e.body.message,
                        "details": e.body.details,
                    }),
                },
            },
            Err(e) => {
                tracing::error!(error = %e, "a run panicked");
                Shown {
                    name: "error",
                    data: json!({
                        "status": 500,
                        "error_code": "INTERNAL_ERROR",
                        "message": "Internal error.",
                    }),
                }
            }
        };
        let _ = out.send(sse(&last)).await;
    });
    // The guard lives as long as the stream: a client that disconnects drops it, which
    // cancels the run.
    let guard = cancel.drop_guard();
    let stream = futures_util::stream::unfold((out_rx, guard), |(mut rx, guard)| async move {
        rx.recv().await.map(|event| (Ok(event), (rx, guard)))
    });
    // Keep-alive comments let the server notice a client that went away while the run
    // is quiet (a write to a closed connection fails).
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(1)))
}

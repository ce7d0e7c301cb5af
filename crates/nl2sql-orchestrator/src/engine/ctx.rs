//! What a run and its scans share (`RunCtx`): the question, the caller, cancellation,
//! the run log and the audit log, the planner calls and the run's seeded generator; and
//! what every run of an engine shares (`Shared`).

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use nl2sql_adapter::{CircuitBreaker, DatasourceBreaker as _};
use nl2sql_artifacts::ArtifactStore;
use nl2sql_index::{DatasourceDocs, SchemaIndex, SchemaStore};
use nl2sql_planner::{Planner, Step};
use nl2sql_planner_llm::capture_calls;
use nl2sql_state::{AccessPolicy, ErrorCode, PipelineError, Severity, SplitMix64, UserContext};
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::audit::{AuditLog, snippet};
use super::options::EngineOptions;
use super::runlog::{Record, RunLog, millis};
use crate::datasources::DatasourceRegistry;

/// What a run and its scans share.
pub(crate) struct RunCtx {
    pub(crate) shared: Shared,
    pub(crate) trace_id: String,
    pub(crate) question: String,
    pub(crate) user: UserContext,
    pub(crate) access: AccessPolicy,
    pub(crate) cancel: CancellationToken,
    pub(crate) log: RunLog,
    /// The caller's tenant (or the engine's default tenant).
    pub(crate) tenant: String,
    pub(super) audit: Option<Arc<AuditLog>>,
    pub(super) rng: Mutex<SplitMix64>,
}

impl RunCtx {
    /// Records one node execution: the run log line, the node's metrics
    /// (`nl2sql.node.duration`, `nl2sql.errors`), a `tracing` event inside the run's span,
    /// and a `security_violation` audit event per `SECURITY_VIOLATION` error.
    pub(crate) fn record(&self, rec: Record<'_>) {
        let node = rec.node.to_owned();
        metrics::histogram!(
            "nl2sql.node.duration",
            "node" => node.clone(),
            "tenant_id" => self.tenant.clone()
        )
        .record(rec.duration.as_secs_f64());
        for e in rec.errors {
            metrics::counter!(
                "nl2sql.errors",
                "code" => e.code.as_str(),
                "severity" => e.severity.as_str(),
                "node" => e.node.clone(),
                "tenant_id" => self.tenant.clone()
            )
            .increment(1);
            if e.code == ErrorCode::SecurityViolation {
                self.audit(
                    "security_violation",
                    json!({
                        "code": e.code.as_str(),
                        "node": e.node,
                        "roles": self.user.roles,
                        "target": e.details.as_deref().cloned().unwrap_or_else(|| json!(e.message)),
                    }),
                );
            }
        }
        let codes: Vec<&str> = rec.errors.iter().map(|e| e.code.as_str()).collect();
        if rec.errors.iter().any(PipelineError::is_blocking) {
            tracing::warn!(
                target: "nl2sql::node",
                node = %node,
                subgraph_id = rec.subgraph_id,
                attempt = rec.attempt,
                duration_ms = millis(rec.duration),
                errors = ?codes,
                "node failed"
            );
        } else {
            tracing::debug!(
                target: "nl2sql::node",
                node = %node,
                subgraph_id = rec.subgraph_id,
                attempt = rec.attempt,
                duration_ms = millis(rec.duration),
                errors = ?codes,
                "node finished"
            );
        }
        self.log.record(rec);
    }

    /// Appends one audit event for this run (none when the engine keeps no audit log).
    pub(crate) fn audit(&self, event_type: &str, data: Value) {
        if let Some(audit) = &self.audit {
            audit.write(event_type, &self.trace_id, &self.tenant, data);
        }
    }

    /// A node of the run starts: tells a streaming caller; returns the start time its
    /// record will carry.
    pub(crate) fn start(
        &self,
        node: &str,
        subgraph_id: Option<&str>,
        attempt: Option<u32>,
    ) -> (SystemTime, Instant) {
        let t = (SystemTime::now(), Instant::now());
        self.log.started(node, subgraph_id, attempt, t.0);
        t
    }

    /// Logs one node execution of the main graph.
    pub(crate) fn log_node(
        &self,
        node: &str,
        started: (SystemTime, Instant),
        delta: Value,
        errors: &[PipelineError],
    ) {
        self.record(Record {
            node,
            subgraph_id: None,
            attempt: None,
            started_at: started.0,
            duration: started.1.elapsed(),
            delta,
            errors,
        });
    }

    /// A uniform number in [0, 1) from the run's seeded generator.
    pub(crate) fn uniform(&self) -> f64 {
        self.rng.lock().map_or(0.0, |mut rng| rng.unit())
    }

    /// Calls the planner for `step`: through the planner's circuit breaker, with the
    /// per-call timeout, racing cancellation; records `{step, request, response}`.
    pub(crate) async fn planner_call<Req, T, F>(
        &self,
        step: Step,
        subgraph_id: Option<&str>,
        attempt: Option<u32>,
        request: &Req,
        call: F,
    ) -> Result<T, PipelineError>
    where
        Req: Serialize,
        T: Serialize,
        F: Future<Output = Result<T, PipelineError>>,
    {
        let node = step.as_str();
        let started = (SystemTime::now(), Instant::now());
        let breaker = &self.shared.planner_breaker;
        let mut calls = Vec::new();
        let result = match breaker.enter() {
            Err(e) => Err(PipelineError::new(
                node,
                ErrorCode::ServiceUnavailable,
                Severity::Critical,
                format!("The planner is unavailable: {}", e.safe_message),
            )),
            Ok(permit) => {
                let timeout = self.shared.options.planner_timeout;
                let r = tokio::select! {
                    biased;
                    () = self.cancel.cancelled() => Err(cancelled(node)),
                    r = tokio::time::timeout(timeout, capture_calls(call)) => match r {
                        Ok((r, made)) => {
                            calls = made;
                            r
                        }
                        Err(_) => Err(PipelineError::new(
                            node,
                            ErrorCode::ServiceUnavailable,
                            Severity::Error,
                            format!("The planner did not answer within {} ms.", millis(timeout)),
                        )),
                    },
                };
                match &r {
                    Err(e) if e.code == ErrorCode::ServiceUnavailable => permit.failure(),
                    // A cancelled call says nothing of the planner: its permit is dropped
                    // (a half-open trial reopens the breaker).
                    Err(e) if e.code == ErrorCode::Cancelled => drop(permit),
                    _ => permit.success(),
                }
                r
            }
        };
        let (response, errors) = match &result {
            Ok(v) => (serde_json::to_value(v).unwrap_or(Value::Null), Vec::new()),
            Err(e) => (Value::Null, vec![e.clone()]),
        };
        for call in &calls {
            metrics::counter!(
                "nl2sql.token.usage",
                "agent" => node,
                "model" => call.model.clone(),
                "tenant_id" => self.tenant.clone()
            )
            .increment(call.total_tokens);
            let reply = match &result {
                Ok(_) => response.to_string(),
                Err(e) => e.message.clone(),
            };
            self.audit(
                "llm_interaction",
                json!({
                    "agent": node,
                    "model": call.model,
                    "prompt_version": call.prompt_version,
                    "response_snippet": snippet(&reply, 1000),
                    "token_usage": {
                        "prompt_tokens": call.prompt_tokens,
                        "completion_tokens": call.completion_tokens,
                        "total_tokens": call.total_tokens,
                    },
                    "latency_ms": call.latency_ms,
                    "error": call.error.map(ErrorCode::as_str),
                }),
            );
        }
        self.record(Record {
            node: &format!("planner:{node}"),
            subgraph_id,
            attempt,
            started_at: started.0,
            duration: started.1.elapsed(),
            delta: json!({
                "step": node,
                "planner": self.shared.planner.name(),
                "request": request,
                "response": response,
            }),
            errors: &errors,
        });
        result
    }
}

/// Everything a run shares with its scans (cheap to clone: `Arc`s and settings).
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) registry: Arc<DatasourceRegistry>,
    pub(crate) store: Arc<SchemaStore>,
    pub(crate) index: Arc<dyn SchemaIndex>,
    pub(crate) planner: Arc<dyn Planner>,
    pub(crate) planner_breaker: Arc<CircuitBreaker>,
    pub(crate) artifacts: Arc<dyn ArtifactStore>,
    pub(crate) options: EngineOptions,
    pub(crate) data_dir: Option<PathBuf>,
    /// Descriptions and example questions by datasource id (documentation files).
    pub(crate) docs: Arc<BTreeMap<String, DatasourceDocs>>,
    /// Where audit events go (none: not recorded).
    pub(crate) audit: Option<Arc<AuditLog>>,
}

/// The message of a caught panic.
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// A `CANCELLED` error from `node`.
pub(crate) fn cancelled(node: &str) -> PipelineError {
    PipelineError::new(
        node,
        ErrorCode::Cancelled,
        Severity::Error,
        "Pipeline cancelled by user.",
    )
}

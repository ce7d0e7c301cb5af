//! What each model call cost: one [`CallRecord`] per call (step, model, prompt version,
//! latency, attempts, tokens, outcome) and the running [`TokenUsage`] totals.

use std::future::Future;

use nl2sql_state::ErrorCode;
use serde::{Deserialize, Serialize};

use nl2sql_planner::Step;

/// One model call as the planner saw it (transport retries included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The step that made the call.
    pub step: Step,
    /// The model asked.
    pub model: String,
    /// The prompt template and its version, e.g. `ast_planner.v2`.
    pub prompt_version: String,
    /// Wall time of the whole call, retries and backoff included, in milliseconds.
    pub latency_ms: u64,
    /// HTTP attempts made (0 when the breaker refused the call).
    pub attempts: u32,
    /// Whether the answer was asked for in structured-output mode.
    pub structured: bool,
    /// Prompt tokens reported by the server (0 when not reported).
    pub prompt_tokens: u64,
    /// Completion tokens reported by the server.
    pub completion_tokens: u64,
    /// Total tokens reported by the server.
    pub total_tokens: u64,
    /// The error code when the call failed, `None` on success.
    pub error: Option<ErrorCode>,
}

/// Token totals over all calls of a planner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Calls made (including failed ones).
    pub calls: u64,
    /// Sum of prompt tokens.
    pub prompt_tokens: u64,
    /// Sum of completion tokens.
    pub completion_tokens: u64,
    /// Sum of total tokens.
    pub total_tokens: u64,
}

impl TokenUsage {
    /// Adds one call.
    pub fn add(&mut self, record: &CallRecord) {
        self.calls += 1;
        self.prompt_tokens += record.prompt_tokens;
        self.completion_tokens += record.completion_tokens;
        self.total_tokens += record.total_tokens;
    }
}

tokio::task_local! {
    /// The model calls made inside the current [`capture_calls`] scope.
    static CAPTURED: std::cell::RefCell<Vec<CallRecord>>;
}

/// Runs `work` and returns, with its output, the model calls an [`crate::LlmPlanner`] made
/// while running it (in order; empty for a planner that calls no model). Calls made by
/// tasks `work` spawns are not seen. The engine uses this to put token usage and an audit
/// event on the run that made each call.
pub async fn capture_calls<F: Future>(work: F) -> (F::Output, Vec<CallRecord>) {
    CAPTURED
        .scope(std::cell::RefCell::new(Vec::new()), async {
            let out = work.await;
            let calls = CAPTURED.with(std::cell::RefCell::take);
            (out, calls)
        })
        .await
}

/// Adds `record` to the enclosing [`capture_calls`] scope, if any.
pub(crate) fn note_call(record: &CallRecord) {
    let _ = CAPTURED.try_with(|calls| calls.borrow_mut().push(record.clone()));
}

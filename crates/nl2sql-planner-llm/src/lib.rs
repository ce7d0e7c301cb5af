//! The OpenAI-compatible planner: [`LlmPlanner`] sends each step to a chat-completions
//! endpoint with structured output (spec: pipeline.md §1, config-and-security.md §3.2).
//!
//! - `config`: the LLM file ([`LlmConfig`]) and per-step settings with fallback to `default`;
//! - `prompt`: the versioned templates under `prompts/` and the JSON contexts they receive;
//! - `transport`: the HTTP call with timeout, retries, backoff and the structured-output
//!   fallback; one circuit breaker (`nl2sql_state::Breaker`) per endpoint;
//! - `reply`: strict parsing of the model's answer into the step's type;
//! - `usage`: a [`CallRecord`] per call and the [`TokenUsage`] totals.
//!
//! The API key is read once, when the planner is built, into a `Secret` that never prints.

mod config;
mod probe;
mod prompt;
mod reply;
mod transport;
mod usage;

#[cfg(test)]
mod tests;

pub use config::{
    AgentConfig, AgentSettings, BreakerConfig, DEFAULT_API_KEY_ENV, DEFAULT_BASE_URL,
    DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SEC, LlmConfig, StructuredOutput,
};
pub use probe::{ProbeStatus, probe_endpoint};
pub use usage::{CallRecord, TokenUsage, capture_calls};

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_plan::{DecomposerResponse, PlanModel};
use nl2sql_state::{
    ConfigError, EnvSecrets, ErrorCode, PipelineError, Secret, SecretSource, Severity, redact_url,
    resolve_secret,
};
use serde_json::json;

use config::ALL_STEPS;
use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest, Step,
};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::Breaker;
use prompt::Template;
use transport::{CallFailure, ChatRequest, Endpoint, Failure};

/// A planner backed by an OpenAI-compatible chat-completions server.
pub struct LlmPlanner {
    /// The steps that have a model; the others run on `offline`.
    endpoints: BTreeMap<Step, Endpoint>,
    offline: OfflinePlanner,
    records: Mutex<Vec<CallRecord>>,
}

impl std::fmt::Debug for LlmPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let models: BTreeMap<&str, String> = self
            .endpoints
            .iter()
            .map(|(step, e)| {
                (
                    step.as_str(),
                    format!("{} @ {}", e.settings.model, e.breaker.name()),
                )
            })
            .collect();
        f.debug_struct("LlmPlanner")
            .field("models", &models)
            .finish_non_exhaustive()
    }
}

impl LlmPlanner {
    /// Builds the planner, reading each step's API key from the environment (or the
    /// secret reference in `api_key`).
    pub fn from_config(config: &LlmConfig) -> Result<LlmPlanner, ConfigError> {
        LlmPlanner::from_config_with_secrets(config, &EnvSecrets)
    }

    /// Builds the planner, resolving API keys through `secrets`.
    pub fn from_config_with_secrets(
        config: &LlmConfig,
        secrets: &dyn SecretSource,
    ) -> Result<LlmPlanner, ConfigError> {
        LlmPlanner::build(config, |step, settings| match &settings.api_key_ref {
            None => Ok(None),
            Some(reference) => {
                let key = match config.agent(step) {
                    Some((name, agent))
                        if agent.api_key.is_some() || agent.api_key_env.is_some() =>
                    {
                        format!("agents.{name}.api_key")
                    }
                    _ => "default.api_key".to_owned(),
                };
                resolve_secret(reference, &key, secrets).map(Some)
            }
        })
    }

    /// Builds the planner with one API key for every step (`None`: no key is sent); the
    /// environment is not read.
    pub fn with_api_key(
        config: &LlmConfig,
        key: Option<Secret>,
    ) -> Result<LlmPlanner, ConfigError> {
        LlmPlanner::build(config, |_, _| Ok(key.clone()))
    }

    fn build(
        config: &LlmConfig,
        key_of: impl Fn(Step, &AgentSettings) -> Result<Option<Secret>, ConfigError>,
    ) -> Result<LlmPlanner, ConfigError> {
        config.check()?;
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| ConfigError::Invalid {
                key: "llm".to_owned(),
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        let mut breakers: BTreeMap<String, Arc<Breaker>> = BTreeMap::new();
        let mut text_only: BTreeMap<(String, String), Arc<AtomicBool>> = BTreeMap::new();
        let mut endpoints = BTreeMap::new();
        for step in ALL_STEPS {
            if !config.has_model(step) {
                continue;
            }
            let settings = config.settings(step)?;
            let key = key_of(step, &settings)?;
            let breaker = breakers
                .entry(settings.base_url.clone())
                .or_insert_with(|| {
                    Arc::new(Breaker::new(
                        redact_url(&settings.base_url),
                        nl2sql_state::BreakerConfig {
                            fail_max: config.breaker.fail_max,
                            reset_timeout: Duration::from_millis(config.breaker.reset_timeout_ms),
                        },
                    ))
                })
                .clone();
            let flag = text_only
                .entry((settings.base_url.clone(), settings.model.clone()))
                .or_default()
                .clone();
            endpoints.insert(
                step,
                Endpoint {
                    client: client.clone(),
                    settings,
                    key,
                    breaker,
                    text_only: flag,
                },
            );
        }
        Ok(LlmPlanner {
            endpoints,
            offline: OfflinePlanner::new(),
            records: Mutex::new(Vec::new()),
        })
    }

    /// True when `step` calls a model; a step with no model in the LLM file runs on the
    /// offline planner.
    pub fn calls_model(&self, step: Step) -> bool {
        self.endpoints.contains_key(&step)
    }

    /// The settings `step` runs with (`None`: it runs on the offline planner).
    pub fn settings(&self, step: Step) -> Option<&AgentSettings> {
        self.endpoints.get(&step).map(|e| &e.settings)
    }

    /// Every call made so far, in order.
    pub fn calls(&self) -> Vec<CallRecord> {
        self.lock_records().clone()
    }

    /// Token totals over every call made so far.
    pub fn usage(&self) -> TokenUsage {
        let mut total = TokenUsage::default();
        for record in self.lock_records().iter() {
            total.add(record);
        }
        total
    }

    fn lock_records(&self) -> std::sync::MutexGuard<'_, Vec<CallRecord>> {
        // A poisoned lock still holds complete records (pushes are atomic).
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs one step: prompt, call, parse, record.
    async fn call<T>(
        &self,
        step: Step,
        template: Template,
        request: Result<ChatRequest, PipelineError>,
        parse: impl FnOnce(&str) -> Result<T, PipelineError>,
    ) -> Result<T, PipelineError> {
        let request = request.map_err(|mut e| {
            step.as_str().clone_into(&mut e.node);
            e
        })?;
        let Some(endpoint) = self.endpoints.get(&step) else {
            return Err(PipelineError::new(
                step.as_str(),
                reply::failure_code(step),
                Severity::Error,
                format!("no model is configured for step {}", step.as_str()),
            ));
        };
        let started = Instant::now();
        let outcome = endpoint.chat(&request).await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut record = CallRecord {
            step,
            model: endpoint.settings.model.clone(),
            prompt_version: template.id(),
            latency_ms,
            attempts: 0,
            structured: false,
            prompt_tokens: 0,
            completion_tokens: 0,
            total_tokens: 0,
            error: None,
        };
        let result = match outcome {
            Ok(reply) => {
                record.attempts = reply.attempts;
                record.structured = reply.structured;
                record.prompt_tokens = reply.usage.prompt_tokens;
                record.completion_tokens = reply.usage.completion_tokens;
                record.total_tokens = reply.usage.total_tokens;
                parse(&reply.content).map_err(|e| match reply.finish_reason.as_deref() {
                    Some("length") => PipelineError {
                        message: format!("{} (the reply was cut at the token limit)", e.message),
                        ..e
                    },
                    _ => e,
                })
            }
            Err(failure) => {
                record.attempts = failure.attempts;
                record.structured = failure.structured;
                Err(call_error(step, endpoint, &failure))
            }
        };
        record.error = result.as_ref().err().map(|e| e.code);
        tracing::info!(
            target: "planner",
            step = step.as_str(),
            model = %record.model,
            prompt = %record.prompt_version,
            latency_ms = record.latency_ms,
            attempts = record.attempts,
            total_tokens = record.total_tokens,
            error = record.error.map(ErrorCode::as_str),
            "model call"
        );
        usage::note_call(&record);
        self.lock_records().push(record);
        result
    }
}

/// The error a failed call reports.
fn call_error(step: Step, endpoint: &Endpoint, failure: &CallFailure) -> PipelineError {
    let code = reply::failure_code(step);
    let prefix = reply::failure_prefix(step);
    let model = &endpoint.settings.model;
    let dependency = endpoint.breaker.name();
    let attempts = failure.attempts;
    let (code, severity, message, status) = match &failure.failure {
        Failure::BreakerOpen { retry_in } => (
            ErrorCode::ServiceUnavailable,
            Severity::Critical,
            format!(
                "{prefix}: the model endpoint {dependency} is unavailable (circuit breaker open, next trial in {} ms)",
                retry_in.as_millis()
            ),
            None,
        ),
        Failure::Timeout { timeout } => (
            code,
            Severity::Error,
            format!(
                "{prefix}: model call to {dependency} timed out after {} ms ({attempts} attempts)",
                timeout.as_millis()
            ),
            None,
        ),
        Failure::Connection(reason) => (
            code,
            Severity::Error,
            format!(
                "{prefix}: cannot reach the model endpoint {dependency} ({attempts} attempts): {reason}"
            ),
            None,
        ),
        Failure::Status { status, body } => (
            code,
            // A rejected key will not get better by retrying.
            if matches!(status, 401 | 403) {
                Severity::Critical
            } else {
                Severity::Error
            },
            format!(
                "{prefix}: the model endpoint {dependency} answered HTTP {status} ({attempts} attempts): {body}"
            ),
            Some(*status),
        ),
        Failure::BadReply(reason) => (
            code,
            Severity::Error,
            format!("{prefix}: the model endpoint {dependency} sent an unreadable reply: {reason}"),
            None,
        ),
    };
    PipelineError::new(step.as_str(), code, severity, message).with_details(json!({
        "model": model,
        "attempts": attempts,
        "http_status": status,
    }))
}

#[async_trait]
impl Planner for LlmPlanner {
    fn name(&self) -> String {
        match self.endpoints.get(&Step::AstPlanner) {
            Some(e) => format!("llm:{}", e.settings.model),
            None => "llm:offline".to_owned(),
        }
    }

    async fn decompose(
        &self,
        request: &DecomposeRequest,
    ) -> Result<DecomposerResponse, PipelineError> {
        if !self.calls_model(Step::Decomposer) {
            return self.offline.decompose(request).await;
        }
        self.call(
            Step::Decomposer,
            prompt::DECOMPOSER,
            prompt::decomposer(request),
            reply::decomposition,
        )
        .await
    }

    async fn plan(&self, request: &PlanRequest) -> Result<PlanModel, PipelineError> {
        if !self.calls_model(Step::AstPlanner) {
            return self.offline.plan(request).await;
        }
        self.call(
            Step::AstPlanner,
            prompt::AST_PLANNER,
            prompt::ast_planner(request),
            reply::plan,
        )
        .await
    }

    async fn refine(&self, request: &RefineRequest) -> Result<String, PipelineError> {
        if !self.calls_model(Step::Refiner) {
            return self.offline.refine(request).await;
        }
        self.call(
            Step::Refiner,
            prompt::REFINER,
            prompt::refiner(request),
            reply::feedback,
        )
        .await
    }

    async fn answer(&self, request: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        if !self.calls_model(Step::AnswerSynthesizer) {
            return self.offline.answer(request).await;
        }
        self.call(
            Step::AnswerSynthesizer,
            prompt::ANSWER_SYNTHESIZER,
            prompt::answer_synthesizer(request),
            reply::final_answer,
        )
        .await
    }
}

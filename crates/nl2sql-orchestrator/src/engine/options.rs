//! Engine settings and per-question options.

use std::time::Duration;

use nl2sql_state::UserContext;
use tokio_util::sync::CancellationToken;

/// Settings of an [`crate::Engine`] (spec: config-and-security.md §3, errors-and-recovery.md
/// §3 and §6). `Default` gives the spec's defaults.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// `SQL_AGENT_MAX_RETRIES`: re-plans per scan after the first attempt (default 3).
    pub max_retries: u32,
    /// `SQL_AGENT_RETRY_BASE_DELAY_SEC` (default 1 s).
    pub retry_base_delay: Duration,
    /// `SQL_AGENT_RETRY_MAX_DELAY_SEC` (default 10 s).
    pub retry_max_delay: Duration,
    /// `SQL_AGENT_RETRY_JITTER_SEC` (default 0.5 s).
    pub retry_jitter: Duration,
    /// Seed of the jitter; `None` derives one from the trace id.
    pub jitter_seed: Option<u64>,
    /// `MAX_PARALLEL_SCANS` (default 4).
    pub max_parallel_scans: usize,
    /// `DECOMPOSER_MAX_RETRIES`: re-prompts after failed validation (default 1).
    pub decomposer_max_retries: u32,
    /// `GLOBAL_TIMEOUT_SEC`: the whole run (default 60 s).
    pub global_timeout: Duration,
    /// `LLM_TIMEOUT_SEC`: one planner call (default 60 s).
    pub planner_timeout: Duration,
    /// One database call (dry run, cost, execute) beyond its statement timeout
    /// (default 60 s).
    pub database_timeout: Duration,
    /// `PHYSICAL_MAX_COST`: a higher estimated cost blocks (default none).
    pub max_cost: Option<f64>,
    /// `LOGICAL_VALIDATOR_STRICT_COLUMNS` (default true).
    pub strict_columns: bool,
    /// Execute the SQL (false: stop after physical validation; plans and SQL are the
    /// output).
    pub execute: bool,
    /// "Today" for relative dates (`YYYY-MM-DD`), so plans are reproducible.
    pub today: Option<String>,
    /// Rows per terminal result handed to the answer step (default 200).
    pub answer_rows: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            max_retries: 3,
            retry_base_delay: Duration::from_secs(1),
            retry_max_delay: Duration::from_secs(10),
            retry_jitter: Duration::from_millis(500),
            jitter_seed: None,
            max_parallel_scans: 4,
            decomposer_max_retries: 1,
            global_timeout: Duration::from_secs(60),
            planner_timeout: Duration::from_secs(60),
            database_timeout: Duration::from_secs(60),
            max_cost: None,
            strict_columns: true,
            execute: true,
            today: None,
            answer_rows: 200,
        }
    }
}

/// Options of one question.
#[derive(Debug, Clone, Default)]
pub struct AskOptions {
    /// Who asks (roles drive RBAC when the engine has a policy file).
    pub user: UserContext,
    /// Use only this datasource (the resolver's explicit override).
    pub datasource: Option<String>,
    /// Cancels the run (every await point races against it).
    pub cancel: CancellationToken,
    /// A caller-supplied trace id (a UUID); a fresh one otherwise.
    pub trace_id: Option<nl2sql_state::TraceId>,
}

impl AskOptions {
    /// Options for a caller with `roles`.
    pub fn with_roles<I, S>(roles: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        AskOptions {
            user: UserContext {
                roles: roles.into_iter().map(Into::into).collect(),
                ..UserContext::default()
            },
            ..AskOptions::default()
        }
    }
}

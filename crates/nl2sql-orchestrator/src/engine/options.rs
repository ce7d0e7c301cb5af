//! Engine settings and per-question options.

use std::path::PathBuf;
use std::time::Duration;

use nl2sql_state::{ConfigError, EngineSection, MismatchPolicy, UserContext};
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
    /// `VALUE_GROUNDING_MAX_VALUES`: the value grounder reads at most this many distinct
    /// values of each text column a plan compares with a string (default 1,000); a larger
    /// column is searched for the plan's literals instead (case ignored). 0 turns
    /// grounding off.
    pub value_lookup_limit: usize,
    /// Execute the SQL (false: stop after physical validation; plans and SQL are the
    /// output).
    pub execute: bool,
    /// "Today" for relative dates (`YYYY-MM-DD`); `None`: the clock's date (UTC) when a
    /// run starts. Every planner request of a run carries the same date, and the run
    /// log records it, so a replay reads "last year" as the run did.
    pub today: Option<String>,
    /// Rows per terminal result handed to the answer step (default 200).
    pub answer_rows: usize,
    /// `SCHEMA_VERSION_MISMATCH_POLICY` (default warn).
    pub schema_version_mismatch: MismatchPolicy,
    /// `TENANT_ID`: the tenant of a caller whose user context names none (default
    /// `default_tenant`). It partitions artifact paths and is on every audit event, log
    /// record and metric of the run.
    pub default_tenant: String,
    /// `AUDIT_LOG_PATH`: the audit log file (default: `logs/audit_events.log` under the
    /// engine's data dir; none for an engine without one).
    pub audit_log: Option<PathBuf>,
    /// `SANDBOX_INDEX_WORKERS`: datasources snapshotted and indexed at once by
    /// [`crate::Engine::index_all`] and [`crate::Engine::index_stale`] (default 2; at
    /// least 1). Parsed by `nl2sql_index::IndexSettings::with_env`, not by
    /// [`EngineOptions::with_env`].
    pub index_workers: usize,
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
            value_lookup_limit: DEFAULT_VALUE_LOOKUP_LIMIT,
            execute: true,
            today: None,
            answer_rows: 200,
            schema_version_mismatch: MismatchPolicy::Warn,
            default_tenant: DEFAULT_TENANT.to_owned(),
            audit_log: None,
            index_workers: nl2sql_index::DEFAULT_INDEX_WORKERS,
        }
    }
}

/// The environment variables [`EngineOptions::with_env`] reads (spec:
/// config-and-security.md §2).
pub const ENGINE_ENV_VARS: [&str; 15] = [
    "SCHEMA_VERSION_MISMATCH_POLICY",
    "LOGICAL_VALIDATOR_STRICT_COLUMNS",
    "SQL_AGENT_MAX_RETRIES",
    "SQL_AGENT_RETRY_BASE_DELAY_SEC",
    "SQL_AGENT_RETRY_MAX_DELAY_SEC",
    "SQL_AGENT_RETRY_JITTER_SEC",
    "GLOBAL_TIMEOUT_SEC",
    "MAX_PARALLEL_SCANS",
    "SANDBOX_EXEC_WORKERS",
    "DECOMPOSER_MAX_RETRIES",
    "PHYSICAL_MAX_COST",
    "LLM_TIMEOUT_SEC",
    "TENANT_ID",
    "AUDIT_LOG_PATH",
    "VALUE_GROUNDING_MAX_VALUES",
];

/// The default of [`EngineOptions::value_lookup_limit`].
pub const DEFAULT_VALUE_LOOKUP_LIMIT: usize = 1_000;

/// The tenant of a caller that names none, unless `TENANT_ID` says otherwise.
pub const DEFAULT_TENANT: &str = "default_tenant";

fn env_error(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_owned(),
        message: message.into(),
    }
}

fn parse_u32(key: &str, v: &str) -> Result<u32, ConfigError> {
    v.trim()
        .parse()
        .map_err(|_| env_error(key, format!("'{v}' is not a whole number ≥ 0")))
}

fn parse_positive(key: &str, v: &str) -> Result<usize, ConfigError> {
    match v.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(env_error(key, format!("'{v}' is not a whole number > 0"))),
    }
}

fn parse_secs(key: &str, v: &str, allow_zero: bool) -> Result<Duration, ConfigError> {
    let n: f64 = v
        .trim()
        .parse()
        .map_err(|_| env_error(key, format!("'{v}' is not a number of seconds")))?;
    if !(n.is_finite() && (n > 0.0 || (allow_zero && n == 0.0))) {
        return Err(env_error(key, format!("'{v}' is out of range")));
    }
    Duration::try_from_secs_f64(n).map_err(|_| env_error(key, format!("'{v}' is out of range")))
}

impl EngineOptions {
    /// These options with the spec's environment settings that `lookup` finds
    /// ([`ENGINE_ENV_VARS`]; `MAX_PARALLEL_SCANS` wins over `SANDBOX_EXEC_WORKERS`). A value
    /// that does not parse is an error naming the variable: no setting is silently
    /// ignored.
    pub fn with_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = get("SCHEMA_VERSION_MISMATCH_POLICY") {
            self.schema_version_mismatch = match v.trim().to_ascii_lowercase().as_str() {
                "warn" => MismatchPolicy::Warn,
                "fail" => MismatchPolicy::Fail,
                "ignore" => MismatchPolicy::Ignore,
                _ => {
                    return Err(env_error(
                        "SCHEMA_VERSION_MISMATCH_POLICY",
                        format!("'{v}': expected warn, fail or ignore"),
                    ));
                }
            };
        }
        if let Some(v) = get("LOGICAL_VALIDATOR_STRICT_COLUMNS") {
            self.strict_columns = match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(env_error(
                        "LOGICAL_VALIDATOR_STRICT_COLUMNS",
                        format!("'{v}': expected true or false"),
                    ));
                }
            };
        }
        if let Some(v) = get("VALUE_GROUNDING_MAX_VALUES") {
            self.value_lookup_limit = parse_u32("VALUE_GROUNDING_MAX_VALUES", &v)? as usize;
        }
        if let Some(v) = get("SQL_AGENT_MAX_RETRIES") {
            self.max_retries = parse_u32("SQL_AGENT_MAX_RETRIES", &v)?;
        }
        if let Some(v) = get("DECOMPOSER_MAX_RETRIES") {
            self.decomposer_max_retries = parse_u32("DECOMPOSER_MAX_RETRIES", &v)?;
        }
        for (key, slot, zero) in [
            (
                "SQL_AGENT_RETRY_BASE_DELAY_SEC",
                &mut self.retry_base_delay,
                true,
            ),
            (
                "SQL_AGENT_RETRY_MAX_DELAY_SEC",
                &mut self.retry_max_delay,
                true,
            ),
            ("SQL_AGENT_RETRY_JITTER_SEC", &mut self.retry_jitter, true),
            ("GLOBAL_TIMEOUT_SEC", &mut self.global_timeout, false),
            ("LLM_TIMEOUT_SEC", &mut self.planner_timeout, false),
        ] {
            if let Some(v) = get(key) {
                *slot = parse_secs(key, &v, zero)?;
            }
        }
        if let Some(v) = get("SANDBOX_EXEC_WORKERS") {
            self.max_parallel_scans = parse_positive("SANDBOX_EXEC_WORKERS", &v)?;
        }
        if let Some(v) = get("MAX_PARALLEL_SCANS") {
            self.max_parallel_scans = parse_positive("MAX_PARALLEL_SCANS", &v)?;
        }
        if let Some(v) = get("PHYSICAL_MAX_COST") {
            let cost: f64 = v
                .trim()
                .parse()
                .map_err(|_| env_error("PHYSICAL_MAX_COST", format!("'{v}' is not a number")))?;
            if !(cost.is_finite() && cost > 0.0) {
                return Err(env_error("PHYSICAL_MAX_COST", format!("'{v}' must be > 0")));
            }
            self.max_cost = Some(cost);
        }
        if let Some(v) = get("TENANT_ID") {
            let v = v.trim();
            if !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                return Err(env_error(
                    "TENANT_ID",
                    format!("'{v}': use letters, digits, '_', '-' and '.' only"),
                ));
            }
            v.clone_into(&mut self.default_tenant);
        }
        if let Some(v) = get("AUDIT_LOG_PATH") {
            self.audit_log = Some(PathBuf::from(v.trim()));
        }
        Ok(self)
    }

    /// These options with every key the configuration's `[engine]` section sets.
    #[must_use]
    pub fn with_section(mut self, section: &EngineSection) -> Self {
        if let Some(p) = section.schema_version_mismatch {
            self.schema_version_mismatch = p;
        }
        if let Some(n) = section.max_parallel_scans {
            self.max_parallel_scans = n.max(1);
        }
        if let Some(n) = section.max_retries {
            self.max_retries = n;
        }
        if let Some(secs) = section.global_timeout_sec
            && let Ok(d) = Duration::try_from_secs_f64(secs)
        {
            self.global_timeout = d;
        }
        if let Some(c) = section.max_cost {
            self.max_cost = Some(c);
        }
        self
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
    /// Where to send the run's live events (each node as it starts and ends), for a
    /// caller that streams the run ([`RunEvents::channel`](super::runlog::RunEvents::channel)).
    pub events: Option<super::runlog::RunEvents>,
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

/// Today's date (UTC) by the system clock, as `YYYY-MM-DD`.
pub fn clock_today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i32::try_from(secs / 86_400).unwrap_or(0);
    let (y, m, d) = nl2sql_adapter::dataset::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

//! Error codes, severities and the pipeline error (spec: errors-and-recovery.md §1).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How serious a finding or failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    /// Information only.
    Info,
    /// Never blocks.
    Warning,
    /// Blocks; retryable unless the code is fatal.
    Error,
    /// Blocks; never retried.
    Critical,
}

impl Severity {
    /// `INFO`, `WARNING`, `ERROR` or `CRITICAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warning => "WARNING",
            Severity::Error => "ERROR",
            Severity::Critical => "CRITICAL",
        }
    }

    /// True for `ERROR` and `CRITICAL`.
    pub fn is_blocking(self) -> bool {
        matches!(self, Severity::Error | Severity::Critical)
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every stable error code of nl2sql. Codes serialise as their upper-case names; the list
/// is part of the public API (see `docs/error-codes.md`, generated from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// No model configured for a step (refiner).
    MissingLlm,
    /// Nothing to execute (executor).
    MissingSql,
    /// Sub-query without datasource (executor, physical validator).
    MissingDatasourceId,
    /// Validator called without a plan.
    MissingPlan,
    /// Unknown datasource override, no executor or capability, schema-version mismatch under `fail`, no compatible sub-graph, nothing to synthesise, second write of a set-once field.
    InvalidState,
    /// Structural plan or decomposition findings.
    InvalidPlanStructure,
    /// No datasource candidates, resolver failure, index unavailable, empty schema context.
    SchemaRetrievalFailed,
    /// SQL generator failure (including generated SQL that fails the guard).
    SqlGenFailed,
    /// Plan or SQL names an unknown or ambiguous table.
    TableNotFound,
    /// Unknown or ambiguous column.
    ColumnNotFound,
    /// A column uses an undeclared alias, or an alias is declared twice.
    InvalidAliasUsage,
    /// Aggregate and group-by are inconsistent (logical validator rule A3).
    MissingGroupBy,
    /// Date or datetime column compared with a malformed date (rule D1).
    InvalidDateFormat,
    /// Numeric column compared with a non-numeric value (rule N1).
    InvalidNumericValue,
    /// Join alias is not a plan table.
    JoinTableNotInPlan,
    /// Join condition lacks both sides or an equality.
    JoinMissingOnClause,
    /// RBAC denial, non-READ plan, missing datasource for policy, SQL guard rejections.
    SecurityViolation,
    /// Reserved: result blocked by data-protection safeguards.
    SafeguardViolation,
    /// Reserved: raw driver error (never shown raw).
    DbExecutionError,
    /// Unexpected executor or sandbox fault.
    ExecutorCrash,
    /// Planner produced no valid plan (model or parse error); decomposer after retries.
    PlanningFailure,
    /// The planner could not account for every part of the question (words it could not
    /// place in a plan, or readings that conflict): the question is refused, naming them,
    /// instead of answered with a guess. Not retried: the same question reads the same.
    AmbiguousQuestion,
    /// A value the plan compares a text column with is not among the column's values
    /// (checked through the adapter, case, accents and spacing ignored): refused, naming
    /// the nearest stored values. Retried: a planner that reads feedback can correct it.
    ValueNotFound,
    /// Unexpected validator fault.
    ValidatorCrash,
    /// Refiner failure.
    RefinerFailed,
    /// Unexpected physical-validator fault.
    PhysicalValidatorFailed,
    /// Kept for compatibility; never emitted (refiner feedback travels outside the error list).
    PlanFeedback,
    /// Uncaught fault at run level.
    UnknownError,
    /// Aggregation or answer-synthesis failure.
    AggregatorFailed,
    /// Cost estimate above limits.
    PerformanceWarning,
    /// Dry run found the SQL invalid.
    ExecutionError,
    /// Decomposer or internal orchestration failure.
    OrchestratorCrash,
    /// The question asks to change data (insert, update, delete, drop…).
    IntentViolation,
    /// Global deadline exceeded.
    PipelineTimeout,
    /// Circuit breaker open or dependency unreachable.
    ServiceUnavailable,
    /// Statement timeout.
    ExecutionTimeout,
    /// Run or retry cancelled.
    Cancelled,
    /// Adapter returned an unsuccessful result.
    ExecutionFailed,
    /// Global planner failure.
    PlannerFailed,
    /// SQL text does not parse, is empty, too large or nested too deeply (guard).
    SqlSyntaxError,
    /// Construct or function not allowed but not known to be dangerous (guard).
    UnsupportedSql,
}

/// An unknown error code name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error code '{0}'")]
pub struct UnknownErrorCode(pub String);

impl ErrorCode {
    /// Every code, in the order of the specification's table.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::MissingLlm,
        ErrorCode::MissingSql,
        ErrorCode::MissingDatasourceId,
        ErrorCode::MissingPlan,
        ErrorCode::InvalidState,
        ErrorCode::InvalidPlanStructure,
        ErrorCode::SchemaRetrievalFailed,
        ErrorCode::SqlGenFailed,
        ErrorCode::TableNotFound,
        ErrorCode::ColumnNotFound,
        ErrorCode::InvalidAliasUsage,
        ErrorCode::MissingGroupBy,
        ErrorCode::InvalidDateFormat,
        ErrorCode::InvalidNumericValue,
        ErrorCode::JoinTableNotInPlan,
        ErrorCode::JoinMissingOnClause,
        ErrorCode::SecurityViolation,
        ErrorCode::SafeguardViolation,
        ErrorCode::DbExecutionError,
        ErrorCode::ExecutorCrash,
        ErrorCode::PlanningFailure,
        ErrorCode::AmbiguousQuestion,
        ErrorCode::ValueNotFound,
        ErrorCode::ValidatorCrash,
        ErrorCode::RefinerFailed,
        ErrorCode::PhysicalValidatorFailed,
        ErrorCode::PlanFeedback,
        ErrorCode::UnknownError,
        ErrorCode::AggregatorFailed,
        ErrorCode::PerformanceWarning,
        ErrorCode::ExecutionError,
        ErrorCode::OrchestratorCrash,
        ErrorCode::IntentViolation,
        ErrorCode::PipelineTimeout,
        ErrorCode::ServiceUnavailable,
        ErrorCode::ExecutionTimeout,
        ErrorCode::Cancelled,
        ErrorCode::ExecutionFailed,
        ErrorCode::PlannerFailed,
        ErrorCode::SqlSyntaxError,
        ErrorCode::UnsupportedSql,
    ];

    /// The stable upper-case name, e.g. `SECURITY_VIOLATION`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::MissingLlm => "MISSING_LLM",
            ErrorCode::MissingSql => "MISSING_SQL",
            ErrorCode::MissingDatasourceId => "MISSING_DATASOURCE_ID",
            ErrorCode::MissingPlan => "MISSING_PLAN",
            ErrorCode::InvalidState => "INVALID_STATE",
            ErrorCode::InvalidPlanStructure => "INVALID_PLAN_STRUCTURE",
            ErrorCode::SchemaRetrievalFailed => "SCHEMA_RETRIEVAL_FAILED",
            ErrorCode::SqlGenFailed => "SQL_GEN_FAILED",
            ErrorCode::TableNotFound => "TABLE_NOT_FOUND",
            ErrorCode::ColumnNotFound => "COLUMN_NOT_FOUND",
            ErrorCode::InvalidAliasUsage => "INVALID_ALIAS_USAGE",
            ErrorCode::MissingGroupBy => "MISSING_GROUP_BY",
            ErrorCode::InvalidDateFormat => "INVALID_DATE_FORMAT",
            ErrorCode::InvalidNumericValue => "INVALID_NUMERIC_VALUE",
            ErrorCode::JoinTableNotInPlan => "JOIN_TABLE_NOT_IN_PLAN",
            ErrorCode::JoinMissingOnClause => "JOIN_MISSING_ON_CLAUSE",
            ErrorCode::SecurityViolation => "SECURITY_VIOLATION",
            ErrorCode::SafeguardViolation => "SAFEGUARD_VIOLATION",
            ErrorCode::DbExecutionError => "DB_EXECUTION_ERROR",
            ErrorCode::ExecutorCrash => "EXECUTOR_CRASH",
            ErrorCode::PlanningFailure => "PLANNING_FAILURE",
            ErrorCode::AmbiguousQuestion => "AMBIGUOUS_QUESTION",
            ErrorCode::ValueNotFound => "VALUE_NOT_FOUND",
            ErrorCode::ValidatorCrash => "VALIDATOR_CRASH",
            ErrorCode::RefinerFailed => "REFINER_FAILED",
            ErrorCode::PhysicalValidatorFailed => "PHYSICAL_VALIDATOR_FAILED",
            ErrorCode::PlanFeedback => "PLAN_FEEDBACK",
            ErrorCode::UnknownError => "UNKNOWN_ERROR",
            ErrorCode::AggregatorFailed => "AGGREGATOR_FAILED",
            ErrorCode::PerformanceWarning => "PERFORMANCE_WARNING",
            ErrorCode::ExecutionError => "EXECUTION_ERROR",
            ErrorCode::OrchestratorCrash => "ORCHESTRATOR_CRASH",
            ErrorCode::IntentViolation => "INTENT_VIOLATION",
            ErrorCode::PipelineTimeout => "PIPELINE_TIMEOUT",
            ErrorCode::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            ErrorCode::ExecutionTimeout => "EXECUTION_TIMEOUT",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ErrorCode::PlannerFailed => "PLANNER_FAILED",
            ErrorCode::SqlSyntaxError => "SQL_SYNTAX_ERROR",
            ErrorCode::UnsupportedSql => "UNSUPPORTED_SQL",
        }
    }

    /// What the code means and where it is emitted, in one line.
    pub fn description(self) -> &'static str {
        match self {
            ErrorCode::MissingLlm => "no model configured for a step (refiner)",
            ErrorCode::MissingSql => "nothing to execute (executor)",
            ErrorCode::MissingDatasourceId => {
                "sub-query without datasource (executor, physical validator)"
            }
            ErrorCode::MissingPlan => "validator called without a plan",
            ErrorCode::InvalidState => {
                "unknown datasource override, no executor or capability, schema-version mismatch under `fail`, no compatible sub-graph, nothing to synthesise, second write of a set-once field"
            }
            ErrorCode::InvalidPlanStructure => "structural plan or decomposition findings",
            ErrorCode::SchemaRetrievalFailed => {
                "no datasource candidates, resolver failure, index unavailable, empty schema context"
            }
            ErrorCode::SqlGenFailed => {
                "SQL generator failure (including generated SQL that fails the guard)"
            }
            ErrorCode::TableNotFound => "plan or SQL names an unknown or ambiguous table",
            ErrorCode::ColumnNotFound => "unknown or ambiguous column",
            ErrorCode::InvalidAliasUsage => {
                "a column uses an undeclared alias, or an alias is declared twice"
            }
            ErrorCode::MissingGroupBy => {
                "aggregate and group-by are inconsistent (logical validator rule A3)"
            }
            ErrorCode::InvalidDateFormat => {
                "date or datetime column compared with a malformed date (rule D1)"
            }
            ErrorCode::InvalidNumericValue => {
                "numeric column compared with a non-numeric value (rule N1)"
            }
            ErrorCode::JoinTableNotInPlan => "join alias is not a plan table",
            ErrorCode::JoinMissingOnClause => "join condition lacks both sides or an equality",
            ErrorCode::SecurityViolation => {
                "RBAC denial, non-READ plan, missing datasource for policy, SQL guard rejections"
            }
            ErrorCode::SafeguardViolation => {
                "reserved: result blocked by data-protection safeguards"
            }
            ErrorCode::DbExecutionError => "reserved: raw driver error (never shown raw)",
            ErrorCode::ExecutorCrash => "unexpected executor or sandbox fault",
            ErrorCode::PlanningFailure => {
                "planner produced no valid plan (model or parse error); decomposer after retries"
            }
            ErrorCode::AmbiguousQuestion => {
                "the planner could not place every word of the question in a plan (offline planner): refused, naming them, with suggestions; not retried"
            }
            ErrorCode::ValueNotFound => {
                "a value the plan compares a text column with is not among the column's values (value grounder: a guarded lookup through the adapter; case, accents and spacing ignored): refused, naming the nearest stored values"
            }
            ErrorCode::ValidatorCrash => "unexpected validator fault",
            ErrorCode::RefinerFailed => "refiner failure",
            ErrorCode::PhysicalValidatorFailed => "unexpected physical-validator fault",
            ErrorCode::PlanFeedback => {
                "kept for compatibility; never emitted (refiner feedback travels outside the error list)"
            }
            ErrorCode::UnknownError => "uncaught fault at run level",
            ErrorCode::AggregatorFailed => "aggregation or answer-synthesis failure",
            ErrorCode::PerformanceWarning => "cost estimate above limits",
            ErrorCode::ExecutionError => "dry run found the SQL invalid",
            ErrorCode::OrchestratorCrash => "decomposer or internal orchestration failure",
            ErrorCode::IntentViolation => {
                "the question asks to change data (insert, update, delete, drop…)"
            }
            ErrorCode::PipelineTimeout => "global deadline exceeded",
            ErrorCode::ServiceUnavailable => "circuit breaker open or dependency unreachable",
            ErrorCode::ExecutionTimeout => "statement timeout",
            ErrorCode::Cancelled => "run or retry cancelled",
            ErrorCode::ExecutionFailed => "adapter returned an unsuccessful result",
            ErrorCode::PlannerFailed => "global planner failure",
            ErrorCode::SqlSyntaxError => {
                "SQL text does not parse, is empty, too large or nested too deeply (guard)"
            }
            ErrorCode::UnsupportedSql => {
                "construct or function not allowed but not known to be dangerous (guard)"
            }
        }
    }

    /// The severity the code is usually emitted with.
    pub fn default_severity(self) -> Severity {
        match self {
            ErrorCode::MissingLlm => Severity::Error,
            ErrorCode::MissingSql => Severity::Error,
            ErrorCode::MissingDatasourceId => Severity::Error,
            ErrorCode::MissingPlan => Severity::Critical,
            ErrorCode::InvalidState => Severity::Error,
            ErrorCode::InvalidPlanStructure => Severity::Error,
            ErrorCode::SchemaRetrievalFailed => Severity::Error,
            ErrorCode::SqlGenFailed => Severity::Error,
            ErrorCode::TableNotFound => Severity::Error,
            ErrorCode::ColumnNotFound => Severity::Error,
            ErrorCode::InvalidAliasUsage => Severity::Error,
            ErrorCode::MissingGroupBy => Severity::Error,
            ErrorCode::InvalidDateFormat => Severity::Error,
            ErrorCode::InvalidNumericValue => Severity::Error,
            ErrorCode::JoinTableNotInPlan => Severity::Error,
            ErrorCode::JoinMissingOnClause => Severity::Error,
            ErrorCode::SecurityViolation => Severity::Critical,
            ErrorCode::SafeguardViolation => Severity::Critical,
            ErrorCode::DbExecutionError => Severity::Error,
            ErrorCode::ExecutorCrash => Severity::Critical,
            ErrorCode::PlanningFailure => Severity::Error,
            ErrorCode::AmbiguousQuestion => Severity::Error,
            ErrorCode::ValueNotFound => Severity::Error,
            ErrorCode::ValidatorCrash => Severity::Error,
            ErrorCode::RefinerFailed => Severity::Error,
            ErrorCode::PhysicalValidatorFailed => Severity::Error,
            ErrorCode::PlanFeedback => Severity::Warning,
            ErrorCode::UnknownError => Severity::Error,
            ErrorCode::AggregatorFailed => Severity::Error,
            ErrorCode::PerformanceWarning => Severity::Warning,
            ErrorCode::ExecutionError => Severity::Error,
            ErrorCode::OrchestratorCrash => Severity::Critical,
            ErrorCode::IntentViolation => Severity::Critical,
            ErrorCode::PipelineTimeout => Severity::Error,
            ErrorCode::ServiceUnavailable => Severity::Critical,
            ErrorCode::ExecutionTimeout => Severity::Error,
            ErrorCode::Cancelled => Severity::Error,
            ErrorCode::ExecutionFailed => Severity::Error,
            ErrorCode::PlannerFailed => Severity::Error,
            ErrorCode::SqlSyntaxError => Severity::Error,
            ErrorCode::UnsupportedSql => Severity::Error,
        }
    }

    /// True for the fatal set: never retried, whatever the severity.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            ErrorCode::MissingLlm
                | ErrorCode::MissingDatasourceId
                | ErrorCode::InvalidState
                | ErrorCode::SecurityViolation
                | ErrorCode::SafeguardViolation
                | ErrorCode::IntentViolation
                | ErrorCode::AmbiguousQuestion
                | ErrorCode::PipelineTimeout
                | ErrorCode::Cancelled
        )
    }

    /// True for a fault of the machinery rather than of the plan (a timeout, an
    /// unavailable or failing database, a crashed validator or executor): the same plan
    /// may pass on another attempt. A planner that ignores feedback is retried only for
    /// these.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorCode::ExecutionTimeout
                | ErrorCode::ServiceUnavailable
                | ErrorCode::ExecutionFailed
                | ErrorCode::DbExecutionError
                | ErrorCode::ExecutorCrash
                | ErrorCode::ValidatorCrash
                | ErrorCode::PhysicalValidatorFailed
                | ErrorCode::UnknownError
        )
    }

    /// The fixed text shown instead of the message wherever text leaves the engine.
    pub fn safe_message(self) -> Option<&'static str> {
        match self {
            ErrorCode::MissingDatasourceId => Some("Datasource configuration error."),
            ErrorCode::SafeguardViolation => {
                Some("The query result was blocked by data protection safeguards.")
            }
            ErrorCode::DbExecutionError => {
                Some("An internal database error occurred while executing the query.")
            }
            ErrorCode::ExecutorCrash => {
                Some("The query execution service encountered an unexpected error.")
            }
            ErrorCode::ValidatorCrash => {
                Some("The validation service encountered an unexpected error.")
            }
            _ => None,
        }
    }
}

impl FromStr for ErrorCode {
    type Err = UnknownErrorCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownErrorCode(s.to_owned()))
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure or finding anywhere in the pipeline: a value, never a panic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PipelineError {
    /// The node that emitted it.
    pub node: String,
    /// Human-readable and actionable.
    pub message: String,
    /// How serious it is.
    pub severity: Severity,
    /// The stable code (the reference's `error_code` key is accepted on input).
    #[serde(alias = "error_code")]
    pub code: ErrorCode,
    /// Debug detail; left empty in user-facing output.
    #[serde(default)]
    pub stack_trace: Option<String>,
    /// JSON path, suggestions, known values, engine error class.
    /// Boxed to keep the error small.
    #[serde(default)]
    pub details: Option<Box<serde_json::Value>>,
}

impl PipelineError {
    /// A new error from `node`.
    pub fn new(
        node: impl Into<String>,
        code: ErrorCode,
        severity: Severity,
        message: impl Into<String>,
    ) -> Self {
        PipelineError {
            node: node.into(),
            message: message.into(),
            severity,
            code,
            stack_trace: None,
            details: None,
        }
    }

    /// The same error with `details`.
    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// True when a retry may help: not critical and not in the fatal set.
    pub fn is_retryable(&self) -> bool {
        self.severity != Severity::Critical && !self.code.is_fatal()
    }

    /// True when it blocks (severity `ERROR` or `CRITICAL`).
    pub fn is_blocking(&self) -> bool {
        self.severity.is_blocking()
    }

    /// The code's fixed safe message when it has one, else the message.
    pub fn safe_message(&self) -> &str {
        self.code.safe_message().unwrap_or(&self.message)
    }
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

impl std::error::Error for PipelineError {}

/// The result type of nl2sql's library crates.
pub type Result<T, E = PipelineError> = std::result::Result<T, E>;

/// Removes what must not leave the engine from an engine's error text (connection
/// strings, credentials in URLs, host names, absolute paths, secret-looking tokens) and
/// truncates it to 500 characters.
pub fn sanitize_engine_message(msg: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for word in msg.split_whitespace() {
        let trimmed = word.trim_matches(|c: char| matches!(c, '\'' | '"' | ',' | ';' | '(' | ')'));
        let lower = trimmed.to_ascii_lowercase();
        let replacement = if lower.contains("://") {
            Some("<url>")
        } else if lower.starts_with("password=")
            || lower.starts_with("pwd=")
            || lower.starts_with("user=")
            || lower.starts_with("host=")
            || lower.starts_with("hostaddr=")
            || lower.starts_with("dbname=")
        {
            Some("<connection>")
        } else if trimmed.starts_with('/') && trimmed.len() > 1
            || trimmed.starts_with("~/")
            || (trimmed.len() > 2
                && trimmed.as_bytes()[1] == b':'
                && trimmed.as_bytes()[2] == b'\\')
        {
            Some("<path>")
        } else if looks_like_secret(trimmed) {
            Some("<secret>")
        } else if looks_like_host(trimmed) {
            Some("<host>")
        } else {
            None
        };
        out.push(match replacement {
            Some(r) => word.replace(trimmed, r),
            None => word.to_owned(),
        });
    }
    let joined = out.join(" ");
    if joined.chars().count() > 500 {
        let mut cut: String = joined.chars().take(497).collect();
        cut.push_str("...");
        cut
    } else {
        joined
    }
}

fn looks_like_secret(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.starts_with("sk-")
        || lower.starts_with("api_key=")
        || lower.starts_with("token=")
        || lower.starts_with("secret=")
        || (word.len() >= 32
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_alphabetic()))
}

fn looks_like_host(word: &str) -> bool {
    let host = word.split(':').next().unwrap_or(word);
    let is_ip = host.split('.').count() == 4
        && host
            .split('.')
            .all(|p| !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_digit()));
    let is_fqdn = host.contains('.')
        && host.split('.').count() >= 2
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        && host.split('.').next_back().is_some_and(|tld| {
            matches!(
                tld,
                "com" | "net" | "org" | "io" | "internal" | "local" | "cloud" | "dev"
            )
        });
    is_ip || is_fqdn
}

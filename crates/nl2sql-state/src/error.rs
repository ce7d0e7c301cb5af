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

/// Declares [`ErrorCode`] and every table about it from one list: one row per code, in
/// the order of the specification's table, with its stable name, default severity, whether
/// it is fatal (never retried) and transient (a fault of the machinery), the fixed text
/// shown instead of its message, and its description (also its rustdoc and its row in
/// `docs/error-codes.md`). A new code is one new row.
macro_rules! error_codes {
    ($(
        $variant:ident = $name:literal, $severity:ident, fatal: $fatal:literal,
        transient: $transient:literal, safe: $safe:expr, $description:literal;
    )+) => {
        /// Every stable error code of nl2sql. Codes serialise as their upper-case names;
        /// the list is part of the public API (see `docs/error-codes.md`, generated from it).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        pub enum ErrorCode {
            $(
                #[doc = $description]
                #[serde(rename = $name)]
                $variant,
            )+
        }

        impl ErrorCode {
            /// Every code, in the order of the specification's table.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The stable upper-case name, e.g. `SECURITY_VIOLATION`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)+
                }
            }

            /// What the code means and where it is emitted, in one line.
            pub fn description(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $description,)+
                }
            }

            /// The severity the code is usually emitted with.
            pub fn default_severity(self) -> Severity {
                match self {
                    $(ErrorCode::$variant => Severity::$severity,)+
                }
            }

            /// True for the fatal set: never retried, whatever the severity.
            pub fn is_fatal(self) -> bool {
                match self {
                    $(ErrorCode::$variant => $fatal,)+
                }
            }

            /// True for a fault of the machinery rather than of the plan (a timeout, an
            /// unavailable or failing database, a crashed validator or executor): the same
            /// plan may pass on another attempt. A planner that ignores feedback is retried
            /// only for these.
            pub fn is_transient(self) -> bool {
                match self {
                    $(ErrorCode::$variant => $transient,)+
                }
            }

            /// The fixed text shown instead of the message wherever text leaves the engine.
            pub fn safe_message(self) -> Option<&'static str> {
                match self {
                    $(ErrorCode::$variant => $safe,)+
                }
            }
        }
    };
}

error_codes! {
    MissingLlm = "MISSING_LLM", Error, fatal: true, transient: false, safe: None,
        "no model configured for a step (refiner)";
    MissingSql = "MISSING_SQL", Error, fatal: false, transient: false, safe: None,
        "nothing to execute (executor)";
    MissingDatasourceId = "MISSING_DATASOURCE_ID", Error, fatal: true, transient: false, safe: Some("Datasource configuration error."),
        "sub-query without datasource (executor, physical validator)";
    MissingPlan = "MISSING_PLAN", Critical, fatal: false, transient: false, safe: None,
        "validator called without a plan";
    InvalidState = "INVALID_STATE", Error, fatal: true, transient: false, safe: None,
        "unknown datasource override, no executor or capability, schema-version mismatch under `fail`, no compatible sub-graph, nothing to synthesise, second write of a set-once field";
    InvalidPlanStructure = "INVALID_PLAN_STRUCTURE", Error, fatal: false, transient: false, safe: None,
        "structural plan or decomposition findings";
    SchemaRetrievalFailed = "SCHEMA_RETRIEVAL_FAILED", Error, fatal: false, transient: false, safe: None,
        "no datasource candidates, resolver failure, index unavailable, empty schema context";
    SqlGenFailed = "SQL_GEN_FAILED", Error, fatal: false, transient: false, safe: None,
        "SQL generator failure (including generated SQL that fails the guard)";
    TableNotFound = "TABLE_NOT_FOUND", Error, fatal: false, transient: false, safe: None,
        "plan or SQL names an unknown or ambiguous table";
    ColumnNotFound = "COLUMN_NOT_FOUND", Error, fatal: false, transient: false, safe: None,
        "unknown or ambiguous column";
    InvalidAliasUsage = "INVALID_ALIAS_USAGE", Error, fatal: false, transient: false, safe: None,
        "a column uses an undeclared alias, or an alias is declared twice";
    MissingGroupBy = "MISSING_GROUP_BY", Error, fatal: false, transient: false, safe: None,
        "aggregate and group-by are inconsistent (logical validator rule A3)";
    InvalidDateFormat = "INVALID_DATE_FORMAT", Error, fatal: false, transient: false, safe: None,
        "date or datetime column compared with a malformed date (rule D1)";
    InvalidNumericValue = "INVALID_NUMERIC_VALUE", Error, fatal: false, transient: false, safe: None,
        "numeric column compared with a non-numeric value (rule N1)";
    JoinTableNotInPlan = "JOIN_TABLE_NOT_IN_PLAN", Error, fatal: false, transient: false, safe: None,
        "join alias is not a plan table";
    JoinMissingOnClause = "JOIN_MISSING_ON_CLAUSE", Error, fatal: false, transient: false, safe: None,
        "join condition lacks both sides or an equality";
    SecurityViolation = "SECURITY_VIOLATION", Critical, fatal: true, transient: false, safe: None,
        "RBAC denial, non-READ plan, missing datasource for policy, SQL guard rejections";
    SafeguardViolation = "SAFEGUARD_VIOLATION", Critical, fatal: true, transient: false, safe: Some("The query result was blocked by data protection safeguards."),
        "reserved: result blocked by data-protection safeguards";
    DbExecutionError = "DB_EXECUTION_ERROR", Error, fatal: false, transient: true, safe: Some("An internal database error occurred while executing the query."),
        "reserved: raw driver error (never shown raw)";
    ExecutorCrash = "EXECUTOR_CRASH", Critical, fatal: false, transient: true, safe: Some("The query execution service encountered an unexpected error."),
        "unexpected executor or sandbox fault";
    PlanningFailure = "PLANNING_FAILURE", Error, fatal: false, transient: false, safe: None,
        "planner produced no valid plan (model or parse error); decomposer after retries";
    AmbiguousQuestion = "AMBIGUOUS_QUESTION", Error, fatal: true, transient: false, safe: None,
        "the planner could not place every word of the question in a plan, or is not confident enough of its reading (offline planner): refused, naming the words or what lowered the confidence, with suggestions; not retried";
    ValueNotFound = "VALUE_NOT_FOUND", Error, fatal: false, transient: false, safe: None,
        "a value the plan compares a text column with is not among the column's values (value grounder: a guarded lookup through the adapter; case, accents and spacing ignored): refused, naming the nearest stored values";
    ValidatorCrash = "VALIDATOR_CRASH", Error, fatal: false, transient: true, safe: Some("The validation service encountered an unexpected error."),
        "unexpected validator fault";
    RefinerFailed = "REFINER_FAILED", Error, fatal: false, transient: false, safe: None,
        "refiner failure";
    PhysicalValidatorFailed = "PHYSICAL_VALIDATOR_FAILED", Error, fatal: false, transient: true, safe: None,
        "unexpected physical-validator fault";
    PlanFeedback = "PLAN_FEEDBACK", Warning, fatal: false, transient: false, safe: None,
        "kept for compatibility; never emitted (refiner feedback travels outside the error list)";
    UnknownError = "UNKNOWN_ERROR", Error, fatal: false, transient: true, safe: None,
        "uncaught fault at run level";
    AggregatorFailed = "AGGREGATOR_FAILED", Error, fatal: false, transient: false, safe: None,
        "aggregation or answer-synthesis failure";
    PerformanceWarning = "PERFORMANCE_WARNING", Warning, fatal: false, transient: false, safe: None,
        "cost estimate above limits";
    ExecutionError = "EXECUTION_ERROR", Error, fatal: false, transient: false, safe: None,
        "dry run found the SQL invalid";
    OrchestratorCrash = "ORCHESTRATOR_CRASH", Critical, fatal: false, transient: false, safe: None,
        "decomposer or internal orchestration failure";
    IntentViolation = "INTENT_VIOLATION", Critical, fatal: true, transient: false, safe: None,
        "the question asks to change data (insert, update, delete, drop…)";
    PipelineTimeout = "PIPELINE_TIMEOUT", Error, fatal: true, transient: false, safe: None,
        "global deadline exceeded";
    ServiceUnavailable = "SERVICE_UNAVAILABLE", Critical, fatal: false, transient: true, safe: None,
        "circuit breaker open or dependency unreachable";
    ExecutionTimeout = "EXECUTION_TIMEOUT", Error, fatal: false, transient: true, safe: None,
        "statement timeout";
    Cancelled = "CANCELLED", Error, fatal: true, transient: false, safe: None,
        "run or retry cancelled";
    ExecutionFailed = "EXECUTION_FAILED", Error, fatal: false, transient: true, safe: None,
        "adapter returned an unsuccessful result";
    PlannerFailed = "PLANNER_FAILED", Error, fatal: false, transient: false, safe: None,
        "global planner failure";
    SqlSyntaxError = "SQL_SYNTAX_ERROR", Error, fatal: false, transient: false, safe: None,
        "SQL text does not parse, is empty, too large or nested too deeply (guard)";
    UnsupportedSql = "UNSUPPORTED_SQL", Error, fatal: false, transient: false, safe: None,
        "construct or function not allowed but not known to be dangerous (guard)";
}

/// An unknown error code name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown error code '{0}'")]
pub struct UnknownErrorCode(pub String);

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
    /// The scan (`sql_agent:<node_id>:<trace_id>`) whose error this is, once a scan's
    /// errors are merged into the run's state; absent for errors of the main graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subgraph_id: Option<Box<str>>,
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
            subgraph_id: None,
        }
    }

    /// The same error, marked as an error of the scan `subgraph_id`.
    #[must_use]
    pub fn in_subgraph(mut self, subgraph_id: &str) -> Self {
        self.subgraph_id = Some(subgraph_id.into());
        self
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

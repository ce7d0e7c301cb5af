//! The nl2sql pipeline. [`Engine::ask`] answers a question: RBAC resolution, decomposition
//! (progressively validated), the `ExecutionDag`, each layer's scans run concurrently
//! through the SQL agent (retrieve tables, plan, logical validation, SQL generation,
//! physical validation, sandboxed execution, parquet artifact; retries through the refiner
//! with backoff), aggregation and the answer, under a global timeout and a cancellation
//! token, with a JSON-lines run log. Also: the datasource registry ([`DatasourceRegistry`]:
//! configured datasources opened through the [`Drivers`] it is given), validation of SQL
//! against a live datasource ([`validate_sql_live`]), the planner choice
//! ([`build_planner`]) and the Spider benchmark runner ([`spider`]).
//!
//! This crate links no database driver: it sees datasources only through the adapter SPI
//! (`nl2sql-adapter`). The `nl2sql` binary's drivers (one cargo feature per engine) are
//! `nl2sql-drivers`; the demo datasets are `nl2sql-demo`.

mod config;
mod datasources;
mod engine;
mod live;
mod planners;
pub mod spider;

pub use config::{artifact_store, load_docs};
pub use datasources::{
    DEFAULT_LIMIT_VARS, DatasourceRegistry, WORKER_PROGRAM_VAR, default_limits_from, effective_url,
    limits_of,
};
pub use engine::{
    AUDIT_BACKUPS, AUDIT_MAX_BYTES, AskOptions, AttemptReport, AuditLog, DEFAULT_TENANT,
    DEFAULT_VALUE_LOOKUP_LIMIT, ENGINE_ENV_VARS, Engine, EngineOptions, ErrorReport,
    FINAL_STATE_NODE, RunEvent, RunEvents, RunLogEntry, RunResult, SubQueryReport, TerminalTable,
    clock_today, read_run_log, recorded_question, redact, run_log_path, write_replay_cassette,
};
pub use live::{LiveReport, validate_sql_live};
pub use nl2sql_adapter::{Drivers, WorkerCommand};
pub use nl2sql_index::{DatasourceDocs, IndexProgress, IndexReport, IndexStep};
pub use nl2sql_planner::Planner;
pub use planners::{PlannerChoice, build_planner};

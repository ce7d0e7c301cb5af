//! The adapter SPI of nl2sql: the only way the engine talks to a datasource.
//!
//! [`DatasourceAdapter`] is the async trait every driver crate implements
//! (`nl2sql-adapter-sqlite`, `-postgres`, `-mysql`). Its outputs are plain data:
//! [`ResultFrame`] (Arrow record batches, `row_count`, `truncated`, [`ExecutionStats`]) or
//! a [`ResultError`] with a code, a safe message and retryability, never the driver's raw
//! text. [`ResultBuilder`] turns driver rows into Arrow under the row and byte
//! [`Limits`]; [`CircuitBreaker`] guards one datasource; [`validate_physical`] runs the
//! physical validator (guard → dry run → cost); [`compare`] is the result-comparison
//! rule of the accuracy benchmarks. `conformance` (the suite every adapter crate runs
//! from its tests) and `differential` (the guard/engine reading corpus) are compiled
//! only with the `conformance` feature, which only tests turn on. Every statement an
//! adapter takes is a `nl2sql_validate::GuardedSql`.
//!
//! [`Driver`] is what opens a configured datasource of one engine (each adapter crate
//! exports one); a [`Drivers`] set is what the datasource registry opens datasources with.
//!
//! This crate links no database driver.

mod breaker;
mod collect;
pub mod compare;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
pub mod dataset;
#[cfg(any(test, feature = "conformance"))]
pub mod differential;
mod driver;
pub mod fixture;
pub mod introspect;
pub mod json_plan;
mod physical;
mod retry;
mod spi;
mod types;

#[cfg(test)]
mod tests;

pub use breaker::{
    BreakerConfig, BreakerState, CircuitBreaker, DatasourceBreaker, Permit, PermitOutcome,
};
pub use collect::{Cell, ColumnKind, Push, ResultBuilder};
pub use dataset::{
    DatasetColumn, DatasetForeignKey, DatasetSpec, DatasetTable, DatasetType, DatasetValue,
};
pub use driver::{AdapterInfo, ConnectRequest, Driver, Drivers, ProcessDriver, WorkerCommand};
pub use physical::{PhysicalReport, PhysicalSettings, validate_physical};
pub use retry::{Attempt, Ran, SessionOp, SessionOut, SpawnOnDrop, retry_once_when_lost};
pub use spi::{DatasourceAdapter, dialect_mismatch, shape_check};
pub use types::{
    AdapterOptions, AdapterRequest, Capability, CapabilitySet, CostEstimate,
    DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_BYTES, DEFAULT_ROW_LIMIT,
    DEFAULT_SCHEMA_STATS_SAMPLE_ROWS, DEFAULT_SCHEMA_STATS_TIMEOUT_MS,
    DEFAULT_STATEMENT_TIMEOUT_MS, DryRunResult, ExecutionStats, Limits, PlanFormat, QueryPlan,
    RequestLimits, ResultError, ResultErrorCode, ResultFrame, TruncatedReason,
};

//! The nl2sql pipeline. Today: the datasource registry, which turns the configuration
//! file's datasources into adapters ([`DatasourceRegistry`], [`connect`]: a compile-time
//! registry with one cargo feature per engine), and validation of SQL against a live
//! datasource ([`validate_sql_live`]: the guard over the live schema, then EXPLAIN dry run
//! and cost). DAG scheduling, retries and the `Engine` facade arrive with the pipeline.

mod datasources;
mod live;

pub use datasources::{DatasourceRegistry, connect, effective_url, limits_of};
pub use live::{LiveReport, validate_sql_live};

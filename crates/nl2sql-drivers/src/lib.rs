//! The compile-time driver registry of the `nl2sql` binary (spec: adapters.md §1): one
//! cargo feature per engine (`sqlite`, the default; `duckdb`; `postgres`; `mysql`), and the
//! worker processes of `isolation = "process"` datasources, which come with the embedded
//! engines.
//!
//! [`compiled`] is the [`Drivers`] set a datasource registry opens datasources with;
//! [`compiled_adapters`] describes it (`nl2sql list-adapters`). The worker side of
//! process isolation (`nl2sql worker`) is re-exported as [`worker`]. Nothing below this
//! crate knows which engines a build has: the orchestrator sees only the adapter SPI.

pub use nl2sql_adapter::{AdapterInfo, Drivers, WorkerCommand};

/// The worker processes of `isolation = "process"` (the `nl2sql worker` subcommand runs
/// [`worker::run_worker`]).
#[cfg(any(feature = "sqlite", feature = "duckdb"))]
pub use nl2sql_worker as worker;

/// The drivers this build has: one per engine whose cargo feature is on, and the worker
/// processes with an embedded engine.
pub fn compiled() -> Drivers {
    #[allow(unused_mut)] // reason: unused when every engine feature is off
    let mut drivers = Drivers::none();
    #[cfg(feature = "duckdb")]
    {
        drivers = drivers.with(nl2sql_adapter_duckdb::DuckDbDriver);
    }
    #[cfg(feature = "sqlite")]
    {
        drivers = drivers.with(nl2sql_adapter_sqlite::SqliteDriver);
    }
    #[cfg(feature = "postgres")]
    {
        drivers = drivers.with(nl2sql_adapter_postgres::PostgresDriver);
    }
    #[cfg(feature = "mysql")]
    {
        drivers = drivers.with(nl2sql_adapter_mysql::MySqlDriver);
    }
    #[cfg(any(feature = "sqlite", feature = "duckdb"))]
    {
        drivers = drivers.with_process(nl2sql_worker::WorkerDriver::default());
    }
    drivers
}

/// The adapters this build can connect to, in `Engine::ALL` order; an engine whose cargo
/// feature is off is absent.
pub fn compiled_adapters() -> Vec<AdapterInfo> {
    compiled().adapters()
}

#[cfg(test)]
mod tests {
    use nl2sql_state::Engine;

    use super::*;

    #[test]
    fn every_enabled_feature_has_its_driver_and_no_other() {
        let engines: Vec<Engine> = compiled_adapters().iter().map(|a| a.engine).collect();
        let expected: Vec<Engine> = Engine::ALL
            .into_iter()
            .filter(|e| match e {
                Engine::Duckdb => cfg!(feature = "duckdb"),
                Engine::Sqlite => cfg!(feature = "sqlite"),
                Engine::Postgres => cfg!(feature = "postgres"),
                Engine::Mysql => cfg!(feature = "mysql"),
            })
            .collect();
        assert_eq!(engines, expected);
        for info in compiled_adapters() {
            assert_eq!(
                info.implementation,
                format!("nl2sql-adapter-{}", info.engine.as_str())
            );
            assert_eq!(info.schemes, info.engine.schemes());
            assert_eq!(info.dialect, info.engine.dialect());
        }
    }
}

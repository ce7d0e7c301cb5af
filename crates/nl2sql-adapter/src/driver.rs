//! Drivers: what turns a configured datasource into a [`DatasourceAdapter`] without the
//! caller knowing the engine's crate.
//!
//! Each adapter crate exports one [`Driver`] (`nl2sql_adapter_sqlite::SqliteDriver`, …);
//! the worker crate exports the [`ProcessDriver`] of `isolation = "process"`
//! datasources. A [`Drivers`] set holds the ones a build has, and the datasource registry
//! (`nl2sql-orchestrator`) opens every configured datasource through the set it was given.
//! The set of the `nl2sql` binary (one cargo feature per engine) is assembled by the
//! `nl2sql-drivers` crate; a library user or a test assembles their own, so nothing above
//! this SPI links a database driver it does not use.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use nl2sql_state::{Dialect, Engine};

use crate::{
    AdapterOptions, CapabilitySet, DatasourceAdapter, Limits, ResultError, ResultErrorCode,
};

/// What a driver needs to open one datasource.
#[derive(Debug, Clone, Copy)]
pub struct ConnectRequest<'a> {
    /// The datasource id.
    pub id: &'a str,
    /// The engine the configuration names.
    pub engine: Engine,
    /// The URL as the driver receives it: file paths absolute, a separately configured
    /// password in the user info. Never echo it in errors.
    pub url: &'a str,
    /// The datasource's effective limits.
    pub limits: Limits,
    /// Connect timeout, snapshot statistics budget and sample size.
    pub options: AdapterOptions,
}

/// Opens the datasources of one engine in this process.
#[async_trait]
pub trait Driver: Send + Sync {
    /// The engine it serves.
    fn engine(&self) -> Engine;

    /// The crate that implements it (`nl2sql-adapter-sqlite`, …).
    fn implementation(&self) -> &'static str;

    /// What its adapters advertise through [`DatasourceAdapter::capabilities`].
    fn capabilities(&self) -> CapabilitySet;

    /// Opens the datasource of `request` (for a server, the first connection is made
    /// here, so a dead server fails now).
    async fn connect(
        &self,
        request: &ConnectRequest<'_>,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError>;
}

/// The program (and its leading arguments) that runs a worker process of a datasource
/// with `isolation = "process"`; the worker arguments follow them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before the worker arguments (`["worker"]` for `nl2sql worker`).
    pub args: Vec<String>,
}

impl WorkerCommand {
    /// `program` with no leading argument (e.g. the `nl2sql-worker` binary).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        WorkerCommand {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// This executable's `worker` subcommand (`nl2sql worker …`): the default, right for
    /// the `nl2sql` binary; a library user running process isolation sets their own.
    pub fn this_executable() -> std::io::Result<Self> {
        Ok(WorkerCommand {
            program: std::env::current_exe()?,
            args: vec!["worker".to_owned()],
        })
    }
}

/// Opens the datasources of `isolation = "process"`: each served by worker processes
/// started with a [`WorkerCommand`].
#[async_trait]
pub trait ProcessDriver: Send + Sync {
    /// Opens the datasource of `request` behind workers run by `command`; the first worker
    /// starts here, so a worker that cannot start or open its database fails now.
    async fn connect(
        &self,
        request: &ConnectRequest<'_>,
        command: &WorkerCommand,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError>;
}

/// One driver of a set, described without connecting to anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterInfo {
    /// The engine it serves.
    pub engine: Engine,
    /// The crate that implements it (`nl2sql-adapter-duckdb`, …).
    pub implementation: &'static str,
    /// The URL schemes that select it, the canonical one first.
    pub schemes: &'static [&'static str],
    /// The SQL dialect it speaks.
    pub dialect: Dialect,
    /// What it advertises through `DatasourceAdapter::capabilities`.
    pub capabilities: CapabilitySet,
}

/// The drivers a datasource registry opens datasources with: at most one per engine, and
/// the process driver of `isolation = "process"`. Cheap to clone (shared drivers).
#[derive(Clone, Default)]
pub struct Drivers {
    by_engine: BTreeMap<Engine, Arc<dyn Driver>>,
    process: Option<Arc<dyn ProcessDriver>>,
}

impl fmt::Debug for Drivers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drivers")
            .field("engines", &self.by_engine.keys().collect::<Vec<_>>())
            .field("process", &self.process.is_some())
            .finish()
    }
}

impl Drivers {
    /// No driver: every configured datasource fails to connect (a registry of pre-built
    /// adapters needs none).
    pub fn none() -> Self {
        Drivers::default()
    }

    /// The same set with `driver` (replacing the driver of its engine).
    #[must_use]
    pub fn with(mut self, driver: impl Driver + 'static) -> Self {
        self.by_engine.insert(driver.engine(), Arc::new(driver));
        self
    }

    /// The same set opening `isolation = "process"` datasources with `driver`.
    #[must_use]
    pub fn with_process(mut self, driver: impl ProcessDriver + 'static) -> Self {
        self.process = Some(Arc::new(driver));
        self
    }

    /// The driver of `engine`, if the set has one.
    pub fn get(&self, engine: Engine) -> Option<&Arc<dyn Driver>> {
        self.by_engine.get(&engine)
    }

    /// Whether the set opens datasources of `engine`.
    pub fn has(&self, engine: Engine) -> bool {
        self.by_engine.contains_key(&engine)
    }

    /// The set's drivers, described, in [`Engine::ALL`] order.
    pub fn adapters(&self) -> Vec<AdapterInfo> {
        Engine::ALL
            .iter()
            .filter_map(|engine| self.by_engine.get(engine))
            .map(|driver| AdapterInfo {
                engine: driver.engine(),
                implementation: driver.implementation(),
                schemes: driver.engine().schemes(),
                dialect: driver.engine().dialect(),
                capabilities: driver.capabilities(),
            })
            .collect()
    }

    /// Opens `request` in this process with the driver of its engine; an engine the set
    /// has no driver for is `SERVICE_UNAVAILABLE`, saying so.
    pub async fn connect(
        &self,
        request: &ConnectRequest<'_>,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        match self.by_engine.get(&request.engine) {
            Some(driver) => driver.connect(request).await,
            None => Err(ResultError::new(
                ResultErrorCode::ServiceUnavailable,
                format!(
                    "this build of nl2sql has no {engine} adapter (cargo feature '{engine}')",
                    engine = request.engine
                ),
            )),
        }
    }

    /// Opens `request` behind worker processes run by `command`. Only the embedded
    /// engines run in workers; a set without a process driver is `SERVICE_UNAVAILABLE`.
    pub async fn connect_process(
        &self,
        request: &ConnectRequest<'_>,
        command: &WorkerCommand,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let unavailable = |m: String| ResultError::new(ResultErrorCode::ServiceUnavailable, m);
        if request.engine.is_server() {
            return Err(unavailable(format!(
                "isolation = \"process\" runs only the embedded engines (sqlite, duckdb), not {}",
                request.engine
            )));
        }
        match &self.process {
            Some(driver) => driver.connect(request, command).await,
            None => Err(unavailable(format!(
                "datasource '{}': this build of nl2sql has no worker processes (cargo feature 'sqlite')",
                request.id
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Capability;

    /// A driver that records that it was reached, as an error naming what it received.
    struct Reached(Engine);

    #[async_trait]
    impl Driver for Reached {
        fn engine(&self) -> Engine {
            self.0
        }
        fn implementation(&self) -> &'static str {
            "reached"
        }
        fn capabilities(&self) -> CapabilitySet {
            CapabilitySet::new(&[Capability::SupportsDryRun])
        }
        async fn connect(
            &self,
            request: &ConnectRequest<'_>,
        ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
            Err(ResultError::new(
                ResultErrorCode::ExecutionFailed,
                format!("{} reached for {}", self.0, request.id),
            ))
        }
    }

    struct Workers;

    #[async_trait]
    impl ProcessDriver for Workers {
        async fn connect(
            &self,
            request: &ConnectRequest<'_>,
            command: &WorkerCommand,
        ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
            Err(ResultError::new(
                ResultErrorCode::ExecutionFailed,
                format!(
                    "workers for {} run by {}",
                    request.id,
                    command.program.display()
                ),
            ))
        }
    }

    fn request(engine: Engine) -> ConnectRequest<'static> {
        ConnectRequest {
            id: "plant",
            engine,
            url: "x://secret@host/db",
            limits: Limits::default(),
            options: AdapterOptions::default(),
        }
    }

    fn error(made: Result<Arc<dyn DatasourceAdapter>, ResultError>) -> ResultError {
        match made {
            Ok(_) => panic!("no adapter was expected"),
            Err(e) => e,
        }
    }

    #[tokio::test]
    async fn a_request_reaches_the_driver_of_its_engine_and_no_other() {
        let drivers = Drivers::none()
            .with(Reached(Engine::Sqlite))
            .with(Reached(Engine::Postgres));
        let e = error(drivers.connect(&request(Engine::Postgres)).await);
        assert_eq!(e.safe_message, "postgres reached for plant");
        let e = error(drivers.connect(&request(Engine::Duckdb)).await);
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable);
        assert_eq!(
            e.safe_message,
            "this build of nl2sql has no duckdb adapter (cargo feature 'duckdb')"
        );
        assert!(drivers.has(Engine::Sqlite) && !drivers.has(Engine::Mysql));
    }

    #[tokio::test]
    async fn process_isolation_needs_a_process_driver_and_an_embedded_engine() {
        let command = WorkerCommand::new("/bin/worker");
        let none = Drivers::none().with(Reached(Engine::Sqlite));
        let e = error(
            none.connect_process(&request(Engine::Sqlite), &command)
                .await,
        );
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable);
        assert!(
            e.safe_message.contains("no worker processes"),
            "{}",
            e.safe_message
        );

        let with = none.with_process(Workers);
        let e = error(
            with.connect_process(&request(Engine::Sqlite), &command)
                .await,
        );
        assert_eq!(e.safe_message, "workers for plant run by /bin/worker");
        let e = error(
            with.connect_process(&request(Engine::Mysql), &command)
                .await,
        );
        assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable);
        assert!(
            e.safe_message.contains("only the embedded engines"),
            "{}",
            e.safe_message
        );
    }

    #[test]
    fn the_set_is_described_in_engine_order_one_driver_per_engine() {
        let drivers = Drivers::none()
            .with(Reached(Engine::Mysql))
            .with(Reached(Engine::Duckdb))
            .with(Reached(Engine::Mysql));
        let adapters = drivers.adapters();
        let engines: Vec<Engine> = adapters.iter().map(|a| a.engine).collect();
        assert_eq!(engines, [Engine::Duckdb, Engine::Mysql]);
        assert_eq!(adapters[1].schemes, ["mysql", "mariadb"]);
        assert_eq!(adapters[1].dialect, Dialect::MySql);
        assert_eq!(
            adapters[0].capabilities,
            CapabilitySet::new(&[Capability::SupportsDryRun])
        );
        assert_eq!(
            format!("{drivers:?}"),
            "Drivers { engines: [Duckdb, Mysql], process: false }"
        );
    }
}

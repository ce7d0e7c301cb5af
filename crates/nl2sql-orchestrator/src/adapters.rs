//! The adapters compiled into this build (the compile-time registry of [`crate::connect`]:
//! one cargo feature per engine), described without connecting to anything.

use nl2sql_adapter::CapabilitySet;
use nl2sql_state::{Dialect, Engine};

/// One compiled-in adapter.
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

impl AdapterInfo {
    fn new(engine: Engine, implementation: &'static str, capabilities: CapabilitySet) -> Self {
        AdapterInfo {
            engine,
            implementation,
            schemes: engine.schemes(),
            dialect: engine.dialect(),
            capabilities,
        }
    }
}

/// The adapters this build can connect to, in [`Engine::ALL`] order; an engine whose
/// cargo feature is off is absent.
pub fn compiled_adapters() -> Vec<AdapterInfo> {
    let mut out = Vec::new();
    for engine in Engine::ALL {
        if let Some(info) = compiled(engine) {
            out.push(info);
        }
    }
    out
}

fn compiled(engine: Engine) -> Option<AdapterInfo> {
    match engine {
        #[cfg(feature = "duckdb")]
        Engine::Duckdb => Some(AdapterInfo::new(
            engine,
            "nl2sql-adapter-duckdb",
            nl2sql_adapter_duckdb::capabilities(),
        )),
        #[cfg(feature = "sqlite")]
        Engine::Sqlite => Some(AdapterInfo::new(
            engine,
            "nl2sql-adapter-sqlite",
            nl2sql_adapter_sqlite::capabilities(),
        )),
        #[cfg(feature = "postgres")]
        Engine::Postgres => Some(AdapterInfo::new(
            engine,
            "nl2sql-adapter-postgres",
            nl2sql_adapter_postgres::capabilities(),
        )),
        #[cfg(feature = "mysql")]
        Engine::Mysql => Some(AdapterInfo::new(
            engine,
            "nl2sql-adapter-mysql",
            nl2sql_adapter_mysql::capabilities(),
        )),
        #[allow(unreachable_patterns)] // reason: reachable when an engine's feature is off
        _ => None,
    }
}

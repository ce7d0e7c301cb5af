//! Helpers shared by this test binary's modules (temporary directories are
//! `nl2sql_test_support::TempDir`).

use std::path::PathBuf;

/// The manufacturing fixture database (`tests/data/fixtures/manufacturing.db`).
pub(crate) fn fixture() -> PathBuf {
    nl2sql_test_support::manufacturing_db()
}

/// The drivers the engine's tests open datasources with: SQLite only, so that this test
/// binary links no other database engine.
pub(crate) fn drivers() -> nl2sql_orchestrator::Drivers {
    nl2sql_orchestrator::Drivers::none().with(nl2sql_adapter_sqlite::SqliteDriver)
}

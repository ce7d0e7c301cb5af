//! `nl2sql demo`: a deterministic manufacturing company in three databases, ready to ask
//! questions of.
//!
//! [`create_demo`] writes into one directory:
//! - `operations.duckdb`: factories, production lines, machines, shifts, production runs
//!   (120,000 rows) and downtime events;
//! - `supply.sqlite`: suppliers, materials, purchase orders, deliveries and inventory;
//! - `sales.sqlite`: customers, products, orders, order items (about 120,000 rows) and
//!   returns;
//! - `nl2sql.toml` (the three datasources, relative URLs, limits, the policy path),
//!   `policy.json` (roles), `questions.json` (example questions) and `schema_docs.json`
//!   (table and column descriptions).
//!
//! Every table has a primary key and foreign keys within its database; the databases
//! share business keys (`factory_code`, product `sku`) so that cross-source questions
//! make sense. The data come from a seeded splitmix64 generator, with no clock, so every
//! run writes the same content. Each file is written to a temporary sibling and renamed
//! into place, so a failed run never leaves a half-written demo file. Indexing is the
//! engine's job, after this.

mod catalog;
mod files;
mod operations;
mod rng;
mod sales;
mod supply;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use nl2sql_adapter::{DatasetSpec, Drivers};
use nl2sql_state::{Engine, ErrorCode, PipelineError, Severity};

/// The drivers the demo's datasources need (DuckDB and SQLite, in this process): for a
/// library user or a test opening the demo without the `nl2sql` binary's drivers.
pub fn drivers() -> Drivers {
    Drivers::none()
        .with(nl2sql_adapter_duckdb::DuckDbDriver)
        .with(nl2sql_adapter_sqlite::SqliteDriver)
}

/// The demo's "today": its last day. Questions asked of the demo read relative dates
/// ("last year", "last month") from it, so they find data whatever the clock says; any
/// other source reads them from the clock (or `--today`).
pub const TODAY: &str = "2024-12-31";

/// One generated database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoDatabase {
    /// The datasource id in `nl2sql.toml`.
    pub id: String,
    /// The engine.
    pub engine: Engine,
    /// The database file.
    pub path: PathBuf,
    /// Each table with its row count, in creation order.
    pub tables: Vec<(String, u64)>,
}

/// What [`create_demo`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoLayout {
    /// The directory holding everything.
    pub dir: PathBuf,
    /// `nl2sql.toml`.
    pub config: PathBuf,
    /// `policy.json`.
    pub policy: PathBuf,
    /// `questions.json`: example questions by datasource id, and cross-source ones.
    pub questions: PathBuf,
    /// `schema_docs.json`: table and column descriptions by datasource id.
    pub schema_docs: PathBuf,
    /// The databases, in configuration order (operations, supply, sales).
    pub databases: Vec<DemoDatabase>,
}

/// One demo datasource while it is being written.
pub(crate) struct Source<'a> {
    pub(crate) id: &'static str,
    pub(crate) engine: Engine,
    pub(crate) file: &'static str,
    pub(crate) description: &'static str,
    /// Business domains, written to `schema_docs.json` (they reach the decomposer).
    pub(crate) domains: &'static [&'static str],
    pub(crate) spec: &'a DatasetSpec,
}

const OPERATIONS: &str = "Plant operations (DuckDB): factories, production lines, machines and their status, \
     shifts, production runs with units produced and scrapped, and machine downtime, 2023-2024.";
const SUPPLY: &str = "Procurement (SQLite): suppliers, materials, purchase orders, deliveries and \
     per-plant inventory, 2023-2024.";
const SALES: &str = "Sales (SQLite): customers, the product catalog, sales orders, order items and \
     returns, 2023-2024.";

/// Creates the demo in `dir` (created if missing), replacing the files of an earlier
/// demo there. Deterministic: every run writes the same rows and the same text files.
pub fn create_demo(dir: &Path) -> Result<DemoLayout, PipelineError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| demo_error(&format!("cannot create the demo directory: {e}")))?;
    let products = catalog::products();
    let (operations, supply, sales) = std::thread::scope(|scope| {
        // The DuckDB file is the slowest to build: it gets a thread of its own.
        let ops = scope.spawn(|| {
            let spec = operations::spec(&products);
            let written =
                nl2sql_adapter_duckdb::write_database(&dir.join("operations.duckdb"), &spec);
            written.map(|_| spec)
        });
        let supply = supply::spec();
        let sales = sales::spec(&products);
        let local = nl2sql_adapter_sqlite::write_database(&dir.join("supply.sqlite"), &supply)
            .and_then(|_| nl2sql_adapter_sqlite::write_database(&dir.join("sales.sqlite"), &sales));
        let ops = ops
            .join()
            .unwrap_or_else(|_| Err(demo_error("the operations generator panicked")));
        (ops, local.map(|_| supply), sales)
    });
    let operations = operations?;
    let supply = supply?;
    let sources = [
        Source {
            id: "operations",
            engine: Engine::Duckdb,
            file: "operations.duckdb",
            description: OPERATIONS,
            domains: &["manufacturing", "production", "maintenance"],
            spec: &operations,
        },
        Source {
            id: "supply",
            engine: Engine::Sqlite,
            file: "supply.sqlite",
            description: SUPPLY,
            domains: &["procurement", "inventory"],
            spec: &supply,
        },
        Source {
            id: "sales",
            engine: Engine::Sqlite,
            file: "sales.sqlite",
            description: SALES,
            domains: &["sales", "customers"],
            spec: &sales,
        },
    ];
    let layout = DemoLayout {
        dir: dir.to_path_buf(),
        config: dir.join("nl2sql.toml"),
        policy: dir.join("policy.json"),
        questions: dir.join("questions.json"),
        schema_docs: dir.join("schema_docs.json"),
        databases: sources
            .iter()
            .map(|s| DemoDatabase {
                id: s.id.to_owned(),
                engine: s.engine,
                path: dir.join(s.file),
                tables: s
                    .spec
                    .tables
                    .iter()
                    .map(|t| (t.name.clone(), t.rows.len() as u64))
                    .collect(),
            })
            .collect(),
    };
    write_text(&layout.policy, &files::policy_json())?;
    write_text(&layout.questions, &files::questions_json())?;
    write_text(&layout.schema_docs, &files::schema_docs_json(&sources))?;
    // The configuration last: it exists only when everything it names does.
    write_text(&layout.config, &files::config_toml(&sources))?;
    Ok(layout)
}

fn demo_error(message: &str) -> PipelineError {
    PipelineError::new("demo", ErrorCode::ExecutionFailed, Severity::Error, message)
}

/// Writes `text` to a temporary sibling of `path`, then renames it into place.
fn write_text(path: &Path, text: &str) -> Result<(), PipelineError> {
    nl2sql_adapter::dataset::build_atomically("demo", path, &[], |temp| {
        std::fs::write(temp, text)
            .map_err(|e| nl2sql_adapter::dataset::write_error("demo", path, e))
    })
}

//! Benchmarks of nl2sql and their inputs, run with `cargo xtask bench` (which writes
//! `docs/benchmarks.md`).
//!
//! The library holds the corpora the benches share, so that a plain `cargo test` can check
//! them: `data/schema.sql` (a small sales and manufacturing schema in SQLite) and
//! `data/queries.sql` (typical analytics queries over it: joins, grouping, CTEs, window
//! functions, subqueries). Every query must pass the guard, or the bench would time
//! rejections. The benches are in `benches/`: `guard.rs` measures [`corpus`] statements
//! checked per second by the SQL guard, against parsing alone.
//!
//! It also generates the inputs of the planning and aggregation benches: decompositions of
//! 1 to 256 sub-queries for `dag.rs` ([`decomposition_json`], planned by [`plan_dag`]), and
//! for `aggregate.rs` the join and group-by tables ([`join_tables`], [`group_by_table`]),
//! their `ExecutionDag`s ([`join_dag`], [`group_by_dag`]), the same operations in DuckDB SQL
//! ([`JOIN_SQL`], [`GROUP_BY_SQL`]) and the [`Summary`] that shows both agree.

mod aggregation;
mod dag;

use nl2sql_state::Dialect;
use nl2sql_validate::{GuardContext, SqlGuard, schema_from_ddl};

pub use aggregation::{
    BenchDag, DEFAULT_ROWS, GROUP_BY_SQL, JOIN_SQL, ROWS_ENV, STORES, Summary, group_by_dag,
    group_by_table, join_dag, join_tables, rows_from_env, size_label, summary,
};
pub use dag::{
    DAG_DATASOURCES, GroupKind, dag_resolution, decomposition, decomposition_json,
    expected_node_count, group_layout, plan_dag,
};

/// `CREATE TABLE` statements of the bench schema (SQLite).
pub const SCHEMA_DDL: &str = include_str!("../data/schema.sql");

/// The analytics queries, `;`-terminated, with `--` comment lines between them.
pub const QUERIES_SQL: &str = include_str!("../data/queries.sql");

/// The dialect of [`SCHEMA_DDL`] and [`QUERIES_SQL`].
pub const DIALECT: Dialect = Dialect::Sqlite;

/// The datasource id the bench schema is loaded under.
pub const DATASOURCE: &str = "bench";

/// The statements of [`QUERIES_SQL`], without their terminating `;` or leading comments.
pub fn corpus() -> Vec<&'static str> {
    split_statements(QUERIES_SQL)
}

/// A guard over the bench schema, with no access policy.
///
/// # Panics
/// When `data/schema.sql` does not load (a bug in the corpus or in `schema_from_ddl`).
pub fn guard() -> SqlGuard {
    #[allow(clippy::expect_used)] // reason: the schema is a fixed input of the bench
    let contract = schema_from_ddl(SCHEMA_DDL, DIALECT, DATASOURCE).expect("data/schema.sql loads");
    SqlGuard::new(GuardContext::new(DATASOURCE, DIALECT, &contract))
}

/// Splits `text` into statements at each `;` that ends a line, dropping comment lines
/// (`-- ...`) before a statement and blank statements.
pub fn split_statements(text: &str) -> Vec<&str> {
    let mut statements = Vec::new();
    let mut start = 0;
    for (at, _) in text
        .match_indices(";\n")
        .chain(text.ends_with(';').then_some((text.len() - 1, ";")))
    {
        statements.push(strip_leading_comments(&text[start..at]));
        start = at + 1;
    }
    statements.push(strip_leading_comments(&text[start..]));
    statements.retain(|s| !s.is_empty());
    statements
}

/// `text` without leading blank lines and `--` comment lines, trimmed.
fn strip_leading_comments(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        if text.starts_with("--") {
            text = text.split_once('\n').map_or("", |(_, rest)| rest);
        } else {
            return text.trim_end();
        }
    }
}

#[cfg(test)]
mod tests;

//! Integration tests of nl2sql: the peers' suites (Spider, sqlglot, TPC-H) through the guard.

mod loaders;
mod reports;
mod resolution;
mod spider;
mod sqlglot;
mod tpch;

//! Integration tests of nl2sql-sqlgen: the plan corpus in every dialect (snapshots, the
//! guard, SQLite execution) and a property test over generated plans.

#![allow(
    clippy::unwrap_used,
    reason = "fixture helpers outside #[test] functions unwrap too"
)]

mod corpus;
mod fixture;
mod generated;
mod nonsense;

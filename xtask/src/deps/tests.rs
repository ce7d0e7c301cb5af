//! Tests of the dependency-direction check on hand-written `cargo metadata` JSON.

use serde_json::json;

use super::*;

fn package(name: &str, deps: &[(&str, Option<&str>)]) -> Value {
    let deps: Vec<Value> = deps
        .iter()
        .map(|(name, kind)| json!({ "name": name, "kind": kind }))
        .collect();
    json!({ "name": name, "dependencies": deps })
}

#[test]
fn downward_edges_pass_and_upward_edges_fail() {
    let metadata = json!({ "packages": [
        package("nl2sql-state", &[("serde", None), ("insta", Some("dev"))]),
        package("nl2sql-validate", &[("nl2sql-state", None), ("nl2sql-sqlgen", None)]),
        package("nl2sql-adapter-duckdb", &[("nl2sql-adapter", None), ("nl2sql-validate", None)]),
        package("nl2sql-plan", &[("nl2sql-state", None), ("nl2sql-validate", Some("dev"))]),
        package("nl2sql-orchestrator", &[("nl2sql-index", None), ("nl2sql-test-support", None)]),
        package("nl2sql-cli", &[("nl2sql-orchestrator", None), ("nl2sql-validate", None)]),
        package("nl2sql-tests", &[("nl2sql-cli", Some("dev"))]),
        package("nl2sql-widget", &[]),
        package("xtask", &[("nl2sql-state", None)]),
    ]});
    let violations = check(&metadata).unwrap();
    assert_eq!(
        violations,
        [
            "nl2sql-validate -> nl2sql-sqlgen (normal): nl2sql-validate may use only nl2sql-state, nl2sql-plan",
            "nl2sql-orchestrator -> nl2sql-test-support (normal): nl2sql-test-support may only be a dev-dependency",
            "nl2sql-tests -> nl2sql-cli (dev): nothing may depend on nl2sql-cli",
            "nl2sql-widget: not in the \"may use\" table (add it to `MAY_USE` in xtask/src/deps.rs and to ARCHITECTURE.md)",
        ]
    );
}

#[test]
fn state_uses_no_internal_crate() {
    let metadata = json!({ "packages": [package("nl2sql-state", &[("nl2sql-plan", None)])] });
    assert_eq!(
        check(&metadata).unwrap(),
        ["nl2sql-state -> nl2sql-plan (normal): nl2sql-state may use no internal crate"]
    );
}

#[test]
fn a_duckdb_free_crate_may_not_reach_duckdb_through_any_dependency() {
    let metadata = json!({ "packages": [
        package("nl2sql-adapter", &[("nl2sql-state", None)]),
        package("nl2sql-adapter-sqlite", &[("nl2sql-adapter", None)]),
        package("nl2sql-adapter-duckdb", &[("nl2sql-adapter", None)]),
        // The index's tests use the SQLite adapter only: fine.
        package("nl2sql-index", &[("nl2sql-adapter", None), ("nl2sql-adapter-sqlite", Some("dev"))]),
        // The test kit's own dev-dependencies are never built for another crate's tests.
        package("nl2sql-test-support", &[("nl2sql-adapter", None), ("nl2sql-demo", Some("dev"))]),
        // A dev-dependency whose normal dependency is the DuckDB adapter: refused.
        package("nl2sql-demo", &[("nl2sql-adapter-duckdb", None)]),
        package(
            "nl2sql-orchestrator",
            &[("nl2sql-index", None), ("nl2sql-test-support", Some("dev")), ("nl2sql-demo", Some("dev"))],
        ),
        // The DuckDB bindings themselves, even as a dev-dependency: refused.
        package("nl2sql-server", &[("nl2sql-orchestrator", None), ("duckdb", Some("dev"))]),
    ]});
    let violations = check(&metadata).unwrap();
    assert_eq!(
        violations,
        [
            "nl2sql-orchestrator: its builds link DuckDB (nl2sql-orchestrator -> nl2sql-demo); use a driver without DuckDB",
            "nl2sql-server: its builds link DuckDB (nl2sql-server -> duckdb); use a driver without DuckDB",
        ]
    );
}

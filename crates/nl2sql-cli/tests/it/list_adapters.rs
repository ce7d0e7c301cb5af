//! `nl2sql list-adapters` through the real binary: every engine this binary is built with,
//! its URL schemes, dialect and capabilities.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::process::Output;

use serde_json::json;

use crate::support::nl2sql;

fn run(args: &[&str]) -> Output {
    nl2sql().args(args).output().unwrap()
}

#[test]
fn lists_the_compiled_adapters_with_their_capabilities() {
    let out = run(&["list-adapters", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let full = json!([
        "supports_sql",
        "supports_schema_introspection",
        "supports_dry_run",
        "supports_cost_estimate"
    ]);
    assert_eq!(
        v,
        json!({"adapters": [
            {"engine": "duckdb", "implementation": "nl2sql-adapter-duckdb",
             "schemes": ["duckdb"], "kind": "embedded", "dialect": "duckdb",
             "capabilities": full},
            {"engine": "sqlite", "implementation": "nl2sql-adapter-sqlite",
             "schemes": ["sqlite"], "kind": "embedded", "dialect": "sqlite",
             "capabilities": ["supports_sql", "supports_schema_introspection", "supports_dry_run"]},
            {"engine": "postgres", "implementation": "nl2sql-adapter-postgres",
             "schemes": ["postgres", "postgresql"], "kind": "server", "dialect": "postgres",
             "capabilities": full},
            {"engine": "mysql", "implementation": "nl2sql-adapter-mysql",
             "schemes": ["mysql", "mariadb"], "kind": "server", "dialect": "mysql",
             "capabilities": full},
        ]})
    );

    let out = run(&["list-adapters"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert_eq!(
        lines[0],
        "ENGINE    SCHEMES               KIND      DIALECT   CAPABILITIES"
    );
    assert_eq!(
        lines[3],
        "postgres  postgres, postgresql  server    postgres  supports_sql, supports_schema_introspection, supports_dry_run, supports_cost_estimate"
    );
}

#[test]
fn an_unknown_format_is_a_usage_error() {
    let out = run(&["list-adapters", "--format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

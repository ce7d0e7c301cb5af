//! `nl2sql datasources …` and `validate-sql --config/--db` over the SQLite fixture.

use std::path::PathBuf;
use std::process::Output;

use nl2sql_test_support::TempDir;

use crate::support::{json, nl2sql, repo, stderr, stdout, temp_dir};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = nl2sql();
    cmd.args(args).current_dir(repo());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("binary runs")
}

const CONFIG: &str = "examples/nl2sql.toml";
const DB: &str = "sqlite://tests/data/fixtures/manufacturing.db";

/// A configuration file in a temporary directory (removed when the directory is dropped).
fn temp_config(name: &str, text: &str) -> (TempDir, PathBuf) {
    let dir = temp_dir(name);
    let path = dir.join("nl2sql.toml");
    std::fs::write(&path, text).expect("write config");
    (dir, path)
}

#[test]
fn list_shows_engines_and_hides_credentials() {
    let (_dir, cfg) = temp_config(
        "list",
        "version = 1\n[[datasources]]\nid = \"sales\"\nurl = \"postgres://analyst:hunter2@db.internal:5432/sales?sslmode=require\"\nrow_limit = 50\n[[datasources]]\nid = \"local\"\nurl = \"${env:NL2SQL_TEST_LOCAL_URL}\"\n",
    );
    let out = run(
        &[
            "datasources",
            "list",
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "json",
        ],
        &[("NL2SQL_TEST_LOCAL_URL", "duckdb://:memory:")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let rows = v["datasources"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"], "local");
    assert_eq!(rows[0]["engine"], "duckdb");
    assert_eq!(
        rows[1]["url"],
        "postgres://analyst:***@db.internal:5432/sales"
    );
    assert_eq!(rows[1]["row_limit"], 50);
    assert_eq!(rows[1]["max_bytes"], 10 * 1024 * 1024);
    assert!(!stdout(&out).contains("hunter2"));
}

#[test]
fn test_reports_each_datasource() {
    let out = run(&["datasources", "test", "--config", CONFIG], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("manufacturing\tok\t"),
        "{}",
        stdout(&out)
    );
    let out = run(
        &[
            "datasources",
            "test",
            "--db",
            "sqlite:///no/such/file.db",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["results"][0]["id"], "file");
    assert_eq!(v["results"][0]["ok"], false);
    assert_eq!(v["results"][0]["error"]["code"], "SERVICE_UNAVAILABLE");
}

#[test]
fn describe_prints_the_live_snapshot() {
    let out = run(
        &["datasources", "describe", "--db", DB, "--format", "json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["contract"]["datasource_id"], "manufacturing");
    assert_eq!(v["contract"]["tables"].as_object().unwrap().len(), 9);
    assert_eq!(v["metadata"]["tables"]["main.products"]["row_count"], 8);
    let out = run(
        &[
            "datasources",
            "describe",
            "--config",
            CONFIG,
            "manufacturing",
        ],
        &[],
    );
    let text = stdout(&out);
    assert!(
        text.starts_with("datasource manufacturing (sqlite), 9 tables"),
        "{text}"
    );
    assert!(
        text.contains("  foreign key (factory_id) -> main.factories (id)"),
        "{text}"
    );
    let out = run(
        &["datasources", "describe", "--config", CONFIG, "nope"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown datasource 'nope' (configured: manufacturing)"));
}

#[test]
fn validate_sql_checks_against_the_live_schema_then_dry_runs() {
    let out = run(
        &[
            "validate-sql",
            "--db",
            DB,
            "SELECT name FROM machines WHERE factory_id = 1",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "status: ok\ndry run: ok\n");
    let out = run(
        &[
            "validate-sql",
            "--db",
            DB,
            "--format",
            "json",
            "SELECT nme FROM machines",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "rewrite");
    assert_eq!(v["issues"][0]["code"], "COLUMN_NOT_FOUND");
    assert!(
        v.get("physical").is_none(),
        "no dry run after a guard finding"
    );
    // The configured policy applies to the caller's roles.
    let out = run(
        &[
            "validate-sql",
            "--config",
            CONFIG,
            "--role",
            "analyst",
            "--format",
            "json",
            "SELECT serial_number FROM machines",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["status"], "rejected");
    let out = run(
        &[
            "validate-sql",
            "--config",
            CONFIG,
            "--role",
            "analyst",
            "--format",
            "json",
            "SELECT name FROM machines",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["physical"]["dry_run"]["is_valid"], true);
}

#[test]
fn bad_configurations_and_dead_datasources_fail_clearly() {
    let (_dir, cfg) = temp_config(
        "bad",
        "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"oracle://x\"\n",
    );
    let out = run(
        &["datasources", "list", "--config", cfg.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("datasources[0].url: unknown or missing URL scheme"),
        "{}",
        stderr(&out)
    );
    let out = run(&["datasources", "list"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pass --config FILE or --db URL"));
    let out = run(&["validate-sql", "--db", "ftp://x/y", "SELECT 1"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        &[
            "validate-sql",
            "--db",
            "sqlite:///no/such/file.db",
            "--format",
            "json",
            "SELECT 1",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(3));
    let v = json(&out);
    assert_eq!(v["status"], "unavailable");
    assert_eq!(v["error"]["code"], "SERVICE_UNAVAILABLE");
    let out = run(
        &[
            "validate-sql",
            "--schema",
            "examples/manufacturing.sql",
            "--db",
            DB,
            "SELECT 1",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "--schema and --db conflict");
}

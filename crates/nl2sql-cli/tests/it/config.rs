//! What a configuration file sets besides datasources, through the real binary: the
//! `[engine]` and `[artifacts]` sections, documentation files, re-indexing when a schema
//! changes, and `ask --no-execute` (plans and SQL, nothing run).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::Path;
use std::process::Output;

use nl2sql_test_support::{TempDir, files_with_extension};
use serde_json::Value;

use crate::support::{assert_succeeded, fixture, json, nl2sql, temp_dir};

/// `nl2sql ARGS --data-dir DIR/data` in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    nl2sql()
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .current_dir(dir)
        .output()
        .unwrap()
}

const CONFIG: &str = r#"version = 1
schema_docs = "docs.json"
questions = "questions.json"

[engine]
max_parallel_scans = 2
max_retries = 1
global_timeout_sec = 30

[artifacts]
uri = "results"

[[datasources]]
id = "plant"
url = "sqlite://plant.db"
"#;

pub(super) fn setup(name: &str) -> TempDir {
    let dir = temp_dir(name);
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(dir.join("nl2sql.toml"), CONFIG).unwrap();
    std::fs::write(
        dir.join("docs.json"),
        r#"{"version": 1, "datasources": {"plant": {"tables": {"factories": {"description": "Our plants"}}}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("questions.json"),
        r#"{"version": 1, "datasources": {"plant": ["How many plants do we run?"]}}"#,
    )
    .unwrap();
    dir
}

#[test]
fn configured_artifacts_docs_and_explain_only_mode() {
    let dir = setup("sections");
    let out = run_in(
        &dir,
        &[
            "ask",
            "--config",
            "nl2sql.toml",
            "--format",
            "json",
            "How many factories do we have?",
        ],
    );
    assert_succeeded(&out);
    let v = json(&out);
    assert_eq!(v["rows"], serde_json::json!([[3]]));
    // The artifact went where `[artifacts]` says, relative to the configuration file.
    let written = files_with_extension(&dir.join("results"), "parquet");
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(files_with_extension(&dir.join("data"), "parquet").is_empty());
    // The schema docs were indexed: the stored snapshot carries the description.
    let snapshots = files_with_extension(&dir.join("data"), "json");
    let described = snapshots.iter().any(|p| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .contains("Our plants")
    });
    assert!(described, "{snapshots:?}");

    // --no-execute: SQL, no rows, nothing written.
    let out = run_in(
        &dir,
        &[
            "ask",
            "--config",
            "nl2sql.toml",
            "--format",
            "json",
            "--no-execute",
            "How many machines are there?",
        ],
    );
    let v = json(&out);
    assert_eq!(v["success"], true, "{v}");
    let sql = v["subqueries"][0]["sql"].as_str().unwrap();
    assert!(
        sql.contains("COUNT(*)") && sql.contains("machines"),
        "{sql}"
    );
    assert!(
        v["rows"].is_null() || v["rows"] == serde_json::json!([]),
        "{v}"
    );
    assert_eq!(
        files_with_extension(&dir.join("results"), "parquet").len(),
        1,
        "no new artifact"
    );
}

#[test]
fn a_changed_schema_is_indexed_again_before_the_question() {
    let dir = setup("changed");
    let ask = |q: &str| {
        run_in(
            &dir,
            &["ask", "--config", "nl2sql.toml", "--format", "json", q],
        )
    };
    let first = ask("How many factories do we have?");
    let stderr = String::from_utf8_lossy(&first.stderr).into_owned();
    assert!(
        stderr.contains("indexed plant (schema version "),
        "{stderr}"
    );
    let second = ask("How many factories do we have?");
    let stderr = String::from_utf8_lossy(&second.stderr).into_owned();
    assert!(!stderr.contains("indexed plant"), "unchanged: {stderr}");

    let conn = rusqlite::Connection::open(dir.join("plant.db")).unwrap();
    conn.execute_batch("CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);")
        .unwrap();
    drop(conn);
    let third = ask("How many suppliers are there?");
    let stderr = String::from_utf8_lossy(&third.stderr).into_owned();
    assert!(
        stderr.contains("indexed plant (schema version "),
        "{stderr}"
    );
    let v = json(&third);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["rows"], serde_json::json!([[0]]));
}

#[test]
fn bad_sections_are_configuration_errors_naming_the_key() {
    let dir = setup("bad");
    for (text, key) in [
        (
            "[engine]\nmax_parallel_scans = 0\n",
            "engine.max_parallel_scans",
        ),
        (
            "[engine]\nschema_version_mismatch = \"maybe\"\n",
            "schema_version_mismatch",
        ),
        ("[artifacts]\nuri = \"ftp://nowhere\"\n", "artifacts.uri"),
        ("[engine]\nturbo = true\n", "turbo"),
    ] {
        let config = format!(
            "version = 1\n\n{text}\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n"
        );
        std::fs::write(dir.join("bad.toml"), config).unwrap();
        let out = run_in(
            &dir,
            &["ask", "--config", "bad.toml", "How many factories?"],
        );
        assert_eq!(out.status.code(), Some(2), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key), "{text}: {stderr}");
    }
}

/// `nl2sql ask --db sqlite://plant.db --format json` in `dir`, with `unset` and the
/// configuration variables removed from the environment and `vars` set.
fn ask_db(dir: &Path, unset: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = nl2sql();
    cmd.args([
        "ask",
        "--db",
        "sqlite://plant.db",
        "--format",
        "json",
        "How many factories are there?",
    ])
    .arg("--data-dir")
    .arg(dir.join("data"))
    .current_dir(dir);
    for k in unset {
        cmd.env_remove(k);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn artifact_settings_from_the_environment_reach_the_default_store_or_are_refused() {
    let dir = setup("artifact-env");
    let ask = |vars: &[(&str, &str)]| ask_db(&dir, &["RESULT_ARTIFACT_BASE_URI"], vars);
    // A value that does not parse is a configuration error naming the variable.
    let out = ask(&[("RESULT_ARTIFACT_DURABILITY", "eventually")]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("RESULT_ARTIFACT_DURABILITY") && stderr.contains("eventually"),
        "{stderr}"
    );
    // Without `[artifacts]`, the durability and the template apply to the default store
    // under the data directory.
    let out = ask(&[
        ("RESULT_ARTIFACT_DURABILITY", "synced"),
        ("RESULT_ARTIFACT_PATH_TEMPLATE", "env/<dag_node_id>.parquet"),
    ]);
    assert_succeeded(&out);
    let result = json(&out);
    assert_eq!(result["rows"], serde_json::json!([[3]]));
    let written = files_with_extension(&dir.join("data"), "parquet");
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(
        written[0]
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str()),
        Some("env"),
        "{written:?}"
    );
    assert!(written[0].starts_with(dir.join("data")), "{written:?}");
}

#[test]
fn logs_carry_the_trace_and_tenant_and_audit_events_reach_their_file() {
    let dir = setup("observability");
    let ask = |vars: &[(&str, &str)]| ask_db(&dir, &["NL2SQL_LOG", "OBSERVABILITY_EXPORTER"], vars);
    // By default no log records: standard error has only the command's own notes (the
    // first question indexes the datasource).
    let quiet = ask(&[]);
    assert_eq!(quiet.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        stderr.lines().all(|l| l.starts_with("indexed plant")),
        "{stderr}"
    );

    // Human-readable records, each inside the run's span.
    let out = ask(&[
        ("OBSERVABILITY_EXPORTER", "console"),
        ("NL2SQL_LOG", "nl2sql::node=debug,nl2sql::run=info"),
        ("TENANT_ID", "plant-7"),
        ("AUDIT_LOG_PATH", "audit/events.log"),
    ]);
    assert_succeeded(&out);
    let trace = json(&out)["trace_id"].as_str().unwrap().to_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let span = format!("run{{trace_id={trace} tenant_id=plant-7}}");
    let records: Vec<&str> = stderr.lines().collect();
    assert!(records.len() >= 5, "{stderr}");
    assert!(records.iter().all(|l| l.contains(&span)), "{stderr}");
    assert!(
        stderr.contains("node=executor") && stderr.contains("run completed"),
        "{stderr}"
    );
    // The audit log went where AUDIT_LOG_PATH said (relative to the working directory).
    let audit = std::fs::read_to_string(dir.join("audit/events.log")).unwrap();
    let events: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["sql_executed", "run_completed"]);
    assert!(
        events
            .iter()
            .all(|e| e["trace_id"] == trace.as_str() && e["tenant_id"] == "plant-7")
    );

    // otlp: one JSON object per record, with the span's fields.
    let out = ask(&[
        ("OBSERVABILITY_EXPORTER", "otlp"),
        ("NL2SQL_LOG", "nl2sql::run=info"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let trace = json(&out)["trace_id"].as_str().unwrap().to_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let record: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(record["span"]["trace_id"], trace.as_str(), "{stderr}");
    assert_eq!(record["span"]["tenant_id"], "default_tenant");
    assert_eq!(record["fields"]["message"], "run completed");

    // Unknown values are configuration errors naming the variable.
    for (k, v) in [
        ("OBSERVABILITY_EXPORTER", "jaeger"),
        ("NL2SQL_LOG", "nl2sql=loud"),
    ] {
        let out = ask(&[(k, v)]);
        assert_eq!(out.status.code(), Some(2), "{k}={v}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(k), "{k}={v}");
    }
}

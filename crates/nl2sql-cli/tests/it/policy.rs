//! `nl2sql policy validate` through the real binary: the integrity report of a policy
//! file against the configuration and the datasources' schemas (live, else the stored
//! snapshot), its exit codes, and parse errors.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::Path;
use std::process::Output;

use nl2sql_test_support::TempDir;
use serde_json::{Value, json};

use crate::support::{fixture, json, nl2sql, stderr, stdout, temp_dir};

/// `nl2sql ARGS` in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    nl2sql().args(args).current_dir(dir).output().unwrap()
}

/// The (role, rule, target, status, details) of every row.
fn rows(report: &Value) -> Vec<[String; 5]> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            ["role", "rule", "target", "status", "details"]
                .map(|k| r[k].as_str().unwrap().to_owned())
        })
        .collect()
}

fn r(role: &str, rule: &str, target: &str, status: &str, details: &str) -> [String; 5] {
    [role, rule, target, status, details].map(str::to_owned)
}

/// A directory with the fixture as `plant.db`, `nl2sql.toml` naming it (and `policy.json`),
/// and `policy.json` = `policy`.
fn setup(name: &str, policy: &str) -> TempDir {
    let dir = temp_dir(name);
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(
        dir.join("nl2sql.toml"),
        "version = 1\npolicy = \"policy.json\"\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.json"), policy).unwrap();
    dir
}

const BAD_POLICY: &str = r#"{"version": 1, "roles": {
  "analyst": {"description": "d", "role": "analyst",
    "allowed_datasources": ["plant", "warehouse"],
    "allowed_tables": ["plant.machines", "plant.main.factories", "plant.robots", "warehouse.stock"],
    "denied_columns": ["plant.machines.serial_number", "plant.machines.colour"]},
  "admin": {"description": "all", "role": "admin",
    "allowed_datasources": ["*"], "allowed_tables": ["*"]}}}"#;

#[test]
fn unknown_datasources_fail_and_unknown_tables_warn() {
    let dir = setup("bad", BAD_POLICY);
    let out = run_in(
        &dir,
        &[
            "policy",
            "validate",
            "--config",
            "nl2sql.toml",
            "--data-dir",
            "data",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["policy"], "./policy.json");
    assert_eq!(report["ok"], false);
    assert_eq!(
        (report["errors"].as_u64(), report["warnings"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(report["schemas"], json!({"plant": "live"}));
    assert_eq!(
        rows(&report),
        vec![
            r("admin", "datasource", "*", "OK", "Global Access"),
            r("admin", "table", "*", "OK", "Global Access"),
            r("analyst", "datasource", "plant", "OK", "Verified"),
            r(
                "analyst",
                "datasource",
                "warehouse",
                "MISSING",
                "Datasource not defined in config"
            ),
            r("analyst", "table", "plant.machines", "OK", "DS Verified"),
            r(
                "analyst",
                "table",
                "plant.main.factories",
                "OK",
                "DS Verified"
            ),
            r(
                "analyst",
                "table",
                "plant.robots",
                "UNKNOWN_TABLE",
                "Table 'robots' not in the schema of 'plant'"
            ),
            r(
                "analyst",
                "table",
                "warehouse.stock",
                "INVALID_DS",
                "Datasource 'warehouse' unknown"
            ),
            r(
                "analyst",
                "denied_column",
                "plant.machines.serial_number",
                "OK",
                "Verified"
            ),
            r(
                "analyst",
                "denied_column",
                "plant.machines.colour",
                "UNKNOWN_COLUMN",
                "Column 'colour' not in table 'machines' of 'plant'"
            ),
        ]
    );

    // The text report: a table (role, rule, target, status, details) and a summary.
    let out = run_in(
        &dir,
        &[
            "policy",
            "validate",
            "--config",
            "nl2sql.toml",
            "--policy",
            "policy.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "ROLE     RULE           TARGET                        STATUS          DETAILS"
    );
    assert_eq!(
        lines[4],
        "analyst  datasource     warehouse                     MISSING         Datasource not defined in config"
    );
    assert!(
        text.ends_with("\nschema of plant: live\nINVALID: 2 error(s), 2 warning(s)\n"),
        "{text}"
    );
}

#[test]
fn a_sound_policy_passes() {
    let dir = setup(
        "good",
        r#"{"version": 1, "roles": {"analyst": {"description": "d", "role": "analyst",
            "allowed_datasources": ["PLANT"], "allowed_tables": ["plant.*", "Plant.Machines"],
            "denied_columns": ["plant.main.machines.serial_number"]}}}"#,
    );
    let out = run_in(
        &dir,
        &[
            "policy",
            "validate",
            "--config",
            "nl2sql.toml",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["ok"], true);
    assert_eq!(
        rows(&report),
        vec![
            r("analyst", "datasource", "PLANT", "OK", "Verified"),
            r("analyst", "table", "plant.*", "OK", "DS Verified"),
            r("analyst", "table", "Plant.Machines", "OK", "DS Verified"),
            r(
                "analyst",
                "denied_column",
                "plant.main.machines.serial_number",
                "OK",
                "Verified"
            ),
        ]
    );
}

#[test]
fn an_unreachable_datasource_is_checked_against_its_stored_snapshot() {
    let dir = setup("stored", BAD_POLICY);
    let out = run_in(
        &dir,
        &["index", "--config", "nl2sql.toml", "--data-dir", "data"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_file(dir.join("plant.db")).unwrap();
    let out = run_in(
        &dir,
        &[
            "policy",
            "validate",
            "--config",
            "nl2sql.toml",
            "--data-dir",
            "data",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let from = report["schemas"]["plant"].as_str().unwrap();
    assert!(
        from.starts_with("stored snapshot ")
            && from.ends_with(
                " (the datasource did not answer: [SERVICE_UNAVAILABLE] the SQLite database file does not exist or is not a file)"
            ),
        "{from}"
    );
    let robots = &rows(&report)[6];
    assert_eq!(robots[3], "UNKNOWN_TABLE");

    // No stored snapshot either (another data directory): names are not checked.
    let out = run_in(
        &dir,
        &[
            "policy",
            "validate",
            "--config",
            "nl2sql.toml",
            "--data-dir",
            "elsewhere",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    assert!(
        report["schemas"]["plant"]
            .as_str()
            .unwrap()
            .starts_with("none: the datasource did not answer ([SERVICE_UNAVAILABLE] "),
        "{report:#}"
    );
    let robots = &rows(&report)[6];
    assert_eq!(
        robots,
        &r(
            "analyst",
            "table",
            "plant.robots",
            "OK",
            "DS Verified (no schema: table not checked)"
        )
    );
    assert!(!dir.join("elsewhere").exists());
}

#[test]
fn without_configuration_datasources_are_unverified() {
    let dir = setup("noconfig", BAD_POLICY);
    let out = run_in(&dir, &["policy", "validate", "--policies", "policy.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("analyst  datasource     warehouse                     UNVERIFIED  No configuration: datasource not checked\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "\nno configuration (--config, --db or $NL2SQL_CONFIG): datasources not checked\nOK: 0 error(s), 8 warning(s)\n"
        ),
        "{text}"
    );
}

#[test]
fn unreadable_policies_and_missing_arguments_exit_2() {
    let dir = setup("usage", r#"{"version": 1, "roles": {"r": {"role": "r"}}}"#);
    let out = run_in(&dir, &["policy", "validate", "--config", "nl2sql.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: invalid policy file './policy.json': policy file is malformed at line 1, column "
        ),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        dir.join("policy.json"),
        r#"{"version": 1, "roles": {"r": {"description": "d", "role": "r", "allowed_tables": ["machines"]}}}"#,
    )
    .unwrap();
    let out = run_in(&dir, &["policy", "validate", "--policy", "policy.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid table 'machines' in role 'r'"),
        "{}",
        stderr(&out)
    );

    let out = run_in(&dir, &["policy", "validate"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: no policy file: pass --policy FILE (or set POLICIES_CONFIG, or use a configuration that names one)\n"
    );
    let out = run_in(&dir, &["policy", "validate", "--policy", "missing.json"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_in(&dir, &["policy"]);
    assert_eq!(out.status.code(), Some(2));
}

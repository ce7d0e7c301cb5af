//! `nl2sql validate-plan` and `nl2sql render-plan`: exit 0 = ok, 1 = findings (a plan
//! that does not parse included), 2 = usage or configuration error.

use std::io::Write as _;
use std::process::{Output, Stdio};

use crate::support::{assert_succeeded, json, nl2sql, repo};

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = nl2sql()
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    {
        let mut pipe = child.stdin.take().expect("stdin");
        if let Some(input) = stdin {
            pipe.write_all(input.as_bytes()).expect("write stdin");
        }
    }
    child.wait_with_output().expect("binary exits")
}

const SCHEMA: &str = "examples/manufacturing.sql";
const POLICY: &str = "examples/policy.json";
const EXAMPLE: &str = "crates/nl2sql-sqlgen/tests/it/plans/three_table_join.json";

const SERIALS: &str = r#"{"tables":[{"name":"machines","alias":"m","ordinal":0}],
 "select_items":[{"ordinal":0,"expr":{"kind":"column","alias":"m","column_name":"serial_number"}}]}"#;

#[test]
fn valid_plan_exits_zero_with_the_json_envelope() {
    let out = run(
        &[
            "validate-plan",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--format",
            "json",
            EXAMPLE,
        ],
        None,
    );
    assert_succeeded(&out);
    let v = json(&out);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["issues"], serde_json::json!([]));
    assert_eq!(v["feedback"], serde_json::Value::Null);
    assert_eq!(v["plan"]["limit"], 10);
}

#[test]
fn unparsable_plan_is_a_finding_with_its_json_path() {
    let plan = r#"{"tables":[{"name":"machines","alias":"m","ordinal":0}],
      "select_items":[{"ordinal":0,"expr":{"kind":"binary","op":"+","left":{"kind":"literal","value":1}}}]}"#;
    let out = run(&["validate-plan", "--format", "json", "-"], Some(plan));
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "rewrite");
    assert_eq!(v["issues"][0]["code"], "INVALID_PLAN_STRUCTURE");
    assert_eq!(v["issues"][0]["path"], "$.select_items[0].expr.right");
}

#[test]
fn unknown_table_exits_one_with_text_findings() {
    let plan = r#"{"tables":[{"name":"machnes","alias":"m","ordinal":0}],
      "select_items":[{"ordinal":0,"expr":{"kind":"column","alias":"m","column_name":"name"}}]}"#;
    let out = run(
        &["validate-plan", "--schema", SCHEMA, "--dialect", "sqlite"],
        Some(plan),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("status: rewrite\n"), "{text}");
    assert!(
        text.contains("ERROR [TABLE_NOT_FOUND] at $.tables[0].name: Table 'machnes' not found"),
        "{text}"
    );
}

#[test]
fn denied_column_is_rejected_by_the_policy() {
    let out = run(
        &[
            "validate-plan",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--policy",
            POLICY,
            "--role",
            "analyst",
            "--format",
            "json",
            "-",
        ],
        Some(SERIALS),
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "rejected");
    assert_eq!(v["issues"][0]["code"], "SECURITY_VIOLATION");
    assert_eq!(v["issues"][0]["severity"], "CRITICAL");
}

#[test]
fn policy_without_role_is_a_usage_error() {
    let out = run(&["validate-plan", "--policy", POLICY, EXAMPLE], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_plan_file_is_a_configuration_error() {
    let out = run(&["validate-plan", "no/such/plan.json"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read plan file"));
}

#[test]
fn render_prints_only_the_sql() {
    let out = run(
        &[
            "render-plan",
            EXAMPLE,
            "--dialect",
            "sqlite",
            "--row-limit",
            "5",
        ],
        None,
    );
    assert_succeeded(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "SELECT f.name AS factory, SUM(r.quantity_produced) AS total_quantity FROM production_runs AS r INNER JOIN machines AS m ON r.machine_id = m.id INNER JOIN factories AS f ON m.factory_id = f.id WHERE r.started_at >= '2024-04-01' GROUP BY f.name ORDER BY total_quantity DESC LIMIT 5\n"
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn render_of_an_invalid_plan_exits_one_with_findings_on_stderr() {
    let out = run(
        &[
            "render-plan",
            "--schema",
            SCHEMA,
            "--policy",
            POLICY,
            "--role",
            "analyst",
            "--dialect",
            "sqlite",
            "-",
        ],
        Some(SERIALS),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[SECURITY_VIOLATION]"), "{err}");
}

#[test]
fn render_of_an_inexpressible_plan_is_sql_gen_failed() {
    let plan = r#"{"tables":[{"name":"machines","alias":"m","ordinal":0},{"name":"factories","alias":"f","ordinal":1}],
      "joins":[{"left_alias":"m","right_alias":"f","join_type":"full","ordinal":0,
        "condition":{"kind":"binary","op":"=","left":{"kind":"column","alias":"m","column_name":"factory_id"},"right":{"kind":"column","alias":"f","column_name":"id"}}}],
      "select_items":[{"ordinal":0,"expr":{"kind":"column","alias":"m","column_name":"name"}}]}"#;
    let out = run(&["render-plan", "--dialect", "mysql", "-"], Some(plan));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[SQL_GEN_FAILED]") && err.contains("mysql"),
        "{err}"
    );
}

#[test]
fn render_without_dialect_is_a_usage_error() {
    let out = run(&["render-plan", EXAMPLE], None);
    assert_eq!(out.status.code(), Some(2));
}

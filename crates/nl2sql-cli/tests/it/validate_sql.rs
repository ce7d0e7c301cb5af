//! `nl2sql validate-sql`: exit 0 = ok, 1 = rewrite or rejected, 2 = usage or config error.

use std::io::Write as _;
use std::process::{Output, Stdio};

use crate::support::{json, nl2sql, repo, temp_dir};

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
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
            pipe.write_all(input).expect("write stdin");
        }
    }
    child.wait_with_output().expect("binary exits")
}

const SCHEMA: &str = "examples/manufacturing.sql";

#[test]
fn ok_exits_zero_with_the_json_envelope() {
    let out = run(
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--format",
            "json",
            "SELECT name FROM machines",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["issues"], serde_json::json!([]));
    assert_eq!(v["feedback"], serde_json::Value::Null);
    assert_eq!(v["sql"], "SELECT name FROM machines");
}

#[test]
fn rewrite_exits_one_with_codes_and_spans() {
    let out = run(
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--format",
            "json",
            "SELECT nme FROM machines",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "rewrite");
    assert_eq!(v["issues"][0]["code"], "COLUMN_NOT_FOUND");
    assert_eq!(v["issues"][0]["severity"], "ERROR");
    assert_eq!(v["issues"][0]["span"]["start"]["column"], 8);
    assert!(
        v["feedback"]
            .as_str()
            .unwrap()
            .starts_with("SQL validation failed:\n- ")
    );
}

#[test]
fn rejected_exits_one() {
    let out = run(
        &[
            "validate-sql",
            "--dialect",
            "duckdb",
            "--format",
            "json",
            "SELECT * FROM read_csv('/etc/passwd')",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "rejected");
    assert_eq!(v["issues"][0]["code"], "SECURITY_VIOLATION");
    assert_eq!(v["issues"][0]["severity"], "CRITICAL");
}

#[test]
fn reads_sql_from_standard_input() {
    for args in [
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "-",
        ][..],
        &["validate-sql", "--schema", SCHEMA, "--dialect", "sqlite"][..],
    ] {
        let out = run(args, Some(b"SELECT id FROM factories"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "status: ok\n");
    }
}

#[test]
fn text_format_lists_issues_and_feedback() {
    let out = run(
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "SELECT id FROM machine",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "status: rewrite\nERROR [TABLE_NOT_FOUND] at 1:16: table 'machine' does not exist"
        ),
        "{text}"
    );
    assert!(
        text.contains("\nSQL validation failed:\n- table 'machine'"),
        "{text}"
    );
}

#[test]
fn policy_and_roles_apply() {
    let base = [
        "validate-sql",
        "--schema",
        SCHEMA,
        "--datasource-id",
        "manufacturing",
        "--dialect",
        "sqlite",
        "--policy",
        "examples/policy.json",
    ];
    let with = |role: &str, sql: &str| {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(["--role", role, "--format", "json", sql]);
        run(&args, None)
    };
    let out = with("analyst", "SELECT name FROM machines");
    assert_eq!(out.status.code(), Some(0));
    let out = with("analyst", "SELECT * FROM machines");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["status"], "rejected");
    let out = with("unknown-role", "SELECT name FROM machines");
    assert_eq!(json(&out)["status"], "rejected");
    let out = with("admin", "SELECT * FROM machines");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn datasource_id_defaults_to_the_schema_file_stem() {
    // The policy names datasource 'manufacturing'; the schema file stem is 'manufacturing'.
    let out = run(
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--policy",
            "examples/policy.json",
            "--role",
            "analyst",
            "SELECT name FROM machines",
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn json_schema_files_are_accepted_and_set_the_dialect() {
    let dir = temp_dir("validate-sql-json-schema");
    let path = dir.join("shop.json");
    std::fs::write(
        &path,
        r#"{"datasource_id":"shop","engine_type":"postgres","tables":{"public.orders":{"table":{"schema_name":"public","table_name":"orders"},"columns":{"id":{"name":"id","data_type":"integer"},"Total":{"name":"Total","data_type":"numeric"}}}}}"#,
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let ok = run(
        &[
            "validate-sql",
            "--schema",
            p,
            "SELECT id, \"Total\" FROM orders",
        ],
        None,
    );
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    // PostgreSQL folds unquoted names: Total becomes total, which does not exist.
    let folded = run(
        &["validate-sql", "--schema", p, "SELECT Total FROM orders"],
        None,
    );
    assert_eq!(folded.status.code(), Some(1));
}

#[test]
fn usage_and_configuration_errors_exit_two() {
    let cases: &[&[&str]] = &[
        &["validate-sql", "--dialect", "oracle", "SELECT 1"],
        &["validate-sql", "--schema", "does/not/exist.sql", "SELECT 1"],
        &["validate-sql", "--schema", "README.md", "SELECT 1"],
        &[
            "validate-sql",
            "--policy",
            "examples/policy.json",
            "SELECT 1",
        ],
        &["validate-sql", "--role", "analyst", "SELECT 1"],
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--policy",
            "README.md",
            "--role",
            "x",
            "SELECT 1",
        ],
        &["validate-sql", "--format", "yaml", "SELECT 1"],
        &["no-such-command"],
    ];
    for args in cases {
        let out = run(args, None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
}

#[test]
fn garbage_input_never_panics() {
    let out = run(&["validate-sql", "-"], Some(&[0xff, 0xfe, 0x00, 0x41]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-8"));
    let huge = "SELECT ".to_owned() + &"(".repeat(300_000);
    let out = run(
        &["validate-sql", "--format", "json", "-"],
        Some(huge.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["issues"][0]["code"], "SQL_SYNTAX_ERROR");
}

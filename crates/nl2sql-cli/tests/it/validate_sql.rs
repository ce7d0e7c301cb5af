//! `nl2sql validate-sql`: exit 0 = ok, 1 = rewrite or rejected, 2 = usage or config error.

use std::io::Write as _;
use std::process::{Output, Stdio};

use crate::support::{assert_succeeded, json, nl2sql, repo, stderr, stdout, temp_dir};

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
    assert_succeeded(&out);
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

// --- `--batch`: JSON lines in, one JSON report per line out, in input order ---

/// The JSON lines of standard output.
fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// What `validate-sql --format json` prints for `sql` alone, with `head` before it.
fn single_report(head: &[&str], sql: &str) -> serde_json::Value {
    let mut args = vec!["validate-sql"];
    args.extend(head);
    args.extend(["--format", "json", sql]);
    json(&run(&args, None))
}

/// A batch report without the fields `--batch` adds.
fn without_id_and_line(report: &serde_json::Value) -> serde_json::Value {
    let mut report = report.clone();
    if let Some(fields) = report.as_object_mut() {
        fields.remove("id");
        fields.remove("line");
    }
    report
}

#[test]
fn batch_reports_every_line_in_order_and_bad_lines_alone() {
    let dir = temp_dir("validate-sql-batch");
    let path = dir.join("batch.jsonl");
    let input = [
        r#"{"id": "good", "sql": "SELECT name FROM machines"}"#,
        r#"{"id": "stacked", "sql": "SELECT 1; DROP TABLE x"}"#,
        "",
        r#"{"id": "typo", "sql": "SELECT nme FROM machines", "datasource": "manufacturing"}"#,
        r#"{"id": "broken", "sql": "SELECT 1"#,
        r#"{"id": "no-sql", "dialect": "sqlite"}"#,
        r#"{"id": 7, "sql": "SELECT id FROM factories", "question": "ignored"}"#,
        r#"{"id": "oracle", "sql": "SELECT 1", "dialect": "oracle"}"#,
        r#"{"id": "elsewhere", "sql": "SELECT 1", "datasource": "warehouse"}"#,
        r#"{"sql": "SELECT * FROM read_csv('/etc/passwd')"}"#,
    ];
    std::fs::write(&path, input.join("\n") + "\n").unwrap();
    let head = ["--schema", SCHEMA, "--dialect", "sqlite"];
    let mut args = vec!["validate-sql"];
    args.extend(head);
    args.extend(["--batch", path.to_str().unwrap()]);
    let out = run(&args, None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reports = json_lines(&out);
    // One report per non-blank line, in input order, with its id and 1-based line number.
    let ids: Vec<_> = reports.iter().map(|r| r["id"].clone()).collect();
    assert_eq!(
        ids,
        serde_json::json!([
            "good",
            "stacked",
            "typo",
            null,
            "no-sql",
            7,
            "oracle",
            "elsewhere",
            null
        ])
        .as_array()
        .unwrap()
        .clone()
    );
    let lines: Vec<_> = reports
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 2, 4, 5, 6, 7, 8, 9, 10]);
    // A checked line's report is the single-statement report, plus id and line.
    for (i, sql) in [
        (0, "SELECT name FROM machines"),
        (1, "SELECT 1; DROP TABLE x"),
        (2, "SELECT nme FROM machines"),
        (5, "SELECT id FROM factories"),
        (8, "SELECT * FROM read_csv('/etc/passwd')"),
    ] {
        assert_eq!(
            without_id_and_line(&reports[i]),
            single_report(&head, sql),
            "line {}",
            reports[i]["line"]
        );
    }
    let statuses: Vec<_> = reports.iter().map(|r| r["status"].clone()).collect();
    assert_eq!(statuses[0], "ok");
    assert_eq!(statuses[1], "rejected");
    assert_eq!(statuses[2], "rewrite");
    assert_eq!(statuses[5], "ok");
    assert_eq!(statuses[8], "rejected");
    // Bad lines: ok false, a stable code and a message saying what is wrong.
    for (i, code, words) in [
        (3, "INVALID_STATE", "not valid JSON"),
        (4, "MISSING_SQL", "no `sql`"),
        (6, "INVALID_STATE", "unknown dialect 'oracle'"),
        (7, "INVALID_STATE", "unknown datasource 'warehouse'"),
    ] {
        let r = &reports[i];
        assert_eq!(r["ok"], false, "{r}");
        assert_eq!(r["error"]["code"], code, "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{message}");
        assert_eq!(r.get("status"), None, "{r}");
    }
    let err = stderr(&out);
    assert!(
        err.contains("validate-sql --batch: 9 statements, 2 ok, 3 refused, 4 bad lines in "),
        "{err}"
    );
}

#[test]
fn an_all_good_batch_from_standard_input_exits_zero() {
    let input = concat!(
        "{\"id\": \"a\", \"sql\": \"SELECT name FROM machines\"}\r\n",
        "\n",
        "{\"id\": 2, \"sql\": \"SELECT id FROM factories\", \"dialect\": \"sqlite\"}\n",
    );
    let out = run(
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--batch",
            "-",
        ],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reports = json_lines(&out);
    assert_eq!(reports.len(), 2);
    assert_eq!(
        (&reports[0]["id"], &reports[0]["line"]),
        (&"a".into(), &1.into())
    );
    assert_eq!(
        (&reports[1]["id"], &reports[1]["line"]),
        (&2.into(), &3.into())
    );
    assert!(reports.iter().all(|r| r["status"] == "ok"));
    assert!(
        stderr(&out).contains("2 statements, 2 ok, 0 refused, 0 bad lines"),
        "{}",
        stderr(&out)
    );
    // An empty batch checks nothing and passes.
    let out = run(&["validate-sql", "--batch", "-"], Some(b""));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_line_dialect_overrides_the_command_line_one() {
    // PostgreSQL (the JSON schema's engine) folds `Total` to `total`, which does not
    // exist; SQLite matches it without case.
    let dir = temp_dir("validate-sql-batch-dialect");
    let schema = dir.join("shop.json");
    std::fs::write(
        &schema,
        r#"{"datasource_id":"shop","engine_type":"postgres","tables":{"public.orders":{"table":{"schema_name":"public","table_name":"orders"},"columns":{"id":{"name":"id","data_type":"integer"},"Total":{"name":"Total","data_type":"numeric"}}}}}"#,
    )
    .unwrap();
    let schema = schema.to_str().unwrap();
    let input = concat!(
        "{\"id\": 1, \"sql\": \"SELECT Total FROM orders\"}\n",
        "{\"id\": 2, \"sql\": \"SELECT Total FROM orders\", \"dialect\": \"sqlite\"}\n",
        "{\"id\": 3, \"sql\": \"SELECT Total FROM orders\", \"datasource\": \"shop\"}\n",
    );
    let out = run(
        &["validate-sql", "--schema", schema, "--batch", "-"],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reports = json_lines(&out);
    let statuses: Vec<_> = reports.iter().map(|r| r["status"].clone()).collect();
    assert_eq!(statuses, ["rewrite", "ok", "rewrite"]);
    let sql = "SELECT Total FROM orders";
    assert_eq!(
        without_id_and_line(&reports[0]),
        single_report(&["--schema", schema], sql)
    );
    assert_eq!(
        without_id_and_line(&reports[1]),
        single_report(&["--schema", schema, "--dialect", "sqlite"], sql)
    );
}

#[test]
fn order_and_ids_survive_hundreds_of_statements_across_threads() {
    let statements = 600;
    let sql = |i: usize| match i % 3 {
        0 => format!("SELECT name FROM machines WHERE id = {i}"),
        1 => format!("SELECT nme{i} FROM machines"),
        _ => format!("SELECT {i}; DELETE FROM machines"),
    };
    let input: String = (0..statements)
        .map(|i| serde_json::json!({"id": format!("q{i}"), "sql": sql(i)}).to_string() + "\n")
        .collect();
    let out = run(
        &[
            "validate-sql",
            "--schema",
            SCHEMA,
            "--dialect",
            "sqlite",
            "--format",
            "json",
            "--batch",
            "-",
        ],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reports = json_lines(&out);
    assert_eq!(reports.len(), statements);
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(r["id"], format!("q{i}"), "{r}");
        assert_eq!(r["line"], i + 1, "{r}");
        assert_eq!(r["sql"], sql(i), "{r}");
        let expected = ["ok", "rewrite", "rejected"][i % 3];
        assert_eq!(r["status"], expected, "{r}");
    }
    assert!(
        stderr(&out).contains("600 statements, 200 ok, 400 refused, 0 bad lines"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn batch_usage_errors_exit_two_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["validate-sql", "--batch", "does/not/exist.jsonl"],
            "cannot read batch file 'does/not/exist.jsonl'",
        ),
        (
            &["validate-sql", "--batch", "-", "SELECT 1"],
            "cannot be used with",
        ),
        (
            &[
                "validate-sql",
                "--db",
                "sqlite://tests/data/fixtures/manufacturing.db",
                "--batch",
                "-",
            ],
            "not supported with --batch",
        ),
        (
            &["validate-sql", "--format", "text", "--batch", "-"],
            "--format text does not apply",
        ),
        (
            &["validate-sql", "--dialect", "oracle", "--batch", "-"],
            "unknown dialect 'oracle'",
        ),
    ];
    for (args, words) in cases {
        // No input: these fail before reading it (a write could meet a closed pipe).
        let out = run(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(words), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
    }
}

#[test]
fn the_policy_applies_to_every_line_of_a_batch() {
    let input = concat!(
        "{\"id\": \"named\", \"sql\": \"SELECT name FROM machines\"}\n",
        "{\"id\": \"star\", \"sql\": \"SELECT * FROM machines\"}\n",
    );
    let head = [
        "--schema",
        SCHEMA,
        "--dialect",
        "sqlite",
        "--policy",
        "examples/policy.json",
        "--role",
        "analyst",
    ];
    let mut args = vec!["validate-sql"];
    args.extend(head);
    args.extend(["--batch", "-"]);
    let out = run(&args, Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let reports = json_lines(&out);
    assert_eq!(reports[0]["status"], "ok");
    assert_eq!(reports[1]["status"], "rejected");
    assert_eq!(
        without_id_and_line(&reports[1]),
        single_report(&head, "SELECT * FROM machines")
    );
}

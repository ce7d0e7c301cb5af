//! Unit tests of the guard: one rule at a time, in every dialect.

use nl2sql_state::{AccessPolicy, Dialect, ErrorCode, PolicyFile};

use super::{GuardContext, GuardReport, GuardStatus, SqlGuard};
use crate::schema_from_ddl;

const DDL: &str = "
CREATE TABLE factories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, location TEXT, opened_on DATE);
CREATE TABLE machines (id INTEGER PRIMARY KEY, factory_id INTEGER NOT NULL REFERENCES factories(id),
    name TEXT NOT NULL, serial_number TEXT NOT NULL, line TEXT, commissioned_on DATE);
CREATE TABLE production_runs (id INTEGER PRIMARY KEY, machine_id INTEGER NOT NULL, product_id INTEGER NOT NULL,
    operator TEXT, started_at TIMESTAMP, quantity_produced INTEGER, scrap_count INTEGER,
    FOREIGN KEY (machine_id) REFERENCES machines(id));
CREATE TABLE orders (id INTEGER PRIMARY KEY, created_at TIMESTAMP, updated_at TIMESTAMP, is_deleted BOOLEAN,
    dropoff_time TIMESTAMP, note TEXT, amount DECIMAL(10,2));
";

const ALL: [Dialect; 5] = Dialect::ALL;

fn guard(dialect: Dialect) -> SqlGuard {
    let contract = schema_from_ddl(DDL, Dialect::Generic, "plant").expect("fixture DDL parses");
    SqlGuard::new(GuardContext::new("plant", dialect, &contract))
}

fn check(dialect: Dialect, sql: &str) -> GuardReport {
    guard(dialect).check(sql)
}

fn codes(report: &GuardReport) -> Vec<ErrorCode> {
    report.issues.iter().map(|i| i.code).collect()
}

/// Asserts `sql` is accepted in every dialect listed.
fn assert_ok(dialects: &[Dialect], sql: &str) {
    for &d in dialects {
        let report = check(d, sql);
        assert_eq!(
            report.status,
            GuardStatus::Ok,
            "{d}: expected ok for {sql}\n{}",
            report.to_text()
        );
    }
}

/// Asserts `sql` gets `status` with `code` among its issues in every dialect listed.
fn assert_issue(dialects: &[Dialect], sql: &str, status: GuardStatus, code: ErrorCode) {
    for &d in dialects {
        let report = check(d, sql);
        assert_eq!(
            report.status,
            status,
            "{d}: status for {sql}\n{}",
            report.to_text()
        );
        assert!(
            codes(&report).contains(&code),
            "{d}: expected {code} for {sql}\n{}",
            report.to_text()
        );
    }
}

#[test]
fn accepts_benign_queries_with_keyword_like_names_and_literals() {
    for sql in [
        "SELECT created_at, updated_at FROM orders",
        "SELECT is_deleted, dropoff_time FROM orders",
        "SELECT 'DROP TABLE t' AS s FROM orders",
        "SELECT id FROM orders -- DELETE FROM orders\n",
        "/* INSERT INTO x */ SELECT id FROM orders",
        "SELECT id FROM orders WHERE note LIKE '%insert%'",
        "SELECT id FROM orders WHERE note = 'update; drop table orders'",
    ] {
        assert_ok(&ALL, sql);
    }
}

#[test]
fn accepts_joins_ctes_windows_and_set_operations() {
    for sql in [
        "SELECT f.name, COUNT(*) AS n FROM factories AS f JOIN machines AS m ON m.factory_id = f.id GROUP BY f.name HAVING COUNT(*) > 1 ORDER BY n DESC",
        "WITH per_machine AS (SELECT machine_id, SUM(quantity_produced) AS qty FROM production_runs GROUP BY machine_id) SELECT m.name, p.qty FROM per_machine AS p JOIN machines AS m ON m.id = p.machine_id",
        "SELECT id, ROW_NUMBER() OVER (PARTITION BY machine_id ORDER BY started_at) AS rn FROM production_runs",
        "SELECT name FROM factories UNION ALL SELECT name FROM machines ORDER BY name",
        "SELECT name FROM machines AS m WHERE EXISTS (SELECT 1 FROM production_runs AS r WHERE r.machine_id = m.id)",
        "SELECT name, (SELECT COUNT(*) FROM machines WHERE machines.factory_id = factories.id) AS n FROM factories",
        "SELECT id FROM machines WHERE factory_id IN (SELECT id FROM factories WHERE location = 'Austin')",
        "SELECT d.n FROM (SELECT COUNT(*) AS n FROM machines) AS d",
        "SELECT CASE WHEN scrap_count > 10 THEN 'high' ELSE 'low' END AS level FROM production_runs",
        "SELECT COALESCE(location, 'unknown') AS loc FROM factories",
        "SELECT * FROM machines",
        "SELECT m.* FROM machines AS m",
        "SELECT 1",
        "VALUES (1, 2)",
        "SELECT name FROM machines ORDER BY 1 LIMIT 5 OFFSET 2",
    ] {
        assert_ok(&ALL, sql);
    }
}

#[test]
fn accepts_quoted_identifiers_that_look_like_keywords() {
    assert_ok(
        &[
            Dialect::Postgres,
            Dialect::DuckDb,
            Dialect::Sqlite,
            Dialect::Generic,
        ],
        "SELECT \"name\" AS \"select\" FROM \"machines\"",
    );
    assert_ok(
        &[Dialect::MySql],
        "SELECT `name` AS `select` FROM `machines`",
    );
}

#[test]
fn accepts_using_and_natural_joins() {
    let sql = "SELECT id, name FROM machines JOIN (SELECT id, operator FROM production_runs) AS r USING (id)";
    assert_ok(&ALL, sql);
    assert_ok(
        &[Dialect::Postgres, Dialect::Sqlite, Dialect::DuckDb],
        "SELECT machines.id FROM machines JOIN factories USING (id)",
    );
}

#[test]
fn rejects_stacked_queries() {
    assert_issue(
        &ALL,
        "SELECT 1; DROP TABLE orders",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
}

#[test]
fn rejects_dml_and_ddl() {
    for sql in [
        "DELETE FROM orders",
        "UPDATE orders SET note = 'x'",
        "INSERT INTO orders (id) VALUES (1)",
        "DROP TABLE orders",
        "CREATE TABLE t (a INT)",
        "ALTER TABLE orders ADD COLUMN x INT",
        "TRUNCATE TABLE orders",
    ] {
        assert_issue(
            &ALL,
            sql,
            GuardStatus::Rejected,
            ErrorCode::SecurityViolation,
        );
    }
}

#[test]
fn rejects_engine_and_session_statements() {
    let cases: &[(Dialect, &str)] = &[
        (Dialect::DuckDb, "COPY orders TO '/tmp/x'"),
        (Dialect::DuckDb, "ATTACH 'x.db'"),
        (Dialect::Sqlite, "ATTACH DATABASE 'x.db' AS x"),
        (Dialect::DuckDb, "INSTALL httpfs"),
        (Dialect::DuckDb, "LOAD httpfs"),
        (Dialect::Sqlite, "PRAGMA table_info(orders)"),
        (Dialect::DuckDb, "PRAGMA enable_profiling"),
        (Dialect::Postgres, "SET search_path = x"),
        (Dialect::DuckDb, "SET enable_external_access = true"),
        (Dialect::MySql, "SET @x = 1"),
        (Dialect::Postgres, "RESET ALL"),
        (Dialect::DuckDb, "EXPORT DATABASE '/tmp/x'"),
        (Dialect::DuckDb, "CALL pragma_version()"),
        (Dialect::Postgres, "EXPLAIN ANALYZE SELECT 1"),
        (Dialect::Postgres, "BEGIN"),
        (Dialect::Postgres, "COMMIT"),
        (Dialect::MySql, "USE test"),
        (Dialect::MySql, "SHOW TABLES"),
        (Dialect::Postgres, "PREPARE p AS SELECT 1"),
        (Dialect::Postgres, "EXECUTE p"),
    ];
    for (dialect, sql) in cases {
        assert_issue(
            &[*dialect],
            sql,
            GuardStatus::Rejected,
            ErrorCode::SecurityViolation,
        );
    }
}

#[test]
fn rejects_data_modifying_cte_and_select_into_and_locks() {
    assert_issue(
        &[Dialect::Postgres],
        "WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres, Dialect::Generic, Dialect::DuckDb],
        "SELECT * INTO t2 FROM orders",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres, Dialect::MySql],
        "SELECT * FROM orders FOR UPDATE",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres],
        "SELECT * FROM orders FOR SHARE",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
}

#[test]
fn rejects_table_functions_paths_and_catalogs() {
    assert_issue(
        &[Dialect::DuckDb, Dialect::Generic, Dialect::Postgres],
        "SELECT * FROM read_csv('/etc/passwd')",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM glob('/etc/*')",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM range(10)",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres],
        "SELECT * FROM pg_ls_dir('/')",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM '/etc/passwd'",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM \"data.csv\"",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &ALL,
        "SELECT * FROM information_schema.tables",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres],
        "SELECT * FROM pg_catalog.pg_user",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres],
        "SELECT * FROM pg_shadow",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Sqlite],
        "SELECT * FROM sqlite_master",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Sqlite],
        "SELECT * FROM sqlite_schema",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::MySql],
        "SELECT * FROM mysql.user",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM duckdb_settings()",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::DuckDb],
        "SELECT * FROM duckdb_tables",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
}

#[test]
fn rejects_catalog_subqueries_in_any_clause() {
    assert_issue(
        &ALL,
        "SELECT id FROM orders WHERE id IN (SELECT 1 FROM information_schema.columns)",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Sqlite],
        "SELECT (SELECT sql FROM sqlite_master LIMIT 1) AS s FROM orders",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Sqlite],
        "SELECT id FROM orders UNION SELECT name FROM sqlite_master",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Sqlite],
        "WITH c AS (SELECT name FROM sqlite_master) SELECT * FROM c",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
}

#[test]
fn rejects_dangerous_functions() {
    let cases: &[(Dialect, &str)] = &[
        (Dialect::Postgres, "SELECT pg_read_file('/etc/passwd')"),
        (Dialect::Postgres, "SELECT pg_sleep(10)"),
        (Dialect::Postgres, "SELECT set_config('a', 'b', false)"),
        (Dialect::Postgres, "SELECT nextval('s')"),
        (
            Dialect::Postgres,
            "SELECT query_to_xml('select 1', true, true, '')",
        ),
        (Dialect::Postgres, "SELECT lo_import('/etc/passwd')"),
        (Dialect::Postgres, "SELECT dblink('host=x', 'select 1')"),
        (
            Dialect::Postgres,
            "SELECT current_setting('data_directory')",
        ),
        (Dialect::Sqlite, "SELECT load_extension('x')"),
        (Dialect::Sqlite, "SELECT readfile('/etc/passwd')"),
        (Dialect::Sqlite, "SELECT writefile('/tmp/x', 'y')"),
        (Dialect::MySql, "SELECT LOAD_FILE('/etc/passwd')"),
        (Dialect::MySql, "SELECT SLEEP(10)"),
        (Dialect::MySql, "SELECT BENCHMARK(1000000, MD5('a'))"),
        (Dialect::DuckDb, "SELECT getenv('HOME')"),
        (
            Dialect::DuckDb,
            "SELECT count(*) FROM orders WHERE note = (SELECT content FROM read_text('/etc/passwd'))",
        ),
        (
            Dialect::Postgres,
            "SELECT name FROM machines ORDER BY pg_sleep(1)",
        ),
    ];
    for (dialect, sql) in cases {
        assert_issue(
            &[*dialect],
            sql,
            GuardStatus::Rejected,
            ErrorCode::SecurityViolation,
        );
    }
}

#[test]
fn unknown_functions_ask_for_a_rewrite_with_suggestions() {
    let report = check(Dialect::Postgres, "SELECT cout(id) FROM machines");
    assert_eq!(report.status, GuardStatus::Rewrite);
    assert_eq!(codes(&report), vec![ErrorCode::UnsupportedSql]);
    assert!(
        report.issues[0].message.contains("did you mean")
            && report.issues[0].message.contains("'count'"),
        "{}",
        report.issues[0].message
    );
}

#[test]
fn rejects_session_variables_and_flags_parameters() {
    assert_issue(
        &[Dialect::MySql],
        "SELECT @@version",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    assert_issue(
        &[Dialect::Postgres],
        "SELECT id FROM orders WHERE id = $1",
        GuardStatus::Rewrite,
        ErrorCode::UnsupportedSql,
    );
    assert_issue(
        &[Dialect::Sqlite],
        "SELECT id FROM orders WHERE id = ?",
        GuardStatus::Rewrite,
        ErrorCode::UnsupportedSql,
    );
}

#[test]
fn recursive_ctes_need_the_policy() {
    let sql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n";
    assert_issue(&ALL, sql, GuardStatus::Rewrite, ErrorCode::UnsupportedSql);
    let policy = PolicyFile::from_json_str(
        r#"{"version":1,"roles":{"r":{"description":"d","role":"r","allowed_datasources":["plant"],"allowed_tables":["*"],"allow_recursive_cte":true}}}"#,
    )
    .unwrap()
    .access_for(&["r".to_owned()]);
    let contract = schema_from_ddl(DDL, Dialect::Generic, "plant").unwrap();
    let report =
        SqlGuard::new(GuardContext::new("plant", Dialect::Postgres, &contract).with_policy(policy))
            .check(sql);
    assert_eq!(report.status, GuardStatus::Ok, "{}", report.to_text());
}

#[test]
fn ctes_named_like_catalogs_are_not_catalogs() {
    assert_ok(
        &ALL,
        "WITH pg_totals AS (SELECT COUNT(*) AS n FROM machines) SELECT n FROM pg_totals",
    );
}

#[test]
fn cte_may_not_shadow_a_table() {
    assert_issue(
        &ALL,
        "WITH machines AS (SELECT * FROM orders) SELECT * FROM machines",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
}

#[test]
fn unknown_tables_and_columns_ask_for_a_rewrite() {
    let report = check(Dialect::Postgres, "SELECT nme FROM machines");
    assert_eq!(report.status, GuardStatus::Rewrite);
    assert_eq!(codes(&report), vec![ErrorCode::ColumnNotFound]);
    assert!(
        report.issues[0].message.contains("did you mean 'name'"),
        "{}",
        report.issues[0].message
    );
    let span = report.issues[0].span.expect("span");
    assert_eq!((span.start.line, span.start.column), (1, 8));

    assert_issue(
        &ALL,
        "SELECT * FROM \"foo.bar\"",
        GuardStatus::Rewrite,
        ErrorCode::TableNotFound,
    );
    assert_issue(
        &ALL,
        "SELECT * FROM nowhere.machines",
        GuardStatus::Rewrite,
        ErrorCode::TableNotFound,
    );
    let report = check(Dialect::Sqlite, "SELECT id FROM machine");
    assert_eq!(codes(&report), vec![ErrorCode::TableNotFound]);
    assert!(
        report.issues[0].message.contains("did you mean 'machines'"),
        "{}",
        report.issues[0].message
    );
}

#[test]
fn ambiguous_columns_ask_for_a_qualifier() {
    let report = check(
        Dialect::DuckDb,
        "SELECT name FROM machines JOIN factories ON machines.factory_id = factories.id",
    );
    assert_eq!(codes(&report), vec![ErrorCode::ColumnNotFound]);
    assert!(
        report.issues[0].message.contains("ambiguous"),
        "{}",
        report.issues[0].message
    );
}

#[test]
fn scoping_rules_follow_sql() {
    // A derived table cannot see its siblings unless LATERAL.
    assert_issue(
        &ALL,
        "SELECT d.n FROM machines AS m, (SELECT COUNT(*) AS n FROM factories WHERE factories.id = m.factory_id) AS d",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
    assert_ok(
        &[Dialect::Postgres, Dialect::DuckDb],
        "SELECT d.n FROM machines AS m, LATERAL (SELECT COUNT(*) AS n FROM factories WHERE factories.id = m.factory_id) AS d",
    );
    // An aliased table is known by its alias only.
    assert_issue(
        &ALL,
        "SELECT machines.name FROM machines AS m",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
    // Select aliases are visible in ORDER BY.
    assert_ok(&ALL, "SELECT name AS n FROM machines ORDER BY n");
    // CTE output columns come from the CTE's select list or its column list.
    assert_ok(
        &ALL,
        "WITH c(k, v) AS (SELECT id, name FROM machines) SELECT k, v FROM c",
    );
    assert_issue(
        &ALL,
        "WITH c AS (SELECT id FROM machines) SELECT name FROM c",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
    // Join conditions see only the tables joined so far.
    assert_issue(
        &ALL,
        "SELECT m.id FROM machines AS m JOIN factories AS f ON f.id = r.machine_id JOIN production_runs AS r ON r.machine_id = m.id",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
    // Positions are bounded by the select list.
    assert_issue(
        &ALL,
        "SELECT name FROM machines GROUP BY 2",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
}

#[test]
fn sqlite_reads_unmatched_double_quoted_names_as_strings() {
    assert_ok(
        &[Dialect::Sqlite],
        "SELECT id FROM machines WHERE name = \"Press-01\"",
    );
    assert_issue(
        &[Dialect::Postgres],
        "SELECT id FROM machines WHERE name = \"Press-01\"",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
}

#[test]
fn identifier_case_follows_the_dialect() {
    assert_ok(&ALL, "SELECT NAME FROM MACHINES");
    assert_ok(
        &[Dialect::Sqlite, Dialect::DuckDb],
        "SELECT \"NAME\" FROM machines",
    );
    assert_ok(&[Dialect::MySql], "SELECT `NAME` FROM `MACHINES`");
    assert_issue(
        &[Dialect::Postgres],
        "SELECT \"NAME\" FROM machines",
        GuardStatus::Rewrite,
        ErrorCode::ColumnNotFound,
    );
}

fn policy(json: &str, roles: &[&str]) -> AccessPolicy {
    PolicyFile::from_json_str(json)
        .expect("policy parses")
        .access_for(&roles.iter().map(|r| (*r).to_owned()).collect::<Vec<_>>())
}

const POLICY: &str = r#"{"version":1,"roles":{
  "analyst":{"description":"a","role":"analyst","allowed_datasources":["plant"],
             "allowed_tables":["plant.machines","plant.factories"],
             "denied_columns":["plant.machines.serial_number"]},
  "other":{"description":"o","role":"other","allowed_datasources":["elsewhere"],"allowed_tables":["*"]}}}"#;

fn check_with_policy(sql: &str, roles: &[&str]) -> GuardReport {
    let contract = schema_from_ddl(DDL, Dialect::Generic, "plant").unwrap();
    SqlGuard::new(
        GuardContext::new("plant", Dialect::Sqlite, &contract).with_policy(policy(POLICY, roles)),
    )
    .check(sql)
}

#[test]
fn policy_allows_listed_tables_and_denies_the_rest() {
    let ok = check_with_policy(
        "SELECT m.name, f.name FROM machines AS m JOIN factories AS f ON f.id = m.factory_id",
        &["analyst"],
    );
    assert_eq!(ok.status, GuardStatus::Ok, "{}", ok.to_text());
    let denied = check_with_policy("SELECT id FROM orders", &["analyst"]);
    assert_eq!(denied.status, GuardStatus::Rejected);
    assert!(
        denied.issues[0].message.contains("plant.orders"),
        "{}",
        denied.to_text()
    );
}

#[test]
fn policy_fails_closed_for_unknown_or_missing_roles() {
    for roles in [&["nobody"][..], &[][..], &["other"][..]] {
        let report = check_with_policy("SELECT name FROM machines", roles);
        assert_eq!(
            report.status,
            GuardStatus::Rejected,
            "{roles:?}: {}",
            report.to_text()
        );
    }
}

#[test]
fn denied_columns_are_unreadable_anywhere() {
    for sql in [
        "SELECT serial_number FROM machines",
        "SELECT * FROM machines",
        "SELECT m.* FROM machines AS m",
        "SELECT name FROM machines WHERE serial_number = 'x'",
        "SELECT s FROM (SELECT serial_number AS s FROM machines) AS d",
        "SELECT d.* FROM (SELECT * FROM machines) AS d",
        "SELECT name FROM machines ORDER BY SERIAL_NUMBER",
    ] {
        let report = check_with_policy(sql, &["analyst"]);
        assert_eq!(
            report.status,
            GuardStatus::Rejected,
            "{sql}: {}",
            report.to_text()
        );
        assert!(
            report
                .issues
                .iter()
                .any(|i| i.message.contains("serial_number")),
            "{sql}: {}",
            report.to_text()
        );
    }
    let ok = check_with_policy("SELECT id, name FROM machines", &["analyst"]);
    assert_eq!(ok.status, GuardStatus::Ok, "{}", ok.to_text());
}

#[test]
fn syntax_errors_carry_a_position() {
    let report = check(Dialect::Postgres, "SELEC id FROM machines");
    assert_eq!(report.status, GuardStatus::Rewrite);
    assert_eq!(codes(&report), vec![ErrorCode::SqlSyntaxError]);
    let report = check(Dialect::Postgres, "SELECT id FROM machines WHERE");
    assert_eq!(codes(&report), vec![ErrorCode::SqlSyntaxError]);
    assert!(report.issues[0].span.is_some(), "{}", report.to_text());
}

#[test]
fn bounds_empty_huge_and_deep_input() {
    assert_eq!(
        codes(&check(Dialect::Generic, "  -- nothing\n")),
        vec![ErrorCode::SqlSyntaxError]
    );
    assert_eq!(
        codes(&check(Dialect::Generic, ";")),
        vec![ErrorCode::SqlSyntaxError]
    );
    let huge = format!("SELECT {} FROM machines", vec!["id"; 30_000].join(", "));
    assert_eq!(
        codes(&check(Dialect::Generic, &huge)),
        vec![ErrorCode::SqlSyntaxError]
    );
    let deep = format!(
        "SELECT {}1{} FROM machines",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let report = check(Dialect::Generic, &deep);
    assert_eq!(codes(&report), vec![ErrorCode::SqlSyntaxError]);
    assert!(
        report.issues[0].message.contains("nested too deeply"),
        "{}",
        report.to_text()
    );
    let deep_ok = format!(
        "SELECT {}1{} AS x FROM machines",
        "(".repeat(50),
        ")".repeat(50)
    );
    assert_ok(&ALL, &deep_ok);
}

#[test]
fn feedback_follows_the_seed_format() {
    let report = check(Dialect::Sqlite, "SELECT nme, idd FROM machines");
    let feedback = report.feedback.expect("feedback");
    assert!(
        feedback.starts_with("SQL validation failed:\n- column 'nme'"),
        "{feedback}"
    );
    assert_eq!(feedback.lines().count(), 3, "{feedback}");
    assert!(
        check(Dialect::Sqlite, "SELECT name FROM machines")
            .feedback
            .is_none()
    );
}

#[test]
fn resolutions_name_the_range_variable_and_table() {
    let report = check(
        Dialect::Sqlite,
        "SELECT m.name, operator FROM machines AS m JOIN production_runs AS r ON r.machine_id = m.id",
    );
    let got: Vec<(String, Option<String>, Option<String>)> = report
        .resolutions
        .iter()
        .map(|r| (r.column.clone(), r.qualifier.clone(), r.table.clone()))
        .collect();
    let s = |x: &str| Some(x.to_owned());
    assert_eq!(
        got,
        vec![
            ("name".to_owned(), s("m"), s("machines")),
            ("operator".to_owned(), s("r"), s("production_runs")),
            ("machine_id".to_owned(), s("r"), s("production_runs")),
            ("id".to_owned(), s("m"), s("machines")),
        ]
    );
}

#[test]
fn safety_net_refuses_what_the_scoped_walk_did_not_reach() {
    use sqlparser::ast::Statement;

    use super::resolve::Resolution;
    use super::security;

    let contract = schema_from_ddl(DDL, Dialect::Generic, "plant").unwrap();
    let ctx = GuardContext::new("plant", Dialect::Postgres, &contract);
    let sql = "SELECT name FROM machines WHERE id IN (SELECT machine_id FROM production_runs)";
    let statements =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
            .unwrap();
    let Statement::Query(query) = &statements[0] else {
        panic!("a query")
    };
    let nothing = Resolution {
        issues: Vec::new(),
        resolutions: Vec::new(),
        cte_names: Vec::new(),
        handled_queries: rustc_hash::FxHashSet::default(),
        handled_names: rustc_hash::FxHashSet::default(),
        reads: Vec::new(),
        strings: rustc_hash::FxHashSet::default(),
    };
    let (_, unreached) = security::check(&ctx, query, &nothing);
    // The outer query is reported once; nothing inside it is reported again.
    assert_eq!(unreached.len(), 1, "{unreached:?}");
    assert_eq!(unreached[0].code, ErrorCode::UnsupportedSql);

    let only_outer = Resolution {
        handled_queries: [&**query as *const sqlparser::ast::Query]
            .into_iter()
            .collect(),
        ..nothing
    };
    let (_, unreached) = security::check(&ctx, query, &only_outer);
    let messages: Vec<&str> = unreached.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].contains("'name'") && messages[1].contains("'id'"),
        "{messages:?}"
    );
    assert!(
        messages[2].starts_with("a subquery in this position"),
        "{messages:?}"
    );
}

mod reading;
mod render;

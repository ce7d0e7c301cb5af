//! What runs is what was checked: executable comments, optimizer hints, literals the
//! engines read differently, resource bombs, and the rendering handed to adapters.

use nl2sql_state::{Dialect, ErrorCode};

use super::{ALL, assert_issue, assert_ok, check};
use crate::guard::GuardStatus;

#[test]
fn refuses_mariadb_executable_comments_in_every_dialect() {
    // MariaDB runs the text inside /*M! … */; sqlparser reads it as a comment.
    for sql in [
        "SELECT name FROM machines /*M! UNION SELECT serial_number FROM machines */",
        "SELECT name FROM machines /*M!100000 UNION SELECT serial_number FROM machines */",
    ] {
        assert_issue(
            &ALL,
            sql,
            GuardStatus::Rejected,
            ErrorCode::SecurityViolation,
        );
    }
    let report = check(Dialect::MySql, "SELECT name FROM machines /*M! , 1 */");
    assert!(
        report.issues[0].message.contains("/*M!"),
        "{}",
        report.to_text()
    );
}

#[test]
fn reads_mysql_executable_comments_as_code_and_refuses_them_elsewhere() {
    // In the MySQL dialect the text is parsed as code: checked like the rest.
    let report = check(
        Dialect::MySql,
        "SELECT name FROM machines /*! UNION SELECT secret FROM vault */",
    );
    assert_eq!(report.status, GuardStatus::Rewrite, "{}", report.to_text());
    assert!(
        report.issues.iter().any(|i| i.message.contains("vault")),
        "{}",
        report.to_text()
    );
    let ok = check(
        Dialect::MySql,
        "SELECT name FROM machines /*!50000 WHERE id = 1 */",
    );
    assert_eq!(
        ok.guarded.as_ref().map(|g| g.as_str()),
        Some("SELECT name FROM machines WHERE id = 1")
    );
    // Elsewhere it is a comment an engine of the MySQL family would run: refused.
    assert_issue(
        &[Dialect::Postgres, Dialect::Sqlite, Dialect::DuckDb],
        "SELECT name FROM machines /*! UNION SELECT name FROM machines */",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
}

#[test]
fn plain_comments_are_allowed_and_dropped_from_the_rendering() {
    assert_ok(
        &ALL,
        "SELECT name /* the name */ FROM machines -- all of them\n",
    );
    for d in ALL {
        let report = check(d, "SELECT name /* the name */ FROM machines -- all\n");
        assert_eq!(
            report.guarded.map(|g| g.as_str().to_owned()).as_deref(),
            Some("SELECT name FROM machines"),
            "{d}"
        );
    }
}

#[test]
fn refuses_optimizer_hints_that_the_rendering_would_keep() {
    assert_issue(
        &[Dialect::MySql, Dialect::Postgres, Dialect::Generic],
        "SELECT /*+ SET_VAR(sort_buffer_size = 16M) */ name FROM machines",
        GuardStatus::Rejected,
        ErrorCode::SecurityViolation,
    );
    // Where the dialect has no hints, it is a comment, dropped.
    let report = check(
        Dialect::Sqlite,
        "SELECT /*+ SET_VAR(sort_buffer_size = 16M) */ name FROM machines",
    );
    assert_eq!(
        report.guarded.map(|g| g.as_str().to_owned()).as_deref(),
        Some("SELECT name FROM machines")
    );
}

#[test]
fn renders_mysql_backslashes_as_mysql_reads_them() {
    // 'a\\' is the one-character string `a\` in MySQL; printed unescaped it would be an
    // open string.
    let report = check(
        Dialect::MySql,
        r"SELECT name FROM machines WHERE line = 'a\\'",
    );
    let guarded = report.guarded.expect("accepted");
    assert_eq!(
        guarded.as_str(),
        r"SELECT name FROM machines WHERE line = 'a\\'"
    );
    let report = check(
        Dialect::MySql,
        r"SELECT name FROM machines WHERE line = 'it\'s'",
    );
    assert_eq!(
        report.guarded.expect("accepted").as_str(),
        "SELECT name FROM machines WHERE line = 'it''s'"
    );
    // PostgreSQL (standard_conforming_strings = on): a backslash is a plain character.
    let report = check(
        Dialect::Postgres,
        r"SELECT name FROM machines WHERE line = 'a\'",
    );
    assert_eq!(
        report.guarded.expect("accepted").as_str(),
        r"SELECT name FROM machines WHERE line = 'a\'"
    );
}

#[test]
fn refuses_hex_literals_where_engines_read_them_as_blobs() {
    assert_issue(
        &[Dialect::Sqlite, Dialect::DuckDb, Dialect::Postgres],
        "SELECT id FROM machines WHERE id = 0x1F",
        GuardStatus::Rewrite,
        ErrorCode::UnsupportedSql,
    );
    assert_ok(&[Dialect::MySql], "SELECT id FROM machines WHERE id = 0x1F");
}

#[test]
fn caps_the_size_arguments_of_value_building_functions() {
    for (dialects, sql) in [
        (
            &[Dialect::Postgres, Dialect::DuckDb, Dialect::MySql][..],
            "SELECT repeat('x', 1000000000) FROM machines",
        ),
        (
            &[Dialect::Postgres, Dialect::DuckDb, Dialect::MySql][..],
            "SELECT lpad(name, 2000000, '*') FROM machines",
        ),
        (
            &[Dialect::Sqlite][..],
            "SELECT zeroblob(1000000000) FROM machines",
        ),
        (
            &[Dialect::Sqlite][..],
            "SELECT printf('%1000000000c', 'x') FROM machines",
        ),
        (
            &[Dialect::Sqlite][..],
            "SELECT printf('%.2000000f', 1.0) FROM machines",
        ),
        (&[Dialect::MySql][..], "SELECT space(5000000) FROM machines"),
        (
            &[Dialect::DuckDb][..],
            "SELECT format('{:>5000000}', name) FROM machines",
        ),
    ] {
        assert_issue(
            dialects,
            sql,
            GuardStatus::Rejected,
            ErrorCode::SecurityViolation,
        );
    }
    // A size taken from data or an argument cannot be known before the query runs.
    for (dialects, sql) in [
        (
            &[Dialect::Postgres, Dialect::DuckDb][..],
            "SELECT repeat('x', id) FROM machines",
        ),
        (
            &[Dialect::Sqlite][..],
            "SELECT printf('%.*c', 1000000000, 'x') FROM machines",
        ),
        (
            &[Dialect::Sqlite][..],
            "SELECT printf(name, 1) FROM machines",
        ),
    ] {
        assert_issue(
            dialects,
            sql,
            GuardStatus::Rewrite,
            ErrorCode::UnsupportedSql,
        );
    }
    // Ordinary sizes pass.
    assert_ok(
        &[Dialect::Postgres, Dialect::DuckDb],
        "SELECT lpad(name, 10, '0'), repeat('-', 3) FROM machines",
    );
    assert_ok(
        &[Dialect::Sqlite],
        "SELECT printf('%5.2f%%', 12.5), printf('%-10s|', name) FROM machines",
    );
}

#[test]
fn an_accepted_statement_carries_its_rendering_and_a_refused_one_none() {
    for d in ALL {
        let report = check(d, "select   name\nFROM machines   where id=1");
        let guarded = report.guarded.clone().expect("accepted");
        assert_eq!(
            guarded.as_str(),
            "SELECT name FROM machines WHERE id = 1",
            "{d}"
        );
        assert_eq!(guarded.dialect(), d);
        let refused = check(d, "DELETE FROM machines");
        assert!(refused.guarded.is_none(), "{d}");
    }
}

#[test]
fn the_rendering_of_an_accepted_statement_is_accepted_as_is() {
    for d in ALL {
        for sql in [
            "SELECT m.name, count(*) AS n FROM machines AS m JOIN factories AS f ON f.id = m.factory_id GROUP BY m.name HAVING count(*) > 1 ORDER BY n DESC LIMIT 5",
            "WITH t AS (SELECT id FROM machines) SELECT id FROM t WHERE id IN (SELECT id FROM factories)",
            "SELECT CASE WHEN scrap_count > 2 THEN 'high' ELSE 'low' END AS band FROM production_runs",
        ] {
            let first = check(d, sql).guarded.expect("accepted");
            let second = check(d, first.as_str())
                .guarded
                .expect("its rendering accepted");
            assert_eq!(first, second, "{d}: {sql}");
        }
    }
}

#[test]
fn a_double_quoted_name_sqlite_would_read_as_a_string_is_rendered_as_one() {
    // SQLite's legacy reading (which Spider's gold queries rely on): "Berlin" names no
    // column, so it is the string 'Berlin'. The adapter turns that reading off; the
    // rendering says what the guard read.
    let report = check(
        Dialect::Sqlite,
        r#"SELECT name FROM factories WHERE location = "Berlin" AND "name" <> ''"#,
    );
    assert_eq!(
        report.guarded.expect("accepted").as_str(),
        r#"SELECT name FROM factories WHERE location = 'Berlin' AND "name" <> ''"#
    );
    // Elsewhere a double-quoted name is a name.
    let report = check(
        Dialect::Postgres,
        r#"SELECT name FROM factories WHERE location = "Berlin""#,
    );
    assert_eq!(report.status, GuardStatus::Rewrite, "{}", report.to_text());
}

#[test]
fn string_values_with_doubled_quotes_render_as_written() {
    // sqlparser's printer would print the value `''` as `''''` (reading back as `'`);
    // the guard writes string values itself.
    for (sql, dialects) in [
        ("SELECT name FROM machines WHERE line = ''''''", &ALL[..]),
        (
            "SELECT name FROM machines WHERE line = 'a''''b' OR line = ''''",
            &ALL[..],
        ),
    ] {
        for &dialect in dialects {
            let report = check(dialect, sql);
            assert_eq!(
                report.guarded.as_ref().map(|g| g.as_str()),
                Some(sql),
                "{dialect}: {}",
                report.to_text()
            );
        }
    }
    // In MySQL a backslash and a doubled quote in one value.
    let report = check(
        Dialect::MySql,
        r"SELECT name FROM machines WHERE line = 'a\\''''b'",
    );
    assert_eq!(
        report.guarded.expect("accepted").as_str(),
        r"SELECT name FROM machines WHERE line = 'a\\''''b'"
    );
}

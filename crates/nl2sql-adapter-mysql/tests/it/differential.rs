//! The guard and MySQL/MariaDB read the same statement: executable comments are run by
//! the server (shown with the guard bypassed) and refused by the guard; the session pins
//! `sql_mode` to the reading of the guard's dialect; the tables of `EXPLAIN FORMAT=JSON`
//! for the guard's rendering are ones the guard resolved; and a 1 GB value never reaches
//! this process.

use std::collections::{BTreeMap, BTreeSet};

use arrow::array::{Array, StringArray};
use mysql_async::prelude::Queryable as _;
use nl2sql_adapter::differential::{self, Reads, guard_reads, unseen};
use nl2sql_adapter::{
    AdapterRequest, CircuitBreaker, DatasourceAdapter, PhysicalSettings, ResultErrorCode,
    conformance, validate_physical,
};
use nl2sql_state::{Dialect, ErrorCode, PolicyFile};
use nl2sql_validate::{GuardContext, SqlGuard};
use serde_json::Value;

use crate::{Server, raw, reader, server};

fn strings(frame: &nl2sql_adapter::ResultFrame, column: usize) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for batch in &frame.batches {
        let col =
            arrow::compute::cast(batch.column(column), &arrow::datatypes::DataType::Utf8).unwrap();
        let col = col.as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..col.len() {
            out.push((!col.is_null(i)).then(|| col.value(i).to_owned()));
        }
    }
    out
}

/// A policy under which the `analyst` role may read everything but `factories`.
fn policy_without_factories() -> nl2sql_state::AccessPolicy {
    let file = PolicyFile::from_json_str(
        r#"{"version": 1, "roles": {"analyst": {"role": "analyst", "description": "no factories",
            "allowed_datasources": ["my"],
            "allowed_tables": ["my.products", "my.machines", "my.production_runs"]}}}"#,
    )
    .unwrap();
    file.access_for(&["analyst".to_owned()])
}

#[tokio::test]
async fn executable_comments_run_on_the_server_and_are_refused_by_the_guard() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let mariadb = a.details()["server_version"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase()
        .contains("mariadb");
    let smuggled = if mariadb {
        "SELECT name FROM products /*M! UNION SELECT name FROM factories */"
    } else {
        "SELECT name FROM products /*!99999 WHERE 1 = 0 */ /*! UNION SELECT name FROM factories */"
    };
    // With the guard bypassed, the server runs the comment: factory names come back.
    let frame = a.run_sql(&raw(smuggled), a.limits()).await;
    assert!(frame.success, "{:?}", frame.error);
    let names = strings(&frame, 0);
    assert!(names.len() > 8, "the server ran the comment: {names:?}");
    // The guard, with a policy that denies `factories`, refuses the statement: the
    // comment is not a comment to the server.
    let contract = a.schema_contract().await.unwrap();
    let settings = PhysicalSettings {
        max_cost: None,
        policy: Some(policy_without_factories()),
        generated: false,
    };
    let report = validate_physical(
        &a,
        &CircuitBreaker::new("my", Default::default()),
        &contract,
        "SELECT name FROM products /*M! UNION SELECT name FROM factories */",
        &settings,
    )
    .await;
    assert!(report.is_blocking(), "{:?}", report.errors);
    assert_eq!(report.errors[0].code, ErrorCode::SecurityViolation);
    assert!(report.guarded.is_none());
    // Without a schema too (the adapter's own request path).
    let frame = a.execute(AdapterRequest::sql(smuggled)).await;
    if mariadb {
        assert_eq!(
            frame.error_code(),
            Some(ResultErrorCode::SecurityViolation),
            "{:?}",
            frame.error
        );
    } else {
        // MySQL's /*! … */ is code to the guard too: it runs as the guard read it, the
        // UNION included, and that reading is what a policy would have checked.
        assert!(frame.success, "{:?}", frame.error);
    }
}

#[tokio::test]
async fn the_session_reads_strings_quotes_and_pipes_as_the_guard_does() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let sql = r#"SELECT 'a\\b' AS backslash, 'it\'s' AS quote, "dq" AS dq, 'x' || 'y' AS pipes"#;
    let guarded = SqlGuard::new(GuardContext::without_schema("my", Dialect::MySql))
        .guard(sql)
        .unwrap();
    let frame = a.run_sql(&guarded, a.limits()).await;
    assert!(frame.success, "{guarded}: {:?}", frame.error);
    let row: Vec<Option<String>> = (0..4).map(|i| strings(&frame, i).remove(0)).collect();
    // The values sqlparser's MySQL dialect reads in the statement.
    assert_eq!(
        row,
        [r"a\b", "it's", "dq", "xy"].map(|s| Some(s.to_owned())),
        "{guarded}"
    );
    let frame = a
        .run_sql(&raw("SELECT @@SESSION.sql_mode AS m"), a.limits())
        .await;
    let mode = strings(&frame, 0).remove(0).unwrap();
    let mode: BTreeSet<&str> = mode.split(',').collect();
    assert!(mode.contains("PIPES_AS_CONCAT"), "{mode:?}");
    assert!(!mode.contains("ANSI_QUOTES"), "{mode:?}");
    assert!(!mode.contains("NO_BACKSLASH_ESCAPES"), "{mode:?}");
}

/// Every `"table_name"` of a JSON plan (MySQL and MariaDB print the alias there) and the
/// `"used_columns"` MySQL lists beside it.
fn walk(node: &Value, out: &mut Vec<(String, Vec<String>)>) {
    match node {
        Value::Object(object) => {
            if let Some(Value::String(name)) = object.get("table_name") {
                let used = object
                    .get("used_columns")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_lowercase)
                            .collect()
                    })
                    .unwrap_or_default();
                out.push((name.to_lowercase(), used));
            }
            for value in object.values() {
                walk(value, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
        _ => {}
    }
}

#[tokio::test]
async fn guard_reads_contain_the_tables_mysql_reads_for_the_differential_corpus() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let contract = a.schema_contract().await.unwrap();
    let guard = SqlGuard::new(GuardContext::new("my", Dialect::MySql, &contract));
    let mut conn =
        mysql_async::Conn::new(mysql_async::Opts::from_url(&admin_url(&server)).unwrap())
            .await
            .unwrap();
    let mut differences = Vec::new();
    for sql in differential::corpus() {
        let report = guard.check(&sql);
        let guarded = report
            .guarded
            .clone()
            .unwrap_or_else(|| panic!("the guard refused {sql}\n{}", report.to_text()));
        let plan: Option<String> = conn
            .query_first(format!("EXPLAIN FORMAT=JSON {guarded}"))
            .await
            .unwrap_or_else(|e| panic!("EXPLAIN of {guarded}: {e}"));
        let plan: Value = serde_json::from_str(&plan.unwrap()).unwrap();
        let mut scanned = Vec::new();
        walk(&plan, &mut scanned);
        // The plan names range variables: map them to tables with the guard's own
        // resolutions (an alias the guard never bound stays as it is, and fails).
        let aliases: BTreeMap<String, String> = report
            .resolutions
            .iter()
            .filter_map(|r| Some((r.qualifier.clone()?, r.table.clone()?)))
            .chain(
                report
                    .reads
                    .iter()
                    .map(|r| (r.table.to_lowercase(), r.table.to_lowercase())),
            )
            .collect();
        let mut engine = Reads::new();
        for (name, used) in scanned {
            if name.starts_with('<') {
                continue; // <derived2>, <subquery3>, <union1,2>: not a table
            }
            let table = aliases.get(&name).cloned().unwrap_or(name);
            engine.entry(table).or_default().extend(used);
        }
        let missing = unseen(&engine, &guard_reads(&report));
        if !missing.is_empty() {
            differences.push(format!("{sql}\n  the server also reads: {missing:?}"));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

fn admin_url(server: &Server) -> String {
    server.url(&server.admin)
}

#[tokio::test]
async fn a_gigabyte_value_never_reaches_the_process_without_the_guard() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let outcome = conformance::value_bomb_is_bounded(
        &a,
        "SELECT REPEAT('x', 1000000000) AS s",
        256 * 1024 * 1024,
    )
    .await
    .unwrap();
    // Above max_allowed_packet the server returns NULL instead of the value.
    assert_eq!(outcome, "1 row(s), none too large");
    let frame = a
        .run_sql(
            &raw("SELECT LENGTH(GROUP_CONCAT(REPEAT('x', 1000))) AS n FROM products AS a, products AS b, products AS c"),
            a.limits(),
        )
        .await;
    assert!(frame.success, "{:?}", frame.error);
    let n: i64 = strings(&frame, 0)[0].as_deref().unwrap().parse().unwrap();
    assert!(n <= 1024 * 1024, "GROUP_CONCAT is capped: {n}");
}

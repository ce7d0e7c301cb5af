//! The guard and PostgreSQL read the same statement: the relations and columns
//! `EXPLAIN (VERBOSE, FORMAT JSON)` shows for the guard's rendering are ones the guard
//! resolved; the session pins the string syntax the guard assumes, even for a role whose
//! default is otherwise; and a statement that builds a 300 MB value with no guard in
//! front never reaches this process whole.

use std::collections::{BTreeMap, BTreeSet};

use nl2sql_adapter::differential::{self, Reads, guard_reads, unseen};
use nl2sql_adapter::{AdapterRequest, DatasourceAdapter, Limits, conformance};
use nl2sql_adapter_postgres::PostgresAdapter;
use nl2sql_state::Dialect;
use nl2sql_validate::{GuardContext, SqlGuard};
use serde_json::Value;
use tokio_postgres::NoTls;

use crate::{SCHEMA, Server, reader, server};

async fn admin(server: &Server) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&server.admin_url(), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

/// Every string of a plan node and its children, with the aliases of the relations the
/// nodes scan.
fn walk(node: &Value, aliases: &mut BTreeMap<String, String>, texts: &mut Vec<String>) {
    if let Some(object) = node.as_object() {
        if let (Some(Value::String(table)), Some(Value::String(alias))) =
            (object.get("Relation Name"), object.get("Alias"))
        {
            aliases.insert(alias.to_lowercase(), table.to_lowercase());
        }
        // A scan may emit every column of its table (PostgreSQL's "physical target
        // list", which saves a projection): its output says nothing of what the
        // statement reads. What it does read shows in the outputs above it, and in
        // filters, join conditions and keys.
        let is_scan = object
            .get("Node Type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with("Scan"));
        for (key, value) in object {
            if is_scan && key == "Output" {
                continue;
            }
            match value {
                Value::String(s) if key != "Relation Name" && key != "Alias" => {
                    texts.push(s.clone());
                }
                Value::Array(items) => {
                    for item in items {
                        match item {
                            Value::String(s) => texts.push(s.clone()),
                            other => walk(other, aliases, texts),
                        }
                    }
                }
                Value::Object(_) => walk(value, aliases, texts),
                _ => {}
            }
        }
    } else if let Some(items) = node.as_array() {
        for item in items {
            walk(item, aliases, texts);
        }
    }
}

/// The relations PostgreSQL scans for `sql`, and the `alias.column` references its plan
/// shows of them (outputs, filters, join and sort keys).
async fn engine_reads(client: &tokio_postgres::Client, sql: &str) -> Reads {
    let messages = client
        .simple_query(&format!("EXPLAIN (VERBOSE, FORMAT JSON) {sql}"))
        .await
        .unwrap_or_else(|e| panic!("EXPLAIN of {sql}: {e}"));
    let text = messages
        .iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap();
    let plan: Value = serde_json::from_str(&text).unwrap();
    let mut aliases = BTreeMap::new();
    let mut texts = Vec::new();
    walk(&plan, &mut aliases, &mut texts);
    let mut reads: Reads = aliases
        .values()
        .map(|t| (t.clone(), BTreeSet::new()))
        .collect();
    for text in &texts {
        for token in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
            if let Some((alias, column)) = token.split_once('.')
                && let Some(table) = aliases.get(&alias.to_lowercase())
                && !column.is_empty()
                && !column.contains('.')
            {
                reads
                    .entry(table.clone())
                    .or_default()
                    .insert(column.to_lowercase());
            }
        }
    }
    reads
}

#[tokio::test]
async fn guard_reads_contain_what_postgres_reads_for_the_differential_corpus() {
    let Some(server) = server().await else { return };
    let adapter = reader(&server).await;
    let contract = adapter.schema_contract().await.unwrap();
    let guard = SqlGuard::new(GuardContext::new("pg", Dialect::Postgres, &contract));
    let client = admin(&server).await;
    client
        .batch_execute(&format!("SET search_path = {SCHEMA}"))
        .await
        .unwrap();
    let corpus = differential::corpus();
    let mut differences = Vec::new();
    let mut with_columns = 0;
    for sql in &corpus {
        let report = guard.check(sql);
        let guarded = report
            .guarded
            .clone()
            .unwrap_or_else(|| panic!("the guard refused {sql}\n{}", report.to_text()));
        let engine = engine_reads(&client, guarded.as_str()).await;
        if engine.values().any(|c| !c.is_empty()) {
            with_columns += 1;
        }
        let missing = unseen(&engine, &guard_reads(&report));
        if !missing.is_empty() {
            differences.push(format!("{sql}\n  PostgreSQL also reads: {missing:?}"));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // The comparison saw columns, not just relations, for nearly every statement.
    assert!(
        with_columns * 10 >= corpus.len() * 9,
        "{with_columns} of {}",
        corpus.len()
    );
}

#[tokio::test]
async fn the_session_reads_strings_as_the_guard_does_whatever_the_role_default() {
    let Some(server) = server().await else { return };
    let client = admin(&server).await;
    // A role whose own default would read '\b' as a backspace.
    client
        .batch_execute(&format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'nl2sql_escapes') \
             THEN CREATE ROLE nl2sql_escapes LOGIN; END IF; END $$; \
             ALTER ROLE nl2sql_escapes SET standard_conforming_strings = off; \
             GRANT USAGE ON SCHEMA {SCHEMA} TO nl2sql_escapes; \
             GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO nl2sql_escapes"
        ))
        .await
        .unwrap();
    let a = PostgresAdapter::from_url("pg", &server.url("nl2sql_escapes"), Limits::default())
        .await
        .unwrap();
    // The string goes through the guard; the setting is read with the guard bypassed
    // (current_setting is on the guard's deny list).
    let frame = a.execute(AdapterRequest::sql(r"SELECT 'a\b' AS s")).await;
    assert!(frame.success, "{:?}", frame.error);
    let s = frame.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .unwrap()
        .value(0)
        .to_owned();
    assert_eq!(s, r"a\b", "the guard read 'a\\b' as three characters");
    let frame = a
        .run_sql(
            &crate::raw("SELECT current_setting('standard_conforming_strings') AS scs"),
            a.limits(),
        )
        .await;
    let scs = frame.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::StringArray>()
        .unwrap()
        .value(0)
        .to_owned();
    assert_eq!(scs, "on");
}

#[tokio::test]
async fn a_gigabyte_value_never_reaches_the_process_without_the_guard() {
    let Some(server) = server().await else { return };
    let a = reader(&server).await;
    let outcome = conformance::value_bomb_is_bounded(
        &a,
        // 300 MB: more than the peak allowed below, so the value cannot have arrived.
        "SELECT repeat('x', 300000000) AS s",
        256 * 1024 * 1024,
    )
    .await
    .unwrap();
    assert_eq!(outcome, "cut at the byte limit (0 rows kept)");
    // Values under the limit still arrive whole, next to the column that is checked.
    let frame = a
        .run_sql(
            &crate::raw("SELECT repeat('y', 1000) AS s, 7::bigint AS n, 'z'::bytea AS b"),
            a.limits(),
        )
        .await;
    assert!(frame.success, "{:?}", frame.error);
    assert_eq!(frame.row_count, 1);
    assert!(!frame.truncated);
    let names: Vec<&str> = frame.batches[0]
        .schema_ref()
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, ["s", "n", "b"]);
}

#[tokio::test]
async fn a_stored_value_is_measured_uncompressed() {
    // 300 MB of one repeated letter is kept compressed in its table (3.4 MB there): the
    // byte limit is about what the server would send, so it must not arrive either.
    let Some(server) = server().await else { return };
    let schema = format!("nl2sql_stored_{}", std::process::id());
    let client = admin(&server).await;
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; \
             CREATE TABLE {schema}.notes (id integer, body text, blob bytea, doc jsonb); \
             INSERT INTO {schema}.notes VALUES \
               (1, 'short', '\\x00', '{{}}'), \
               (2, repeat('x', 300000000), convert_to(repeat('x', 5000000), 'UTF8'), \
                to_jsonb(repeat('x', 5000000)));"
        ))
        .await
        .unwrap();
    let stored: i32 = client
        .query_one(
            &format!("SELECT pg_column_size(body) FROM {schema}.notes WHERE id = 2"),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        stored < 10_000_000,
        "the value is not kept compressed: {stored} bytes"
    );
    let url = format!(
        "postgres://{}@{}:{}/{}",
        server.admin, server.host, server.port, server.db
    );
    let a = PostgresAdapter::from_url("pg", &url, Limits::default())
        .await
        .unwrap();
    let outcome = conformance::value_bomb_is_bounded(
        &a,
        &format!("SELECT body FROM {schema}.notes WHERE id = 2"),
        256 * 1024 * 1024,
    )
    .await;
    // The other variable-length types are measured as sent too: 5 MB each, compressed
    // where they are kept, over a 1 MB limit.
    let limits = Limits {
        max_bytes: 1_000_000,
        ..Limits::default()
    };
    let mut cut = Vec::new();
    for column in ["blob", "doc"] {
        let frame = a
            .run_sql(
                &crate::raw(&format!(
                    "SELECT id, {column} FROM {schema}.notes ORDER BY id"
                )),
                limits,
            )
            .await;
        cut.push((column, frame.success, frame.truncated, frame.row_count));
    }
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    assert_eq!(outcome.unwrap(), "cut at the byte limit (0 rows kept)");
    assert_eq!(cut, [("blob", true, true, 1), ("doc", true, true, 1)]);
}

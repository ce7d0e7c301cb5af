//! The plan corpus (`plans/*.json`): SQL in every dialect as snapshots, accepted by the
//! guard, and run on SQLite.

use std::fmt::Write as _;

use nl2sql_plan::parse_plan;
use nl2sql_sqlgen::SqlGenerator;

use crate::fixture::{DIALECTS, assert_guard_ok, connect, contract, run_sqlite};

#[test]
fn corpus_renders_in_every_dialect() {
    insta::glob!("plans/*.json", |path| {
        let plan = parse_plan(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut out = String::new();
        for dialect in DIALECTS {
            let sql = SqlGenerator::new(dialect)
                .with_row_limit(100)
                .generate(&plan)
                .unwrap();
            writeln!(out, "-- {dialect}\n{sql}\n").unwrap();
        }
        insta::assert_snapshot!(out);
    });
}

#[test]
fn corpus_sql_passes_the_guard_in_every_dialect() {
    let mut checked = 0;
    for dialect in DIALECTS {
        let contract = contract(dialect);
        insta::glob!("plans/*.json", |path| {
            let plan = parse_plan(&std::fs::read_to_string(path).unwrap()).unwrap();
            let sql = SqlGenerator::new(dialect).generate(&plan).unwrap();
            assert_guard_ok(&contract, dialect, &sql);
            checked += 1;
        });
    }
    assert_eq!(checked, 52);
}

#[test]
fn corpus_sql_runs_on_sqlite() {
    let conn = connect();
    insta::glob!("plans/*.json", |path| {
        let plan = parse_plan(&std::fs::read_to_string(path).unwrap()).unwrap();
        let sql = SqlGenerator::new(nl2sql_state::Dialect::Sqlite)
            .generate(&plan)
            .unwrap();
        run_sqlite(&conn, &sql).unwrap();
    });
}

#[test]
fn spec_example_returns_the_documented_rows_on_sqlite() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/plans/three_table_join.json"
    ))
    .unwrap();
    let sql = SqlGenerator::new(nl2sql_state::Dialect::Sqlite)
        .with_row_limit(100)
        .generate(&parse_plan(&text).unwrap())
        .unwrap();
    assert_eq!(
        sql,
        "SELECT f.name AS factory, SUM(r.quantity_produced) AS total_quantity FROM production_runs AS r INNER JOIN machines AS m ON r.machine_id = m.id INNER JOIN factories AS f ON m.factory_id = f.id WHERE r.started_at >= '2024-04-01' GROUP BY f.name ORDER BY total_quantity DESC LIMIT 10"
    );
    let conn = connect();
    let rows: Vec<(String, i64)> = conn
        .prepare(&sql)
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        rows,
        vec![
            ("Plant Austin".to_owned(), 1430),
            ("Plant Berlin".to_owned(), 300)
        ]
    );
}

#[test]
fn same_plan_renders_byte_identical_sql() {
    insta::glob!("plans/*.json", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        for dialect in DIALECTS {
            let a = SqlGenerator::new(dialect)
                .generate(&parse_plan(&text).unwrap())
                .unwrap();
            let b = SqlGenerator::new(dialect)
                .generate(&parse_plan(&text).unwrap())
                .unwrap();
            assert_eq!(a, b);
        }
    });
}

#[test]
fn corpus_plans_pass_the_logical_validator() {
    let contract = contract(nl2sql_state::Dialect::Sqlite);
    insta::glob!("plans/*.json", |path| {
        let plan = parse_plan(&std::fs::read_to_string(path).unwrap()).unwrap();
        let ctx = nl2sql_validate::LogicalContext::new("manufacturing", &contract);
        let report = nl2sql_validate::validate_plan(Some(&plan), &ctx);
        assert_eq!(report.findings, vec![], "{}", path.display());
    });
}

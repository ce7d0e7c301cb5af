//! The bench inputs stay valid: every query passes the guard, generated decompositions plan
//! to the DAGs they promise, and the aggregation engine and DuckDB agree on the aggregation
//! benches' operations (at 10,000 rows).

use nl2sql_validate::GuardStatus;

use super::*;

#[test]
fn statements_split_at_line_ending_semicolons() {
    let text = "-- one\nSELECT 1;\n\n-- two\n-- more\nSELECT ';'\nFROM t;\nSELECT 3";
    assert_eq!(
        split_statements(text),
        ["SELECT 1", "SELECT ';'\nFROM t", "SELECT 3"]
    );
    assert_eq!(split_statements("SELECT 1;"), ["SELECT 1"]);
    assert!(split_statements("-- only a comment\n").is_empty());
}

#[test]
fn corpus_is_large_and_every_statement_passes_the_guard() {
    let statements = corpus();
    assert!(statements.len() >= 30, "{} statements", statements.len());
    let guard = guard();
    let failures: Vec<String> = statements
        .iter()
        .enumerate()
        .filter_map(|(i, sql)| {
            let report = guard.check(sql);
            (report.status != GuardStatus::Ok)
                .then(|| format!("statement {}:\n{sql}\n{}", i + 1, report.to_text()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn groups_take_every_sub_query_in_turn() {
    use GroupKind::*;
    assert_eq!(group_layout(1), [(Standalone, 1)]);
    assert_eq!(group_layout(2), [(Compare, 2)]);
    assert_eq!(
        group_layout(10),
        [
            (Compare, 2),
            (Join, 2),
            (Union, 3),
            (Compare, 2),
            (Standalone, 1)
        ]
    );
    for n in 1..=256 {
        let layout = group_layout(n);
        assert_eq!(layout.iter().map(|(_, size)| size).sum::<usize>(), n);
        let singles = layout.iter().filter(|(k, _)| *k == Standalone).count();
        assert!(singles <= 1, "{n}: {layout:?}");
    }
}

#[test]
fn generated_decompositions_are_valid_and_plan_to_the_expected_dags() {
    // n → (combine groups, post ops, DAG nodes), counted by hand from the layout.
    let cases = [(1, 1, 2, 4), (10, 5, 13, 28), (100, 43, 115, 258)];
    let resolution = dag_resolution();
    for (n, groups, ops, nodes) in cases {
        let json = decomposition_json(n);
        let parsed = nl2sql_plan::parse_decomposition(&json).expect("the document parses");
        assert_eq!(
            (
                parsed.sub_queries.len(),
                parsed.combine_groups.len(),
                parsed.post_combine_ops.len()
            ),
            (n, groups, ops)
        );
        let report = plan_dag(&json, &resolution);
        assert!(
            report.is_ok(),
            "{n}: {}",
            report.feedback().unwrap_or_default()
        );
        assert!(report.warnings.is_empty(), "{n}: {:?}", report.warnings);
        let dag = report.dag.expect("a valid report has its DAG");
        assert_eq!(dag.nodes.len(), nodes, "{n}");
        assert_eq!(expected_node_count(n), nodes, "{n}");
        let count = |kind| dag.nodes.iter().filter(|node| node.kind == kind).count();
        assert_eq!(count(nl2sql_plan::NodeKind::Scan), n);
        assert_eq!(count(nl2sql_plan::NodeKind::Combine), groups);
        // Every group's chain of post ops ends in a terminal node.
        assert_eq!(dag.terminal_nodes().len(), groups);
        // The same answer plans to the same DAG.
        let again = plan_dag(&json, &resolution).dag.expect("plans again");
        assert_eq!(again.content_hash, dag.content_hash);
    }
}

#[test]
fn size_labels_name_round_sizes() {
    assert_eq!(size_label(1_000_000), "1m");
    assert_eq!(size_label(10_000), "10k");
    assert_eq!(size_label(1_500), "1500");
    assert_eq!(size_label(7), "7");
}

#[test]
fn aggregation_tables_have_the_promised_keys() {
    let (plant, warehouse) = join_tables(1_000);
    assert_eq!((plant.num_rows(), warehouse.num_rows()), (1_000, 1_000));
    let ids = |t: &arrow::array::RecordBatch| -> std::collections::BTreeSet<i64> {
        t.column(0)
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()
            .expect("product_id is Int64")
            .iter()
            .flatten()
            .collect()
    };
    let (left, right) = (ids(&plant), ids(&warehouse));
    assert_eq!((left.len(), right.len()), (1_000, 1_000), "keys are unique");
    assert_eq!(
        left.intersection(&right).count(),
        900,
        "90% of the keys match"
    );
    let orders = group_by_table(10_000);
    let stores = orders
        .column(1)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .expect("store_id is Int64")
        .iter()
        .flatten()
        .collect::<std::collections::BTreeSet<i64>>();
    assert_eq!(stores.len(), STORES as usize);
}

#[cfg(feature = "duckdb")]
/// The DuckDB side of `benches/aggregate.rs`: the batches registered for `arrow(?)`, the
/// query run, its result fetched as Arrow.
fn duckdb_result(
    sql: &str,
    tables: &[arrow::array::RecordBatch],
) -> Vec<arrow::array::RecordBatch> {
    use duckdb::vtab::arrow::{ArrowBatchRegistration, ArrowVTab};
    let conn = duckdb::Connection::open_in_memory().expect("DuckDB opens");
    conn.register_table_function::<ArrowVTab>("arrow")
        .expect("arrow() registers");
    let registrations: Vec<ArrowBatchRegistration> = tables
        .iter()
        .cloned()
        .map(ArrowBatchRegistration::new)
        .collect();
    let mut statement = conn.prepare(sql).expect("DuckDB prepares the query");
    statement
        .query_arrow(duckdb::params_from_iter(registrations.iter()))
        .expect("DuckDB runs the query")
        .collect()
}

#[test]
#[cfg(feature = "duckdb")]
fn the_engine_and_duckdb_agree_on_the_join() {
    let (plant, warehouse) = join_tables(10_000);
    let tables = [plant, warehouse];
    let engine = join_dag().run(&tables).expect("the engine joins");
    let engine = summary(&[engine]).expect("summary");
    let duck = summary(&duckdb_result(JOIN_SQL, &tables)).expect("summary");
    assert_eq!(engine, duck);
    assert_eq!(
        engine.columns,
        ["product_id", "units_produced", "units_on_hand"]
    );
    assert_eq!(engine.rows, 9_000);
    // Matched product ids are 1,000..9,999.
    assert_eq!(engine.sums[0], (1_000..10_000).sum::<i128>());
}

#[test]
#[cfg(feature = "duckdb")]
fn the_engine_and_duckdb_agree_on_the_group_by() {
    let orders = group_by_table(10_000);
    let tables = [orders];
    let engine = group_by_dag().run(&tables).expect("the engine groups");
    let first_store = engine
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .map(|a| a.value(0));
    let engine = summary(&[engine]).expect("summary");
    let duck = summary(&duckdb_result(GROUP_BY_SQL, &tables)).expect("summary");
    assert_eq!(engine, duck);
    assert_eq!(engine.columns, ["store_id", "amount", "order_id"]);
    assert_eq!(engine.rows, STORES as usize);
    let all = summary(&tables).expect("summary");
    // Every amount is summed once and every order counted once.
    assert_eq!(engine.sums[1], all.sums[2]);
    assert_eq!(engine.sums[2], 10_000);
    assert_eq!(first_store, Some(0), "groups come sorted by store");
}

#[test]
fn a_wrong_answer_changes_the_summary() {
    let orders = group_by_table(100);
    let fewer = orders.slice(0, 99);
    assert_ne!(
        summary(&[orders]).expect("summary"),
        summary(&[fewer]).expect("summary")
    );
}

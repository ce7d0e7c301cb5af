//! Aggregation tests: every combine and post op against hand-computed tables (nulls,
//! duplicate keys, empty inputs, key type mismatches), then whole DAGs, partial failure and
//! artifacts read from a store.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{
    Array as _, ArrayRef, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray,
};
use arrow::util::pretty::pretty_format_batches;
use nl2sql_plan::{
    CombineOperation, DatasourceResolution, ExecutionDag, FilterSpec, GroupBySpec, JoinKeyPair,
    MetricSpec, OrderBySpec, normalize, parse_decomposition,
};
use nl2sql_state::ErrorCode;
use serde_json::json;

use super::*;

mod reference;

fn table(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(cols).expect("table")
}

fn s(v: Vec<Option<&str>>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

fn i(v: Vec<Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(v))
}

fn f(v: Vec<Option<f64>>) -> ArrayRef {
    Arc::new(Float64Array::from(v))
}

fn show(t: &RecordBatch) -> String {
    pretty_format_batches(std::slice::from_ref(t))
        .expect("prints")
        .to_string()
}

fn check(t: &RecordBatch, want: &str) {
    let want: Vec<&str> = want
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let got = show(t);
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got, want, "\n{}", show(t));
}

fn keys(pairs: &[(&str, &str)]) -> Vec<JoinKeyPair> {
    pairs
        .iter()
        .map(|(l, r)| JoinKeyPair {
            left: (*l).into(),
            right: (*r).into(),
        })
        .collect()
}

fn filters(v: Value) -> Vec<FilterSpec> {
    serde_json::from_value(v).expect("filters")
}

fn err_text(e: ArrowError) -> String {
    e.to_string()
}

#[test]
fn standalone_returns_its_input_and_every_operation_checks_its_arity() {
    let t = table(vec![("a", i(vec![Some(1)]))]);
    let out = combine::combine(CombineOperation::Standalone, &[&t], &[]).expect("ok");
    assert_eq!(out, t);
    let k = keys(&[("a", "a")]);
    for (operation, inputs, want) in [
        (
            CombineOperation::Standalone,
            vec![],
            "combine standalone needs exactly one inputs, got 0",
        ),
        (
            CombineOperation::Standalone,
            vec![&t, &t],
            "combine standalone needs exactly one inputs, got 2",
        ),
        (
            CombineOperation::Union,
            vec![],
            "combine union needs at least two inputs, got 0",
        ),
        (
            CombineOperation::Union,
            vec![&t],
            "combine union needs at least two inputs, got 1",
        ),
        (
            CombineOperation::Join,
            vec![&t],
            "combine join needs exactly two inputs, got 1",
        ),
        (
            CombineOperation::Join,
            vec![&t, &t, &t],
            "combine join needs exactly two inputs, got 3",
        ),
        (
            CombineOperation::Compare,
            vec![&t, &t, &t],
            "combine compare needs exactly two inputs, got 3",
        ),
    ] {
        let e = err_text(combine::combine(operation, &inputs, &k).expect_err(want));
        assert!(e.contains(want), "{e}");
    }
    let three = combine::combine(CombineOperation::Union, &[&t, &t, &t], &[]).expect("ok");
    assert_eq!(three.num_rows(), 3);
}

#[test]
fn union_matches_columns_by_name_widens_int_to_float_and_keeps_duplicates() {
    let a = table(vec![
        ("k", s(vec![Some("x"), None])),
        ("v", i(vec![Some(1), Some(2)])),
    ]);
    let b = table(vec![
        ("v", f(vec![Some(2.5), Some(1.0)])),
        ("k", s(vec![Some("x"), Some("y")])),
    ]);
    let out = combine::combine(CombineOperation::Union, &[&a, &b], &[]).expect("ok");
    check(
        &out,
        "
        +---+-----+
        | k | v   |
        +---+-----+
        | x | 1.0 |
        |   | 2.0 |
        | x | 2.5 |
        | y | 1.0 |
        +---+-----+",
    );
}

#[test]
fn union_of_incompatible_columns_fails() {
    let a = table(vec![("k", s(vec![Some("x")]))]);
    let b = table(vec![("k", i(vec![Some(1)]))]);
    let c = table(vec![("z", s(vec![Some("x")]))]);
    let e = err_text(combine::combine(CombineOperation::Union, &[&a, &b], &[]).expect_err("types"));
    assert!(
        e.contains("union inputs have incompatible columns: 'k' is Utf8 and Int64"),
        "{e}"
    );
    let e = err_text(combine::combine(CombineOperation::Union, &[&a, &c], &[]).expect_err("names"));
    assert!(e.contains("'k' is missing from an input"), "{e}");
}

#[test]
fn join_pairs_duplicate_keys_skips_null_keys_and_suffixes_collisions() {
    let l = table(vec![
        ("p", s(vec![Some("a"), Some("b"), None, Some("c")])),
        ("n", i(vec![Some(1), Some(2), Some(3), Some(4)])),
    ]);
    let r = table(vec![
        ("q", s(vec![Some("b"), Some("a"), Some("b"), None])),
        ("n", i(vec![Some(10), Some(20), Some(30), Some(40)])),
    ]);
    let out =
        combine::combine(CombineOperation::Join, &[&l, &r], &keys(&[("p", "q")])).expect("ok");
    check(
        &out,
        "
        +---+---+---------+
        | p | n | n_right |
        +---+---+---------+
        | a | 1 | 20      |
        | b | 2 | 10      |
        | b | 2 | 30      |
        +---+---+---------+",
    );
}

#[test]
fn join_compares_int32_and_int64_keys_numerically_and_rejects_text_against_numbers() {
    let l = table(vec![(
        "k",
        Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
    )]);
    let r = table(vec![
        ("k", i(vec![Some(2), Some(3)])),
        ("v", s(vec![Some("two"), Some("three")])),
    ]);
    let out =
        combine::combine(CombineOperation::Join, &[&l, &r], &keys(&[("k", "k")])).expect("ok");
    check(
        &out,
        "
        +---+-----+
        | k | v   |
        +---+-----+
        | 2 | two |
        +---+-----+",
    );
    let t = table(vec![("k", s(vec![Some("2")]))]);
    let e = err_text(
        combine::combine(CombineOperation::Join, &[&t, &r], &keys(&[("k", "k")]))
            .expect_err("types"),
    );
    assert!(e.contains("join key types differ"), "{e}");
}

#[test]
fn join_with_an_empty_side_is_empty_with_all_columns() {
    let l = table(vec![("k", i(vec![])), ("a", s(vec![]))]);
    let r = table(vec![("k", i(vec![Some(1)])), ("b", s(vec![Some("x")]))]);
    let out =
        combine::combine(CombineOperation::Join, &[&l, &r], &keys(&[("k", "k")])).expect("ok");
    assert_eq!(out.num_rows(), 0);
    assert_eq!(out.schema().fields().len(), 3);
}

#[test]
fn compare_is_a_full_outer_join_with_merged_keys_and_numeric_diffs() {
    let l = table(vec![
        (
            "region",
            s(vec![Some("north"), Some("south"), Some("east")]),
        ),
        ("revenue", f(vec![Some(10.0), Some(5.0), None])),
        ("note", s(vec![Some("l1"), Some("l2"), Some("l3")])),
    ]);
    let r = table(vec![
        ("region", s(vec![Some("west"), Some("north"), Some("east")])),
        ("revenue", i(vec![Some(7), Some(4), Some(2)])),
        ("note", s(vec![Some("r1"), Some("r2"), Some("r3")])),
    ]);
    let out = combine::combine(
        CombineOperation::Compare,
        &[&l, &r],
        &keys(&[("region", "region")]),
    )
    .expect("ok");
    check(
        &out,
        "
        +--------+---------+------+---------------+------------+--------------+
        | region | revenue | note | revenue_right | note_right | revenue_diff |
        +--------+---------+------+---------------+------------+--------------+
        | north  | 10.0    | l1   | 4             | r2         | 6.0          |
        | south  | 5.0     | l2   |               |            |              |
        | east   |         | l3   | 2             | r3         |              |
        | west   |         |      | 7             | r1         |              |
        +--------+---------+------+---------------+------------+--------------+",
    );
}

#[test]
fn filter_compares_numbers_text_dates_lists_and_never_keeps_nulls() {
    let t = table(vec![
        (
            "name",
            s(vec![Some("bolt"), Some("nut"), None, Some("screw")]),
        ),
        ("qty", i(vec![Some(5), Some(10), Some(15), None])),
        (
            "day",
            Arc::new(Date32Array::from(vec![
                Some(19_723),
                Some(19_724),
                None,
                Some(19_725),
            ])) as ArrayRef,
        ),
    ]);
    let run = |v: Value| show(&post::filter(&t, &filters(v)).expect("filters"));
    let names = |v: Value| {
        let out = post::filter(&t, &filters(v)).expect("filters");
        let col = out
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("text")
            .clone();
        col.iter()
            .map(|v| v.unwrap_or("∅").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(json!([{"attribute": "qty", "operator": ">=", "value": 10}])),
        ["nut", "∅"]
    );
    assert_eq!(
        names(json!([{"attribute": "name", "operator": "!=", "value": "nut"}])),
        ["bolt", "screw"]
    );
    assert_eq!(
        names(json!([{"attribute": "qty", "operator": "between", "value": [5, 10]}])),
        ["bolt", "nut"]
    );
    assert_eq!(
        names(json!([{"attribute": "name", "operator": "in", "value": ["nut", "screw", "x"]}])),
        ["nut", "screw"]
    );
    assert_eq!(
        names(json!([{"attribute": "name", "operator": "contains", "value": "o"}])),
        ["bolt"]
    );
    assert_eq!(
        names(json!([{"attribute": "name", "operator": "starts_with", "value": "s"}])),
        ["screw"]
    );
    assert_eq!(
        names(json!([{"attribute": "name", "operator": "ends_with", "value": "t"}])),
        ["bolt", "nut"]
    );
    assert!(
        names(json!([{"attribute": "name", "operator": "starts_with", "value": "t"}])).is_empty()
    );
    // `contains` is a literal substring test, not a regex: as regexes, "." and "^b"
    // would match "bolt", "nut" and "screw", and "bolt" respectively.
    for pattern in [".", "^b", "b.*t", "[a-z]"] {
        assert!(
            names(json!([{"attribute": "name", "operator": "contains", "value": pattern}]))
                .is_empty(),
            "{pattern}"
        );
    }
    assert_eq!(
        names(json!([{"attribute": "day", "operator": ">", "value": "2024-01-01"}])),
        ["nut", "screw"]
    );
    assert_eq!(
        names(json!([
            {"attribute": "qty", "operator": "<", "value": 12.5},
            {"attribute": "name", "operator": "=", "value": "nut"}
        ])),
        ["nut"]
    );
    assert!(
        run(json!([{"attribute": "qty", "operator": "=", "value": 99}]))
            .contains("| name | qty | day |")
    );
}

#[test]
fn filter_with_a_malformed_value_or_missing_column_fails() {
    let t = table(vec![("qty", i(vec![Some(1)]))]);
    for (v, want) in [
        (
            json!([{"attribute": "qty", "operator": "between", "value": 1}]),
            "needs [lo, hi]",
        ),
        (
            json!([{"attribute": "qty", "operator": "=", "value": [1]}]),
            "needs a single value",
        ),
        (
            json!([{"attribute": "nope", "operator": "=", "value": 1}]),
            "column 'nope' does not exist",
        ),
    ] {
        let e = err_text(post::filter(&t, &filters(v)).expect_err("fails"));
        assert!(e.contains(want), "{e}");
    }
}

fn metrics(v: Value) -> Vec<MetricSpec> {
    serde_json::from_value(v).expect("metrics")
}

fn group_by(names: &[&str]) -> Vec<GroupBySpec> {
    names
        .iter()
        .map(|n| GroupBySpec {
            attribute: (*n).into(),
        })
        .collect()
}

#[test]
fn aggregate_groups_nulls_together_sorts_keys_nulls_first_and_follows_sql_null_rules() {
    let t = table(vec![
        (
            "region",
            s(vec![
                Some("south"),
                None,
                Some("north"),
                Some("south"),
                None,
            ]),
        ),
        ("units", i(vec![Some(4), Some(1), None, Some(6), Some(2)])),
        (
            "price",
            f(vec![Some(1.0), Some(2.0), Some(3.0), None, Some(4.0)]),
        ),
        (
            "name",
            s(vec![Some("b"), Some("z"), Some("q"), Some("a"), None]),
        ),
    ]);
    let m = metrics(json!([
        {"name": "units", "aggregation": "sum"},
        {"name": "price", "aggregation": "avg"},
        {"name": "name", "aggregation": "min"},
        {"name": "units", "aggregation": "count"}
    ]));
    // Two metrics on `units` give two columns of the same name; keep the test to distinct ones.
    let m = vec![m[0].clone(), m[1].clone(), m[2].clone()];
    let out = post::aggregate(&t, &group_by(&["region"]), &m).expect("ok");
    check(
        &out,
        "
        +--------+-------+-------+------+
        | region | units | price | name |
        +--------+-------+-------+------+
        |        | 3     | 3.0   | z    |
        | north  |       | 3.0   | q    |
        | south  | 10    | 1.0   | a    |
        +--------+-------+-------+------+",
    );
    let counted = post::aggregate(
        &t,
        &group_by(&["region"]),
        &metrics(json!([{"name": "units", "aggregation": "count"}, {"name": "name", "aggregation": "max"}])),
    )
    .expect("ok");
    check(
        &counted,
        "
        +--------+-------+------+
        | region | units | name |
        +--------+-------+------+
        |        | 2     | z    |
        | north  | 0     | q    |
        | south  | 2     | b    |
        +--------+-------+------+",
    );
}

#[test]
fn aggregate_without_group_by_on_empty_input_gives_one_row_count_zero_others_null() {
    let t = table(vec![("units", i(vec![])), ("price", f(vec![]))]);
    let out = post::aggregate(
        &t,
        &[],
        &metrics(json!([
            {"name": "units", "aggregation": "count"},
            {"name": "price", "aggregation": "sum"},
            {"name": "units", "aggregation": "max"}
        ]))[..2],
    )
    .expect("ok");
    check(
        &out,
        "
        +-------+-------+
        | units | price |
        +-------+-------+
        | 0     |       |
        +-------+-------+",
    );
}

#[test]
fn project_sort_and_limit_follow_the_spec() {
    let t = table(vec![
        ("k", s(vec![Some("a"), Some("b"), Some("c"), Some("d")])),
        ("v", i(vec![Some(2), None, Some(3), Some(2)])),
    ]);
    let order: Vec<OrderBySpec> =
        serde_json::from_value(json!([{"attribute": "v", "direction": "desc"}])).expect("order");
    check(
        &post::sort(&t, &order).expect("sorted"),
        "
        +---+---+
        | k | v |
        +---+---+
        | c | 3 |
        | a | 2 |
        | d | 2 |
        | b |   |
        +---+---+",
    );
    let asc: Vec<OrderBySpec> = serde_json::from_value(json!([{"attribute": "v"}])).expect("order");
    let sorted = post::sort(&t, &asc).expect("sorted");
    assert_eq!(show(&sorted).lines().nth(6), Some("| b |   |"));
    let projected = post::project(
        &t,
        &serde_json::from_value::<Vec<_>>(json!([{"name": "v"}])).expect("cols"),
    )
    .expect("projected");
    assert_eq!(projected.schema().fields().len(), 1);
    assert!(
        err_text(
            post::project(
                &t,
                &serde_json::from_value::<Vec<_>>(json!([{"name": "x"}])).expect("cols")
            )
            .expect_err("missing")
        )
        .contains("column 'x' does not exist")
    );
    assert_eq!(post::limit(&t, Some(2)).expect("limited").num_rows(), 2);
    let none = post::limit(&t, Some(0)).expect("limited");
    assert_eq!((none.num_rows(), none.num_columns()), (0, 2));
    assert_eq!(post::limit(&t, None).expect("unchanged"), t);
    assert_eq!(post::limit(&t, Some(99)).expect("all").num_rows(), 4);
}

fn dag(v: Value) -> (ExecutionDag, BTreeMap<String, String>) {
    let parsed = parse_decomposition(&v.to_string()).expect("valid");
    let n = normalize(&parsed, &DatasourceResolution::permissive());
    let planned = ExecutionDag::plan(&n.response).expect("plans");
    assert_eq!(planned.flow_issues, vec![]);
    (planned.dag, n.subquery_ids)
}

fn example() -> Value {
    json!({
      "sub_queries": [
        {"id": "a", "datasource_id": "m", "intent": "produced",
         "expected_schema": [{"name": "product", "dtype": "string"}, {"name": "made", "dtype": "int"}]},
        {"id": "b", "datasource_id": "m", "intent": "on hand",
         "expected_schema": [{"name": "product", "dtype": "string"}, {"name": "stock", "dtype": "int"}]}
      ],
      "combine_groups": [
        {"group_id": "g1", "operation": "join",
         "inputs": [{"subquery_id": "a", "role": "left"}, {"subquery_id": "b", "role": "right"}],
         "join_keys": [{"left": "product", "right": "product"}]}
      ],
      "post_combine_ops": [
        {"op_id": "s", "target_group_id": "g1", "operation": "sort",
         "order_by": [{"attribute": "made", "direction": "desc"}]},
        {"op_id": "l", "target_group_id": "g1", "operation": "limit", "limit": 2}
      ]
    })
}

fn scans() -> (RecordBatch, RecordBatch) {
    (
        table(vec![
            ("product", s(vec![Some("bolt"), Some("nut"), Some("gear")])),
            ("made", i(vec![Some(5), Some(9), Some(7)])),
        ]),
        table(vec![
            ("product", s(vec![Some("gear"), Some("bolt"), Some("nut")])),
            ("stock", i(vec![Some(1), Some(2), Some(3)])),
        ]),
    )
}

#[test]
fn dag_is_evaluated_layer_by_layer_through_the_post_op_chain() {
    let (dag, ids) = dag(example());
    let (a, b) = scans();
    let data = BTreeMap::from([(ids["a"].clone(), a), (ids["b"].clone(), b)]);
    let out = aggregate(&dag, |id| {
        data.get(id).cloned().ok_or_else(|| error(id, "no data"))
    });
    assert!(!out.is_partial(), "{:?}", out.errors);
    assert_eq!(out.results.len(), 1);
    check(
        &out.tables[&out.results[0]],
        "
        +---------+------+-------+
        | product | made | stock |
        +---------+------+-------+
        | nut     | 9    | 3     |
        | gear    | 7    | 1     |
        +---------+------+-------+",
    );
}

#[test]
fn a_hand_built_dag_with_wrong_roles_or_arity_fails_its_combine_node() {
    let (a, b) = scans();
    let run = |dag: &ExecutionDag, ids: &BTreeMap<String, String>| {
        let data = BTreeMap::from([(ids["a"].clone(), a.clone()), (ids["b"].clone(), b.clone())]);
        aggregate(dag, |id| {
            data.get(id).cloned().ok_or_else(|| error(id, "no data"))
        })
    };
    // Both inputs on the left side: no silent guess of which one is the right.
    let (mut both_left, ids) = dag(example());
    for edge in both_left
        .edges
        .iter_mut()
        .filter(|e| e.to_id == "combine_g1")
    {
        edge.role = Some(Role::Left);
    }
    let out = run(&both_left, &ids);
    assert!(out.results.is_empty());
    assert!(
        out.errors[0].message.starts_with("node 'combine_g1': ")
            && out.errors[0].message.contains("one left-side input"),
        "{:?}",
        out.errors
    );
    // One input of the join removed: an arity error, not the left table passed through.
    let (mut one_input, ids) = dag(example());
    let right = ids["b"].clone();
    one_input
        .edges
        .retain(|e| !(e.to_id == "combine_g1" && e.from_id == right));
    let out = run(&one_input, &ids);
    // The detached scan is now a terminal of its own; the join's chain gives nothing.
    assert_eq!(out.results, vec![right.clone()]);
    assert_eq!(
        out.errors[0].message,
        "node 'combine_g1': Invalid argument error: combine join needs exactly two inputs, got 1",
        "{:?}",
        out.errors
    );
}

#[test]
fn failed_scan_fails_its_dependants_and_other_branches_still_run() {
    let mut v = example();
    v["sub_queries"].as_array_mut().expect("array").push(json!(
        {"id": "c", "datasource_id": "hr", "intent": "staff", "expected_schema": [{"name": "n", "dtype": "int"}]}
    ));
    let (dag, ids) = dag(v);
    let (a, _) = scans();
    let c = table(vec![("n", i(vec![Some(3)]))]);
    let data = BTreeMap::from([(ids["a"].clone(), a), (ids["c"].clone(), c)]);
    let out = aggregate(&dag, |id| {
        data.get(id)
            .cloned()
            .ok_or_else(|| error(id, "scan failed"))
    });
    assert!(out.is_partial());
    assert_eq!(out.results, vec![ids["c"].clone()]);
    let messages: Vec<&str> = out.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[0], format!("node '{}': scan failed", ids["b"]));
    assert_eq!(
        messages[1],
        format!("node 'combine_g1': skipped: input '{}' failed", ids["b"])
    );
    assert!(
        out.errors
            .iter()
            .all(|e| e.code == ErrorCode::AggregatorFailed)
    );
}

#[tokio::test]
async fn artifacts_are_read_from_the_store_and_a_missing_one_names_its_node() {
    use nl2sql_artifacts::{ArtifactMeta, DEFAULT_PATH_TEMPLATE, LocalArtifactStore, PathTemplate};
    let dir = std::env::temp_dir().join(format!("nl2sql-aggregate-{}", std::process::id()));
    let store =
        LocalArtifactStore::new(&dir, PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("t"))
            .expect("store");
    let (dag, ids) = dag(example());
    let (a, b) = scans();
    let mut refs = BTreeMap::new();
    for (model, t) in [("a", a), ("b", b)] {
        let meta = ArtifactMeta {
            tenant_id: "t".into(),
            request_id: "r".into(),
            subgraph_name: "sql_agent".into(),
            dag_node_id: ids[model].clone(),
            schema_version: None,
        };
        refs.insert(
            ids[model].clone(),
            store.write(&meta, t.schema(), &[t]).await.expect("written"),
        );
    }
    let out = aggregate_from_store(&dag, &store, &refs).await;
    assert!(!out.is_partial(), "{:?}", out.errors);
    assert_eq!(out.tables[&out.results[0]].num_rows(), 2);
    refs.remove(&ids["a"]);
    let out = aggregate_from_store(&dag, &store, &refs).await;
    assert_eq!(
        out.errors[0].message,
        format!("node '{0}': Missing artifact for scan node {0}.", ids["a"])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn object_store_artifacts_aggregate_and_a_tampered_one_fails_only_its_branch() {
    use nl2sql_artifacts::{
        ArtifactMeta, ArtifactStore, DEFAULT_PATH_TEMPLATE, ObjectArtifactStore, PathTemplate,
    };
    let store: Arc<dyn ArtifactStore> = Arc::new(
        ObjectArtifactStore::from_url(
            "memory://aggregate",
            PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("t"),
            std::iter::empty::<(&str, &str)>(),
        )
        .expect("store"),
    );
    let (dag, ids) = dag(example());
    let (a, b) = scans();
    let mut refs = BTreeMap::new();
    for (model, t) in [("a", a), ("b", b)] {
        let meta = ArtifactMeta {
            tenant_id: "t".into(),
            request_id: "r".into(),
            subgraph_name: "sql_agent".into(),
            dag_node_id: ids[model].clone(),
            schema_version: None,
        };
        let artifact = store.write(&meta, t.schema(), &[t]).await.expect("written");
        assert!(
            artifact
                .uri
                .starts_with("memory://aggregate/t/r/sql_agent/")
        );
        refs.insert(ids[model].clone(), artifact);
    }
    let out = aggregate_from_store(&dag, store.as_ref(), &refs).await;
    assert!(!out.is_partial(), "{:?}", out.errors);
    assert_eq!(out.tables[&out.results[0]].num_rows(), 2);
    // A reference whose hash no longer matches fails its scan and skips the combine.
    refs.get_mut(&ids["b"]).expect("b").content_hash = "0".repeat(64);
    let out = aggregate_from_store(&dag, store.as_ref(), &refs).await;
    // The scan, then the combine and its two post ops, skipped.
    assert_eq!(out.errors.len(), 4, "{:?}", out.errors);
    assert_eq!(
        out.errors[1].message,
        format!("node 'combine_g1': skipped: input '{}' failed", ids["b"])
    );
    assert!(
        out.errors[0].message.starts_with(&format!(
            "node '{}': artifact 'memory://aggregate/",
            ids["b"]
        )),
        "{}",
        out.errors[0].message
    );
    assert!(
        out.errors[0]
            .message
            .contains("does not match its content hash"),
        "{}",
        out.errors[0].message
    );
    assert!(out.tables.contains_key(&ids["a"]));
    assert!(out.results.is_empty());
}

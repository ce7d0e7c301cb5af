//! Tests of the global planner: construction, layers, data-flow schemas, hashing and the
//! renderings.

use nl2sql_state::ErrorCode;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::decomposition::{DatasourceResolution, normalize, parse_decomposition};

fn scan(id: &str, ds: &str, intent: &str, cols: &[(&str, &str)]) -> Value {
    let cols: Vec<Value> = cols
        .iter()
        .map(|(n, t)| json!({"name": n, "dtype": t}))
        .collect();
    json!({"id": id, "datasource_id": ds, "intent": intent, "expected_schema": cols})
}

/// The example of plan-model.md §3.8.
fn example() -> Value {
    json!({
      "sub_queries": [
        scan("a", "manufacturing", "units produced per product",
             &[("product", "string"), ("units_produced", "int")]),
        scan("b", "manufacturing", "units on hand per product",
             &[("product", "string"), ("units_on_hand", "int")]),
      ],
      "combine_groups": [
        {"group_id": "g1", "operation": "join",
         "inputs": [{"subquery_id": "a", "role": "left"}, {"subquery_id": "b", "role": "right"}],
         "join_keys": [{"left": "product", "right": "product"}]}
      ],
      "post_combine_ops": [
        {"op_id": "x", "target_group_id": "g1", "operation": "sort",
         "order_by": [{"attribute": "units_produced", "direction": "desc"}]}
      ]
    })
}

/// Revenue per region this year compared with last year, filtered, aggregated, sorted,
/// limited; plus a union of two stores and a lone scan.
fn rich() -> Value {
    json!({
      "sub_queries": [
        scan("cur", "sales", "revenue per region this year",
             &[("region", "string"), ("revenue", "float"), ("orders", "int")]),
        scan("prev", "archive", "revenue per region last year",
             &[("region", "string"), ("revenue", "float"), ("orders", "int")]),
        scan("eu", "shop_eu", "customers in Europe", &[("customer", "string"), ("country", "string")]),
        scan("us", "shop_us", "customers in the US", &[("customer", "string"), ("country", "string")]),
        scan("solo", "hr", "head count", &[("head_count", "int")]),
      ],
      "combine_groups": [
        {"group_id": "yoy", "operation": "compare",
         "inputs": [{"subquery_id": "cur", "role": "base"}, {"subquery_id": "prev", "role": "compare"}],
         "join_keys": [{"left": "region", "right": "region"}]},
        {"group_id": "all_customers", "operation": "union",
         "inputs": [{"subquery_id": "eu"}, {"subquery_id": "us"}]}
      ],
      "post_combine_ops": [
        {"op_id": "f", "target_group_id": "yoy", "operation": "filter",
         "filters": [{"attribute": "revenue_diff", "operator": ">", "value": 0}]},
        {"op_id": "agg", "target_group_id": "all_customers", "operation": "aggregate",
         "group_by": [{"attribute": "country"}],
         "metrics": [{"name": "customer", "aggregation": "count"}]},
        {"op_id": "s", "target_group_id": "yoy", "operation": "sort",
         "order_by": [{"attribute": "revenue_diff", "direction": "desc"}]},
        {"op_id": "p", "target_group_id": "yoy", "operation": "project",
         "expected_schema": [{"name": "region"}, {"name": "revenue_diff"}]},
        {"op_id": "l", "target_group_id": "yoy", "operation": "limit", "limit": 3}
      ]
    })
}

fn plan(v: &Value) -> PlannedDag {
    let parsed = parse_decomposition(&v.to_string()).expect("valid response");
    let n = normalize(&parsed, &DatasourceResolution::permissive());
    ExecutionDag::plan(&n.response).expect("plans")
}

fn valid(v: &Value) -> ExecutionDag {
    let planned = plan(v);
    assert_eq!(planned.flow_issues, vec![], "unexpected data-flow issues");
    planned.dag
}

fn columns(dag: &ExecutionDag, id: &str) -> Vec<String> {
    dag.node(id)
        .expect("node exists")
        .output_schema
        .columns
        .iter()
        .map(|c| format!("{}:{}", c.name, c.dtype.map_or("?", |d| d.as_str())))
        .collect()
}

fn issues(v: &Value) -> Vec<(String, String, Option<String>)> {
    plan(v)
        .flow_issues
        .into_iter()
        .map(|i| (i.node_id, i.attribute, i.key))
        .collect()
}

#[test]
fn worked_example_has_the_spec_layers_edges_and_schemas() {
    let dag = valid(&example());
    let ids: Vec<&str> = dag.nodes.iter().map(|n| n.node_id.as_str()).collect();
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[0], "combine_g1");
    assert!(ids[1].starts_with("op_") && ids[2].starts_with("sq_") && ids[3].starts_with("sq_"));
    let (op, a, b) = (ids[1], ids[2], ids[3]);
    assert_eq!(
        dag.layers,
        vec![
            vec![a.to_owned(), b.to_owned()],
            vec!["combine_g1".to_owned()],
            vec![op.to_owned()]
        ]
    );
    let edges: Vec<(&str, Option<&str>)> = dag
        .edges
        .iter()
        .map(|e| (e.edge_id.as_str(), e.role.map(|r| r.as_str())))
        .collect();
    assert_eq!(edges[0], (format!("edge_combine_g1_{op}").as_str(), None));
    assert_eq!(edges[1].0, format!("edge_{a}_combine_g1"));
    assert_eq!(edges.len(), 3);
    let want = ["product:string", "units_produced:int", "units_on_hand:int"];
    assert_eq!(columns(&dag, "combine_g1"), want);
    assert_eq!(columns(&dag, op), want);
    assert_eq!(dag.terminal_nodes(), vec![op]);
    assert_eq!(dag.version, "v1");
}

#[test]
fn dag_id_is_the_prefix_of_the_content_hash_of_the_payload() {
    let dag = valid(&example());
    let hash = dag.content_hash.clone().expect("hash");
    assert_eq!(hash.len(), 64);
    assert_eq!(
        hash,
        nl2sql_state::sha256_hex(dag.hash_payload().as_bytes())
    );
    assert_eq!(dag.dag_id, Some(format!("dag_{}", &hash[..12])));
    assert!(dag.hash_payload().starts_with("{\"edges\":["));
}

#[test]
fn post_ops_are_chained_in_seq_order_on_successive_layers() {
    let dag = valid(&rich());
    let ops: Vec<(&str, &str)> = ["f", "s", "p", "l"]
        .iter()
        .map(|k| {
            let n = dag
                .nodes
                .iter()
                .find(|n| {
                    n.kind != NodeKind::Scan && n.attributes["seq"].is_number() && {
                        let want = match *k {
                            "f" => "filter",
                            "s" => "sort",
                            "p" => "project",
                            _ => "limit",
                        };
                        n.attributes["operation"] == want
                            && n.attributes["target_group_id"] == "yoy"
                    }
                })
                .expect("op node");
            (n.node_id.as_str(), n.inputs[0].as_str())
        })
        .collect();
    assert_eq!(ops[0].1, "combine_yoy");
    assert_eq!(ops[1].1, ops[0].0);
    assert_eq!(ops[2].1, ops[1].0);
    assert_eq!(ops[3].1, ops[2].0);
    assert_eq!(dag.layers.len(), 6);
    assert_eq!(dag.layers[5], vec![ops[3].0.to_owned()]);
}

#[test]
fn compare_puts_keys_then_left_then_suffixed_right_then_numeric_diffs() {
    let dag = valid(&rich());
    assert_eq!(
        columns(&dag, "combine_yoy"),
        [
            "region:string",
            "revenue:float",
            "orders:int",
            "revenue_right:float",
            "orders_right:int",
            "revenue_diff:float",
            "orders_diff:int"
        ]
    );
}

#[test]
fn union_aggregate_and_project_derive_their_columns() {
    let dag = valid(&rich());
    assert_eq!(
        columns(&dag, "combine_all_customers"),
        ["customer:string", "country:string"]
    );
    let agg = dag
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::PostAggregate)
        .expect("aggregate");
    assert_eq!(
        columns(&dag, &agg.node_id),
        ["country:string", "customer:int"]
    );
    let project = dag
        .nodes
        .iter()
        .find(|n| n.kind == NodeKind::PostProject)
        .expect("project");
    assert_eq!(
        columns(&dag, &project.node_id),
        ["region:string", "revenue_diff:float"]
    );
}

#[test]
fn join_suffixes_colliding_right_columns_and_drops_right_keys() {
    let mut v = example();
    v["sub_queries"][0]["expected_schema"] =
        json!([{"name": "product", "dtype": "string"}, {"name": "units", "dtype": "int"}]);
    v["sub_queries"][1]["expected_schema"] =
        json!([{"name": "item", "dtype": "string"}, {"name": "units", "dtype": "float"}]);
    v["combine_groups"][0]["join_keys"] = json!([{"left": "product", "right": "item"}]);
    v["post_combine_ops"] = json!([]);
    let dag = valid(&v);
    assert_eq!(
        columns(&dag, "combine_g1"),
        ["product:string", "units:int", "units_right:float"]
    );
}

#[test]
fn sort_by_a_missing_column_is_a_flow_issue_naming_node_and_key() {
    let mut v = example();
    v["post_combine_ops"][0]["order_by"][0]["attribute"] = json!("revenue");
    let planned = plan(&v);
    assert_eq!(planned.flow_issues.len(), 1);
    let issue = &planned.flow_issues[0];
    assert!(issue.node_id.starts_with("op_"));
    assert_eq!(issue.attribute, "order_by");
    assert_eq!(issue.key.as_deref(), Some("revenue"));
    assert_eq!(
        issue.message,
        format!(
            "post op '{}' (sort) sorts by 'revenue' but its input provides [product, units_produced, units_on_hand]",
            issue.node_id
        )
    );
}

#[test]
fn missing_join_key_is_a_flow_issue_on_the_combine_node() {
    let mut v = example();
    v["combine_groups"][0]["join_keys"] = json!([{"left": "product", "right": "sku"}]);
    assert_eq!(
        issues(&v),
        vec![(
            "combine_g1".to_owned(),
            "join_keys".to_owned(),
            Some("sku".to_owned())
        )]
    );
}

#[test]
fn union_of_different_columns_or_dtypes_is_a_flow_issue() {
    let mut v = rich();
    v["sub_queries"][3]["expected_schema"] =
        json!([{"name": "customer", "dtype": "int"}, {"name": "state", "dtype": "string"}]);
    let found = issues(&v);
    let keys: Vec<Option<&str>> = found
        .iter()
        .filter(|i| i.0 == "combine_all_customers")
        .map(|i| i.2.as_deref())
        .collect();
    assert_eq!(keys, vec![Some("country"), Some("state"), Some("customer")]);
    // The aggregate downstream still sees the union's (first input's) columns.
    assert!(
        found.iter().all(|i| i.0 == "combine_all_customers"),
        "{found:?}"
    );
}

#[test]
fn aggregate_metric_without_aggregation_and_wrong_expected_schema_are_flow_issues() {
    let mut v = example();
    v["post_combine_ops"] = json!([
        {"op_id": "a1", "target_group_id": "g1", "operation": "aggregate",
         "group_by": [{"attribute": "product"}],
         "metrics": [{"name": "units_produced"}],
         "expected_schema": [{"name": "product"}, {"name": "total"}]}
    ]);
    let attrs: Vec<(String, Option<String>)> = issues(&v).into_iter().map(|i| (i.1, i.2)).collect();
    assert_eq!(
        attrs,
        vec![
            ("metrics".to_owned(), Some("units_produced".to_owned())),
            ("expected_schema".to_owned(), Some("total".to_owned()))
        ]
    );
}

#[test]
fn duplicate_output_column_is_a_flow_issue() {
    let mut v = example();
    v["sub_queries"][0]["expected_schema"] = json!([
        {"name": "product", "dtype": "string"},
        {"name": "units_on_hand_right", "dtype": "int"},
        {"name": "units_on_hand", "dtype": "int"}
    ]);
    v["post_combine_ops"] = json!([]);
    let found = issues(&v);
    assert!(
        found.contains(&(
            "combine_g1".to_owned(),
            "output_schema".to_owned(),
            Some("units_on_hand_right".to_owned())
        )),
        "{found:?}"
    );
}

#[test]
fn unknown_target_group_is_planner_failed() {
    let parsed = parse_decomposition(&example().to_string()).expect("valid");
    let mut r = normalize(&parsed, &DatasourceResolution::permissive()).response;
    r.post_combine_ops[0].target_group_id = "nope".into();
    let err = ExecutionDag::plan(&r).expect_err("fails");
    assert_eq!(err.code, ErrorCode::PlannerFailed);
    assert!(
        err.message.contains("unknown combine group 'nope'"),
        "{}",
        err.message
    );
}

#[test]
fn unknown_combine_input_is_planner_failed_naming_the_edge() {
    let parsed = parse_decomposition(&example().to_string()).expect("valid");
    let mut r = normalize(&parsed, &DatasourceResolution::permissive()).response;
    r.combine_groups[0].inputs[1].subquery_id = "sq_missing".into();
    let err = ExecutionDag::plan(&r).expect_err("fails");
    assert_eq!(err.code, ErrorCode::PlannerFailed);
    assert!(
        err.message
            .contains("edge 'edge_sq_missing_combine_g1' has the unknown endpoint 'sq_missing'"),
        "{}",
        err.message
    );
}

#[test]
fn duplicate_node_id_is_planner_failed() {
    let parsed = parse_decomposition(&example().to_string()).expect("valid");
    let mut r = normalize(&parsed, &DatasourceResolution::permissive()).response;
    r.sub_queries[1].id = r.sub_queries[0].id.clone();
    let err = ExecutionDag::plan(&r).expect_err("fails");
    assert!(err.message.contains("duplicate node id"), "{}", err.message);
}

fn e(from: &str, to: &str) -> LogicalEdge {
    LogicalEdge {
        edge_id: format!("edge_{from}_{to}"),
        from_id: from.into(),
        to_id: to.into(),
        role: None,
    }
}

#[test]
fn cycle_is_planner_failed_naming_its_nodes() {
    let ids: Vec<String> = ["a", "b", "c", "d"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let err = layered_topological_sort(&ids, &[e("a", "b"), e("b", "c"), e("c", "b"), e("c", "d")])
        .expect_err("cycle");
    assert_eq!(err.code, ErrorCode::PlannerFailed);
    assert_eq!(
        err.message,
        "ExecutionDAG contains a cycle through [b, c, d]"
    );
}

#[test]
fn layers_are_topological_sorted_and_ignore_unknown_endpoints() {
    let ids: Vec<String> = ["z", "y", "m", "a"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let layers = layered_topological_sort(
        &ids,
        &[
            e("z", "m"),
            e("y", "m"),
            e("m", "a"),
            e("ghost", "a"),
            e("y", "a"),
        ],
    )
    .expect("acyclic");
    assert_eq!(
        layers,
        vec![
            vec!["y".to_owned(), "z".to_owned()],
            vec!["m".to_owned()],
            vec!["a".to_owned()]
        ]
    );
}

#[test]
fn empty_response_gives_an_empty_dag() {
    let dag = valid(&json!({"sub_queries": [], "combine_groups": []}));
    assert!(dag.nodes.is_empty() && dag.edges.is_empty() && dag.layers.is_empty());
    assert_eq!(dag, ExecutionDag::empty());
}

#[test]
fn scan_without_group_is_a_terminal_node() {
    let dag = valid(&rich());
    let solo = dag
        .nodes
        .iter()
        .find(|n| n.attributes["datasource_id"] == "hr")
        .expect("solo scan");
    assert!(dag.terminal_nodes().contains(&solo.node_id.as_str()));
}

#[test]
fn dag_json_round_trips() {
    let dag = valid(&rich());
    let back: ExecutionDag = serde_json::from_str(&dag.to_json_pretty()).expect("parses");
    assert_eq!(back, dag);
}

#[test]
fn example_dag_renders_as_text() {
    insta::assert_snapshot!(valid(&example()).to_text());
}

#[test]
fn example_dag_renders_as_json() {
    insta::assert_snapshot!(valid(&example()).to_json_pretty());
}

#[test]
fn rich_dag_renders_as_text() {
    insta::assert_snapshot!(valid(&rich()).to_text());
}

#[test]
fn rich_dag_renders_as_dot() {
    insta::assert_snapshot!(valid(&rich()).to_dot());
}

#[test]
fn rich_dag_renders_as_mermaid() {
    insta::assert_snapshot!(valid(&rich()).to_mermaid());
}

/// `rich()` with its sub-queries and groups reordered by `sq_order`/`group_order` and its
/// ops interleaved by `op_keys`, keeping the relative order of the ops of each group.
fn permuted(sq_order: &[usize], group_order: &[usize], op_keys: &[u8]) -> Value {
    let mut v = rich();
    let sqs = v["sub_queries"].as_array().expect("array").clone();
    v["sub_queries"] = Value::Array(sq_order.iter().map(|i| sqs[*i].clone()).collect());
    let groups = v["combine_groups"].as_array().expect("array").clone();
    v["combine_groups"] = Value::Array(group_order.iter().map(|i| groups[*i].clone()).collect());
    // Move the ops of "all_customers" (there is one) to a position chosen by op_keys.
    let ops = v["post_combine_ops"].as_array().expect("array").clone();
    let (other, yoy): (Vec<Value>, Vec<Value>) = ops
        .into_iter()
        .partition(|o| o["target_group_id"] == "all_customers");
    let at = usize::from(op_keys.first().copied().unwrap_or(0)) % (yoy.len() + 1);
    let mut interleaved = yoy;
    for (k, o) in other.into_iter().enumerate() {
        interleaved.insert((at + k).min(interleaved.len()), o);
    }
    v["post_combine_ops"] = Value::Array(interleaved);
    v
}

proptest! {
    #[test]
    fn permuting_input_order_gives_byte_identical_dag_json(
        sq_order in Just((0..5).collect::<Vec<usize>>()).prop_shuffle(),
        group_order in Just(vec![0usize, 1]).prop_shuffle(),
        op_keys in proptest::collection::vec(any::<u8>(), 1),
    ) {
        let reference = valid(&rich());
        let other = valid(&permuted(&sq_order, &group_order, &op_keys));
        prop_assert_eq!(&other.dag_id, &reference.dag_id);
        prop_assert_eq!(other.to_json_pretty(), reference.to_json_pretty());
        prop_assert_eq!(other.to_dot(), reference.to_dot());
    }
}

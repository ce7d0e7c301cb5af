//! Tests of the PlanModel JSON form.

use super::*;

const EXAMPLE: &str = r#"{
  "reasoning": "runs -> machines -> factories; sum quantity per factory name",
  "tables": [
    {"name": "production_runs", "alias": "r", "ordinal": 0},
    {"name": "machines", "alias": "m", "ordinal": 1},
    {"name": "factories", "alias": "f", "ordinal": 2}
  ],
  "joins": [
    {"left_alias": "r", "right_alias": "m", "join_type": "inner", "ordinal": 0,
     "condition": {"kind": "binary", "op": "=",
                   "left": {"kind": "column", "alias": "r", "column_name": "machine_id"},
                   "right": {"kind": "column", "alias": "m", "column_name": "id"}}},
    {"left_alias": "m", "right_alias": "f", "join_type": "inner", "ordinal": 1,
     "condition": {"kind": "binary", "op": "=",
                   "left": {"kind": "column", "alias": "m", "column_name": "factory_id"},
                   "right": {"kind": "column", "alias": "f", "column_name": "id"}}}
  ],
  "select_items": [
    {"ordinal": 0, "alias": "factory",
     "expr": {"kind": "column", "alias": "f", "column_name": "name"}},
    {"ordinal": 1, "alias": "total_quantity",
     "expr": {"kind": "func", "func_name": "SUM", "is_aggregate": true,
              "args": [{"kind": "column", "alias": "r", "column_name": "quantity_produced"}]}}
  ],
  "where": {"kind": "binary", "op": ">=",
            "left": {"kind": "column", "alias": "r", "column_name": "started_at"},
            "right": {"kind": "literal", "value": "2024-04-01"}},
  "group_by": [{"ordinal": 0, "expr": {"kind": "column", "alias": "f", "column_name": "name"}}],
  "order_by": [{"ordinal": 0, "direction": "desc",
                "expr": {"kind": "column", "column_name": "total_quantity"}}],
  "limit": 10
}"#;

/// Parses `json` and returns the error's path and reason.
fn check_err(json: &str) -> (String, String) {
    match parse_plan(json) {
        Ok(plan) => panic!("expected an error, parsed {plan:?}"),
        Err(e) => (e.path, e.reason),
    }
}

fn select_one(expr: &str) -> String {
    format!(
        r#"{{"tables":[{{"name":"t","alias":"t","ordinal":0}}],
            "select_items":[{{"ordinal":0,"expr":{expr}}}]}}"#
    )
}

#[test]
fn spec_example_parses_with_defaults() {
    let plan = parse_plan(EXAMPLE).unwrap();
    assert_eq!(plan.query_type, QueryType::Read);
    assert!(!plan.distinct);
    assert_eq!(plan.tables.len(), 3);
    assert_eq!(plan.joins[1].join_type, JoinType::Inner);
    assert_eq!(plan.order_by[0].direction, Direction::Desc);
    assert_eq!(plan.limit, Some(10));
    assert_eq!(plan.offset, None);
    let w = plan.where_.as_ref().unwrap();
    assert_eq!(w.op, Some(Op::GtEq));
    assert_eq!(
        w.right.as_ref().unwrap().value,
        Some(LiteralValue::Str("2024-04-01".into()))
    );
    assert!(plan.select_items[1].expr.is_aggregate_call());
}

#[test]
fn serialised_plan_parses_back_to_the_same_plan() {
    let plan = parse_plan(EXAMPLE).unwrap();
    let json = serde_json::to_string(&plan).unwrap();
    assert_eq!(parse_plan(&json).unwrap(), plan);
}

#[test]
fn unknown_top_level_key_is_rejected_with_its_path() {
    let (path, reason) = check_err(r#"{"tables": [], "sql": "SELECT 1"}"#);
    assert_eq!(path, "$.sql");
    assert!(reason.contains("unknown field `sql`"), "{reason}");
}

#[test]
fn unknown_nested_key_names_the_nested_path() {
    let (path, reason) = check_err(&select_one(
        r#"{"kind":"binary","op":"=","left":{"kind":"column","column_name":"a","table":"x"},"right":{"kind":"literal","value":1}}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.left.table");
    assert!(reason.contains("unknown field"), "{reason}");
}

#[test]
fn unknown_kind_names_the_kind_path() {
    let (path, _) = check_err(&select_one(r#"{"kind":"window"}"#));
    assert_eq!(path, "$.select_items[0].expr.kind");
}

/// A sub-query expression over table `t` selecting `items` (JSON select items).
fn subquery_of(items: &str) -> String {
    format!(
        r#"{{"kind":"subquery","query":{{"tables":[{{"name":"t","alias":"s","ordinal":0}}],"select_items":{items}}}}}"#
    )
}

#[test]
fn subquery_parses_and_its_inner_rules_name_inner_paths() {
    let one = r#"[{"ordinal":0,"expr":{"kind":"func","func_name":"AVG","args":[{"kind":"column","alias":"s","column_name":"x"}]}}]"#;
    let plan = parse_plan(&select_one(&format!(
        r#"{{"kind":"binary","op":">","left":{{"kind":"column","alias":"t","column_name":"x"}},"right":{}}}"#,
        subquery_of(one)
    )))
    .unwrap();
    let inner = plan.subqueries();
    assert_eq!(inner.len(), 1);
    assert_eq!(inner[0].tables[0].alias, "s");
    // Exactly one column.
    let two = r#"[{"ordinal":0,"expr":{"kind":"column","alias":"s","column_name":"x"}},{"ordinal":1,"expr":{"kind":"column","alias":"s","column_name":"y"}}]"#;
    let (path, reason) = check_err(&select_one(&subquery_of(two)));
    assert_eq!(path, "$.select_items[0].expr.query.select_items");
    assert!(reason.contains("exactly one column"), "{reason}");
    // Inner expressions are checked with their own paths.
    let bad = r#"[{"ordinal":0,"expr":{"kind":"column","alias":"s"}}]"#;
    let (path, reason) = check_err(&select_one(&subquery_of(bad)));
    assert_eq!(
        path,
        "$.select_items[0].expr.query.select_items[0].expr.column_name"
    );
    assert!(reason.contains("requires 'column_name'"), "{reason}");
    // `query` is required, and belongs to no other kind.
    let (path, _) = check_err(&select_one(r#"{"kind":"subquery"}"#));
    assert_eq!(path, "$.select_items[0].expr.query");
    let (path, reason) = check_err(&select_one(&format!(
        r#"{{"kind":"column","column_name":"a","query":{}}}"#,
        &subquery_of(one)[r#"{"kind":"subquery","query":"#.len()..subquery_of(one).len() - 1]
    )));
    assert_eq!(path, "$.select_items[0].expr.query");
    assert!(reason.contains("does not belong"), "{reason}");
}

#[test]
fn subqueries_count_toward_the_nesting_limit() {
    // Each level: a sub-query whose only select item is the next level. Through JSON the
    // parser's own recursion limit stops it first; built in Rust, the nesting limit does.
    let mut e = r#"{"kind":"literal","value":1}"#.to_owned();
    for _ in 0..40 {
        e = subquery_of(&format!(r#"[{{"ordinal":0,"expr":{e}}}]"#));
    }
    let (_, reason) = check_err(&select_one(&e));
    assert!(reason.contains("recursion limit"), "{reason}");
    let level = |e: Expr| PlanModel {
        tables: vec![TableRef {
            name: "t".into(),
            schema_name: None,
            database: None,
            alias: "s".into(),
            ordinal: 0,
        }],
        select_items: vec![SelectItem {
            expr: e,
            alias: None,
            ordinal: 0,
        }],
        ..PlanModel::default()
    };
    let mut plan = level(Expr::literal(LiteralValue::Int(1)));
    for _ in 0..MAX_DEPTH {
        plan = level(Expr::subquery(plan));
    }
    let err = parse::check_plan(&plan).unwrap_err();
    assert!(err.reason.contains("nested deeper than"), "{}", err.reason);
    assert!(
        err.path.matches(".query").count() >= MAX_DEPTH - 1,
        "{}",
        err.path
    );
}

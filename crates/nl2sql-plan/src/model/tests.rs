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

#[test]
fn query_type_other_than_read_fails_parsing() {
    let (path, _) = check_err(r#"{"query_type":"WRITE"}"#);
    assert_eq!(path, "$.query_type");
}

#[test]
fn binary_without_right_is_rejected() {
    let (path, reason) = check_err(&select_one(
        r#"{"kind":"binary","op":"+","left":{"kind":"literal","value":1}}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.right");
    assert_eq!(reason, "a 'binary' expression requires 'right'");
}

#[test]
fn binary_not_is_rejected() {
    let (path, _) = check_err(&select_one(
        r#"{"kind":"binary","op":"NOT","left":{"kind":"literal","value":1},"right":{"kind":"literal","value":1}}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.op");
}

#[test]
fn unary_with_comparison_op_is_rejected() {
    let (path, _) = check_err(&select_one(
        r#"{"kind":"unary","op":"=","expr":{"kind":"literal","value":1}}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.op");
}

#[test]
fn literal_without_value_is_rejected_and_null_literal_accepted() {
    let (path, _) = check_err(&select_one(r#"{"kind":"literal"}"#));
    assert_eq!(path, "$.select_items[0].expr.value");
    let plan = parse_plan(&select_one(r#"{"kind":"literal","is_null":true}"#)).unwrap();
    assert!(plan.select_items[0].expr.is_null_literal());
}

#[test]
fn foreign_field_on_column_is_rejected() {
    let (path, reason) = check_err(&select_one(
        r#"{"kind":"column","column_name":"a","args":[{"kind":"literal","value":1}]}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.args");
    assert!(reason.contains("does not belong to a 'column'"), "{reason}");
}

#[test]
fn cast_needs_its_type_and_operand_and_round_trips() {
    let (path, _) = check_err(&select_one(
        r#"{"kind":"cast","expr":{"kind":"column","column_name":"a"}}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.cast_to");
    let (path, _) = check_err(&select_one(r#"{"kind":"cast","cast_to":"real"}"#));
    assert_eq!(path, "$.select_items[0].expr.expr");
    let (path, _) = check_err(&select_one(
        r#"{"kind":"column","column_name":"a","cast_to":"real"}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.cast_to");
    let (path, _) = check_err(&select_one(
        r#"{"kind":"cast","cast_to":"decimal","expr":{"kind":"column","column_name":"a"}}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.cast_to");
    let plan = parse_plan(&select_one(
        r#"{"kind":"cast","cast_to":"real","expr":{"kind":"column","column_name":"a"}}"#,
    ))
    .unwrap();
    let e = &plan.select_items[0].expr;
    assert_eq!(e, &Expr::cast(Expr::column(None, "a"), CastType::Real));
    let json = serde_json::to_value(e).unwrap();
    assert_eq!(json["cast_to"], "real");
    assert_eq!(json["kind"], "cast");
}

#[test]
fn case_without_whens_is_rejected() {
    let (path, _) = check_err(&select_one(r#"{"kind":"case","whens":[]}"#));
    assert_eq!(path, "$.select_items[0].expr.whens");
}

#[test]
fn func_without_name_is_rejected() {
    let (path, _) = check_err(&select_one(r#"{"kind":"func","args":[]}"#));
    assert_eq!(path, "$.select_items[0].expr.func_name");
}

#[test]
fn integers_beyond_i64_and_fractions_are_typed() {
    let (path, reason) = check_err(&select_one(
        r#"{"kind":"literal","value":18446744073709551615}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.value");
    assert!(reason.contains("does not fit in i64"), "{reason}");
    let plan = parse_plan(&select_one(r#"{"kind":"literal","value":2.5}"#)).unwrap();
    assert_eq!(
        plan.select_items[0].expr.value,
        Some(LiteralValue::Float(2.5))
    );
    let plan = parse_plan(&select_one(r#"{"kind":"literal","value":true}"#)).unwrap();
    assert_eq!(
        plan.select_items[0].expr.value,
        Some(LiteralValue::Bool(true))
    );
}

#[test]
fn ordinal_must_be_an_integer() {
    let (path, _) = check_err(r#"{"tables":[{"name":"t","alias":"t","ordinal":"0"}]}"#);
    assert_eq!(path, "$.tables[0].ordinal");
}

#[test]
fn deep_nesting_is_rejected_without_crashing() {
    let mut e = r#"{"kind":"literal","value":1}"#.to_owned();
    for _ in 0..70 {
        e = format!(r#"{{"kind":"unary","op":"-","expr":{e}}}"#);
    }
    let (path, reason) = check_err(&select_one(&e));
    assert!(path.starts_with("$.select_items[0].expr"), "{path}");
    assert!(reason.contains("deeper than 64"), "{reason}");
}

#[test]
fn oversized_document_is_rejected() {
    let big = format!(r#"{{"reasoning":"{}"}}"#, "x".repeat(MAX_DOCUMENT_BYTES));
    let (path, _) = check_err(&big);
    assert_eq!(path, "$");
}

#[test]
fn long_identifier_is_rejected() {
    let json = format!(
        r#"{{"tables":[{{"name":"{}","alias":"t","ordinal":0}}]}}"#,
        "n".repeat(MAX_IDENT_LEN + 1)
    );
    let (path, _) = check_err(&json);
    assert_eq!(path, "$.tables[0].name");
}

#[test]
fn malformed_json_is_an_error_not_a_panic() {
    let (path, reason) = check_err(r#"{"tables": [}"#);
    assert!(path.starts_with('$'), "{path}");
    assert!(!reason.is_empty());
}

#[test]
fn parse_error_becomes_pipeline_error_with_path() {
    let err = parse_plan(r#"{"bogus":1}"#).unwrap_err();
    let pe = err.to_pipeline_error("planner", nl2sql_state::ErrorCode::PlanningFailure);
    assert_eq!(pe.code, nl2sql_state::ErrorCode::PlanningFailure);
    assert_eq!(pe.details.unwrap()["path"], "$.bogus");
}

#[test]
fn json_schema_forbids_unknown_keys_and_lists_kinds() {
    let schema = plan_json_schema();
    assert_eq!(schema["additionalProperties"], false);
    let text = schema.to_string();
    for kind in [
        "literal", "column", "func", "binary", "unary", "case", "cast", "real", "IS NOT",
    ] {
        assert!(text.contains(&format!("\"{kind}\"")), "{kind} missing");
    }
}

#[test]
fn null_optional_keys_take_their_defaults() {
    let plan = parse_plan(
        r#"{"query_type": null, "distinct": null, "joins": null, "group_by": null,
            "tables": [{"name": "t", "alias": "t", "ordinal": 0, "schema_name": null}],
            "select_items": [{"ordinal": 0, "alias": null,
              "expr": {"kind": "func", "func_name": "COUNT", "args": null, "is_aggregate": null,
                       "op": null, "whens": null}}],
            "order_by": [{"ordinal": 0, "direction": null,
              "expr": {"kind": "literal", "value": 1, "is_null": null}}]}"#,
    )
    .unwrap();
    assert_eq!(plan.query_type, QueryType::Read);
    assert!(plan.joins.is_empty() && !plan.distinct);
    assert!(plan.select_items[0].expr.args.is_empty());
    assert_eq!(plan.order_by[0].direction, Direction::Asc);
}

#[test]
fn count_distinct_parses_and_round_trips() {
    let plan = parse_plan(&select_one(
        r#"{"kind":"func","func_name":"COUNT","distinct":true,"is_aggregate":true,
            "args":[{"kind":"column","alias":"t","column_name":"kind"}]}"#,
    ))
    .unwrap();
    let e = &plan.select_items[0].expr;
    assert!(e.distinct && e.is_aggregate_call());
    assert_eq!(
        *e,
        Expr::distinct_aggregate("COUNT", Expr::column(Some("t"), "kind"))
    );
    let text = serde_json::to_string(&plan).unwrap();
    assert!(text.contains(r#""distinct":true"#), "{text}");
    assert_eq!(parse_plan(&text).unwrap(), plan);
    // `false` is the default and is not written out.
    let plain = parse_plan(&select_one(
        r#"{"kind":"func","func_name":"COUNT","distinct":null,
            "args":[{"kind":"column","column_name":"*"}]}"#,
    ))
    .unwrap();
    assert!(!plain.select_items[0].expr.distinct);
    assert!(!serde_json::to_string(&plain).unwrap().contains("distinct"));
}

#[test]
fn distinct_on_a_non_function_is_a_foreign_field() {
    let (path, reason) = check_err(&select_one(
        r#"{"kind":"column","column_name":"a","distinct":true}"#,
    ));
    assert_eq!(path, "$.select_items[0].expr.distinct");
    assert!(reason.contains("does not belong to a 'column'"), "{reason}");
}

#[test]
fn json_schema_describes_the_distinct_aggregate_flag() {
    let schema = plan_json_schema();
    let expr = &schema["$defs"]["Expr"]["properties"]["distinct"];
    assert_eq!(expr["type"], "boolean", "{expr}");
    assert!(
        expr["description"]
            .as_str()
            .is_some_and(|d| d.contains("COUNT(DISTINCT")),
        "{expr}"
    );
}

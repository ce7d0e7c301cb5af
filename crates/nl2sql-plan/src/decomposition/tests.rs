//! Tests of parsing, normalisation and the semantic-only rule.

use std::collections::BTreeSet;

use nl2sql_state::{ErrorCode, Severity};
use serde_json::{Value, json};

use super::*;

/// The example of plan-model.md §3.8.
fn example() -> Value {
    json!({
      "sub_queries": [
        {"id": "a", "datasource_id": "manufacturing", "intent": "units produced per product",
         "metrics": [{"name": "units_produced", "aggregation": "sum"}],
         "group_by": [{"attribute": "product"}],
         "expected_schema": [{"name": "product", "dtype": "string"},
                             {"name": "units_produced", "dtype": "int"}]},
        {"id": "b", "datasource_id": "manufacturing", "intent": "units on hand per product",
         "metrics": [{"name": "units_on_hand", "aggregation": "sum"}],
         "group_by": [{"attribute": "product"}],
         "expected_schema": [{"name": "product", "dtype": "string"},
                             {"name": "units_on_hand", "dtype": "int"}]}
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

fn parse(v: &Value) -> DecomposerResponse {
    parse_decomposition(&v.to_string()).expect("valid response")
}

fn parse_err(v: &Value) -> (String, String) {
    let e = parse_decomposition(&v.to_string()).expect_err("invalid response");
    (e.path, e.reason)
}

fn is_stable(id: &str, prefix: &str) -> bool {
    id.len() == prefix.len() + 12
        && id.starts_with(prefix)
        && id[prefix.len()..]
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

#[test]
fn parses_the_spec_example_with_defaults() {
    let r = parse(&example());
    assert_eq!(r.sub_queries.len(), 2);
    assert_eq!(r.sub_queries[0].kind, SubQueryKind::Scan);
    assert_eq!(r.sub_queries[0].filters, vec![]);
    assert_eq!(r.combine_groups[0].inputs[1].role, Some(Role::Right));
    assert_eq!(
        r.post_combine_ops[0].order_by[0].direction,
        SortDirection::Desc
    );
    assert_eq!(r.post_combine_ops[0].limit, None);
    assert!(r.unmapped_subqueries.is_empty());
}

#[test]
fn unknown_key_is_rejected_with_its_json_path() {
    let mut v = example();
    v["sub_queries"][1]["metrics"][0]["sql"] = json!("SUM(x)");
    let (path, reason) = parse_err(&v);
    assert_eq!(path, "$.sub_queries[1].metrics[0].sql");
    assert!(reason.contains("unknown field `sql`"), "{reason}");
}

#[test]
fn unknown_enum_value_is_rejected_with_its_json_path() {
    let mut v = example();
    v["combine_groups"][0]["operation"] = json!("cross");
    let (path, reason) = parse_err(&v);
    assert_eq!(path, "$.combine_groups[0].operation");
    assert!(reason.contains("unknown variant `cross`"), "{reason}");
}

#[test]
fn missing_required_key_is_rejected() {
    let mut v = example();
    v.as_object_mut().expect("object").remove("combine_groups");
    let (path, reason) = parse_err(&v);
    assert_eq!(path, "$");
    assert!(
        reason.contains("missing field `combine_groups`"),
        "{reason}"
    );
}

#[test]
fn metadata_accepts_any_keys() {
    let mut v = example();
    v["post_combine_ops"][0]["metadata"] = json!({"anything": [1, {"goes": true}]});
    let r = parse(&v);
    assert_eq!(
        r.post_combine_ops[0].metadata["anything"][1]["goes"],
        json!(true)
    );
}

#[test]
fn filter_values_keep_their_json_types() {
    let mut v = example();
    v["sub_queries"][0]["filters"] = json!([
        {"attribute": "year", "operator": "=", "value": 2024},
        {"attribute": "ratio", "operator": ">", "value": 0.5},
        {"attribute": "region", "operator": "in", "value": ["north", "south"]},
        {"attribute": "year", "operator": "between", "value": [2020, 2024]},
        {"attribute": "active", "operator": "=", "value": true}
    ]);
    let r = parse(&v);
    let values: Vec<&FilterValue> = r.sub_queries[0].filters.iter().map(|f| &f.value).collect();
    assert_eq!(
        values,
        vec![
            &FilterValue::Int(2024),
            &FilterValue::Float(0.5),
            &FilterValue::StringList(vec!["north".into(), "south".into()]),
            &FilterValue::IntList(vec![2020, 2024]),
            &FilterValue::Bool(true),
        ]
    );
}

#[test]
fn mixed_list_filter_value_is_rejected() {
    let mut v = example();
    v["sub_queries"][0]["filters"] =
        json!([{"attribute": "x", "operator": "in", "value": ["a", 1]}]);
    let (path, _) = parse_err(&v);
    assert_eq!(path, "$.sub_queries[0].filters[0].value");
}

#[test]
fn too_long_list_is_rejected() {
    let mut v = example();
    let cols: Vec<Value> = (0..300).map(|i| json!({"name": format!("c{i}")})).collect();
    v["sub_queries"][0]["expected_schema"] = json!(cols);
    let (path, reason) = parse_err(&v);
    assert_eq!(path, "$.sub_queries[0].expected_schema");
    assert!(reason.contains("300 items"), "{reason}");
}

#[test]
fn normalisation_gives_content_hashed_ids_and_rewrites_references() {
    let n = normalize(&parse(&example()), &DatasourceResolution::permissive());
    let r = &n.response;
    assert!(n.warnings.is_empty());
    for sq in &r.sub_queries {
        assert!(is_stable(&sq.id, "sq_"), "{}", sq.id);
    }
    let a = &n.subquery_ids["a"];
    let b = &n.subquery_ids["b"];
    assert_ne!(a, b);
    let inputs: Vec<&str> = r.combine_groups[0]
        .inputs
        .iter()
        .map(|i| i.subquery_id.as_str())
        .collect();
    assert_eq!(inputs, vec![a.as_str(), b.as_str()]);
    assert_eq!(r.combine_groups[0].group_id, "g1");
    let op = &r.post_combine_ops[0];
    assert!(is_stable(&op.op_id, "op_"), "{}", op.op_id);
    assert_eq!(op.seq, Some(0));
    assert_eq!(n.op_ids["x"], op.op_id);
}

#[test]
fn stable_ids_ignore_the_model_ids() {
    let mut v = example();
    v["sub_queries"][0]["id"] = json!("first");
    v["combine_groups"][0]["inputs"][0]["subquery_id"] = json!("first");
    v["post_combine_ops"][0]["op_id"] = json!("whatever");
    let renamed = normalize(&parse(&v), &DatasourceResolution::permissive()).response;
    let original = normalize(&parse(&example()), &DatasourceResolution::permissive()).response;
    assert_eq!(renamed, original);
}

#[test]
fn stable_id_changes_with_content() {
    let r = parse(&example());
    let mut other = r.sub_queries[0].clone();
    other.intent.push('s');
    assert_ne!(
        stable_subquery_id(&r.sub_queries[0]),
        stable_subquery_id(&other)
    );
    let mut trimmed = r.sub_queries[0].clone();
    trimmed.datasource_id = "  manufacturing ".into();
    assert_eq!(
        stable_subquery_id(&r.sub_queries[0]),
        stable_subquery_id(&trimmed)
    );
}

#[test]
fn duplicate_sub_queries_merge_and_both_model_ids_map_to_one() {
    let mut v = example();
    let mut dup = v["sub_queries"][0].clone();
    dup["id"] = json!("a2");
    v["sub_queries"].as_array_mut().expect("array").push(dup);
    v["combine_groups"]
        .as_array_mut()
        .expect("array")
        .push(json!(
            {"group_id": "g2", "operation": "standalone", "inputs": [{"subquery_id": "a2"}]}
        ));
    let n = normalize(&parse(&v), &DatasourceResolution::permissive());
    assert_eq!(n.response.sub_queries.len(), 2);
    assert_eq!(n.subquery_ids["a"], n.subquery_ids["a2"]);
    assert_eq!(
        n.response.combine_groups[1].inputs[0].subquery_id,
        n.subquery_ids["a"]
    );
}

#[test]
fn join_that_loses_an_input_is_dropped_with_its_ops_and_warnings() {
    let mut v = example();
    v["sub_queries"][1]["datasource_id"] = json!("finance");
    let resolution = DatasourceResolution {
        resolved: Some(BTreeSet::from(["manufacturing".into(), "finance".into()])),
        allowed: Some(BTreeSet::from(["manufacturing".into()])),
        ..DatasourceResolution::default()
    };
    let n = normalize(&parse(&v), &resolution);
    assert_eq!(n.response.sub_queries.len(), 1);
    assert!(n.response.combine_groups.is_empty());
    assert!(n.response.post_combine_ops.is_empty());
    assert_eq!(n.response.unmapped_subqueries.len(), 1);
    let u = &n.response.unmapped_subqueries[0];
    assert_eq!(u.reason, UnmappedReason::RestrictedDatasource);
    assert_eq!(u.datasource_id.as_deref(), Some("finance"));
    let messages: Vec<&str> = n.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("combine group 'g1' (join) was dropped"));
    assert!(messages[1].contains("post op 'x' was dropped"));
    for w in &n.warnings {
        assert_eq!(w.code, ErrorCode::InvalidPlanStructure);
        assert_eq!(w.severity, Severity::Warning);
    }
}

#[test]
fn unresolved_unsupported_and_blank_datasources_are_unmapped_with_reasons() {
    let mut v = example();
    v["sub_queries"][0]["datasource_id"] = json!("  ");
    v["sub_queries"][1]["datasource_id"] = json!("legacy");
    let mut extra = v["sub_queries"][1].clone();
    extra["id"] = json!("c");
    extra["datasource_id"] = json!("nowhere");
    v["sub_queries"].as_array_mut().expect("array").push(extra);
    let resolution = DatasourceResolution {
        resolved: Some(BTreeSet::from(["legacy".into()])),
        unsupported: BTreeSet::from(["legacy".into()]),
        ..DatasourceResolution::default()
    };
    let n = normalize(&parse(&v), &resolution);
    let reasons: Vec<UnmappedReason> = n
        .response
        .unmapped_subqueries
        .iter()
        .map(|u| u.reason)
        .collect();
    assert_eq!(
        reasons,
        vec![
            UnmappedReason::NoDatasource,
            UnmappedReason::UnsupportedDatasource,
            UnmappedReason::NoDatasource
        ]
    );
    assert_eq!(n.response.unmapped_subqueries[0].datasource_id, None);
    assert!(n.response.sub_queries.is_empty());
}

#[test]
fn schema_version_comes_from_the_resolver() {
    let resolution = DatasourceResolution {
        schema_versions: [(
            "manufacturing".to_owned(),
            "20240101000000_abcdef01".to_owned(),
        )]
        .into_iter()
        .collect(),
        ..DatasourceResolution::default()
    };
    let n = normalize(&parse(&example()), &resolution);
    assert!(
        n.response
            .sub_queries
            .iter()
            .all(|s| s.schema_version.as_deref() == Some("20240101000000_abcdef01"))
    );
}

#[test]
fn ops_of_a_group_get_seq_in_model_order_and_lists_are_sorted() {
    let mut v = example();
    v["combine_groups"].as_array_mut().expect("array").insert(
        0,
        json!({"group_id": "g0", "operation": "standalone", "inputs": [{"subquery_id": "b"}]}),
    );
    v["post_combine_ops"] = json!([
        {"op_id": "p", "target_group_id": "g1", "operation": "limit", "limit": 5},
        {"op_id": "q", "target_group_id": "g0", "operation": "limit", "limit": 1},
        {"op_id": "r", "target_group_id": "g1", "operation": "sort",
         "order_by": [{"attribute": "product"}]}
    ]);
    let n = normalize(&parse(&v), &DatasourceResolution::permissive());
    let r = &n.response;
    let seq_of = |model: &str| {
        r.post_combine_ops
            .iter()
            .find(|o| o.op_id == n.op_ids[model])
            .and_then(|o| o.seq)
    };
    assert_eq!(
        (seq_of("p"), seq_of("q"), seq_of("r")),
        (Some(0), Some(0), Some(1))
    );
    let group_ids: Vec<&str> = r
        .combine_groups
        .iter()
        .map(|g| g.group_id.as_str())
        .collect();
    assert_eq!(group_ids, vec!["g0", "g1"]);
    assert!(r.sub_queries.windows(2).all(|w| w[0].id < w[1].id));
    assert!(
        r.post_combine_ops
            .windows(2)
            .all(|w| w[0].op_id < w[1].op_id)
    );
}

#[test]
fn attributes_with_keywords_inside_words_pass() {
    for ok in [
        "created_at",
        "date_from",
        "updated_by",
        "selection",
        "units produced",
        "year-over-year",
    ] {
        assert_eq!(attribute_violation(ok), None, "{ok}");
    }
}

#[test]
fn attributes_with_keyword_words_or_symbols_fail() {
    let cases = [
        ("drop table", "SQL keyword 'drop'"),
        ("x-from-y", "SQL keyword 'from'"),
        ("Select", "SQL keyword 'select'"),
        ("revenue;", "is not a name"),
        ("1st", "is not a name"),
        ("sum(x)", "is not a name"),
        ("", "is not a name"),
    ];
    for (attr, want) in cases {
        let got = attribute_violation(attr).unwrap_or_default();
        assert!(got.contains(want), "{attr}: {got}");
    }
}

#[test]
fn ordinary_english_intents_pass() {
    for ok in [
        "revenue from Berlin",
        "machines where maintenance is overdue",
        "select the top customers",
        "orders grouped by region",
        "join date of employees",
    ] {
        assert_eq!(intent_violation(ok), None, "{ok}");
    }
}

#[test]
fn sql_like_intents_fail() {
    let cases = [
        ("SELECT name FROM machines", "'select' followed by 'from'"),
        ("revenue; drop it", "';'"),
        ("total -- comment", "'--'"),
        ("a /* b", "'/*'"),
        ("the `orders` table", "'`'"),
        ("revenue group by region", "'group by'"),
        ("Order By date", "'order by'"),
        ("x union select y", "'union select'"),
        ("then insert into t", "'insert into'"),
        ("delete from t", "'delete from'"),
        ("drop table t", "'drop table'"),
    ];
    for (intent, want) in cases {
        let got = intent_violation(intent).unwrap_or_default();
        assert!(got.contains(want), "{intent}: {got}");
    }
}

#[test]
fn semantic_violations_name_each_element_with_its_path() {
    let mut v = example();
    v["sub_queries"][0]["intent"] = json!("select units from production");
    v["sub_queries"][1]["expected_schema"][1]["name"] = json!("drop");
    v["combine_groups"][0]["join_keys"][0]["right"] = json!("product;");
    v["post_combine_ops"][0]["order_by"][0]["attribute"] = json!("units from");
    let found: Vec<(String, String)> = semantic_violations(&parse(&v))
        .into_iter()
        .map(|s| (s.path, s.owner_id))
        .collect();
    let want = [
        ("$.sub_queries[0].intent", "a"),
        ("$.sub_queries[1].expected_schema[1].name", "b"),
        ("$.combine_groups[0].join_keys[0].right", "g1"),
        ("$.post_combine_ops[0].order_by[0].attribute", "x"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(p, o)| ((*p).to_owned(), (*o).to_owned()))
        .collect();
    assert_eq!(found, want);
}

#[test]
fn the_spec_example_has_no_semantic_violations() {
    assert_eq!(semantic_violations(&parse(&example())), vec![]);
}

#[test]
fn json_schema_lists_the_top_level_keys_and_requires_sub_queries() {
    let schema = decomposition_json_schema();
    let props = schema["properties"].as_object().expect("properties");
    let keys: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "sub_queries",
            "combine_groups",
            "post_combine_ops",
            "unmapped_subqueries"
        ]
    );
    assert_eq!(schema["required"], json!(["sub_queries", "combine_groups"]));
    assert_eq!(schema["additionalProperties"], json!(false));
}

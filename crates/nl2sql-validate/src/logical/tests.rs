//! Tests of the logical validator: one or more per check, through one `check` helper.

use nl2sql_plan::parse_plan;
use nl2sql_state::{
    AccessPolicy, Dialect, ErrorCode, PolicyFile, SchemaContract, SchemaMetadata, Severity,
};
use serde_json::json;

use super::*;
use crate::schema_from_ddl;

const DDL: &str = "
CREATE TABLE factories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, location TEXT, opened_on DATE);
CREATE TABLE machines (id INTEGER PRIMARY KEY, factory_id INTEGER NOT NULL, name TEXT, line TEXT,
  FOREIGN KEY (factory_id) REFERENCES factories(id));
CREATE TABLE production_runs (id INTEGER PRIMARY KEY, machine_id INTEGER NOT NULL,
  quantity_produced INTEGER, shift TEXT, started_at DATETIME,
  FOREIGN KEY (machine_id) REFERENCES machines(id));
CREATE TABLE shifts (id INTEGER PRIMARY KEY, name TEXT);
";

fn contract() -> SchemaContract {
    schema_from_ddl(DDL, Dialect::Sqlite, "manufacturing").unwrap()
}

fn metadata() -> SchemaMetadata {
    serde_json::from_value(json!({
        "tables": {
            "main.machines": {
                "table": {"schema_name": "main", "table_name": "machines"},
                "columns": {
                    "line": {"statistics": {"distinct_count": 2, "sample_values": ["Line 1", "Line 2"]},
                             "synonyms": ["assembly line"]}
                }
            },
            "main.factories": {
                "table": {"schema_name": "main", "table_name": "factories"},
                "columns": {
                    "name": {"statistics": {"distinct_count": 40, "sample_values": ["Plant Austin", "Plant Berlin"]}}
                }
            }
        }
    }))
    .unwrap()
}

fn col(a: &str, c: &str) -> Value {
    json!({"kind": "column", "alias": a, "column_name": c})
}

fn lit(v: Value) -> Value {
    json!({"kind": "literal", "value": v})
}

fn bin(op: &str, l: Value, r: Value) -> Value {
    json!({"kind": "binary", "op": op, "left": l, "right": r})
}

/// A valid plan over machines `m` joined to factories `f`, selecting `m.name`.
fn base() -> Value {
    json!({
        "tables": [
            {"name": "machines", "alias": "m", "ordinal": 0},
            {"name": "factories", "alias": "f", "ordinal": 1}
        ],
        "joins": [{"left_alias": "m", "right_alias": "f", "ordinal": 0,
                   "condition": bin("=", col("m", "factory_id"), col("f", "id"))}],
        "select_items": [{"ordinal": 0, "alias": "machine", "expr": col("m", "name")}]
    })
}

/// Validates `plan` in the default context (after `adjust`) and returns
/// `(code, severity, message)` of every finding.
fn check_with(
    plan: Value,
    adjust: impl FnOnce(LogicalContext<'_>) -> LogicalContext<'_>,
) -> Vec<(ErrorCode, Severity, String)> {
    let contract = contract();
    let plan = parse_plan(&plan.to_string()).unwrap();
    let ctx = adjust(LogicalContext::new("manufacturing", &contract));
    validate_plan(Some(&plan), &ctx)
        .findings
        .into_iter()
        .map(|f| (f.code, f.severity, f.message))
        .collect()
}

fn check(plan: Value) -> Vec<(ErrorCode, Severity, String)> {
    check_with(plan, |c| c)
}

fn codes(findings: &[(ErrorCode, Severity, String)]) -> Vec<ErrorCode> {
    findings.iter().map(|f| f.0).collect()
}

#[test]
fn valid_plan_has_no_findings_and_a_success_reasoning() {
    let contract = contract();
    let plan = parse_plan(&base().to_string()).unwrap();
    let report = validate_plan(
        Some(&plan),
        &LogicalContext::new("manufacturing", &contract),
    );
    assert_eq!(report.findings, vec![]);
    assert!(report.is_ok());
    assert_eq!(
        report.reasoning,
        vec!["Logical validation succeeded.".to_owned()]
    );
}

#[test]
fn m_missing_plan_is_critical() {
    let contract = contract();
    let report = validate_plan(None, &LogicalContext::new("manufacturing", &contract));
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].code, ErrorCode::MissingPlan);
    assert_eq!(report.findings[0].severity, Severity::Critical);
}

#[test]
fn s1_empty_tables_ends_static_phase_but_policy_runs() {
    let f = check_with(
        json!({"select_items": [{"ordinal": 5, "expr": lit(json!(1))}]}),
        |mut c| {
            c.datasource_id = None;
            c
        },
    );
    assert_eq!(
        codes(&f),
        vec![
            ErrorCode::InvalidPlanStructure,
            ErrorCode::SecurityViolation
        ]
    );
    assert_eq!(f[0].2, "Plan has no tables.");
}

#[test]
fn s3_reports_each_list_with_bad_ordinals() {
    let mut p = base();
    p["tables"][1]["ordinal"] = json!(2);
    p["select_items"][0]["ordinal"] = json!(1);
    let f = check(p);
    let s3: Vec<_> = f.iter().filter(|x| x.2.starts_with("Ordinals")).collect();
    assert_eq!(s3.len(), 2);
    assert!(
        s3[0].2.contains("'tables'") && s3[0].2.contains("[0, 2]"),
        "{}",
        s3[0].2
    );
    assert!(s3[1].2.contains("'select_items'"), "{}", s3[1].2);
}

#[test]
fn s4_reports_the_first_duplicate_alias() {
    let mut p = base();
    p["tables"][1]["alias"] = json!("m");
    let f = check(p);
    assert_eq!(
        f[0],
        (
            ErrorCode::InvalidPlanStructure,
            Severity::Error,
            "Duplicate table alias 'm'.".into()
        )
    );
}

#[test]
fn e1_e2_select_aliases_must_equal_expected_schema_in_order() {
    let f = check_with(base(), |c| {
        c.with_expected_schema(vec!["machine".into(), "n".into()])
    });
    assert_eq!(codes(&f), vec![ErrorCode::InvalidPlanStructure; 2]);
    assert!(f[0].2.contains("selects 1 columns"), "{}", f[0].2);
    let f = check_with(base(), |c| {
        c.with_expected_schema(vec!["machine_name".into()])
    });
    assert_eq!(f.len(), 1);
    assert!(f[0].2.contains("[machine]"), "{}", f[0].2);
    assert!(check_with(base(), |c| c.with_expected_schema(vec!["machine".into()])).is_empty());
}

#[test]
fn t_unknown_table_is_reported_and_its_columns_are_not() {
    let mut p = base();
    p["tables"][1]["name"] = json!("factorys");
    p["select_items"][0]["expr"] = col("f", "whatever");
    let f = check(p);
    assert_eq!(
        f[0],
        (
            ErrorCode::TableNotFound,
            Severity::Error,
            "Table 'factorys' not found in relevant tables.".into()
        )
    );
    assert!(!codes(&f).contains(&ErrorCode::ColumnNotFound), "{f:?}");
}

#[test]
fn t_plan_table_names_are_normalised() {
    let mut p = base();
    p["tables"][1]["name"] = json!("\"main\".\"FACTORIES\"");
    assert_eq!(check(p), vec![]);
}

#[test]
fn t_ambiguous_table_across_schemas() {
    let mut contract = contract();
    let mut other = contract.tables["main.shifts"].clone();
    other.table.schema_name = "archive".into();
    contract.add_table(other);
    let plan = parse_plan(
        &json!({"tables": [{"name": "shifts", "alias": "s", "ordinal": 0}],
                "select_items": [{"ordinal": 0, "expr": col("s", "name")}]})
        .to_string(),
    )
    .unwrap();
    let report = validate_plan(
        Some(&plan),
        &LogicalContext::new("manufacturing", &contract),
    );
    assert_eq!(report.findings[0].code, ErrorCode::TableNotFound);
    assert!(
        report.findings[0]
            .message
            .starts_with("Ambiguous table 'shifts'")
    );
}

#[test]
fn j_unknown_join_alias() {
    let mut p = base();
    p["joins"][0]["left_alias"] = json!("x");
    let f = check(p);
    assert_eq!(
        f[0],
        (
            ErrorCode::JoinTableNotInPlan,
            Severity::Error,
            "Join left alias 'x' not in plan tables.".into()
        )
    );
}

#[test]
fn j_condition_must_reference_both_sides_and_hold_an_equality() {
    let mut p = base();
    p["joins"][0]["condition"] = bin("=", col("m", "factory_id"), lit(json!(1)));
    let f = check(p);
    assert_eq!(f[0].0, ErrorCode::JoinMissingOnClause);
    assert_eq!(f[0].2, "Join condition must reference both 'm' and 'f'.");
    let mut p = base();
    p["joins"][0]["condition"] = bin(">", col("m", "factory_id"), col("f", "id"));
    let f = check(p);
    assert_eq!(f[0].0, ErrorCode::JoinMissingOnClause);
    assert_eq!(
        f[0].2,
        "Join condition must include an equality between join columns."
    );
}

#[test]
fn j_join_must_match_a_foreign_key_in_either_orientation() {
    let mut p = base();
    p["joins"][0]["condition"] = bin("=", col("f", "id"), col("m", "factory_id"));
    assert_eq!(check(p), vec![]);
    let mut p = base();
    p["joins"][0]["condition"] = bin("=", col("m", "id"), col("f", "id"));
    let f = check(p);
    assert_eq!(
        f[0],
        (
            ErrorCode::InvalidPlanStructure,
            Severity::Error,
            "Join does not match any allowed relationship.".into()
        )
    );
}

#[test]
fn l_value_missing_from_exhaustive_samples_is_an_error_with_known_values() {
    let mut p = base();
    p["where"] = bin("=", col("m", "line"), lit(json!("Line 9")));
    let f = check_with(p, |c| c);
    assert_eq!(f, vec![]);
    let contract = contract();
    let meta = metadata();
    let mut p = base();
    p["where"] = bin("=", col("m", "line"), lit(json!("Line 9")));
    let plan = parse_plan(&p.to_string()).unwrap();
    let ctx = LogicalContext::new("manufacturing", &contract).with_metadata(&meta);
    let r = validate_plan(Some(&plan), &ctx);
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].severity, Severity::Error);
    assert_eq!(
        r.findings[0].message,
        "Literal value 'Line 9' not found in stats for machines.line. Known values: Line 1, Line 2."
    );
    assert_eq!(
        r.findings[0].details.as_ref().unwrap()["known_values"],
        json!(["Line 1", "Line 2"])
    );
}

fn check_stats(where_: Value) -> Vec<(ErrorCode, Severity, String)> {
    let contract = contract();
    let meta = metadata();
    let mut p = base();
    p["where"] = where_;
    let plan = parse_plan(&p.to_string()).unwrap();
    let ctx = LogicalContext::new("manufacturing", &contract).with_metadata(&meta);
    validate_plan(Some(&plan), &ctx)
        .findings
        .into_iter()
        .map(|f| (f.code, f.severity, f.message))
        .collect()
}

#[test]
fn l_non_exhaustive_samples_give_a_warning_and_case_is_ignored() {
    let f = check_stats(bin("=", col("f", "name"), lit(json!("Plant Tokyo"))));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].1, Severity::Warning);
    assert!(check_stats(bin("=", col("f", "name"), lit(json!("plant austin")))).is_empty());
}

#[test]
fn l_every_in_member_is_checked() {
    let list = json!({"kind": "func", "func_name": "LIST", "args": [lit(json!("Line 1")), lit(json!("Line 7"))]});
    let f = check_stats(bin("IN", col("m", "line"), list));
    assert_eq!(f.len(), 1);
    assert!(f[0].2.contains("'Line 7'"), "{}", f[0].2);
}

#[test]
fn l_like_pattern_must_relate_to_samples_or_synonyms() {
    assert!(check_stats(bin("LIKE", col("m", "line"), lit(json!("%line%")))).is_empty());
    assert!(check_stats(bin("LIKE", col("m", "line"), lit(json!("%assembly%")))).is_empty());
    let f = check_stats(bin("LIKE", col("m", "line"), lit(json!("%paint%"))));
    assert_eq!(f.len(), 1);
    assert!(
        f[0].2
            .starts_with("LIKE pattern '%paint%' is not derived from stats for machines.line")
    );
}

#[test]
fn c_unknown_column_suggests_a_close_name() {
    let mut p = base();
    p["select_items"][0]["expr"] = col("m", "nmae");
    let f = check(p);
    assert_eq!(
        f,
        vec![(
            ErrorCode::ColumnNotFound,
            Severity::Error,
            "Column 'nmae' does not exist in table alias 'm' (machines). Did you mean 'name'?"
                .into()
        )]
    );
}

#[test]
fn c_non_strict_columns_are_warnings() {
    let mut p = base();
    p["select_items"][0]["expr"] = col("m", "nmae");
    let f = check_with(p, |c| c.with_strict_columns(false));
    assert_eq!(f[0].1, Severity::Warning);
}

#[test]
fn c_undeclared_alias_is_invalid_alias_usage() {
    let mut p = base();
    p["select_items"][0]["expr"] = col("z", "name");
    let f = check(p);
    assert_eq!(
        f,
        vec![(
            ErrorCode::InvalidAliasUsage,
            Severity::Error,
            "Column 'name' uses undeclared alias 'z'.".into()
        )]
    );
}

#[test]
fn c_unqualified_columns_must_be_unique_or_a_select_alias_in_order_by() {
    let mut p = base();
    p["select_items"][0]["expr"] = json!({"kind": "column", "column_name": "name"});
    p["order_by"] = json!([{"ordinal": 0, "expr": {"kind": "column", "column_name": "machine"}}]);
    let f = check(p);
    assert_eq!(
        f,
        vec![(
            ErrorCode::ColumnNotFound,
            Severity::Error,
            "Ambiguous column 'name' referenced without alias.".into()
        )]
    );
    let mut p = base();
    p["where"] = bin(
        "=",
        json!({"kind": "column", "column_name": "machine"}),
        lit(json!("x")),
    );
    let f = check(p);
    assert_eq!(f[0].2, "Column 'machine' not found in any relevant table.");
}

#[test]
fn a1_aggregate_in_where_is_rejected() {
    let mut p = base();
    p["where"] = bin(
        ">",
        json!({"kind": "func", "func_name": "COUNT", "args": [col("m", "id")]}),
        lit(json!(1)),
    );
    let f = check(p);
    assert!(
        f.iter().any(|x| x.0 == ErrorCode::InvalidPlanStructure
            && x.2
                .starts_with("Aggregate functions are not allowed in $.where")),
        "{f:?}"
    );
}

#[test]
fn a2_nested_aggregate_is_rejected() {
    let mut p = base();
    p["select_items"][0]["expr"] = json!({"kind": "func", "func_name": "MAX",
        "args": [{"kind": "func", "func_name": "sum", "args": [col("m", "id")]}]});
    let f = check(p);
    assert!(
        f.iter()
            .any(|x| x.2.starts_with("Aggregate MAX contains another aggregate")),
        "{f:?}"
    );
}

#[test]
fn a3_ungrouped_select_item_is_missing_group_by() {
    let mut p = base();
    p["select_items"] = json!([
        {"ordinal": 0, "expr": col("f", "name")},
        {"ordinal": 1, "expr": col("m", "name")},
        {"ordinal": 2, "alias": "n", "expr": {"kind": "func", "func_name": "COUNT", "args": [{"kind": "column", "column_name": "*"}]}}
    ]);
    p["group_by"] = json!([{"ordinal": 0, "expr": col("f", "name")}]);
    p["order_by"] = json!([{"ordinal": 0, "expr": {"kind": "column", "column_name": "n"}}]);
    let f = check(p);
    assert_eq!(codes(&f), vec![ErrorCode::MissingGroupBy]);
    assert!(f[0].2.starts_with("Select item 1"), "{}", f[0].2);
}

#[test]
fn a4_having_without_aggregation_is_rejected() {
    let mut p = base();
    p["having"] = bin("=", col("m", "name"), lit(json!("x")));
    let f = check(p);
    assert_eq!(
        f[0].2,
        "HAVING needs an aggregating plan (group_by or an aggregate); use where instead."
    );
}

#[test]
fn f1_unknown_function_and_denied_function() {
    let mut p = base();
    p["select_items"][0]["expr"] =
        json!({"kind": "func", "func_name": "md5", "args": [col("m", "name")]});
    let f = check(p);
    assert_eq!(f[0].0, ErrorCode::InvalidPlanStructure);
    assert!(
        f[0].2
            .starts_with("Function 'md5' is not on the allow-list")
    );
    let mut p = base();
    p["select_items"][0]["expr"] =
        json!({"kind": "func", "func_name": "pg_sleep", "args": [lit(json!(1))]});
    let f = check(p);
    assert_eq!(
        f[0],
        (
            ErrorCode::SecurityViolation,
            Severity::Critical,
            "Function 'pg_sleep' is not allowed.".into()
        )
    );
}

#[test]
fn f4_count_distinct_of_a_column_is_valid() {
    let mut p = base();
    p["select_items"] = json!([
        {"ordinal": 0, "expr": col("f", "name")},
        {"ordinal": 1, "alias": "lines", "expr": {"kind": "func", "func_name": "count",
            "distinct": true, "args": [col("m", "line")]}}
    ]);
    p["group_by"] = json!([{"ordinal": 0, "expr": col("f", "name")}]);
    p["having"] = bin(
        ">",
        json!({"kind": "func", "func_name": "COUNT", "distinct": true, "args": [col("m", "line")]}),
        lit(json!(1)),
    );
    p["order_by"] = json!([{"ordinal": 0, "expr": {"kind": "column", "column_name": "lines"}}]);
    assert_eq!(check(p), vec![]);
}

#[test]
fn f4_distinct_outside_an_aggregate_of_one_column_is_rejected() {
    let with = |expr: Value| {
        let mut p = base();
        p["select_items"][0]["expr"] = expr;
        check(p)
    };
    let f = with(
        json!({"kind": "func", "func_name": "LOWER", "distinct": true,
        "args": [col("m", "name")]}),
    );
    assert_eq!(codes(&f), vec![ErrorCode::InvalidPlanStructure]);
    assert_eq!(
        f[0].2,
        "DISTINCT applies only to an aggregate (COUNT, SUM, AVG, MIN, MAX); LOWER is not one."
    );
    let f = with(
        json!({"kind": "func", "func_name": "COUNT", "distinct": true,
        "args": [{"kind": "column", "column_name": "*"}]}),
    );
    assert_eq!(
        f[0].2,
        "COUNT(DISTINCT *) is not valid; name the column whose distinct values count."
    );
    let f = with(
        json!({"kind": "func", "func_name": "COUNT", "distinct": true,
        "args": [col("m", "name"), col("m", "line")]}),
    );
    assert_eq!(
        f[0].2,
        "COUNT(DISTINCT …) takes exactly one argument, got 2."
    );
    // The finding names the flag's path.
    let contract = contract();
    let mut p = base();
    p["select_items"][0]["expr"] = json!({"kind": "func", "func_name": "COUNT",
        "distinct": true, "args": []});
    let plan = parse_plan(&p.to_string()).unwrap();
    let report = validate_plan(
        Some(&plan),
        &LogicalContext::new("manufacturing", &contract),
    );
    assert_eq!(
        report.findings[0].details.as_ref().unwrap()["path"],
        "$.select_items[0].expr.distinct"
    );
}

#[test]
fn f1_list_outside_in_is_rejected() {
    let mut p = base();
    p["select_items"][0]["expr"] =
        json!({"kind": "func", "func_name": "TUPLE", "args": [lit(json!(1))]});
    let f = check(p);
    assert_eq!(f[0].2, "TUPLE is only allowed as the right side of IN.");
}

#[test]
fn f2_in_needs_literal_members() {
    let mut p = base();
    p["where"] = bin(
        "IN",
        col("m", "line"),
        json!({"kind": "func", "func_name": "LIST", "args": [col("m", "name")]}),
    );
    let f = check(p);
    assert_eq!(f[0].2, "IN list members must be literals.");
    let mut p = base();
    p["where"] = bin("IN", col("m", "line"), col("m", "name"));
    let f = check(p);
    assert!(f[0].2.starts_with("The right side of IN must be"), "{f:?}");
}

#[test]
fn f3_is_needs_null_or_boolean() {
    let mut p = base();
    p["where"] = bin("IS", col("m", "line"), lit(json!("x")));
    let f = check(p);
    assert_eq!(
        f[0].2,
        "The right side of IS / IS NOT must be a null or boolean literal."
    );
    let mut p = base();
    p["where"] = bin(
        "IS NOT",
        col("m", "line"),
        json!({"kind": "literal", "is_null": true}),
    );
    assert_eq!(check(p), vec![]);
}

#[test]
fn n1_numeric_column_compared_with_text() {
    let mut p = base();
    p["where"] = bin("=", col("m", "factory_id"), lit(json!("three")));
    let f = check(p);
    assert_eq!(codes(&f), vec![ErrorCode::InvalidNumericValue]);
    let mut p = base();
    p["where"] = bin("=", col("m", "factory_id"), lit(json!(" 3 ")));
    assert_eq!(check(p), vec![]);
}

#[test]
fn d1_date_column_compared_with_non_iso_text() {
    let mut p = base();
    p["where"] = bin(">=", col("f", "opened_on"), lit(json!("01/04/2024")));
    assert_eq!(codes(&check(p)), vec![ErrorCode::InvalidDateFormat]);
    let mut p = base();
    p["where"] = bin(">=", col("f", "opened_on"), lit(json!("2023-02-29")));
    assert_eq!(codes(&check(p)), vec![ErrorCode::InvalidDateFormat]);
    let mut p = base();
    p["where"] = bin(">=", col("f", "opened_on"), lit(json!(2024)));
    assert_eq!(codes(&check(p)), vec![ErrorCode::InvalidDateFormat]);
}

#[test]
fn iso_datetime_parser_accepts_iso_forms_only() {
    for ok in [
        "2024-04-01",
        "2024-02-29",
        "2024-04-01T08:00",
        "2024-04-01 08:00:00.123",
        "2024-04-01T08:00:00Z",
        "2024-04-01T08:00:00+02:00",
    ] {
        assert!(exprs::is_iso_datetime(ok), "{ok}");
    }
    for bad in [
        "2024-4-1",
        "2023-02-29",
        "2024-13-01",
        "2024-04-01T25:00",
        "2024-04-01X",
        "yesterday",
        "2024-04-01T08:00+2",
        "2024-04-0\u{e9}T08:00",
        "\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}",
    ] {
        assert!(!exprs::is_iso_datetime(bad), "{bad}");
    }
}

#[test]
fn o1_limit_offset_and_empty_select() {
    let mut p = base();
    p["limit"] = json!(0);
    p["offset"] = json!(-1);
    p["select_items"] = json!([]);
    let f = check(p);
    let msgs: Vec<&str> = f.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(
        msgs,
        vec![
            "Limit must be at least 1, got 0.",
            "Offset must not be negative, got -1.",
            "Plan selects nothing; add select items."
        ]
    );
}

#[test]
fn k1_case_when_ordinals() {
    let mut p = base();
    p["select_items"][0]["expr"] = json!({"kind": "case", "whens": [
        {"ordinal": 1, "condition": bin("=", col("m", "line"), lit(json!("a"))), "result": lit(json!(1))}]});
    let f = check(p);
    assert_eq!(f.len(), 1);
    assert!(f[0].2.starts_with("Ordinals of 'whens'"), "{}", f[0].2);
}

#[test]
fn j6_every_table_enters_through_one_join() {
    let mut p = base();
    p["joins"] = json!([]);
    let f = check(p);
    assert_eq!(
        f,
        vec![(
            ErrorCode::InvalidPlanStructure,
            Severity::Error,
            "Table 'f' (factories) must be the right side of exactly one join; it is of 0.".into()
        )]
    );
}

fn policy(tables: &[&str], denied: &[&str]) -> AccessPolicy {
    PolicyFile::from_json_str(
        &json!({"version": 1, "roles": {"analyst": {"description": "d", "role": "analyst",
            "allowed_datasources": ["manufacturing"], "allowed_tables": tables, "denied_columns": denied}}})
        .to_string(),
    )
    .unwrap()
    .access_for(&["analyst".to_owned()])
}

#[test]
fn p_missing_datasource_fails_closed() {
    let f = check_with(base(), |mut c| {
        c.datasource_id = None;
        c
    });
    assert_eq!(
        f,
        vec![(
            ErrorCode::SecurityViolation,
            Severity::Critical,
            "Security Enforcement Failed: No sub_query datasource_id in state.".into()
        )]
    );
}

#[test]
fn p_table_outside_allowed_tables_is_denied() {
    let f = check_with(base(), |c| {
        c.with_policy(policy(&["manufacturing.machines"], &[]))
    });
    assert_eq!(f, vec![(ErrorCode::SecurityViolation, Severity::Critical,
        "Role 'analyst' denied access to 'manufacturing.factories'. Policy requires explicit 'datasource.table' allow.".into())]);
    assert!(check_with(base(), |c| c.with_policy(policy(&["manufacturing.*"], &[]))).is_empty());
}

#[test]
fn p_denied_column_directly_or_through_star() {
    let pol = || policy(&["manufacturing.*"], &["manufacturing.machines.line"]);
    let mut p = base();
    p["select_items"][0]["expr"] = col("m", "line");
    let f = check_with(p, |c| c.with_policy(pol()));
    assert_eq!(codes(&f), vec![ErrorCode::SecurityViolation]);
    assert!(f[0].2.contains("machines.line"));
    let mut p = base();
    p["select_items"][0]["expr"] = col("m", "*");
    assert_eq!(
        codes(&check_with(p, |c| c.with_policy(pol()))),
        vec![ErrorCode::SecurityViolation]
    );
}

#[test]
fn findings_follow_the_spec_order() {
    let mut p = base();
    p["tables"][1]["ordinal"] = json!(3); // S3
    p["tables"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "nope", "alias": "n", "ordinal": 2})); // T, J6
    p["select_items"][0]["expr"] = col("m", "nmae"); // C
    p["where"] = bin("=", col("m", "factory_id"), lit(json!("x"))); // N1
    let f = check_with(p, |c| {
        c.with_policy(policy(&["manufacturing.machines"], &[]))
    });
    assert_eq!(
        codes(&f),
        vec![
            ErrorCode::InvalidPlanStructure, // S3
            ErrorCode::TableNotFound,        // T
            ErrorCode::ColumnNotFound,       // C
            ErrorCode::InvalidNumericValue,  // N1
            ErrorCode::InvalidPlanStructure, // J6
            ErrorCode::SecurityViolation,    // P factories
            ErrorCode::SecurityViolation,    // P nope
        ]
    );
}

/// `{"kind": "subquery"}` over `table` aliased `alias`, selecting `expr`, with `where`.
fn subquery(table: &str, alias: &str, expr: Value, filter: Option<Value>) -> Value {
    let mut q = json!({
        "tables": [{"name": table, "alias": alias, "ordinal": 0}],
        "select_items": [{"ordinal": 0, "expr": expr}]
    });
    if let Some(w) = filter {
        q["where"] = w;
    }
    json!({"kind": "subquery", "query": q})
}

fn max_of(alias: &str, column: &str) -> Value {
    json!({"kind": "func", "func_name": "MAX", "args": [col(alias, column)]})
}

#[test]
fn subquery_plan_is_valid_in_a_comparison_and_in_in() {
    let mut p = base();
    p["where"] = bin(
        "AND",
        bin(
            "=",
            col("m", "id"),
            subquery("machines", "x", max_of("x", "id"), None),
        ),
        bin(
            "IN",
            col("f", "id"),
            subquery(
                "factories",
                "g",
                col("g", "id"),
                Some(bin("=", col("g", "location"), lit(json!("Austin")))),
            ),
        ),
    );
    assert_eq!(check(p), vec![]);
}

#[test]
fn subquery_findings_carry_the_path_inside_the_subquery() {
    let mut p = base();
    p["where"] = bin(
        ">",
        col("m", "id"),
        subquery("machines", "x", max_of("x", "nmae"), None),
    );
    let contract = contract();
    let plan = parse_plan(&p.to_string()).unwrap();
    let report = validate_plan(
        Some(&plan),
        &LogicalContext::new("manufacturing", &contract),
    );
    let found: Vec<ErrorCode> = report.findings.iter().map(|f| f.code).collect();
    assert_eq!(found, vec![ErrorCode::ColumnNotFound]);
    assert_eq!(
        report.findings[0].details.as_deref().unwrap()["path"],
        json!("$.where.right.query.select_items[0].expr.args[0]")
    );
}

#[test]
fn subquery_is_uncorrelated_an_outer_alias_inside_is_unknown() {
    let mut p = base();
    p["where"] = bin(
        ">",
        col("m", "id"),
        subquery(
            "machines",
            "x",
            max_of("x", "id"),
            Some(bin("=", col("x", "factory_id"), col("f", "id"))),
        ),
    );
    let f = check(p);
    assert!(
        !f.is_empty(),
        "an outer alias inside a sub-query must not resolve"
    );
    assert!(
        f.iter()
            .any(|(_, s, m)| *s == Severity::Error && m.contains("'f'")),
        "{f:?}"
    );
}

#[test]
fn p_policy_reaches_tables_and_columns_inside_a_subquery() {
    let mut p = base();
    p["where"] = bin(
        ">",
        col("m", "id"),
        subquery("production_runs", "r", max_of("r", "machine_id"), None),
    );
    let allowed = || policy(&["manufacturing.machines", "manufacturing.factories"], &[]);
    let f = check_with(p.clone(), |c| c.with_policy(allowed()));
    assert_eq!(codes(&f), vec![ErrorCode::SecurityViolation], "{f:?}");
    assert!(f[0].2.contains("manufacturing.production_runs"), "{f:?}");
    assert!(check_with(p, |c| c.with_policy(policy(&["manufacturing.*"], &[]))).is_empty());
    let mut p = base();
    p["where"] = bin(
        "IN",
        col("m", "line"),
        subquery("machines", "x", col("x", "line"), None),
    );
    let denied = || policy(&["manufacturing.*"], &["manufacturing.machines.line"]);
    let f = check_with(p, |c| c.with_policy(denied()));
    // The outer `m.line` and the inner `x.line` are both denied.
    assert_eq!(
        codes(&f),
        vec![ErrorCode::SecurityViolation, ErrorCode::SecurityViolation],
        "{f:?}"
    );
}

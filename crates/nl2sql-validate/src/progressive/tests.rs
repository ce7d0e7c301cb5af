//! Tests of progressive validation: one snapshot per fixture document (valid and invalid),
//! plus checks of levels, node names, keys, paths and hints.

use std::collections::BTreeSet;
use std::path::Path;

use nl2sql_plan::DatasourceResolution;
use nl2sql_state::{ErrorCode, Severity};

use super::*;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/progressive/fixtures")
        .join(name);
    std::fs::read_to_string(&path).expect("fixture exists")
}

fn check(name: &str) -> DecompositionReport {
    validate_decomposition(&fixture(name), &DatasourceResolution::permissive())
}

/// (level, node_id, key, path) of a finding.
type Row<'a> = (u8, Option<&'a str>, Option<&'a str>, Option<&'a str>);

/// The rows of every finding.
fn summary(report: &DecompositionReport) -> Vec<Row<'_>> {
    report
        .findings
        .iter()
        .map(|f| {
            (
                u8::from(report.level),
                f.node_id.as_deref(),
                f.key.as_deref(),
                f.path.as_deref(),
            )
        })
        .collect()
}

#[test]
fn corpus_reports_match_snapshots() {
    insta::glob!("fixtures/*.json", |path| {
        let text = std::fs::read_to_string(path).expect("fixture");
        let report = validate_decomposition(&text, &DatasourceResolution::permissive());
        let rendering = serde_json::json!({
            "report": report.to_json(),
            "dag": report.dag.as_ref().map(|d| d.to_text()),
        });
        insta::assert_yaml_snapshot!(rendering);
    });
}

#[test]
fn valid_documents_pass_all_levels_and_carry_a_dag() {
    for name in ["valid_join.json", "valid_compare_chain.json"] {
        let report = check(name);
        assert!(report.is_ok(), "{name}: {:?}", report.findings);
        assert_eq!(report.level, ValidationLevel::DataFlow);
        assert_eq!(report.feedback(), None);
        let dag = report.dag.as_ref().expect("dag");
        assert_eq!(report.to_json()["dag_id"], serde_json::json!(dag.dag_id));
    }
}

#[test]
fn malformed_json_stops_at_level_one_with_the_schema_hint() {
    let report = check("syntax_not_json.json");
    assert_eq!(report.level, ValidationLevel::Syntactic);
    assert_eq!(report.findings.len(), 1);
    let f = &report.findings[0];
    assert_eq!(f.code, ErrorCode::InvalidPlanStructure);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.hint, SYNTACTIC_HINT);
    assert!(report.dag.is_none());
}

#[test]
fn unknown_key_stops_at_level_one_with_its_path() {
    let report = check("syntax_unknown_key.json");
    assert_eq!(
        summary(&report),
        vec![(1, None, None, Some("$.sub_queries[0].sql"))]
    );
    assert!(report.findings[0].message.contains("unknown field `sql`"));
}

#[test]
fn dangling_references_are_static_findings_naming_the_missing_ids() {
    let report = check("static_dangling_references.json");
    assert_eq!(
        summary(&report),
        vec![
            (
                2,
                Some("combine_g1"),
                Some("b"),
                Some("$.combine_groups[0].inputs[1].subquery_id")
            ),
            (
                2,
                Some("x"),
                Some("g9"),
                Some("$.post_combine_ops[0].target_group_id")
            ),
        ]
    );
    assert_eq!(
        report.findings[0].hint,
        "Every combine group input must be the id of a sub-query you listed."
    );
}

#[test]
fn roles_arity_ids_filters_and_op_parameters_are_static_findings() {
    let report = check("static_roles_and_parameters.json");
    assert_eq!(report.level, ValidationLevel::Static);
    let keys: BTreeSet<(Option<&str>, Option<&str>)> = report
        .findings
        .iter()
        .map(|f| (f.node_id.as_deref(), f.key.as_deref()))
        .collect();
    let want: BTreeSet<(Option<&str>, Option<&str>)> = [
        (Some("b"), Some("b")),                  // duplicate sub-query id
        (Some("b"), Some("datasource_id")),      // blank datasource
        (Some("b"), Some("expected_schema")),    // empty expected schema
        (Some("a"), Some("region")),             // duplicate column
        (Some("b"), Some("tier")),               // between with three values
        (Some("combine_g1"), Some("inputs")),    // join input without role
        (Some("combine_g1"), Some("join_keys")), // join without keys
        (Some("combine_g2"), Some("inputs")),    // standalone with two inputs
        (Some("x"), Some("limit")),              // negative limit
        (Some("y"), Some("expected_schema")),    // project without columns
    ]
    .into_iter()
    .collect();
    assert_eq!(keys, want);
}

#[test]
fn sql_in_semantic_fields_is_reported_per_element_and_english_passes() {
    let report = check("static_sql_in_semantic_fields.json");
    let paths: Vec<Option<&str>> = report.findings.iter().map(|f| f.path.as_deref()).collect();
    assert_eq!(
        paths,
        vec![
            Some("$.sub_queries[0].intent"),
            Some("$.sub_queries[0].metrics[0].name"),
            Some("$.post_combine_ops[0].order_by[0].attribute"),
        ]
    );
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.hint == static_checks_hint())
    );
}

fn static_checks_hint() -> &'static str {
    "Describe what to fetch in plain words and use attribute names, never SQL."
}

#[test]
fn sort_by_a_missing_column_is_a_data_flow_finding_with_model_id_and_path() {
    let report = check("flow_sort_by_missing_column.json");
    assert_eq!(report.level, ValidationLevel::DataFlow);
    assert_eq!(report.status, DecompositionStatus::Rewrite);
    assert!(report.dag.is_none());
    let f = &report.findings[0];
    assert!(f.node_id.as_deref().is_some_and(|n| n.starts_with("op_")));
    assert_eq!(f.key.as_deref(), Some("revenue"));
    assert_eq!(f.path.as_deref(), Some("$.post_combine_ops[0].order_by"));
    assert!(
        f.message.contains(
            "sorts by 'revenue' but its input provides [region, total_revenue] (your id 's')"
        ),
        "{}",
        f.message
    );
    let g = &report.findings[1];
    assert_eq!(g.key.as_deref(), Some("country"));
    assert_eq!(
        g.path.as_deref(),
        Some("$.post_combine_ops[1].expected_schema")
    );
}

#[test]
fn join_key_and_union_breaks_name_the_combine_nodes() {
    let report = check("flow_join_key_and_union_mismatch.json");
    let found: Vec<(Option<&str>, Option<&str>)> = report
        .findings
        .iter()
        .map(|f| (f.node_id.as_deref(), f.key.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![
            (Some("combine_everyone"), Some("country")),
            (Some("combine_everyone"), Some("state")),
            (Some("combine_everyone"), Some("customer")),
            (Some("combine_with_orders"), Some("customer")),
        ]
    );
}

#[test]
fn feedback_lists_each_finding_with_path_and_hint() {
    let report = check("static_dangling_references.json");
    let feedback = report.feedback().expect("feedback");
    assert!(feedback.starts_with("Decomposition validation failed at level 2 (static):"));
    assert!(feedback.contains(
        "- combine group 'g1' uses the unknown sub-query 'b' at $.combine_groups[0].inputs[1].subquery_id. Hint: Every combine group input"
    ));
}

#[test]
fn restricted_datasource_drops_the_join_with_a_warning_and_keeps_the_rest() {
    let resolution = DatasourceResolution {
        allowed: Some(BTreeSet::from(["sales".to_owned()])),
        ..DatasourceResolution::default()
    };
    let report = validate_decomposition(&fixture("valid_compare_chain.json"), &resolution);
    assert!(report.is_ok(), "{:?}", report.findings);
    assert_eq!(report.warnings.len(), 4, "{:?}", report.warnings);
    assert_eq!(
        report.to_json()["warnings"].as_array().map(Vec::len),
        Some(4)
    );
    let dag = report.dag.expect("dag");
    assert_eq!(dag.nodes.len(), 1);
}

#[test]
fn finding_converts_to_a_pipeline_error_with_details() {
    let report = check("static_dangling_references.json");
    let e = report.findings[0].to_pipeline_error();
    assert_eq!(e.code, ErrorCode::InvalidPlanStructure);
    assert_eq!(e.node, "decomposer");
    assert!(e.is_retryable());
    let details = e.details.expect("details");
    assert_eq!(details["node_id"], "combine_g1");
    assert_eq!(details["key"], "b");
}

//! `nl2sql plan-dag`: exit 0 = DAG printed, 1 = findings (JSON envelope with
//! `--format json`), 2 = usage or input error.

use std::io::Write as _;
use std::process::{Output, Stdio};

use crate::support::{assert_succeeded, json, nl2sql, repo, stdout};

fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = nl2sql()
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    {
        let mut pipe = child.stdin.take().expect("stdin");
        if let Some(input) = stdin {
            pipe.write_all(input).expect("write stdin");
        }
    }
    child.wait_with_output().expect("binary exits")
}

const VALID: &str = "crates/nl2sql-validate/src/progressive/fixtures/valid_join.json";
const FLOW_BREAK: &str =
    "crates/nl2sql-validate/src/progressive/fixtures/flow_sort_by_missing_column.json";

const DANGLING: &str = r#"{
  "sub_queries": [{"id": "a", "datasource_id": "sales", "intent": "revenue per region",
                   "expected_schema": [{"name": "region", "dtype": "string"}]}],
  "combine_groups": [{"group_id": "g1", "operation": "standalone",
                      "inputs": [{"subquery_id": "nope"}]}]
}"#;

#[test]
fn valid_file_prints_the_dag_json_and_exits_zero() {
    let out = run(&["plan-dag", VALID], None);
    assert_succeeded(&out);
    let v = json(&out);
    let dag_id = v["dag_id"].as_str().expect("dag_id");
    let hash = v["content_hash"].as_str().expect("content_hash");
    assert_eq!(dag_id, format!("dag_{}", &hash[..12]));
    assert_eq!(v["version"], "v1");
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["edges"].as_array().map(Vec::len), Some(3));
    assert_eq!(v["layers"][1], serde_json::json!(["combine_g1"]));
    assert_eq!(
        v["nodes"][0]["output_schema"]["columns"][2]["name"],
        "units_on_hand"
    );
}

#[test]
fn standard_input_gives_the_same_bytes_as_the_file() {
    let from_file = run(&["plan-dag", VALID], None);
    let text = std::fs::read(repo().join(VALID)).expect("fixture");
    let from_dash = run(&["plan-dag", "-"], Some(&text));
    let from_default = run(&["plan-dag"], Some(&text));
    assert_eq!(from_dash.status.code(), Some(0));
    assert_eq!(stdout(&from_dash), stdout(&from_file));
    assert_eq!(stdout(&from_default), stdout(&from_file));
}

#[test]
fn dot_format_prints_a_digraph_with_roles() {
    let out = run(&["plan-dag", "--format", "dot", VALID], None);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("digraph execution_dag {\n"), "{text}");
    assert!(text.contains("\"combine_g1\" [label=\"combine_g1\\ncombine\\njoin\"];"));
    assert!(
        text.contains("-> \"combine_g1\" [label=\"left\"];"),
        "{text}"
    );
    assert!(text.trim_end().ends_with('}'));
}

#[test]
fn mermaid_format_prints_a_flowchart() {
    let out = run(&["plan-dag", "--format", "mermaid", VALID], None);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("flowchart TD\n"), "{text}");
    assert!(
        text.contains("n0[\"combine_g1<br/>combine<br/>join\"]"),
        "{text}"
    );
    assert!(text.contains("-->|right| n0"), "{text}");
}

#[test]
fn dangling_reference_exits_one_with_findings_in_the_json_envelope() {
    let out = run(
        &["plan-dag", "--format", "json", "-"],
        Some(DANGLING.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["status"], "rewrite");
    assert_eq!(v["level"], 2);
    assert_eq!(v["dag_id"], serde_json::Value::Null);
    let issue = &v["issues"][0];
    assert_eq!(issue["code"], "INVALID_PLAN_STRUCTURE");
    assert_eq!(issue["severity"], "ERROR");
    assert_eq!(issue["node_id"], "combine_g1");
    assert_eq!(issue["key"], "nope");
    assert_eq!(issue["path"], "$.combine_groups[0].inputs[0].subquery_id");
    assert!(issue["hint"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(
        v["feedback"]
            .as_str()
            .is_some_and(|f| f.contains("unknown sub-query 'nope'"))
    );
}

#[test]
fn data_flow_break_exits_one_at_level_three() {
    let out = run(&["plan-dag", FLOW_BREAK], None);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["level"], 3);
    assert_eq!(v["issues"][0]["key"], "revenue");
}

#[test]
fn malformed_json_exits_one_at_level_one() {
    let out = run(&["plan-dag", "-"], Some(b"{\"sub_queries\": ["));
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["level"], 1);
    assert_eq!(v["issues"][0]["code"], "INVALID_PLAN_STRUCTURE");
}

#[test]
fn findings_with_dot_format_go_to_stderr_and_exit_one() {
    let out = run(
        &["plan-dag", "--format", "dot", "-"],
        Some(DANGLING.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Decomposition validation failed at level 2"),
        "{err}"
    );
}

#[test]
fn missing_file_exits_two() {
    let out = run(&["plan-dag", "does/not/exist.json"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read decomposition file"));
}

#[test]
fn unknown_format_exits_two() {
    let out = run(&["plan-dag", "--format", "png", VALID], None);
    assert_eq!(out.status.code(), Some(2));
}

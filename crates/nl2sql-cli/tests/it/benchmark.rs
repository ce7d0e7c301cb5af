//! `nl2sql benchmark` through the real binary, over the demo (created on first use in a
//! temporary data directory): the shipped golden dataset's exact scores, execution and
//! routing accuracy as exact ratios over a dataset built here, `--include-ids`, the JSON
//! and CSV exports, dataset errors (exit 2), and the `run` / `--no-exec` aliases of
//! `ask` / `--no-execute`.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{json, nl2sql, repo, stderr, temp_dir};

/// Runs `nl2sql ARGS --data-dir DIR/data` from the repository root.
fn run_with_data_in(dir: &Path, args: &[&str]) -> Output {
    nl2sql()
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .current_dir(repo())
        .output()
        .unwrap()
}

/// The case ids of a planner's results, in order.
fn case_ids(planner: &Value) -> Vec<String> {
    planner["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["case_id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_demo_golden_dataset_scores_every_case() {
    let dir = temp_dir("golden");
    let dataset = repo().join("examples/benchmark/demo_golden.json");
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&dataset).unwrap()).unwrap();
    assert!((10..=15).contains(&cases.len()), "{}", cases.len());
    let with_sql = cases
        .iter()
        .filter(|c| c["expected_sql"].is_string())
        .count() as u64;
    let n = cases.len() as u64;

    let out = run_with_data_in(
        &dir,
        &[
            "benchmark",
            "--dataset",
            "examples/benchmark/demo_golden.json",
            "--iterations",
            "1",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["cases"], n);
    assert_eq!(v["iterations"], 1);
    let planners = v["planners"].as_array().unwrap();
    assert_eq!(planners.len(), 1);
    let p = &planners[0];
    assert_eq!(p["planner"], "offline");
    let m = &p["metrics"];
    assert_eq!(m["runs"], n);
    assert_eq!(
        m["routing_accuracy"],
        json!({"correct": n, "total": n, "rate": 1.0})
    );
    assert_eq!(
        m["execution_accuracy"],
        json!({"correct": with_sql, "total": with_sql, "rate": 1.0}),
        "{}",
        serde_json::to_string_pretty(&p["results"]).unwrap()
    );
    assert_eq!(
        m["valid_sql_rate"],
        json!({"correct": n, "total": n, "rate": 1.0})
    );
    assert_eq!(m["routing_layers"], json!({"retrieval": n}));
    assert_eq!(m["semantic_sql_accuracy"]["total"], with_sql);
    let sem = m["semantic_sql_accuracy"]["correct"].as_u64().unwrap();
    assert_eq!(sem, GOLDEN_SEMANTIC_MATCHES, "{}", p["results"]);
    let p50 = m["latency_ms"]["p50"].as_f64().unwrap();
    let p95 = m["latency_ms"]["p95"].as_f64().unwrap();
    assert!(p50 > 0.0 && p95 >= p50, "{p50} {p95}");
    // Every case once, in dataset order, each naming its trace and SQL.
    let ids: Vec<String> = cases
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(case_ids(p), ids);
    for r in p["results"].as_array().unwrap() {
        assert_eq!(r["trace_id"].as_str().unwrap().len(), 36, "{r}");
        assert!(!r["sql"].as_array().unwrap().is_empty(), "{r}");
        // The datasources used are among the resolver's candidates (from the run log).
        let resolved = r["resolved_datasources"].as_array().unwrap();
        assert!(!resolved.is_empty(), "{r}");
        for used in r["used_datasources"].as_array().unwrap() {
            assert!(resolved.contains(used), "{r}");
        }
    }
}

/// How many demo golden cases the offline planner's SQL matches exactly (normalised).
const GOLDEN_SEMANTIC_MATCHES: u64 = 4;

/// Four cases over the demo: `ok` and `ok2` match, `bad_sql` expects a different result
/// (a wrong filter), `wrong_route` names a datasource that cannot answer it.
const BUILT: &str = r#"{"id": "ok", "question": "How many machines do we have in total?", "datasource": ["operations"], "difficulty": "easy", "expected_routing_layer": "retrieval", "expected_sql": "SELECT COUNT(*) AS Machine_Count FROM machines"}
{"id": "bad_sql", "question": "How many purchase orders are still open?", "datasource": "supply", "expected_sql": "SELECT COUNT(*) AS purchase_order_count FROM purchase_orders WHERE status = 'Closed'"}
{"id": "ok2", "question": "How many customers are there in each segment?", "datasource": ["sales"], "expected_sql": "SELECT COUNT(*) AS CUSTOMER_COUNT, segment FROM customers GROUP BY segment ORDER BY segment DESC"}

{"id": "wrong_route", "question": "How many orders were cancelled?", "datasource": ["operations"]}
"#;

#[test]
fn execution_and_routing_accuracy_are_exact_ratios_and_exported() {
    let dir = temp_dir("built");
    let dataset = dir.join("golden.jsonl");
    std::fs::write(&dataset, BUILT).unwrap();
    let csv = dir.join("out.csv");
    let out = run_with_data_in(
        &dir,
        &[
            "benchmark",
            "--dataset",
            dataset.to_str().unwrap(),
            "--iterations",
            "2",
            "--format",
            "json",
            "--export-path",
            csv.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let p = &v["planners"][0];
    let m = &p["metrics"];
    assert_eq!(m["runs"], 8);
    // 2 of the 3 cases with expected SQL match, in both iterations: exactly 4/6.
    assert_eq!(
        m["execution_accuracy"],
        json!({"correct": 4, "total": 6, "rate": 4.0 / 6.0})
    );
    // 3 of 4 cases are routed where the dataset says.
    assert_eq!(
        m["routing_accuracy"],
        json!({"correct": 6, "total": 8, "rate": 0.75})
    );
    assert_eq!(
        case_ids(p),
        [
            "ok",
            "ok",
            "bad_sql",
            "bad_sql",
            "ok2",
            "ok2",
            "wrong_route",
            "wrong_route"
        ]
    );
    let results = p["results"].as_array().unwrap();
    let bad = &results[2];
    assert_eq!(bad["execution_correct"], false);
    assert_eq!(bad["routing_correct"], true);
    assert!(
        bad["execution_detail"]
            .as_str()
            .unwrap()
            .contains("is not in the expected result"),
        "{bad}"
    );
    let wrong = &results[6];
    assert_eq!(wrong["routing_correct"], false);
    assert_eq!(wrong["used_datasources"], json!(["sales"]));
    assert_eq!(wrong["expected_datasources"], json!(["operations"]));
    // No expected SQL: not scored for execution or SQL, still for validity.
    assert_eq!(wrong["execution_correct"], Value::Null);
    assert_eq!(wrong["semantic_correct"], Value::Null);
    assert_eq!(wrong["valid_sql"], true);
    assert_eq!(results[0]["difficulty"], "easy");
    assert_eq!(results[0]["expected_routing_layer"], "retrieval");
    assert_eq!(results[0]["iteration"], 1);
    assert_eq!(results[1]["iteration"], 2);

    // The CSV export: a header and one row per run, in the same order.
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = text
        .split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').collect())
        .collect();
    let header = &rows[0];
    assert_eq!(header[..3], ["planner", "case_id", "iteration"]);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(rows.len(), 9, "{text}");
    let (case, routing, exec) = (
        col("case_id"),
        col("routing_correct"),
        col("execution_correct"),
    );
    let summary: Vec<(&str, &str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[case], r[routing], r[exec]))
        .collect();
    assert_eq!(
        summary,
        [
            ("ok", "true", "true"),
            ("ok", "true", "true"),
            ("bad_sql", "true", "false"),
            ("bad_sql", "true", "false"),
            ("ok2", "true", "true"),
            ("ok2", "true", "true"),
            ("wrong_route", "false", ""),
            ("wrong_route", "false", ""),
        ]
    );
    assert_eq!(rows[7][col("used_datasources")], "sales");

    // --include-ids runs only those cases; the JSON export is the printed report.
    let exported = dir.join("out.json");
    let out = run_with_data_in(
        &dir,
        &[
            "benchmark",
            "--dataset",
            dataset.to_str().unwrap(),
            "--iterations",
            "1",
            "--include-ids",
            "wrong_route",
            "--include-ids",
            "ok",
            "--export-path",
            exported.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        table.contains("routing accuracy:      0.5000 (1/2)"),
        "{table}"
    );
    assert!(
        table.contains("execution accuracy:    1.0000 (1/1)"),
        "{table}"
    );
    assert!(
        table.contains("used [sales], expected [operations]"),
        "{table}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(v["cases"], 2);
    // Dataset order, not the order of the flags.
    assert_eq!(case_ids(&v["planners"][0]), ["ok", "wrong_route"]);

    // --routing-only: routing and layers only.
    let out = run_with_data_in(
        &dir,
        &[
            "benchmark",
            "--dataset",
            dataset.to_str().unwrap(),
            "--iterations",
            "1",
            "--routing-only",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let m = &v["planners"][0]["metrics"];
    assert_eq!(v["routing_only"], true);
    assert_eq!(
        m["routing_accuracy"],
        json!({"correct": 3, "total": 4, "rate": 0.75})
    );
    assert_eq!(m["execution_accuracy"], Value::Null);
    assert_eq!(m["valid_sql_rate"], Value::Null);
    assert_eq!(m["routing_layers"], json!({"retrieval": 4}));

    // A case naming a datasource the configuration lacks is a dataset error.
    let unknown = dir.join("unknown.json");
    std::fs::write(
        &unknown,
        "[\n  {\"id\": \"x\", \"question\": \"How many machines?\", \"datasource\": [\"warehouse\"]}\n]\n",
    )
    .unwrap();
    let out = run_with_data_in(&dir, &["benchmark", "--dataset", unknown.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("line 2 (case 'x'): field 'datasource' names 'warehouse'"),
        "{err}"
    );
}

#[test]
fn malformed_datasets_and_bad_options_exit_2_naming_the_problem() {
    let dir = temp_dir("malformed");
    let cases = [
        (
            "missing.jsonl",
            "{\"id\": \"a\", \"question\": \"How many machines?\", \"datasource\": [\"operations\"]}\n{\"id\": \"b\", \"datasource\": [\"operations\"]}\n",
            "line 2: case 'b': field 'question' is missing",
        ),
        (
            "broken.jsonl",
            "{\"id\": \"a\", \"question\": \"How many machines?\", \"datasource\": [\"operations\"]}\n{\"id\": \"b\",\n",
            "line 2: not a JSON object",
        ),
        (
            "types.json",
            "[\n {\"id\": \"a\", \"question\": \"q\", \"datasource\": [\"operations\"]},\n {\"id\": \"b\", \"question\": \"q\", \"datasource\": [\"operations\"], \"expected_sql\": 42}\n]\n",
            "line 3: case 'b': field 'expected_sql' must be a non-empty string",
        ),
        ("empty.json", "[]", "it has no cases"),
    ];
    for (name, text, message) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = run_with_data_in(&dir, &["benchmark", "--dataset", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("invalid dataset '{}': {message}", path.display())),
            "{name}: {err}"
        );
        assert!(out.stdout.is_empty(), "{name}");
    }
    let good = dir.join("missing.jsonl");
    let good = good.to_str().unwrap();
    std::fs::write(
        good,
        "{\"id\": \"a\", \"question\": \"How many machines?\", \"datasource\": [\"operations\"]}\n",
    )
    .unwrap();
    for (args, message) in [
        (
            vec!["--include-ids", "zzz"],
            "--include-ids: the dataset has no case with id 'zzz'",
        ),
        (
            vec!["--export-path", "out.txt"],
            "--export-path 'out.txt': the file name must end in .json or .csv",
        ),
        (
            vec!["--planner", "llm"],
            "--planner llm needs --llm-config FILE",
        ),
        (vec!["--iterations", "0"], "--iterations"),
    ] {
        let mut all = vec!["benchmark", "--dataset", good];
        all.extend(args);
        let out = run_with_data_in(&dir, &all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(stderr(&out).contains(message), "{all:?}: {}", stderr(&out));
    }
    // Nothing was created: the dataset and options are checked before the demo.
    assert!(!dir.join("data").exists());
}

/// A run's JSON without what differs between two runs of the same question: the trace
/// id, timings, and the artifact's location and time.
fn stable(mut v: Value) -> Value {
    let obj = v.as_object_mut().unwrap();
    obj.remove("trace_id");
    obj.remove("timings");
    for sq in obj["subqueries"].as_array_mut().unwrap() {
        if let Some(artifact) = sq["artifact"].as_object_mut() {
            artifact.remove("uri");
            artifact.remove("created_at");
        }
    }
    v
}

#[test]
fn run_is_ask_and_no_exec_is_no_execute() {
    let dir = temp_dir("alias");
    let q = "How many machines do we have in total?";
    let ask = run_with_data_in(&dir, &["ask", "--format", "json", q]);
    assert_eq!(ask.status.code(), Some(0), "{}", stderr(&ask));
    let run = run_with_data_in(&dir, &["run", "--format", "json", q]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let (ask, run) = (json(&ask), json(&run));
    assert_eq!(ask["rows"], json!([[149]]));
    assert_eq!(stable(ask), stable(run));

    let long = run_with_data_in(&dir, &["ask", "--no-execute", "--format", "json", q]);
    let short = run_with_data_in(&dir, &["run", "--no-exec", "--format", "json", q]);
    assert_eq!(long.status.code(), Some(0), "{}", stderr(&long));
    assert_eq!(short.status.code(), Some(0), "{}", stderr(&short));
    let (long, short) = (json(&long), json(&short));
    // Planned and rendered, not run.
    assert!(long["rows"].is_null(), "{long}");
    assert!(
        long["subqueries"][0]["sql"]
            .as_str()
            .unwrap()
            .contains("machines"),
        "{long}"
    );
    assert_eq!(stable(long), stable(short));

    // Both spellings are in the help.
    let help = nl2sql().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(
        help.contains("ask") && help.contains("[alias: run]"),
        "{help}"
    );
    assert!(help.contains("benchmark"), "{help}");
    let help = nl2sql().args(["ask", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(help.contains("[alias: --no-exec]"), "{help}");
}

#[test]
fn a_benchmark_matrix_runs_one_configuration_per_entry() {
    let dir = temp_dir("matrix");
    std::fs::write(
        dir.join("golden.json"),
        r#"[{"id": "count", "question": "How many machines do we have in total?", "datasource": ["operations"]}]"#,
    )
    .unwrap();
    // Two LLM configurations whose server is not there: each is benchmarked (and fails).
    std::fs::write(
        dir.join("matrix.toml"),
        "[fast]\ndefault = { model = \"a\", base_url = \"http://127.0.0.1:9/v1\", api_key_env = \"\", max_retries = 0 }\n\n[slow]\ndefault = { model = \"b\", base_url = \"http://127.0.0.1:9/v1\", api_key_env = \"\", max_retries = 0 }\n",
    )
    .unwrap();
    let dataset = dir.join("golden.json");
    let dataset = dataset.to_str().unwrap();
    let run = |extra: &[&str], matrix: &str| {
        let mut args = vec![
            "benchmark",
            "--dataset",
            dataset,
            "--iterations",
            "1",
            "--routing-only",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        nl2sql()
            .args(&args)
            .arg("--data-dir")
            .arg(dir.join("data"))
            .current_dir(repo())
            .env_remove("LLM_CONFIG")
            .env("BENCHMARK_CONFIG", matrix)
            .env("SQL_AGENT_MAX_RETRIES", "0")
            .output()
            .unwrap()
    };
    let matrix = dir.join("matrix.toml");
    let out = run(&[], matrix.to_str().unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let planners: Vec<&str> = report["planners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["planner"].as_str().unwrap())
        .collect();
    assert_eq!(planners, ["llm:fast", "llm:slow"]);
    for p in report["planners"].as_array().unwrap() {
        assert_eq!(p["metrics"]["runs"], 1, "{p}");
        assert_eq!(p["metrics"]["routing_accuracy"]["correct"], 0, "{p}");
    }
    // With --planner, the matrix comes after the planners asked for.
    let out = run(&["--planner", "offline"], matrix.to_str().unwrap());
    let report = json(&out);
    let planners: Vec<&str> = report["planners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["planner"].as_str().unwrap())
        .collect();
    assert_eq!(planners, ["offline", "llm:fast", "llm:slow"]);
    assert_eq!(
        report["planners"][0]["metrics"]["routing_accuracy"]["correct"],
        1
    );

    // A bad entry is a configuration error naming the variable and the entry.
    std::fs::write(
        dir.join("bad.toml"),
        "[broken]\ndefault = { model = \"a\", turbo = true }\n",
    )
    .unwrap();
    let out = run(&[], dir.join("bad.toml").to_str().unwrap());
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("BENCHMARK_CONFIG") && err.contains("'broken'"),
        "{err}"
    );
}

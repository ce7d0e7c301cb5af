//! `nl2sql ask` end to end through the real binary: the demo (created on first use in a
//! temporary data directory), an ad-hoc `--db`, output formats, a question the planner
//! cannot answer, and a run recorded to a cassette then replayed with identical output.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::{assert_succeeded, json, nl2sql, repo, temp_dir};

fn ask(data_dir: &Path, args: &[&str]) -> Output {
    nl2sql()
        .arg("ask")
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .current_dir(repo())
        .output()
        .expect("binary runs")
}

/// The row count of `table` in the demo datasource `id`, through `datasources describe`:
/// a second path to the same number.
fn described_rows(config: &Path, id: &str, table: &str) -> u64 {
    let out = nl2sql()
        .args([
            "datasources",
            "describe",
            id,
            "--format",
            "json",
            "--config",
        ])
        .arg(config)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let meta = &v["metadata"]["tables"];
    let entry = meta
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.ends_with(&format!(".{table}")))
        .unwrap_or_else(|| panic!("no table {table} in {v}"));
    entry.1["row_count"].as_u64().unwrap()
}

#[test]
fn the_demo_answers_single_and_multi_source_questions() {
    let dir = temp_dir("demo");
    // Single source; the demo is created and indexed on this first call.
    let out = ask(&dir, &["--format", "json", "How many machines are there?"]);
    assert_succeeded(&out);
    let v = json(&out);
    assert_eq!(v["success"], true);
    let machines = described_rows(&dir.join("demo/nl2sql.toml"), "operations", "machines");
    assert_eq!(v["rows"], serde_json::json!([[machines]]));
    assert_eq!(v["subqueries"].as_array().unwrap().len(), 1);
    let sql = v["subqueries"][0]["sql"].as_str().unwrap();
    assert!(
        sql.contains("COUNT(*)") && sql.contains("machines"),
        "{sql}"
    );
    assert!(v["trace_id"].as_str().unwrap().len() == 36);
    assert!(
        v["answer"]["summary"]
            .as_str()
            .unwrap()
            .contains(&machines.to_string())
    );

    // Two datasources, compared on their shared factory code.
    let out = ask(
        &dir,
        &[
            "--format",
            "json",
            "Compare the number of orders per factory in sales with the number of purchase orders per factory in supply",
        ],
    );
    let v = json(&out);
    assert_eq!(v["success"], true, "{v}");
    let subqueries = v["subqueries"].as_array().unwrap();
    let mut sources: Vec<&str> = subqueries
        .iter()
        .map(|s| s["datasource_id"].as_str().unwrap())
        .collect();
    sources.sort_unstable();
    assert_eq!(sources, ["sales", "supply"]);
    assert_eq!(
        v["columns"].as_array().unwrap().len(),
        3,
        "{}",
        v["columns"]
    );
    // The demo has 6 factories, each with orders and purchase orders.
    assert_eq!(v["rows"].as_array().unwrap().len(), 6);

    // The analyst may not read customer emails: the planner is never shown them.
    let out = ask(
        &dir,
        &["--format", "json", "Top 5 customers by number of orders"],
    );
    let v = json(&out);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["rows"].as_array().unwrap().len(), 5);
    assert!(
        !v["subqueries"][0]["sql"]
            .as_str()
            .unwrap()
            .contains("email")
    );

    // A role that may not read sales gets nothing from it.
    let out = ask(
        &dir,
        &[
            "--format",
            "json",
            "--role",
            "supply_viewer",
            "--datasource",
            "sales",
            "How many orders are there?",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["success"], false);
    assert!(!v["errors"].as_array().unwrap().is_empty());

    // Table format: the answer sentence, then the aligned table.
    let out = ask(&dir, &["How many machines are there?"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("There are {machines} machines.")),
        "{text}"
    );
    assert!(text.contains("(1 row)"), "{text}");
}

#[test]
fn an_ad_hoc_database_answers_in_every_format() {
    let dir = temp_dir("adhoc");
    let db = "sqlite://tests/data/fixtures/manufacturing.db";
    let q = "How many machines per factory?";
    let out = ask(&dir, &["--db", db, "--format", "csv", q]);
    assert_succeeded(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "factory,machine_count\r\nPlant Austin,2\r\nPlant Berlin,1\r\n"
    );
    let out = ask(&dir, &["--db", db, "--format", "markdown", q]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "| factory | machine_count |\n|---|---|\n| Plant Austin | 2 |\n| Plant Berlin | 1 |\n"
        ),
        "{text}"
    );
    let out = ask(&dir, &["--db", db, "--explain", q]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sql: SELECT"), "{text}");
    assert!(text.contains("timings (ms):"), "{text}");
}

#[test]
fn an_unanswerable_question_names_the_words_it_could_not_link() {
    let dir = temp_dir("unanswerable");
    let out = ask(
        &dir,
        &[
            "--db",
            "sqlite://tests/data/fixtures/manufacturing.db",
            "--format",
            "json",
            "What is the airspeed velocity of an unladen swallow?",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["success"], false);
    let errors = v["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["code"] == "AMBIGUOUS_QUESTION"
            && e["message"]
                .as_str()
                .unwrap()
                .contains("could not link: 'airspeed'")
            && e["message"]
                .as_str()
                .unwrap()
                .contains("its tables are defects, factories")),
        "{errors:?}"
    );
}

#[test]
fn a_recorded_run_replays_with_identical_output() {
    let dir = temp_dir("replay");
    let cassette = dir.join("run.jsonl");
    let db = "sqlite://tests/data/fixtures/manufacturing.db";
    let q = "Which factory has the most machines?";
    let cassette_arg = cassette.to_str().unwrap();
    let first = json(&ask(
        &dir,
        &["--db", db, "--format", "json", "--record", cassette_arg, q],
    ));
    assert_eq!(first["success"], true, "{first}");
    let lines = std::fs::read_to_string(&cassette).unwrap().lines().count();
    assert!(
        lines >= 3,
        "decompose, plan and answer are recorded: {lines}"
    );
    let second = json(&ask(
        &dir,
        &[
            "--db",
            db,
            "--format",
            "json",
            "--planner",
            "replay",
            "--cassette",
            cassette_arg,
            q,
        ],
    ));
    for key in ["success", "answer", "columns", "rows"] {
        assert_eq!(first[key], second[key], "{key}");
    }
    assert_eq!(
        first["subqueries"][0]["sql"],
        second["subqueries"][0]["sql"]
    );
    // A question the cassette never saw fails clearly instead of calling anything.
    let third = json(&ask(
        &dir,
        &[
            "--db",
            db,
            "--format",
            "json",
            "--planner",
            "replay",
            "--cassette",
            cassette_arg,
            "How many products are there?",
        ],
    ));
    assert_eq!(third["success"], false);
}

/// `nl2sql ARGS` from the repository root.
fn run_from_repo(args: &[&str]) -> Output {
    nl2sql().args(args).current_dir(repo()).output().unwrap()
}

#[test]
fn index_then_show_and_replay_a_run() {
    let dir = temp_dir("runs");
    let data = dir.to_str().unwrap();
    let db = "sqlite://tests/data/fixtures/manufacturing.db";
    let out = run_from_repo(&["index", "--data-dir", data, "--db", db]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("[1/1] manufacturing: schema version "),
        "{text}"
    );
    // Not a terminal: progress is one line per step on standard error.
    let progress = String::from_utf8_lossy(&out.stderr);
    for step in [
        "[1/1] manufacturing: reading the schema and statistics",
        "[1/1] manufacturing: updating the index",
        "[1/1] manufacturing: done (schema version ",
    ] {
        assert!(progress.contains(step), "{step} missing from {progress}");
    }

    let v = json(&ask(
        &dir,
        &[
            "--db",
            db,
            "--format",
            "json",
            "How many factories do we have?",
        ],
    ));
    assert_eq!(v["rows"], serde_json::json!([[3]]));
    let trace = v["trace_id"].as_str().unwrap();
    let out = run_from_repo(&[
        "runs",
        "show",
        trace,
        "--data-dir",
        data,
        "--format",
        "json",
    ]);
    assert_succeeded(&out);
    let entries: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(entries.iter().all(|e| e["trace_id"] == trace));
    let nodes: Vec<&str> = entries
        .iter()
        .map(|e| e["node"].as_str().unwrap())
        .collect();
    for node in ["datasource_resolver", "executor", "aggregator"] {
        assert!(nodes.contains(&node), "{node} missing from {nodes:?}");
    }
    // Replayed from its log: the planner answers from the recorded calls, same output.
    let out = run_from_repo(&[
        "runs",
        "replay",
        trace,
        "--data-dir",
        data,
        "--format",
        "json",
    ]);
    assert_succeeded(&out);
    let replayed = json(&out);
    for key in ["success", "answer", "columns", "rows"] {
        assert_eq!(v[key], replayed[key], "{key}");
    }
    assert_eq!(v["subqueries"][0]["sql"], replayed["subqueries"][0]["sql"]);
    assert_ne!(v["trace_id"], replayed["trace_id"]);
    let out = run_from_repo(&[
        "runs",
        "show",
        "00000000-0000-4000-8000-000000000000",
        "--data-dir",
        data,
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn demo_creates_the_databases_config_and_policy() {
    let dir = temp_dir("democmd");
    let out = run_from_repo(&["demo", "--dir", dir.to_str().unwrap()]);
    assert_succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for id in ["operations (duckdb)", "supply (sqlite)", "sales (sqlite)"] {
        assert!(text.contains(id), "{id}: {text}");
    }
    assert!(dir.join("nl2sql.toml").is_file() && dir.join("policy.json").is_file());
    // The configuration it wrote is usable as is.
    let out = run_from_repo(&[
        "datasources",
        "test",
        "--config",
        dir.join("nl2sql.toml").to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn plans_carry_their_interpretation_and_refusals_name_the_unplaced_words() {
    let dir = temp_dir("interpretation");
    let db = "sqlite://tests/data/fixtures/manufacturing.db";
    let question = "How many machines are there in each factory?";
    // JSON: each attempt's plan holds the spans and a confidence.
    let out = ask(&dir, &["--db", db, "--format", "json", question]);
    assert_succeeded(&out);
    let v = json(&out);
    let plan = &v["subqueries"][0]["attempt_log"][0]["plan"];
    let spans: Vec<(String, String)> = plan["interpretation"]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["text"].as_str().unwrap().to_owned(),
                s["element"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        spans.contains(&("machines".to_owned(), "table machines".to_owned()))
            && spans.contains(&("factory".to_owned(), "table factories".to_owned())),
        "{spans:?}"
    );
    // The confidence is the learned model's, from traits of the question and the plan.
    let confidence = plan["interpretation"]["confidence"].as_f64().unwrap();
    assert!(confidence > 0.0 && confidence < 1.0, "{confidence}");
    let signals: Vec<&str> = plan["interpretation"]["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        signals.contains(&"plan:aggregate=COUNT") && signals.contains(&"word:each"),
        "{signals:?}"
    );
    // --explain says it in words.
    let out = ask(&dir, &["--db", db, "--explain", question]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "interpretation (confidence {confidence:.2}): 'How many' → an operation"
        )),
        "{text}"
    );
    assert!(text.contains("confidence weighed: "), "{text}");
    assert!(text.contains("'machines' → table machines"), "{text}");
    // A question with a word the plan cannot place is refused, naming it; the answer
    // leads with that cause, not with the aggregation it stopped.
    let out = ask(
        &dir,
        &[
            "--db",
            db,
            "--format",
            "json",
            "How many machines are heavier than 10?",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let errors = v["errors"].as_array().unwrap();
    let refusal = errors
        .iter()
        .find(|e| e["code"] == "AMBIGUOUS_QUESTION")
        .unwrap_or_else(|| panic!("{errors:?}"));
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .starts_with("could not place '10' in a plan; understood 'How many'"),
        "{refusal}"
    );
    let answer = v["answer"]["summary"].as_str().unwrap_or_default();
    assert!(
        answer.starts_with("The question could not be answered: sub-query")
            && answer.contains("could not place '10'")
            && !answer.contains("Missing artifact"),
        "{answer}"
    );
}

#[test]
fn the_offline_planners_confidence_threshold_is_a_setting() {
    let dir = temp_dir("min-confidence");
    let db = "sqlite://tests/data/fixtures/manufacturing.db";
    let question = "How many machines are there in each factory?";
    let with = |value: &str| {
        nl2sql()
            .args(["ask", "--db", db, "--format", "json", question])
            .arg("--data-dir")
            .arg(&*dir)
            .current_dir(repo())
            .env("OFFLINE_MIN_CONFIDENCE", value)
            .output()
            .unwrap()
    };
    // 0 answers whatever the confidence; the answer carries it.
    let out = with("0");
    assert_succeeded(&out);
    let v = json(&out);
    let confidence = v["subqueries"][0]["attempt_log"][0]["plan"]["interpretation"]["confidence"]
        .as_f64()
        .unwrap();
    assert!(confidence < 1.0, "{confidence}");
    // 1 refuses every reading, saying how sure the planner was and why.
    let out = with("1");
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let error = &v["errors"][0];
    assert_eq!(error["code"], "AMBIGUOUS_QUESTION", "{v}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "not sure enough of this reading to answer (confidence {confidence:.2}, below 1.00)"
        )),
        "{message}"
    );
    // A value that is not a probability stops the command, naming the setting.
    let out = with("1.5");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("OFFLINE_MIN_CONFIDENCE: '1.5' is not a number from 0 to 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_comparison_with_the_average_runs_as_a_subquery() {
    let dir = temp_dir("average");
    let db = "sqlite://tests/data/fixtures/manufacturing.db";
    let question = "How many production runs have a quantity produced above the average?";
    let out = ask(&dir, &["--db", db, "--format", "json", question]);
    assert_succeeded(&out);
    let v = json(&out);
    // The fixture's four runs average 432.5 units; three produced more.
    assert_eq!(v["rows"], serde_json::json!([[3]]), "{v}");
    assert_eq!(
        v["subqueries"][0]["sql"].as_str().unwrap(),
        "SELECT COUNT(*) AS production_run_count FROM production_runs AS pr WHERE pr.quantity_produced > (SELECT AVG(a.quantity_produced) FROM production_runs AS a) LIMIT 10000"
    );
    let plan = &v["subqueries"][0]["attempt_log"][0]["plan"];
    let spans = plan["interpretation"]["spans"].as_array().unwrap();
    assert!(
        spans.iter().any(|s| s["text"] == "above the average"
            && s["element"]
                == "a comparison with the average of production_runs.quantity_produced"),
        "{spans:?}"
    );
}

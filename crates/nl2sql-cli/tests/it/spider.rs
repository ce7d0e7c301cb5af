//! `nl2sql benchmark --spider` through the real binary, over two Spider train databases
//! (`tests/data/spider-train`): the report's arithmetic, refusals that name what was not
//! understood with a suggestion, the lenient planner answering at least as often, and
//! each question held to its expected outcome (`questions.json.expected`).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use nl2sql_test_support::{Outcome, check_expectations};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data() -> PathBuf {
    repo().join("tests/data/spider-train")
}

/// Runs the benchmark over the two databases (`extra` flags added) and returns its JSON.
fn benchmark(dir: &Path, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_nl2sql"))
        .args(["benchmark", "--spider"])
        .arg(data().join("questions.json"))
        .arg("--db-dir")
        .arg(data().join("database"))
        .args(["--format", "json", "--data-dir"])
        .arg(dir)
        .args(extra)
        .env_remove("NL2SQL_CONFIG")
        .env_remove("NL2SQL_DATA_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

#[test]
fn spider_format_benchmark_reports_and_holds_each_question() {
    let dir = std::env::temp_dir().join(format!("nl2sql-spider-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let strict = benchmark(&dir.join("strict"), &[]);
    let results = strict["results"].as_array().unwrap();
    assert_eq!(results.len(), 65);

    // The report adds up: totals are the per-question outcomes, per database too.
    let total = &strict["total"];
    let outcome = |r: &Value| r["outcome"].as_str().unwrap().to_owned();
    let n = |what: &str| results.iter().filter(|r| outcome(r) == what).count() as u64;
    assert_eq!(count(total, "gold_failed"), n("gold_failed"));
    assert_eq!(count(total, "correct"), n("correct"));
    assert_eq!(count(total, "answered"), n("correct") + n("wrong"));
    assert_eq!(
        count(total, "scored"),
        n("correct") + n("wrong") + n("refused")
    );
    let dbs: BTreeSet<&str> = strict["per_database"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(dbs, BTreeSet::from(["roller_coaster", "ship_1"]));
    let per_db_scored: u64 = strict["per_database"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| count(c, "scored"))
        .sum();
    assert_eq!(per_db_scored, count(total, "scored"));

    // Retrieval: each context against the gold query's tables, and the totals of them.
    let mut reached = 0;
    let mut gold_tables = 0;
    let mut held = 0;
    let (mut gold_columns, mut held_columns) = (0, 0);
    for r in results.iter().filter(|r| !r["retrieval"].is_null()) {
        let ret = &r["retrieval"];
        let names = |k: &str| -> Vec<String> {
            ret[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect()
        };
        let (tables, gold, missing) = (names("tables"), names("gold_tables"), names("missing"));
        assert!(!gold.is_empty(), "{r}");
        let expect: Vec<String> = gold
            .iter()
            .filter(|g| !tables.contains(g))
            .cloned()
            .collect();
        assert_eq!(missing, expect, "{r}");
        // Columns: `table.column`, each a column of a gold table; a column of a missing
        // table is missing too.
        // (`SELECT count(*) FROM t` reads no column.)
        let (gold_cols, missing_cols) = (names("gold_columns"), names("missing_columns"));
        for c in &gold_cols {
            let (table, _) = c.split_once('.').unwrap();
            assert!(gold.iter().any(|g| g == table), "{c}: {r}");
            if missing.iter().any(|m| m == table) {
                assert!(missing_cols.contains(c), "{c}: {r}");
            }
        }
        assert!(ret["columns"].as_u64().unwrap() >= (gold_cols.len() - missing_cols.len()) as u64);
        reached += 1;
        gold_tables += gold.len() as u64;
        held += (gold.len() - missing.len()) as u64;
        gold_columns += gold_cols.len() as u64;
        held_columns += (gold_cols.len() - missing_cols.len()) as u64;
    }
    let recall = &strict["retrieval"];
    assert!(reached > 0);
    assert_eq!(count(recall, "questions"), reached);
    assert_eq!(count(recall, "gold_tables"), gold_tables);
    assert_eq!(count(recall, "retrieved_gold_tables"), held);
    assert_eq!(count(recall, "gold_columns"), gold_columns);
    assert_eq!(count(recall, "retrieved_gold_columns"), held_columns);

    // A refusal for words it could not place names them and suggests something.
    let ambiguous: Vec<&Value> = results
        .iter()
        .filter(|r| r["code"] == "AMBIGUOUS_QUESTION")
        .collect();
    assert!(!ambiguous.is_empty(), "no AMBIGUOUS_QUESTION refusal");
    // A reading below the learned confidence is refused too, saying what lowered it.
    let mut floor: Option<f64> = None;
    for r in &ambiguous {
        let message = r["message"].as_str().unwrap();
        if let Some(rest) = message.strip_prefix("not sure enough of this reading to answer") {
            assert!(message.contains("ask it more plainly"), "{message}");
            let below = rest.split("below ").nth(1).unwrap();
            floor = Some(below[..4].parse().unwrap());
            continue;
        }
        assert!(
            (message.contains("could not place '")
                || message.contains("could not link: '")
                || message.contains("could not understand the question: "))
                && (message.contains("did you mean")
                    || message.contains("asks for")
                    || message.contains("reads as")
                    || message.contains("rephrase")),
            "{message}"
        );
    }
    // An answered question carries its interpretation: every word placed, a confidence.
    for r in results
        .iter()
        .filter(|r| outcome(r) == "correct" || outcome(r) == "wrong")
    {
        assert_eq!(r["unplaced"], Value::Array(Vec::new()), "{r}");
        let confidence = r["confidence"].as_f64().unwrap();
        assert!(confidence > 0.0 && confidence <= 1.0, "{r}");
        // Answers are at least as likely right as the refusals' floor.
        if let Some(floor) = floor {
            assert!(confidence >= floor - 0.005, "{confidence} < {floor}: {r}");
        }
        assert!(!r["signals"].as_array().unwrap().is_empty(), "{r}");
    }

    // The lenient planner answers everything the strict one does, and more.
    let lenient = benchmark(&dir.join("lenient"), &["--lenient"]);
    assert!(count(&lenient["total"], "answered") > count(total, "answered"));
    let lenient_results = lenient["results"].as_array().unwrap();
    for (s, l) in results.iter().zip(lenient_results) {
        if outcome(s) == "correct" {
            assert_eq!(outcome(l), "correct", "{}", s["question"]);
        }
    }

    // Each question against its expectation.
    let ids: Vec<String> = results
        .iter()
        .map(|r| format!("{}#{}", r["db_id"].as_str().unwrap(), count(r, "index")))
        .collect();
    let outcomes: Vec<Outcome<'_>> = results
        .iter()
        .zip(&ids)
        .map(|(r, id)| Outcome {
            id,
            passed: outcome(r) == "correct",
            reason: format!(
                "{}: {} {}",
                outcome(r),
                r["code"]
                    .as_str()
                    .or(r["class"].as_str())
                    .unwrap_or_default(),
                r["message"]
                    .as_str()
                    .or(r["detail"].as_str())
                    .unwrap_or_default()
            ),
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = check_expectations(&data().join("questions.json.expected"), &outcomes) {
        panic!("{e}");
    }
}

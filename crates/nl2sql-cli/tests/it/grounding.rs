//! Value grounding through the real binary: a plan whose string names a value in another
//! spelling runs with the stored spelling; one that names no value is refused with the
//! nearest ones. The plans come from a recorded run whose plan is then edited, replayed
//! with `--planner replay` (the planner a user could have: one that misspells); and a
//! literal the question quotes, read by the offline planner, goes through the same check.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{json, nl2sql, repo, temp_dir};

const DB: &str = "sqlite://tests/data/fixtures/manufacturing.db";
const QUESTION: &str = "What is the SKU of Widget Alpha?";

fn ask(data_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let out: Output = nl2sql()
        .arg("ask")
        .arg("--data-dir")
        .arg(data_dir)
        .args(["--db", DB, "--format", "json", "--today", "2026-11-26"])
        .args(args)
        .current_dir(repo())
        .env_remove("VALUE_GROUNDING_MAX_VALUES")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    json(&out)
}

/// A copy of `cassette` whose recorded plan compares `name` with `to` instead.
fn edited(cassette: &Path, to: &str, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(cassette).unwrap();
    let mut hits = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut entry: Value = serde_json::from_str(line).unwrap();
            if entry["step"] == "ast_planner" {
                let filter = &mut entry["response"]["ok"]["where"];
                assert_eq!(filter["left"]["column_name"], "name", "{filter}");
                filter["right"]["value"] = Value::from(to);
                hits += 1;
            }
            serde_json::to_string(&entry).unwrap()
        })
        .collect();
    assert_eq!(hits, 1, "one plan recorded");
    let path = cassette.with_file_name(format!("{name}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn replay(dir: &Path, cassette: &Path, env: &[(&str, &str)]) -> Value {
    ask(
        dir,
        &[
            "--planner",
            "replay",
            "--cassette",
            cassette.to_str().unwrap(),
            QUESTION,
        ],
        env,
    )
}

fn codes(v: &Value) -> Vec<String> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap().to_owned())
        .collect()
}

fn sql(v: &Value) -> String {
    v["subqueries"][0]["sql"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_misspelt_value_is_respelt_as_stored_or_refused_with_the_nearest_values() {
    let dir = temp_dir("respell");
    let recorded = dir.join("recorded.jsonl");
    let first = ask(
        &dir,
        &["--record", recorded.to_str().unwrap(), QUESTION],
        &[],
    );
    assert_eq!(first["success"], true, "{first}");
    assert!(sql(&first).contains("= 'Widget Alpha'"), "{}", sql(&first));
    assert_eq!(first["rows"], serde_json::json!([["SKU-100"]]), "{first}");

    // Another case and spacing: the stored spelling runs, with the same answer. (The
    // snapshot samples 5 of the 8 names, so the logical validator only warns.)
    let spaced = edited(&recorded, " widget  ALPHA", "spaced");
    let respelt = replay(&dir, &spaced, &[]);
    assert_eq!(respelt["success"], true, "{respelt}");
    assert!(
        sql(&respelt).contains("= 'Widget Alpha'"),
        "{}",
        sql(&respelt)
    );
    assert_eq!(respelt["rows"], first["rows"]);
    let warnings = respelt["warnings"].to_string();
    assert!(
        warnings.contains("' widget  ALPHA' was read as 'Widget Alpha' of products.name"),
        "{warnings}"
    );

    // Grounding off: the misspelt value reaches SQLite, whose `=` is case-sensitive.
    let off = replay(&dir, &spaced, &[("VALUE_GROUNDING_MAX_VALUES", "0")]);
    assert!(sql(&off).contains("= ' widget  ALPHA'"), "{}", sql(&off));
    assert_eq!(off["rows"], serde_json::json!([]), "{off}");

    // A column with more distinct values than the grounder reads whole is searched for
    // the value instead, case ignored.
    let upper = edited(&recorded, "WIDGET ALPHA", "upper");
    let searched = replay(&dir, &upper, &[("VALUE_GROUNDING_MAX_VALUES", "3")]);
    assert_eq!(searched["success"], true, "{searched}");
    assert!(
        sql(&searched).contains("= 'Widget Alpha'"),
        "{}",
        sql(&searched)
    );
    assert_eq!(searched["rows"], first["rows"]);

    // A value the column does not hold: refused, naming the nearest stored values.
    // (A replayed planner may read feedback, so it would be re-planned: not here.)
    let typo = edited(&recorded, "Widget Alfa", "typo");
    let refused = replay(&dir, &typo, &[("SQL_AGENT_MAX_RETRIES", "0")]);
    assert_eq!(refused["success"], false, "{refused}");
    assert_eq!(codes(&refused)[0], "VALUE_NOT_FOUND", "{refused}");
    let message = refused["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "The value 'Widget Alfa' is not in products.name (products.name holds 8 distinct values); did you mean 'Widget Alpha'"
        ),
        "{message}"
    );
    assert!(refused["rows"].is_null(), "{refused}");
    // In the large-column mode the nearest values come from what was read.
    let refused = replay(
        &dir,
        &typo,
        &[
            ("SQL_AGENT_MAX_RETRIES", "0"),
            ("VALUE_GROUNDING_MAX_VALUES", "3"),
        ],
    );
    let message = refused["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "The value 'Widget Alfa' is not in products.name (products.name holds more distinct values than are read whole; none equals it, case ignored)"
        ),
        "{message}"
    );
}

/// A literal the question itself quotes, in a spelling the data does not use, is read as
/// the value of the column it is said of and respelt as stored; one the column does not
/// hold is refused, naming the values it does hold (the offline planner, no replay).
#[test]
fn a_quoted_literal_in_the_question_is_grounded_or_refused() {
    let dir = temp_dir("quoted-literal");
    let answered = ask(
        &dir,
        &["What is the name of the machine whose serial number is \"sn pr 002\"?"],
        &[],
    );
    assert_eq!(answered["success"], true, "{answered}");
    assert!(
        sql(&answered).contains("m.serial_number = 'SN-PR-002'"),
        "{}",
        sql(&answered)
    );
    assert_eq!(
        answered["rows"],
        serde_json::json!([["Press-02"]]),
        "{answered}"
    );
    assert!(
        answered["warnings"]
            .to_string()
            .contains("'sn pr 002' was read as 'SN-PR-002' of machines.serial_number"),
        "{answered}"
    );

    let refused = ask(&dir, &["Which machine has serial number 'SN-XX-999'?"], &[]);
    assert_eq!(refused["success"], false, "{refused}");
    assert!(refused["rows"].is_null(), "{refused}");
    let message = refused["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("'SN-XX-999'") && message.contains("SN-PR-002"),
        "{message}"
    );
}

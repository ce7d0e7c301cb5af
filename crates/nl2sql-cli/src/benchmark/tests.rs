//! Tests of the golden-dataset benchmark: parsing, result and SQL comparison, reports.

use super::*;

fn set(columns: &[&str], rows: Vec<Vec<Cell>>) -> ResultSet {
    ResultSet {
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        rows,
    }
}

fn t(s: &str) -> Cell {
    Cell::Text(s.to_owned())
}

#[test]
fn numbers_are_equal_within_the_tolerance() {
    let want = set(
        &["n"],
        vec![vec![Cell::Num(0.5)], vec![Cell::Num(1_000_000.0)]],
    );
    let close = set(
        &["n"],
        vec![vec![Cell::Num(0.500_009)], vec![Cell::Num(1_000_009.0)]],
    );
    assert_eq!(same_result(&close, &want), Ok(()));
    let far = set(
        &["n"],
        vec![vec![Cell::Num(0.500_02)], vec![Cell::Num(1_000_000.0)]],
    );
    assert!(same_result(&far, &want).is_err());
    // Text that reads as a number is a number: "3" (a DECIMAL's display) equals 3.0.
    assert_eq!(Cell::from_text("3"), Cell::Num(3.0));
    assert_eq!(Cell::from_json(&serde_json::json!("2.50")), Cell::Num(2.5));
    assert_eq!(Cell::from_text("2024-01-31"), t("2024-01-31"));
}

#[test]
fn column_names_are_compared_case_insensitively_and_sorted() {
    let want = set(&["Factory", "total"], vec![vec![t("DET"), Cell::Num(3.0)]]);
    let swapped = set(&["TOTAL", "factory"], vec![vec![Cell::Num(3.0), t("DET")]]);
    assert_eq!(same_result(&swapped, &want), Ok(()));
    let renamed = set(&["factory", "n"], vec![vec![t("DET"), Cell::Num(3.0)]]);
    assert_eq!(
        same_result(&renamed, &want),
        Err("columns [factory, n] instead of [factory, total]".to_owned())
    );
}

#[test]
fn rows_are_compared_in_any_order_but_counted() {
    let want = set(
        &["a", "b"],
        vec![
            vec![t("x"), Cell::Num(1.0)],
            vec![t("y"), Cell::Null],
            vec![t("x"), Cell::Num(1.0)],
        ],
    );
    let shuffled = set(
        &["a", "b"],
        vec![
            vec![t("y"), Cell::Null],
            vec![t("x"), Cell::Num(1.0)],
            vec![t("x"), Cell::Num(1.000_001)],
        ],
    );
    assert_eq!(same_result(&shuffled, &want), Ok(()));
    // Same rows as a set, different multiset.
    let other = set(
        &["a", "b"],
        vec![
            vec![t("y"), Cell::Null],
            vec![t("y"), Cell::Null],
            vec![t("x"), Cell::Num(1.0)],
        ],
    );
    assert!(same_result(&other, &want).is_err());
    let fewer = set(&["a", "b"], vec![vec![t("y"), Cell::Null]]);
    assert_eq!(
        same_result(&fewer, &want),
        Err("1 row instead of 3".to_owned())
    );
    // Null is not zero and not empty text.
    let zero = set(&["v"], vec![vec![Cell::Num(0.0)]]);
    let null = set(&["v"], vec![vec![Cell::Null]]);
    assert!(same_result(&zero, &null).is_err());
}

#[test]
fn values_close_enough_match_even_when_they_sort_differently() {
    // 1.000001 sorts after 1.0000005 on one side and before on the other.
    let want = set(
        &["k", "v"],
        vec![
            vec![Cell::Num(1.000_001), t("a")],
            vec![Cell::Num(1.0), t("b")],
        ],
    );
    let got = set(
        &["k", "v"],
        vec![
            vec![Cell::Num(0.999_999_9), t("a")],
            vec![Cell::Num(1.000_000_5), t("b")],
        ],
    );
    assert_eq!(same_result(&got, &want), Ok(()));
}

#[test]
fn normalised_sql_ignores_case_quotes_spacing_and_the_safety_limit() {
    let generated = "SELECT \"factory_code\", COUNT(*) AS \"n\" FROM \"machines\" GROUP BY \"factory_code\" LIMIT 10000";
    let written = "select factory_code,\n  count(*) as n\nfrom MACHINES group by factory_code";
    assert!(same_sql(generated, written, Dialect::DuckDb, Some(10_000)));
    // Without knowing the row limit, the LIMIT is part of the query.
    assert!(!same_sql(generated, written, Dialect::DuckDb, None));
    // A plan's own limit stays.
    assert!(!same_sql(
        "SELECT a FROM t LIMIT 5",
        "SELECT a FROM t",
        Dialect::Sqlite,
        Some(10_000)
    ));
    // String literals keep their case.
    assert!(!same_sql(
        "SELECT a FROM t WHERE s = 'Offline'",
        "SELECT a FROM t WHERE s = 'offline'",
        Dialect::Sqlite,
        None
    ));
    assert!(!same_sql(
        "SELECT a FROM t",
        "SELECT b FROM t",
        Dialect::Sqlite,
        None
    ));
    assert!(!same_sql("SELEC a", "SELEC a", Dialect::Sqlite, None));
}

#[test]
fn datasets_are_json_arrays_or_json_lines_and_errors_name_the_line() {
    let array = "[\n  {\"id\": \"a\", \"question\": \"q1\", \"datasource\": [\"x\"]},\n  {\"id\": 2,\n   \"question\": \"q2\", \"datasource\": \"y\", \"expected_sql\": \"SELECT 1\", \"difficulty\": \"easy\"}\n]\n";
    let cases = parse_dataset(array).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!((cases[0].id.as_str(), cases[0].line), ("a", 2));
    assert_eq!((cases[1].id.as_str(), cases[1].line), ("2", 3));
    assert_eq!(cases[1].datasource, ["y"]);
    assert_eq!(cases[1].expected_sql.as_deref(), Some("SELECT 1"));

    let lines = "{\"id\": \"a\", \"question\": \"q\", \"datasource\": [\"x\"]}\n\n{\"id\": \"b\", \"datasource\": [\"x\"]}\n";
    assert_eq!(
        parse_dataset(lines).unwrap_err(),
        "line 3: case 'b': field 'question' is missing"
    );
    let bad_array = "[\n {\"id\": \"a\", \"question\": \"q\", \"datasource\": [\"x\"]},\n {\"id\": \"b\", \"question\": \"q\", \"datasource\": [1]}\n]";
    assert_eq!(
        parse_dataset(bad_array).unwrap_err(),
        "line 3: case 'b': field 'datasource' must list datasource ids (non-empty strings)"
    );
    let duplicate = "{\"id\": \"a\", \"question\": \"q\", \"datasource\": \"x\"}\n{\"id\": \"a\", \"question\": \"r\", \"datasource\": \"x\"}";
    assert_eq!(
        parse_dataset(duplicate).unwrap_err(),
        "line 2: field 'id': 'a' is already the id of the case on line 1"
    );
    assert!(
        parse_dataset("{\"id\": \"a\",")
            .unwrap_err()
            .starts_with("line 1: not a JSON object")
    );
    assert_eq!(parse_dataset("[]").unwrap_err(), "it has no cases");
}

#[test]
fn percentiles_are_nearest_rank() {
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(percentile(&v, 50.0), 10.0);
    assert_eq!(percentile(&v, 95.0), 19.0);
    assert_eq!(percentile(&[7.0], 95.0), 7.0);
    assert_eq!(percentile(&[], 50.0), 0.0);
}

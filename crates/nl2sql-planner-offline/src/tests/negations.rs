//! A negated value of a table the row refers to ("pictures whose artist is not Kim") is a
//! `<>`; what of the missing rows cannot be shown is refused. (A negation over related
//! rows that carry a condition, "artists with no picture in room B12", is counted per
//! answer: `per_answer.rs`.)

use super::rules::{check, describe, sql_over};
use super::samples;

#[test]
fn a_negated_value_of_the_referenced_row_is_a_not_equal() {
    // Each member has one sport: "not golf" is `<>` on it.
    let mut c = super::frequency::club();
    describe(&mut c, "Sport", "Name", samples(&["Golf", "Tennis"]));
    check(
        &c,
        "Which members play a sport that is not Golf?",
        "SELECT m.Name AS member FROM Member AS m INNER JOIN Sport AS s ON m.SportID = s.id WHERE s.Name <> 'Golf' LIMIT 10000",
    );
}

#[test]
fn something_of_the_missing_rows_is_refused() {
    // The rows without members have no member to show a country of.
    let sql = sql_over(
        &super::frequency::club(),
        "Show the names of sports that have no members, and the countries of the members.",
    );
    assert!(
        sql.starts_with("ERROR") && sql.contains("negation") && sql.contains("cannot express"),
        "{sql}"
    );
}

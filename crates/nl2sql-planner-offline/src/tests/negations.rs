//! A negation over related rows that carry a condition is refused, not answered with an
//! anti-join that drops the condition or a `<>` that means "some other": "artists with no
//! picture in room B12", "artists whose pictures are not in room B12". A negated value of
//! a table the row refers to ("pictures whose artist is not Kim") stays a `<>`.

use super::literals::gallery;
use super::rules::{check, describe, sql_over};
use super::samples;

/// Asserts that `question` over the gallery is refused as inexpressible.
fn refused(question: &str) {
    let sql = sql_over(&gallery(), question);
    assert!(
        sql.starts_with("ERROR") && sql.contains("negation") && sql.contains("cannot express"),
        "{question}: {sql}"
    );
}

#[test]
fn no_related_rows_meeting_a_condition_is_refused() {
    refused("Which artists have no pictures in room \"B12\"?");
}

#[test]
fn a_negated_value_of_many_related_rows_is_refused() {
    refused("What are the last names of artists whose pictures are not in room \"B12\"?");
}

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

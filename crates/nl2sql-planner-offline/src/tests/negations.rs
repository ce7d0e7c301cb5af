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

#[test]
fn the_rows_without_matches_are_the_table_not_the_column_pointing_at_it() {
    // "rooms" could be `Reservations.Room` (its words, in a table the question names):
    // before a negation it is the table that column points at.
    use super::{col, snapshot_of, table};
    let inn = snapshot_of(
        "inn",
        vec![
            table(
                "Rooms",
                vec![col("id", "TEXT", true), col("roomName", "TEXT", false)],
                vec![],
            ),
            table(
                "Reservations",
                vec![
                    col("Code", "INTEGER", true),
                    col("Room", "TEXT", false),
                    col("Rate", "REAL", false),
                ],
                vec![("Room", "Rooms")],
            ),
        ],
    );
    check(
        &inn,
        "Find the number of rooms that do not have any reservation.",
        "SELECT COUNT(*) AS room_count FROM Rooms AS r LEFT JOIN Reservations AS r2 ON r.id = r2.Room WHERE r2.Code IS NULL LIMIT 10000",
    );
    // Elsewhere the column is read: the room of the reservations.
    check(
        &inn,
        "Show the room and the rate of all reservations.",
        "SELECT r.Room AS room, r.Rate AS rate FROM Reservations AS r LIMIT 10000",
    );
}

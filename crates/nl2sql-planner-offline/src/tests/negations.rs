//! A negated value of a table the row refers to ("pictures whose artist is not Kim") is a
//! `<>`; what of the missing rows cannot be shown is refused, and so is "no" before a
//! value a row filter would test ("countries with no member named Ann": an absence, not
//! another name). (A negation over related rows that carry a condition, "artists with no
//! picture in room B12", is counted per answer: `per_answer.rs`.)

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

#[test]
fn no_before_a_value_is_an_absence_never_another_value() {
    let mut c = super::frequency::club();
    describe(&mut c, "Member", "Country", samples(&["France", "Italy"]));
    describe(&mut c, "Member", "Name", samples(&["Ann", "Bob"]));
    // Over the related rows, "no members from France" is counted per answer.
    check(
        &c,
        "Which sports have no members from France?",
        "SELECT s.Name AS sport FROM Sport AS s LEFT JOIN Member AS m ON s.id = m.SportID GROUP BY s.Name HAVING SUM(CASE WHEN m.Country = 'France' THEN 1 ELSE 0 END) = 0 ORDER BY s.Name LIMIT 10000",
    );
    // Over the listed rows' own table, `Name <> 'Ann'` would list every country with any
    // other member: refused, naming the absence.
    let sql = sql_over(&c, "Which countries have no member named Ann?");
    assert!(
        sql.starts_with("ERROR") && sql.contains("'no member named Ann' asks for what has none"),
        "{sql}"
    );
}

//! Numbers a database keeps as text (`lift.speed TEXT` holding "55", "9", "104.5"): added
//! up, averaged, compared and sorted as numbers through a cast (as text "9" > "55"); a
//! text column of a few numbers is a category's codes, and one named as an identifier
//! is no quantity: neither is cast. Over a small ski-resort schema named unlike every
//! fixture.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, describe, refused_saying};
use super::{col, samples, snapshot_of, table};

fn resort() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "resort",
        vec![
            table(
                "slope",
                vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
                vec![],
            ),
            table(
                "lift",
                vec![
                    col("lift_id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("speed", "TEXT", false),
                    col("grade", "TEXT", false),
                    col("serial_number", "TEXT", false),
                    // Text, but a key to `slope`.
                    col("slope", "TEXT", false),
                ],
                vec![("slope", "slope")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "lift",
        "slope",
        samples(&["1", "2", "3", "4", "5", "6"]),
    );
    describe(
        &mut snapshot,
        "lift",
        "speed",
        samples(&["55", "9", "104.5", "12", "30"]),
    );
    // Codes of a category: two values.
    describe(&mut snapshot, "lift", "grade", samples(&["1", "2"]));
    describe(
        &mut snapshot,
        "lift",
        "serial_number",
        samples(&["1001", "1002", "1003", "1004", "1005"]),
    );
    snapshot
}

#[test]
fn numbers_kept_as_text_are_cast_where_they_count() {
    let r = resort();
    check(
        &r,
        "What is the average speed of the lifts?",
        "SELECT AVG(CAST(l.speed AS REAL)) AS avg_speed FROM lift AS l LIMIT 10000",
    );
    check(
        &r,
        "What are the names of lifts with speed above 50?",
        "SELECT l.name AS lift FROM lift AS l WHERE CAST(l.speed AS REAL) > 50 LIMIT 10000",
    );
    check(
        &r,
        "List the names of lifts in descending order of speed.",
        "SELECT l.name AS lift, l.speed AS speed FROM lift AS l ORDER BY CAST(l.speed AS REAL) \
         DESC LIMIT 10000",
    );
}

#[test]
fn codes_and_identifiers_kept_as_text_are_not_quantities() {
    let r = resort();
    check(
        &r,
        "How many lifts are there for each grade?",
        "SELECT l.grade AS grade, COUNT(*) AS lift_count FROM lift AS l GROUP BY l.grade ORDER \
         BY l.grade LIMIT 10000",
    );
    refused_saying(
        &r,
        "What is the total serial number of the lifts?",
        "could not place 'total'",
    );
    // A key to another table is no quantity either, whatever its type.
    refused_saying(
        &r,
        "What is the average slope of the lifts?",
        "could not place 'average'",
    );
}

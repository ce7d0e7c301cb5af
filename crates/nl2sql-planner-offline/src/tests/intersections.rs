//! "both … and …" (or "shared by … and …"): each of two conditions holds on some row of
//! every answer (the intersection of their answers), never both on one row, and never
//! "either". The rows where either holds are grouped by the outputs, and a group is kept
//! when each held on one of its rows. What the plan cannot say that way is refused naming
//! "both". Over the small gallery schema of the literal tests.

use nl2sql_state::ErrorCode;

use super::absent::library;
use super::coverage::unplaced;
use super::literals::gallery;
use super::rules::{check, describe, strict_over};
use super::{col, samples, snapshot_of, table};

/// The strict planner's refusal of `question`: its unplaced words.
fn refused(question: &str) -> Vec<String> {
    let e = strict_over(&gallery(), question).expect_err(question);
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion, "{question}");
    unplaced(&e)
}

#[test]
fn two_values_of_one_column_each_hold_on_some_row() {
    check(
        &library(),
        "Which readers borrowed both the book with title 'Dune' and the book with title 'Emma'?",
        "SELECT r.Name AS reader FROM Reader AS r INNER JOIN Loan AS l ON r.id = l.ReaderID INNER JOIN Book AS b ON l.BookID = b.id WHERE b.Title = 'Dune' OR b.Title = 'Emma' GROUP BY r.Name HAVING SUM(CASE WHEN b.Title = 'Dune' THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN b.Title = 'Emma' THEN 1 ELSE 0 END) > 0 ORDER BY r.Name LIMIT 10000",
    );
}

#[test]
fn two_comparisons_each_hold_on_some_row() {
    let rooms = "SELECT p.room AS room FROM picture AS p WHERE p.price < 100 OR p.price > 900 GROUP BY p.room HAVING SUM(CASE WHEN p.price < 100 THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN p.price > 900 THEN 1 ELSE 0 END) > 0 ORDER BY p.room LIMIT 10000";
    check(
        &gallery(),
        "Which rooms have both pictures with a price below 100 and pictures with a price above 900?",
        rooms,
    );
    // The second comparison names no column: it compares the first one's.
    check(
        &gallery(),
        "Show the rooms with both pictures priced below 100 and above 900.",
        rooms,
    );
    // "shared by" asks for the same ("by" is not a grouping there).
    check(
        &gallery(),
        "Show the rooms shared by pictures priced below 100 and above 900.",
        rooms,
    );
    // Conditions on a joined table: grouped by the outputs of the reader.
    check(
        &library(),
        "Show the hometowns of readers who borrowed both books with more than 500 pages and books with fewer than 100 pages.",
        "SELECT r.Hometown AS hometown FROM Reader AS r INNER JOIN Loan AS l ON r.id = l.ReaderID INNER JOIN Book AS b ON l.BookID = b.id WHERE b.Pages > 500 OR b.Pages < 100 GROUP BY r.Hometown HAVING SUM(CASE WHEN b.Pages > 500 THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN b.Pages < 100 THEN 1 ELSE 0 END) > 0 ORDER BY r.Hometown LIMIT 10000",
    );
}

#[test]
fn both_listing_outputs_is_no_intersection() {
    check(
        &gallery(),
        "Return both the first name and the age of artists older than 40.",
        "SELECT a.first_name AS first_name, a.age AS age FROM artist AS a WHERE a.age > 40 LIMIT 10000",
    );
}

#[test]
fn an_intersection_with_a_measure_is_refused() {
    // Counting the answers of an intersection needs a query over the grouped one.
    assert_eq!(
        refused("How many artists have both pictures in room 'A1' and pictures in room 'B2'?"),
        vec!["both".to_owned()]
    );
}

#[test]
fn the_tested_column_and_what_the_answers_have_are_not_outputs() {
    let mut library = library();
    describe(&mut library, "Book", "Title", samples(&["Dune", "Emma"]));
    // "titles" names the column both values are of: grouped by it, no group could hold
    // both.
    check(
        &library,
        "Find the names of readers who borrowed books with titles both Dune and Emma.",
        "SELECT r.Name AS reader FROM Reader AS r INNER JOIN Loan AS l ON r.id = l.ReaderID INNER JOIN Book AS b ON l.BookID = b.id WHERE b.Title = 'Dune' OR b.Title = 'Emma' GROUP BY r.Name HAVING SUM(CASE WHEN b.Title = 'Dune' THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN b.Title = 'Emma' THEN 1 ELSE 0 END) > 0 ORDER BY r.Name LIMIT 10000",
    );
    // "delegates" is what the parties have, not a second output.
    let mut election = snapshot_of(
        "election",
        vec![table(
            "election",
            vec![
                col("id", "INTEGER", true),
                col("Committee", "TEXT", false),
                col("Delegate", "TEXT", false),
                col("Party", "TEXT", false),
            ],
            vec![],
        )],
    );
    describe(
        &mut election,
        "election",
        "Committee",
        samples(&["Appropriations", "Ways and Means"]),
    );
    check(
        &election,
        "Which parties have delegates in both the Appropriations committee and the Ways and Means committee?",
        "SELECT e.Party AS party FROM election AS e WHERE e.Committee = 'Appropriations' OR e.Committee = 'Ways and Means' GROUP BY e.Party HAVING SUM(CASE WHEN e.Committee = 'Appropriations' THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN e.Committee = 'Ways and Means' THEN 1 ELSE 0 END) > 0 ORDER BY e.Party LIMIT 10000",
    );
}

#[test]
fn the_rows_the_conditions_are_about_may_be_named_by_a_column_or_a_row_noun() {
    let submissions = snapshot_of(
        "workshop",
        vec![table(
            "submission",
            vec![
                col("id", "INTEGER", true),
                col("Author", "TEXT", false),
                col("College", "TEXT", false),
                col("Scores", "REAL", false),
            ],
            vec![],
        )],
    );
    let colleges = "SELECT s.College AS college FROM submission AS s WHERE s.Scores > 90 OR s.Scores < 80 GROUP BY s.College HAVING SUM(CASE WHEN s.Scores > 90 THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN s.Scores < 80 THEN 1 ELSE 0 END) > 0 ORDER BY s.College LIMIT 10000";
    check(
        &submissions,
        "Which colleges have both authors with scores above 90 and authors with scores below 80?",
        colleges,
    );
    check(
        &submissions,
        "Show the colleges with both records of scores above 90 and below 80.",
        colleges,
    );
    // The strict planner places "authors" as the rows the conditions are about.
    let plan = strict_over(
        &submissions,
        "Which colleges have both authors with scores above 90 and authors with scores below 80?",
    )
    .expect("answered");
    let spans = plan.interpretation.expect("an interpretation").spans;
    assert!(
        spans
            .iter()
            .any(|s| s.text == "authors" && s.element == "the rows of table submission"),
        "{spans:?}"
    );
}

#[test]
fn the_rows_shared_are_not_outputs_and_a_year_is_no_quantity() {
    let mut technicians = snapshot_of(
        "repairs",
        vec![table(
            "technician",
            vec![
                col("id", "INTEGER", true),
                col("Name", "TEXT", false),
                col("Team", "TEXT", false),
                col("Starting_Year", "INTEGER", false),
            ],
            vec![],
        )],
    );
    describe(
        &mut technicians,
        "technician",
        "Team",
        samples(&["CLE", "CWS"]),
    );
    // "technicians" names the rows that share the years, not their names as an output.
    check(
        &technicians,
        "Show the starting years shared by technicians from team CLE and CWS.",
        "SELECT t.Starting_Year AS starting_year FROM technician AS t WHERE t.Team = 'CLE' OR t.Team = 'CWS' GROUP BY t.Starting_Year HAVING SUM(CASE WHEN t.Team = 'CLE' THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN t.Team = 'CWS' THEN 1 ELSE 0 END) > 0 ORDER BY t.Starting_Year LIMIT 10000",
    );
}

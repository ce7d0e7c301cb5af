//! Conditions on rows an answer has many of, counted per answer: "readers who did not
//! borrow 'Dune'" is no loan of the reader's being of 'Dune' (not a loan of something
//! else), "readers who never borrowed a book of more than 500 pages" is no such loan
//! (not "no loans at all"). The related rows are left-joined, the answers grouped by
//! their outputs and each condition counted in `HAVING`. Over the library of the
//! absent-rows tests, with sample titles.

use super::absent::library;
use nl2sql_state::SchemaSnapshot;

use super::rules::{check, check_placed, describe, refused_saying};
use super::{col, samples, snapshot_of, table};

fn library_with_titles() -> SchemaSnapshot {
    let mut library = library();
    describe(&mut library, "Book", "Title", samples(&["Dune", "Emma"]));
    library
}

#[test]
fn a_negated_value_of_related_rows_is_met_by_none_of_them() {
    check(
        &library_with_titles(),
        "Which readers did not borrow the book Dune?",
        "SELECT r.Name AS reader FROM Reader AS r LEFT JOIN Loan AS l ON r.id = l.ReaderID LEFT JOIN Book AS b ON l.BookID = b.id GROUP BY r.Name HAVING SUM(CASE WHEN b.Title = 'Dune' THEN 1 ELSE 0 END) = 0 LIMIT 10000",
    );
}

#[test]
fn a_condition_on_rows_that_must_be_missing_is_met_by_none_of_them() {
    check(
        &library_with_titles(),
        "Which readers never borrowed a book with more than 500 pages?",
        "SELECT r.Name AS reader FROM Reader AS r LEFT JOIN Loan AS l ON r.id = l.ReaderID LEFT JOIN Book AS b ON l.BookID = b.id GROUP BY r.Name HAVING SUM(CASE WHEN b.Pages > 500 THEN 1 ELSE 0 END) = 0 LIMIT 10000",
    );
}

#[test]
fn a_condition_beside_a_negated_one_is_met_by_some_row() {
    // The loans are no longer filtered: "Emma" must hold on some loan of the reader.
    check(
        &library_with_titles(),
        "Which readers borrowed the book Emma but not the book Dune?",
        "SELECT r.Name AS reader FROM Reader AS r LEFT JOIN Loan AS l ON r.id = l.ReaderID LEFT JOIN Book AS b ON l.BookID = b.id GROUP BY r.Name HAVING SUM(CASE WHEN b.Title = 'Emma' THEN 1 ELSE 0 END) > 0 AND SUM(CASE WHEN b.Title = 'Dune' THEN 1 ELSE 0 END) = 0 LIMIT 10000",
    );
}

#[test]
fn no_related_rows_meeting_a_condition_is_a_count_of_none() {
    check(
        &library_with_titles(),
        "Which readers have no loans of books with more than 500 pages?",
        "SELECT r.Name AS reader FROM Reader AS r LEFT JOIN Loan AS l ON r.id = l.ReaderID LEFT JOIN Book AS b ON l.BookID = b.id GROUP BY r.Name HAVING SUM(CASE WHEN b.Pages > 500 THEN 1 ELSE 0 END) = 0 LIMIT 10000",
    );
}

/// Venues of towns, each town's venues many.
fn venues() -> SchemaSnapshot {
    snapshot_of(
        "venues",
        vec![table(
            "Venue",
            vec![
                col("id", "INTEGER", true),
                col("name", "TEXT", false),
                col("Town", "TEXT", false),
                col("Capacity", "INTEGER", false),
                col("Opening_year", "INTEGER", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn values_of_a_column_none_of_whose_rows_meets_a_condition_are_grouped() {
    let v = venues();
    let towns = "SELECT v.Town AS town FROM Venue AS v GROUP BY v.Town HAVING SUM(CASE WHEN \
                 v.Capacity > 800 THEN 1 ELSE 0 END) = 0 LIMIT 10000";
    check_placed(
        &v,
        "Which towns do not have a venue with a capacity above 800?",
        towns,
    );
    check_placed(
        &v,
        "Show the towns where no venue has a capacity over 800.",
        towns,
    );
    // The column of the condition ("opened") is not an answer.
    check_placed(
        &v,
        "Which towns do not have a venue that was opened after 2006?",
        "SELECT v.Town AS town FROM Venue AS v GROUP BY v.Town HAVING SUM(CASE WHEN \
         v.Opening_year > 2006 THEN 1 ELSE 0 END) = 0 LIMIT 10000",
    );
}

#[test]
fn values_without_rows_are_refused_without_a_condition_or_after_another() {
    let v = venues();
    // No condition: every town has a venue; "towns without venues" is not a question of
    // this table's values.
    refused_saying(
        &v,
        "Which towns do not have a venue?",
        "the negation asks for values of Venue",
    );
    // Which rows the towns are taken from would be a guess.
    refused_saying(
        &v,
        "Which towns with a venue of capacity below 100 do not have a venue with a \
         capacity above 800?",
        "the negation asks for values of Venue",
    );
}

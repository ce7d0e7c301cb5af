//! "The country of the author who wrote the most books": a ranking of rows the question
//! names (authors), each by its own rows elsewhere (books), answered by an attribute of
//! theirs. One group per author (its key), never one per country: two authors of one
//! country are two rows ranked apart.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::{check, request_over};
use super::{col, table};
use crate::OfflinePlanner;

/// Authors and their books.
fn shelf() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("shelf", "sqlite");
    contract.add_table(table(
        "Author",
        vec![
            col("id", "INTEGER", true),
            col("Name", "TEXT", false),
            col("Country", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "Book",
        vec![
            col("BookID", "INTEGER", true),
            col("Title", "TEXT", false),
            col("AuthorID", "INTEGER", false),
        ],
        vec![("AuthorID", "Author")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

const RANKED_BY_AUTHOR: &str = "SELECT a.id AS id, a.Country AS country, COUNT(*) AS book_count FROM Book AS b INNER JOIN Author AS a ON b.AuthorID = a.id GROUP BY a.id, a.Country ORDER BY book_count DESC LIMIT 1";

#[test]
fn an_attribute_of_the_row_with_the_most_ranks_the_rows_not_the_attribute() {
    check(
        &shelf(),
        "What is the country of the author with the most books?",
        RANKED_BY_AUTHOR,
    );
}

#[test]
fn the_key_that_tells_the_rows_apart_is_not_weighed_as_a_guessed_column() {
    // The key is grouped and listed so that each author is ranked on its own; it is not
    // a second grouping, nor a column the planner guessed the question wants.
    let plan = OfflinePlanner::lenient()
        .plan_sync(&request_over(
            &shelf(),
            "What is the country of the author with the most books?",
        ))
        .unwrap();
    let names: Vec<String> = plan
        .interpretation
        .unwrap()
        .signals
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert!(names.contains(&"plan:group-by=1".to_owned()), "{names:?}");
    for absent in [
        "plan:group-by=2",
        "column:output-inferred-key",
        "column:group-inferred-key",
    ] {
        assert!(!names.contains(&absent.to_owned()), "{absent}: {names:?}");
    }
}

/// A count condition on the rows named, answered by an attribute of theirs, keeps each
/// row apart the same way: two authors of one country with two books each are not one
/// country with four.
#[test]
fn an_attribute_of_rows_with_more_than_n_groups_by_the_rows() {
    check(
        &shelf(),
        "What are the countries of authors who wrote more than 2 books?",
        "SELECT a.id AS id, a.Country AS country, COUNT(*) AS book_count FROM Book AS b INNER JOIN Author AS a ON b.AuthorID = a.id GROUP BY a.id, a.Country HAVING COUNT(*) > 2 ORDER BY a.id, a.Country LIMIT 10000",
    );
}

/// "the author it belongs to": a relating verb that ends its clause relates the table
/// named just before it to the rest of the plan, which joins them; over one table it
/// relates nothing and stays unplaced, unless a value names the row ("the author named
/// 'Ann Lee'") and the plan lists another of its columns.
#[test]
fn a_verb_ending_its_clause_is_the_join_of_the_table_before_it() {
    let s = shelf();
    super::rules::check_placed(
        &s,
        "Show the title of each book and the country of the author it belongs to.",
        "SELECT b.Title AS book, a.Country AS country FROM Book AS b INNER JOIN Author AS a ON b.AuthorID = a.id LIMIT 10000",
    );
    super::rules::refused_placing(&s, "Show the title of each book it belongs to.", "belongs");
    // Over one table, a row named by a value relates to the columns the plan lists.
    super::rules::check_placed(
        &s,
        "What is the country that the author named 'Ann Lee' belongs to?",
        "SELECT a.Country AS country FROM Author AS a WHERE a.Name = 'Ann Lee' LIMIT 10000",
    );
    // Across a clause, a value names no row the verb relates.
    super::rules::refused_saying(
        &s,
        "What are the titles of books by the author named 'Ann Lee', and when were they published?",
        "'published'",
    );
}

#[test]
fn a_verb_before_by_or_in_and_a_table_is_placed_by_the_rows_or_join_it_relates() {
    let s = shelf();
    // The column's own table: the rows that hold it.
    super::rules::check_placed(
        &s,
        "How many different countries are used in authors?",
        "SELECT COUNT(DISTINCT a.Country) AS country_count FROM Author AS a LIMIT 10000",
    );
    // Another table the plan joins it with.
    super::rules::check_placed(
        &s,
        "What are the titles of the books used by the author named 'Ann Lee'?",
        "SELECT b.Title AS book, a.Name AS author FROM Book AS b INNER JOIN Author AS a ON b.AuthorID = a.id WHERE a.Name = 'Ann Lee' LIMIT 10000",
    );
    // A grouping may have read "by" as "for each": the verb stays unplaced.
    super::rules::refused_placing(
        &s,
        "How many distinct countries are used by authors?",
        "used",
    );
}

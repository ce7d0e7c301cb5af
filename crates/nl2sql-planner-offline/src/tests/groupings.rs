//! Groupings no cue word names: a column listed beside a count ("all mediums and the
//! number of pictures") is what the count is per; "corresponding" says the same, and so
//! does an "each" that ends the question ("…, and how many pictures are there of each?").

use super::literals::gallery;
use super::rules::check;

#[test]
fn a_column_listed_beside_a_count_is_what_the_count_is_per() {
    let g = gallery();
    let per_medium = "SELECT p.medium AS medium, COUNT(*) AS picture_count FROM picture AS p GROUP BY p.medium ORDER BY p.medium LIMIT 10000";
    check(
        &g,
        "Show all mediums and the number of pictures.",
        per_medium,
    );
    check(
        &g,
        "Show all mediums and the corresponding number of pictures.",
        per_medium,
    );
    // Strict: "corresponding" is placed, nothing is left over.
    let plan = super::rules::strict_over(
        &g,
        "Show all mediums and the corresponding number of pictures.",
    );
    assert!(plan.is_ok(), "{plan:?}");
    // A column the ranking binds stays the ranking's: one group, the most common.
    check(
        &g,
        "What is the most common medium, and how many pictures are there?",
        "SELECT p.medium AS medium, COUNT(*) AS picture_count FROM picture AS p GROUP BY p.medium ORDER BY picture_count DESC LIMIT 1",
    );
}

#[test]
fn an_each_that_ends_the_question_points_back_at_the_listed_column() {
    let g = gallery();
    let per_medium = "SELECT p.medium AS medium, COUNT(*) AS picture_count FROM picture AS p GROUP BY p.medium ORDER BY p.medium LIMIT 10000";
    super::rules::check_placed(
        &g,
        "What are the different mediums, and how many pictures are there of each?",
        per_medium,
    );
    super::rules::check_placed(
        &g,
        "Show the different mediums together with the number of pictures.",
        per_medium,
    );
    // Past the column's own table, named after "for".
    super::rules::check_placed(
        &g,
        "What are the different mediums for pictures, and how many pictures have each?",
        per_medium,
    );
}

#[test]
fn numbers_of_each_row_are_listed_not_summed() {
    let g = gallery();
    // Each picture holds one price: "each picture" lists them, it does not total them per
    // picture name (two pictures may share a name).
    check(
        &g,
        "What is the price of each picture?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p LIMIT 10000",
    );
    check(
        &g,
        "Show the name and price of each picture.",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p LIMIT 10000",
    );
    // Said with "total", the sum per group stays.
    check(
        &g,
        "What is the total price of each picture?",
        "SELECT p.picture_name AS picture_name, SUM(p.price) AS total_price FROM picture AS p GROUP BY p.picture_name ORDER BY p.picture_name LIMIT 10000",
    );
}

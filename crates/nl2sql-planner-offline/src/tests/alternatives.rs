//! "or" between conditions: two conditions on different columns ("older than 60 or with
//! the last name 'Kim'") hold one or the other (`OR`), not both; alternatives of one
//! column stay one `IN` list; a comparison after "or" that names no column compares the
//! one before it; and an "or" the plan cannot read as alternatives is refused by name,
//! never answered as if it were "and". Over the small gallery schema of the literal tests.

use nl2sql_state::ErrorCode;

use super::coverage::unplaced;
use super::literals::gallery;
use super::rules::{check, describe, refused_saying, strict_over};
use super::samples;

/// The strict planner's refusal of `question`: its unplaced words.
fn refused(question: &str) -> Vec<String> {
    let e = strict_over(&gallery(), question).expect_err(question);
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion, "{question}");
    assert!(
        e.message.contains("ask about each alternative separately"),
        "{question}: {}",
        e.message
    );
    unplaced(&e)
}

#[test]
fn conditions_on_two_columns_joined_by_or_are_one_or_group() {
    let g = gallery();
    check(
        &g,
        "Which artists are older than 60 or have the last name \"Kim\"?",
        "SELECT a.first_name AS first_name FROM artist AS a WHERE a.age > 60 OR a.last_name = 'Kim' LIMIT 10000",
    );
    check(
        &g,
        "Which pictures are in room \"B12\" or cost more than 500?",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.room = 'B12' OR p.price > 500 LIMIT 10000",
    );
    // The group is one condition beside the others: parenthesised under AND.
    check(
        &g,
        "Which pictures in room \"A1\" cost less than 100 or more than 900?",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.room = 'A1' AND (p.price < 100 OR p.price > 900) LIMIT 10000",
    );
}

#[test]
fn a_comparison_after_or_without_a_column_compares_the_one_before() {
    check(
        &gallery(),
        "Which pictures cost less than 100 or more than 900?",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.price < 100 OR p.price > 900 LIMIT 10000",
    );
}

#[test]
fn an_or_the_plan_cannot_read_as_alternatives_is_refused() {
    // Two outputs, not two conditions: answering with both would be a guess.
    assert_eq!(
        refused("What are the first names or last names of artists older than 40?"),
        vec!["or".to_owned()]
    );
}

#[test]
fn an_or_inside_a_bound_is_the_bound_spelt_out_or_not() {
    let s = super::years::shows();
    for n in ["2", "two"] {
        check(
            &s,
            &format!("Which venues have {n} or more concerts?"),
            "SELECT v.venue_name AS venue_name, COUNT(*) AS concert_count FROM concert AS c INNER JOIN venue AS v ON c.venue_id = v.id GROUP BY v.id, v.venue_name HAVING COUNT(*) >= 2 ORDER BY v.id, v.venue_name LIMIT 10000",
        );
    }
}

#[test]
fn values_of_two_columns_paired_across_or_are_refused() {
    let mut g = gallery();
    describe(
        &mut g,
        "artist",
        "first_name",
        samples(&["Dameon", "Jolie"]),
    );
    describe(&mut g, "artist", "last_name", samples(&["Frami", "Weber"]));
    // Two lists would also admit Dameon Weber.
    refused_saying(
        &g,
        "How old are the artists named Dameon Frami or Jolie Weber?",
        "'Dameon Frami or Jolie Weber' pairs values of artist.first_name and \
         artist.last_name as alternatives",
    );
    // Alternatives of one column stay one list.
    check(
        &g,
        "How old are the artists with first name Dameon or Jolie?",
        "SELECT a.first_name AS first_name, a.age AS age FROM artist AS a WHERE a.first_name IN ('Dameon', 'Jolie') LIMIT 10000",
    );
}

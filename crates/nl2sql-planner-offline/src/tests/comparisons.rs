//! Where a comparison's column is: named between the word and the number ("above age
//! 46"), implied by the comparative ("older than 46" is an age) even when another column
//! follows after "and", and never a column named after a conjunction or a sort phrase
//! ("bigger than 100 ordered by year").

use nl2sql_state::SchemaSnapshot;

use super::literals::gallery;
use super::rules::check;
use super::{col, snapshot_of, table};

#[test]
fn a_column_between_the_word_and_the_number_is_compared() {
    check(
        &gallery(),
        "How many artists are above age 46?",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.age > 46 LIMIT 10000",
    );
}

/// Artists with an age and the year they joined.
fn members() -> SchemaSnapshot {
    snapshot_of(
        "members",
        vec![table(
            "artist",
            vec![
                col("artist_id", "INTEGER", true),
                col("name", "TEXT", false),
                col("age", "INTEGER", false),
                col("year_join", "INTEGER", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn a_column_after_and_is_not_the_one_compared() {
    check(
        &members(),
        "Count the number of artists who are older than 46 and joined after 1990.",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.age > 46 AND a.year_join > 1990 LIMIT 10000",
    );
    check(
        &gallery(),
        "List the names of pictures whose price is bigger than 100 ordered by room.",
        "SELECT p.picture_name AS picture_name, p.room AS room FROM picture AS p WHERE p.price > 100 ORDER BY p.room LIMIT 10000",
    );
}

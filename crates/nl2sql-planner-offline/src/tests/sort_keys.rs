//! What a direction with no key sorts by: the output a column mention names, not a
//! label listed because its table was named ("the total points of gymnasts in descending
//! order" sorts by the points), and for an alphabetical order a text output, not a count
//! ("artists that have at least 3 albums in alphabetical order" sort by name). Learned on
//! Spider train (`gymnast`, `chinook_1`), over schemas named like neither.

use nl2sql_state::SchemaSnapshot;

use super::rules::check;
use super::{col, snapshot_of, table};

fn league() -> SchemaSnapshot {
    snapshot_of(
        "league",
        vec![
            table(
                "jumper",
                vec![
                    col("Jumper_ID", "INTEGER", true),
                    col("Season_Points", "REAL", false),
                ],
                vec![],
            ),
            table(
                "label",
                vec![col("id", "INTEGER", true), col("Title", "TEXT", false)],
                vec![],
            ),
            table(
                "record",
                vec![
                    col("RecordId", "INTEGER", true),
                    col("Heading", "TEXT", false),
                    col("LabelId", "INTEGER", false),
                ],
                vec![("LabelId", "label")],
            ),
        ],
    )
}

#[test]
fn a_bare_direction_sorts_the_column_the_question_names() {
    check(
        &league(),
        "List the season points of jumpers in descending order.",
        "SELECT j.Jumper_ID AS jumper_id, j.Season_Points AS season_points FROM jumper AS j ORDER BY j.Season_Points DESC LIMIT 10000",
    );
}

#[test]
fn an_alphabetical_order_sorts_text_not_a_count() {
    check(
        &league(),
        "List the title and id of all labels that have at least 2 records in alphabetical order.",
        "SELECT l.Title AS label, l.id AS id, COUNT(*) AS record_count FROM record AS r INNER JOIN label AS l ON r.LabelId = l.id GROUP BY l.Title, l.id HAVING COUNT(*) >= 2 ORDER BY l.Title LIMIT 10000",
    );
}

#[test]
fn a_direction_between_by_and_the_key_is_skipped() {
    let markets = snapshot_of(
        "markets",
        vec![table(
            "market",
            vec![
                col("market_id", "INTEGER", true),
                col("country", "TEXT", false),
                col("number_cities", "INTEGER", false),
            ],
            vec![],
        )],
    );
    // The key "number of cities" starts three words after "by".
    check(
        &markets,
        "What are the countries of markets ordered by decreasing number of cities?",
        "SELECT m.country AS country, m.number_cities AS number_cities FROM market AS m ORDER BY m.number_cities DESC LIMIT 10000",
    );
}

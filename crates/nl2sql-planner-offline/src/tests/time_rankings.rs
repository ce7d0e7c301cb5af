//! Rankings in time over columns typed as numbers or text: "the latest open year" and
//! "the race held most recently" rank by the one column named as a year or a date (a
//! date before a year); "three churches that opened most recently" keeps its count;
//! "starting with the oldest" and "from the most recent to the oldest" order every row;
//! a superlative that is not about time and names nothing to rank by is refused, never
//! ranked by a year. Frequencies count the rows named after "in", "among", "across".
//! Over small schemas named unlike every fixture.

use super::rules::{check, strict_over};
use super::{col, snapshot_of, table};
use nl2sql_state::SchemaSnapshot;

fn shops() -> SchemaSnapshot {
    snapshot_of(
        "shops",
        vec![table(
            "shop",
            vec![
                col("Shop_ID", "INTEGER", true),
                col("Shop_Name", "TEXT", false),
                col("Open_Year", "INTEGER", false),
                col("Location", "TEXT", false),
            ],
            vec![],
        )],
    )
}

fn races() -> SchemaSnapshot {
    snapshot_of(
        "racing",
        vec![table(
            "races",
            vec![
                col("raceId", "INTEGER", true),
                col("year", "INTEGER", false),
                col("name", "TEXT", false),
                col("date", "TEXT", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn a_year_or_a_date_by_its_name_is_what_time_ranks_by() {
    check(
        &shops(),
        "List the name of the shop with the latest open year.",
        "SELECT s.Shop_Name AS shop_name, s.Open_Year AS open_year FROM shop AS s ORDER BY s.Open_Year DESC LIMIT 1",
    );
    check(
        &shops(),
        "Which shop opened most recently?",
        "SELECT s.Shop_Name AS shop_name, s.Open_Year AS open_year FROM shop AS s ORDER BY s.Open_Year DESC LIMIT 1",
    );
    // A date is finer than a year.
    check(
        &races(),
        "What is the name of the race held most recently?",
        "SELECT r.name AS race, r.date AS date FROM races AS r ORDER BY r.date DESC LIMIT 1",
    );
}

#[test]
fn a_count_before_the_table_is_how_many_rows_a_time_ranking_keeps() {
    check(
        &shops(),
        "Show the name and location of three shops that opened most recently.",
        "SELECT s.Shop_Name AS shop_name, s.Location AS location, s.Open_Year AS open_year FROM shop AS s ORDER BY s.Open_Year DESC LIMIT 3",
    );
}

#[test]
fn starting_with_a_superlative_orders_every_row() {
    check(
        &shops(),
        "List the names of all shops starting with the oldest.",
        "SELECT s.Shop_Name AS shop_name, s.Open_Year AS open_year FROM shop AS s ORDER BY s.Open_Year LIMIT 10000",
    );
    check(
        &races(),
        "List all race names from the most recent to the oldest.",
        "SELECT r.name AS race, r.date AS date FROM races AS r ORDER BY r.date DESC LIMIT 10000",
    );
}

#[test]
fn a_superlative_not_in_time_that_names_nothing_is_refused() {
    // Not ranked by the open year: "the most" of what is not said.
    let question = "Which shop has the most?";
    let e = strict_over(&shops(), question).expect_err(question);
    assert!(
        e.message.contains("names no measure to rank by"),
        "{}",
        e.message
    );
}

fn music() -> SchemaSnapshot {
    snapshot_of(
        "music",
        vec![
            table(
                "Genre",
                vec![col("id", "INTEGER", true), col("Name", "TEXT", false)],
                vec![],
            ),
            table(
                "Track",
                vec![
                    col("id", "INTEGER", true),
                    col("Name", "TEXT", false),
                    col("GenreId", "INTEGER", false),
                ],
                vec![("GenreId", "Genre")],
            ),
            table(
                "season",
                vec![
                    col("id", "INTEGER", true),
                    col("Player", "TEXT", false),
                    col("Position", "TEXT", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn a_frequency_counts_the_rows_named_after_in_or_among() {
    check(
        &music(),
        "What is the name of the most common genre in all tracks?",
        "SELECT g.Name AS genre, COUNT(*) AS track_count FROM Track AS t INNER JOIN Genre AS g ON t.GenreId = g.id GROUP BY g.Name ORDER BY track_count DESC LIMIT 1",
    );
    // "among players": the player column says whose row it is; the rows are the table's.
    check(
        &music(),
        "What is the position that is most common among players in seasons?",
        "SELECT s.Position AS position, COUNT(*) AS season_count FROM season AS s GROUP BY s.Position ORDER BY season_count DESC LIMIT 1",
    );
}

//! Aggregation words spelt in a column's name: "the number of berths" over a column
//! `Number_of_berths`, "total tonnage" over `Total_Tonnage`, "max depth" over
//! `Max_depth` are those columns. An aggregation word before the name still aggregates
//! it; where the words after the aggregation word name another column on their own, the
//! question may ask for either, and the name is not assumed.

use nl2sql_state::{SchemaSnapshot, TableContract};

use super::rules::{check, check_placed};
use super::{col, snapshot_of, table};

fn port() -> TableContract {
    table(
        "port",
        vec![
            col("Port_ID", "INTEGER", true),
            col("Name", "TEXT", false),
            col("Number_of_berths", "INTEGER", false),
            col("Num_cranes", "INTEGER", false),
            col("Total_Tonnage", "REAL", false),
            col("Max_depth", "REAL", false),
            col("Opened_Year", "INTEGER", false),
            col("Pilots", "INTEGER", false),
        ],
        vec![],
    )
}

fn harbours() -> SchemaSnapshot {
    snapshot_of("harbours", vec![port()])
}

/// Ports and the ships they hold, each ship with a depth of its own.
fn harbours_with_ships() -> SchemaSnapshot {
    let ship = table(
        "ship",
        vec![
            col("Ship_ID", "INTEGER", true),
            col("Port_ID", "INTEGER", false),
            col("depth", "REAL", false),
        ],
        vec![("Port_ID", "port")],
    );
    snapshot_of("harbours", vec![port(), ship])
}

#[test]
fn a_number_the_question_spells_as_a_column_name_is_that_column() {
    let h = harbours();
    check_placed(
        &h,
        "List the name and number of berths of all ports.",
        "SELECT p.Name AS port, p.Number_of_berths AS number_of_berths FROM port AS p LIMIT 10000",
    );
    check_placed(
        &h,
        "Show the names of ports with number of cranes greater than 5.",
        "SELECT p.Name AS port FROM port AS p WHERE p.Num_cranes > 5 LIMIT 10000",
    );
    check_placed(
        &h,
        "List the names of ports in descending order of number of cranes.",
        "SELECT p.Name AS port, p.Num_cranes AS num_cranes FROM port AS p ORDER BY p.Num_cranes DESC LIMIT 10000",
    );
}

#[test]
fn an_aggregation_word_spelt_in_a_column_name_is_that_column() {
    let h = harbours();
    check_placed(
        &h,
        "List the names of ports in descending order of total tonnage.",
        "SELECT p.Name AS port, p.Total_Tonnage AS total_tonnage FROM port AS p ORDER BY p.Total_Tonnage DESC LIMIT 10000",
    );
    check(
        &h,
        "What is the average number of cranes of ports with more than 5000 total tonnage?",
        "SELECT AVG(p.Num_cranes) AS avg_num_cranes FROM port AS p WHERE p.Total_Tonnage > 5000 LIMIT 10000",
    );
    check_placed(
        &h,
        "Which ports have a total tonnage above 5000?",
        "SELECT p.Name AS port FROM port AS p WHERE p.Total_Tonnage > 5000 LIMIT 10000",
    );
    check_placed(
        &h,
        "What is the max depth of the port with the most cranes?",
        "SELECT p.Name AS port, p.Max_depth AS max_depth, p.Num_cranes AS num_cranes FROM port AS p ORDER BY p.Num_cranes DESC LIMIT 1",
    );
}

#[test]
fn an_aggregation_word_before_the_name_still_aggregates_the_column() {
    let h = harbours();
    check(
        &h,
        "What is the average number of cranes of ports?",
        "SELECT AVG(p.Num_cranes) AS avg_num_cranes FROM port AS p LIMIT 10000",
    );
    check(
        &h,
        "What is the total number of berths of all ports?",
        "SELECT SUM(p.Number_of_berths) AS total_number_of_berths FROM port AS p LIMIT 10000",
    );
    check(
        &h,
        "What is the maximum number of berths?",
        "SELECT MAX(p.Number_of_berths) AS max_number_of_berths FROM port AS p LIMIT 10000",
    );
    check(
        &h,
        "What are the maximum and minimum number of cranes?",
        "SELECT MAX(p.Num_cranes) AS max_num_cranes, MIN(p.Num_cranes) AS min_num_cranes FROM port AS p LIMIT 10000",
    );
    check(
        &h,
        "What is the average total tonnage of ports?",
        "SELECT AVG(p.Total_Tonnage) AS avg_total_tonnage FROM port AS p LIMIT 10000",
    );
    // A number column named as what it counts: the largest, not also the sum.
    check_placed(
        &h,
        "What is the maximum number of pilots?",
        "SELECT MAX(p.Pilots) AS max_pilots FROM port AS p LIMIT 10000",
    );
    check_placed(
        &h,
        "What are the maximum and minimum number of pilots of all ports?",
        "SELECT MAX(p.Pilots) AS max_pilots, MIN(p.Pilots) AS min_pilots FROM port AS p LIMIT 10000",
    );
    // Two figures: the largest and the sum.
    check_placed(
        &h,
        "Find the maximum and total number of pilots of all ports.",
        "SELECT MAX(p.Pilots) AS max_pilots, SUM(p.Pilots) AS total_pilots FROM port AS p LIMIT 10000",
    );
    check(
        &h,
        "How many ports are there?",
        "SELECT COUNT(*) AS port_count FROM port AS p LIMIT 10000",
    );
}

#[test]
fn words_that_name_another_column_on_their_own_are_not_assumed_to_be_the_name() {
    // Ships have a `depth`: "the max depth" may be the largest of theirs, and over ports
    // the largest of `Max_depth` as well as the column itself; it stays an aggregation.
    check(
        &harbours_with_ships(),
        "What is the max depth?",
        "SELECT MAX(s.depth) AS max_depth FROM ship AS s LIMIT 10000",
    );
    check(
        &harbours_with_ships(),
        "What is the max depth of the ports?",
        "SELECT MAX(p.Max_depth) AS max_max_depth FROM port AS p LIMIT 10000",
    );
}

#[test]
fn an_extreme_after_with_the_ranks_by_the_column_it_names() {
    check(
        &harbours(),
        "Find the name of the port with the maximum depth.",
        "SELECT p.Name AS port, p.Max_depth AS max_depth FROM port AS p ORDER BY p.Max_depth DESC LIMIT 1",
    );
}

#[test]
fn a_unit_a_column_name_ends_with_may_go_unsaid() {
    let s = snapshot_of(
        "weather",
        vec![table(
            "weather",
            vec![
                col("day_id", "INTEGER", true),
                col("date", "TEXT", false),
                col("max_temperature_f", "INTEGER", false),
                col("mean_temperature_f", "INTEGER", false),
                col("mean_visibility_miles", "INTEGER", false),
            ],
            vec![],
        )],
    );
    check_placed(
        &s,
        "Give me the dates when the max temperature was higher than 85.",
        "SELECT w.date AS date FROM weather AS w WHERE w.max_temperature_f > 85 LIMIT 10000",
    );
    // "temperature" alone is either column; "mean" says which.
    check_placed(
        &s,
        "Give me the dates when the mean temperature was below 50.",
        "SELECT w.date AS date FROM weather AS w WHERE w.mean_temperature_f < 50 LIMIT 10000",
    );
    check_placed(
        &s,
        "List the dates in descending order of mean visibility.",
        "SELECT w.date AS date, w.mean_visibility_miles AS mean_visibility_miles FROM weather AS w ORDER BY w.mean_visibility_miles DESC LIMIT 10000",
    );
}

#[test]
fn overall_spelt_in_a_column_name_is_that_column_not_a_total() {
    let s = snapshot_of(
        "players",
        vec![table(
            "player",
            vec![
                col("player_id", "INTEGER", true),
                col("player_name", "TEXT", false),
                col("overall_rating", "INTEGER", false),
            ],
            vec![],
        )],
    );
    // Not `SUM(overall_rating)` per player compared with the average.
    check_placed(
        &s,
        "List the names of players who have an overall rating higher than the average.",
        "SELECT p.player_name AS player_name FROM player AS p WHERE p.overall_rating > (SELECT AVG(a.overall_rating) FROM player AS a) LIMIT 10000",
    );
}

//! "All the information about …" over a synthetic greenhouse (plants, and the gardeners who
//! tend them): the word asks for every column of the rows the question names, with its
//! conditions and order; right after listed columns it is theirs; read no way the plan can
//! show (a count per group, a sort key nobody can find) it is refused; and where the
//! schema itself names a column "info", the word is that column's.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, check_placed, describe, refused_placing};
use super::{col, samples, snapshot_of, table};

fn greenhouse() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "greenhouse",
        vec![
            table(
                "gardeners",
                vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
                vec![],
            ),
            table(
                "plants",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("species", "TEXT", false),
                    col("height", "REAL", false),
                    col("gardener_id", "INTEGER", false),
                ],
                vec![("gardener_id", "gardeners")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "plants",
        "species",
        samples(&["Fern", "Cactus", "Orchid"]),
    );
    snapshot
}

const EVERY_PLANT_COLUMN: &str = "SELECT p.id AS id, p.name AS plant, p.species AS species, p.height AS height, p.gardener_id AS gardener_id FROM plants AS p";

#[test]
fn all_the_information_about_rows_is_every_column_of_their_table() {
    let g = greenhouse();
    for q in [
        "Show all the information about plants.",
        "What is all the info on every plant?",
        "List the information of all plants.",
    ] {
        check_placed(&g, q, &format!("{EVERY_PLANT_COLUMN} LIMIT 10000"));
    }
    // With the question's conditions and order.
    check_placed(
        &g,
        "Find all the plant information for plants of species Fern.",
        &format!("{EVERY_PLANT_COLUMN} WHERE p.species = 'Fern' LIMIT 10000"),
    );
    check_placed(
        &g,
        "List all information about plants sorted by height in descending order.",
        &format!("{EVERY_PLANT_COLUMN} ORDER BY p.height DESC LIMIT 10000"),
    );
    // A direction with no key sorts by the rows' label, never by the key listed first.
    check_placed(
        &g,
        "Show all information about plants in alphabetical order.",
        &format!("{EVERY_PLANT_COLUMN} ORDER BY p.name LIMIT 10000"),
    );
}

#[test]
fn information_after_listed_columns_is_theirs() {
    check_placed(
        &greenhouse(),
        "Show the name and species information of the plants.",
        "SELECT p.name AS plant, p.species AS species FROM plants AS p LIMIT 10000",
    );
}

#[test]
fn information_no_plan_can_show_is_refused() {
    let g = greenhouse();
    // A count per group has no "every column" to show.
    refused_placing(
        &g,
        "Show all the information about the number of plants per species.",
        "information",
    );
    // "date" names no column: no sort key, so no order; never the first column's.
    refused_placing(
        &g,
        "List all information about plants sorted by date in ascending order.",
        "sorted by",
    );
}

#[test]
fn sort_them_by_names_the_sort_key() {
    let g = greenhouse();
    for q in [
        "List the names of the plants and sort them by height.",
        "What are the names of the plants? Order the results by height.",
    ] {
        check_placed(
            &g,
            q,
            "SELECT p.name AS plant, p.height AS height FROM plants AS p ORDER BY p.height LIMIT 10000",
        );
    }
}

#[test]
fn a_schema_that_names_info_reads_the_word_as_its_column() {
    let mut g = greenhouse();
    g.contract.add_table(table(
        "labels",
        vec![
            col("id", "INTEGER", true),
            col("plant_id", "INTEGER", false),
            col("info", "TEXT", false),
        ],
        vec![("plant_id", "plants")],
    ));
    check(
        &g,
        "Show the info of the labels.",
        "SELECT DISTINCT l.info AS info FROM labels AS l ORDER BY l.info LIMIT 10000",
    );
}

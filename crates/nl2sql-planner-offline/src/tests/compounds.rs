//! Two question words the schema writes as one (`Lastname`, `Highschooler`): read as that
//! word, over a small schema named unlike every fixture.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, refused_saying};
use super::{col, snapshot_of, table};

fn club() -> SchemaSnapshot {
    snapshot_of(
        "club",
        vec![
            table(
                "Highschooler",
                vec![
                    col("id", "INTEGER", true),
                    col("Firstname", "TEXT", false),
                    col("Lastname", "TEXT", false),
                    col("grade", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "Outing",
                vec![
                    col("outing_id", "INTEGER", true),
                    col("place", "TEXT", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn two_words_the_schema_writes_as_one_are_that_word() {
    let c = club();
    check(
        &c,
        "How many high schoolers are there?",
        "SELECT COUNT(*) AS highschooler_count FROM Highschooler AS h LIMIT 10000",
    );
    // "last" is the word of `Lastname`, not a ranking in time.
    check(
        &c,
        "List the last names of the high schoolers in grade 9.",
        "SELECT h.Lastname AS lastname FROM Highschooler AS h WHERE h.grade = 9 LIMIT 10000",
    );
    check(
        &c,
        "What are the first names of all high-schoolers?",
        "SELECT h.Firstname AS firstname FROM Highschooler AS h LIMIT 10000",
    );
}

#[test]
fn a_word_and_a_code_after_it_stay_apart() {
    // "code ED" stems to `code` (the "ed" read as an ending): no compound of the two.
    let roles = snapshot_of(
        "roles",
        vec![table(
            "Roles",
            vec![
                col("role_code", "TEXT", true),
                col("role_description", "TEXT", false),
            ],
            vec![],
        )],
    );
    check(
        &roles,
        "What is the description of role code ED?",
        "SELECT r.role_description AS role_description FROM Roles AS r WHERE r.role_code = 'ED' LIMIT 10000",
    );
}

#[test]
fn words_the_schema_does_not_write_as_one_stay_apart() {
    // "place" and "outing" are each named; "outing place" is no word of the schema.
    refused_saying(
        &club(),
        "How many high places are there?",
        "could not link: 'high'",
    );
}

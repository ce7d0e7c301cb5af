//! "id" alone names the key of its table, whatever the key is called: the table named
//! right before it ("artist id"), the one it is "of" ("the ids of artists"), or the
//! table of the column it is listed with ("the picture name and id"); a listed key of a
//! grouped table is grouped by too. Over the small gallery schema of the literal tests
//! (keys `artist_id`, `picture_id`) and the library of the absent-rows tests. An integer
//! column named by one agent noun (`Advisor`) is a key too: who, not how much.

use super::absent::{library, refers_by_name};
use super::literals::gallery;
use super::rules::{check, check_placed, refused_placing};
use super::{col, snapshot_of, table};

#[test]
fn id_of_a_table_is_its_key() {
    check(
        &gallery(),
        "What are the ids and first names of artists older than 40?",
        "SELECT a.artist_id AS artist_id, a.first_name AS first_name FROM artist AS a WHERE a.age > 40 LIMIT 10000",
    );
    // The key is not called "id" at all.
    let students = advised();
    check(
        &students,
        "Show the student id of the oldest student.",
        "SELECT s.StuID AS stuid, s.Age AS age FROM Student AS s ORDER BY s.Age DESC LIMIT 1",
    );
}

#[test]
fn id_listed_with_a_column_is_the_key_of_its_table() {
    check(
        &gallery(),
        "Show the picture name and id of the pictures in room 'B12'.",
        "SELECT p.picture_name AS picture_name, p.picture_id AS picture_id FROM picture AS p WHERE p.room = 'B12' LIMIT 10000",
    );
    check(
        &gallery(),
        "List the id, picture name and price of every picture.",
        "SELECT p.picture_id AS picture_id, p.picture_name AS picture_name, p.price AS price FROM picture AS p LIMIT 10000",
    );
}

#[test]
fn a_listed_key_of_a_grouped_table_is_grouped_by() {
    check(
        &library(),
        "Which readers have more than 2 loans? Show the name and id.",
        "SELECT r.Name AS reader, r.id AS id, COUNT(*) AS loan_count FROM Loan AS l INNER JOIN Reader AS r ON l.ReaderID = r.id GROUP BY r.Name, r.id HAVING COUNT(*) > 2 ORDER BY r.Name, r.id LIMIT 10000",
    );
}

/// Students whose `Advisor` is a faculty member's number (no foreign key says so).
fn advised() -> nl2sql_state::SchemaSnapshot {
    snapshot_of(
        "advising",
        vec![table(
            "Student",
            vec![
                col("StuID", "INTEGER", true),
                col("LName", "TEXT", false),
                col("Age", "INTEGER", false),
                col("Advisor", "INTEGER", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn an_integer_named_by_an_agent_noun_is_who_not_how_much() {
    // "each advisor" groups by the advisor's number; it is never added up.
    check(
        &advised(),
        "How many students does each advisor have?",
        "SELECT s.Advisor AS advisor, COUNT(*) AS student_count FROM Student AS s GROUP BY s.Advisor ORDER BY s.Advisor LIMIT 10000",
    );
    // "How many advisors" is no sum of their numbers: refused, naming the word.
    refused_placing(&advised(), "How many advisors are there?", "advisors");
    // An amount is still added up.
    check(
        &advised(),
        "What is the total age of students?",
        "SELECT SUM(s.Age) AS total_age FROM Student AS s LIMIT 10000",
    );
}

/// Modules keyed by a text code (`mod_code`), each in a faculty it refers to by the
/// faculty's code (`fac_code`).
fn modules() -> nl2sql_state::SchemaSnapshot {
    let faculty = table(
        "faculty",
        vec![
            col("fac_code", "TEXT", true),
            col("fac_name", "TEXT", false),
        ],
        vec![],
    );
    let mut module = table(
        "module",
        vec![
            col("mod_code", "TEXT", true),
            col("fac_code", "TEXT", false),
            col("title", "TEXT", false),
        ],
        vec![("fac_code", "faculty")],
    );
    module.foreign_keys[0].referred_columns = vec!["fac_code".into()];
    snapshot_of("modules", vec![faculty, module])
}

#[test]
fn a_code_word_reads_the_tables_own_code_key_too() {
    // "the codes of the modules" may be each module's own code (its key) as much as the
    // faculty code a module refers to: named both, not answered with the faculty code.
    let e = super::rules::strict_over(&modules(), "What are the codes of all the modules?")
        .expect_err("refused");
    assert!(
        e.message.contains(
            "'codes' reads as column module.fac_code or as column module.mod_code equally"
        ),
        "{}",
        e.message
    );
}

#[test]
fn id_of_the_ranked_rows_is_the_key_of_their_table() {
    // A superlative or a count between "id of" and the table.
    check(
        &gallery(),
        "What is the id of the most expensive picture?",
        "SELECT p.picture_id AS picture_id, p.price AS price FROM picture AS p ORDER BY p.price DESC LIMIT 1",
    );
    check(
        &gallery(),
        "What are the ids of the two oldest artists?",
        "SELECT a.artist_id AS artist_id, a.age AS age FROM artist AS a ORDER BY a.age DESC LIMIT 2",
    );
}

#[test]
fn a_table_with_id_and_a_number_is_the_row_with_that_key() {
    let g = gallery();
    check_placed(
        &g,
        "What is the price of the picture with id 3?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p WHERE p.picture_id = 3 LIMIT 10000",
    );
    check_placed(
        &g,
        "What is the age of the artist whose id is 7?",
        "SELECT a.first_name AS first_name, a.age AS age FROM artist AS a WHERE a.artist_id = 7 LIMIT 10000",
    );
    check_placed(
        &g,
        "What is the first name of the artist that has an id of 7?",
        "SELECT a.first_name AS first_name FROM artist AS a WHERE a.artist_id = 7 LIMIT 10000",
    );
    // The table's name ends a column said of it ("the medium of picture").
    check_placed(
        &g,
        "Show the medium of picture with id 3.",
        "SELECT p.medium AS medium FROM picture AS p WHERE p.picture_id = 3 LIMIT 10000",
    );
    // A comparison after the key word compares the key.
    check_placed(
        &g,
        "What is the price of the pictures whose id is between 3 and 7?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p WHERE p.picture_id >= 3 AND p.picture_id <= 7 LIMIT 10000",
    );
    // "id" with no number after it is not a row's key picked out: still refused.
    refused_placing(&g, "What is the price of the picture with id?", "id");
}

/// Documents, and a circulation log whose `document_id` refers to them (its name sorts
/// first).
fn circulated() -> nl2sql_state::SchemaSnapshot {
    snapshot_of(
        "circulated",
        vec![
            table(
                "Documents",
                vec![
                    col("document_id", "INTEGER", true),
                    col("receipt_date", "DATETIME", false),
                ],
                vec![],
            ),
            refers_by_name(table(
                "Circulation",
                vec![
                    col("circulation_id", "INTEGER", true),
                    col("document_id", "INTEGER", false),
                    col("copy_number", "INTEGER", false),
                ],
                vec![("document_id", "Documents")],
            )),
        ],
    )
}

#[test]
fn a_number_after_a_column_of_several_tables_is_a_value_of_the_one_in_context() {
    // `document_id` is a column of both tables: the receipt date is the documents', and so
    // is the column "document id 3" filters on (not the log's, first by name, which
    // joined the log and answered with no rows for a document never circulated).
    check_placed(
        &circulated(),
        "What is the receipt date of document id 3?",
        "SELECT d.receipt_date AS receipt_date FROM Documents AS d WHERE d.document_id = 3 LIMIT 10000",
    );
}

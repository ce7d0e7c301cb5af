//! Literals the question spells out ("whose last name is 'Kim'", "the picture named
//! 'Dusk'", "the 'Oils' medium", "a title containing 'sea'", "room B12", "the artist with
//! id 3", "older than 40") become filters on the column they are said of, even when no
//! sample holds them (the engine's value grounding then checks them against the data),
//! over a small gallery schema named unlike every fixture.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use nl2sql_state::ErrorCode;

use super::rules::{check, check_placed, describe, refused_placing, request_over, sql_over};
use super::{col, links, samples, snapshot_of, table};
use crate::OfflinePlanner;

pub(super) fn gallery() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("gallery", "sqlite");
    contract.add_table(table(
        "artist",
        vec![
            col("artist_id", "INTEGER", true),
            col("first_name", "TEXT", false),
            col("last_name", "TEXT", false),
            col("age", "INTEGER", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "picture",
        vec![
            col("picture_id", "INTEGER", true),
            col("picture_name", "TEXT", false),
            col("medium", "TEXT", false),
            col("room", "TEXT", false),
            col("price", "REAL", false),
            col("artist_id", "INTEGER", false),
        ],
        vec![("artist_id", "artist")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn a_quoted_literal_after_a_column_is_its_value() {
    let g = gallery();
    check(
        &g,
        "What is the age of the artist whose last name is \"Kim\"?",
        "SELECT a.first_name AS first_name, a.age AS age FROM artist AS a WHERE a.last_name = 'Kim' LIMIT 10000",
    );
    check(
        &g,
        "Which pictures hang in room B12?",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.room = 'B12' LIMIT 10000",
    );
}

#[test]
fn a_table_named_by_a_literal_filters_its_name_column() {
    check(
        &gallery(),
        "What is the price of the picture named 'Dusk'?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p WHERE p.picture_name = 'Dusk' LIMIT 10000",
    );
}

#[test]
fn a_quoted_literal_before_a_column_is_its_value() {
    check(
        &gallery(),
        "List the pictures in the 'Oils' medium.",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.medium = 'Oils' LIMIT 10000",
    );
}

#[test]
fn containing_a_literal_is_a_like_pattern() {
    let g = gallery();
    check(
        &g,
        "Find the names of the pictures whose name contains the word \"sea\".",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.picture_name LIKE '%sea%' LIMIT 10000",
    );
    // Typographic quotes, and "has the substring" after the column.
    check_placed(
        &g,
        "Find the names of the pictures whose name has the substring “sea”.",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.picture_name LIKE '%sea%' LIMIT 10000",
    );
    // The column said after the literal holds it ("in their …").
    check_placed(
        &g,
        "Which pictures have the word 'Oil' in their medium?",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.medium LIKE '%Oil%' LIMIT 10000",
    );
    check_placed(
        &g,
        "How many artists have the letter 'K' in their last names?",
        "SELECT COUNT(*) AS artist_count FROM artist AS a WHERE a.last_name LIKE '%K%' LIMIT 10000",
    );
    // After another column, whose names they are is unsaid: refused.
    refused_placing(
        &g,
        "Which picture rooms have the word 'B' in their names?",
        "word', 'B",
    );
}

#[test]
fn whose_name_after_a_text_column_is_that_columns_value() {
    // The name of "the medium" is the medium itself, not the picture's name.
    check(
        &gallery(),
        "Which pictures have a medium whose name contains the word 'Oil'?",
        "SELECT p.picture_name AS picture_name, p.medium AS medium FROM picture AS p WHERE p.medium LIKE '%Oil%' LIMIT 10000",
    );
}

#[test]
fn starting_or_ending_with_a_literal_anchors_the_pattern() {
    let g = gallery();
    check_placed(
        &g,
        "Which artists have a last name starting with the letter K?",
        "SELECT a.first_name AS first_name FROM artist AS a WHERE a.last_name LIKE 'K%' LIMIT 10000",
    );
    check_placed(
        &g,
        "Find the first names of artists whose last name begins with M.",
        "SELECT a.first_name AS first_name FROM artist AS a WHERE a.last_name LIKE 'M%' LIMIT 10000",
    );
    check_placed(
        &g,
        "List the pictures whose name ends with 'Dusk'.",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.picture_name LIKE '%Dusk' LIMIT 10000",
    );
    // A lower-case letter after "letter", a number: still the literal.
    check_placed(
        &g,
        "Return the last names of artists whose first name is ending with the letter m.",
        "SELECT a.last_name AS last_name FROM artist AS a WHERE a.first_name LIKE '%m' LIMIT 10000",
    );
    check_placed(
        &g,
        "Which pictures are in rooms starting with 4?",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.room LIKE '4%' LIMIT 10000",
    );
    // Without a column, the table's label holds it.
    check_placed(
        &g,
        "List the pictures that start with 'Sea'.",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.picture_name LIKE 'Sea%' LIMIT 10000",
    );
    // Negated: the pattern is not matched.
    check_placed(
        &g,
        "List the pictures whose names do not start with 'Sea'.",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE NOT (p.picture_name LIKE 'Sea%') LIMIT 10000",
    );
    // A single capital letter, even the article's.
    check_placed(
        &g,
        "List the pictures whose name starts with A.",
        "SELECT p.picture_name AS picture_name FROM picture AS p WHERE p.picture_name LIKE 'A%' LIMIT 10000",
    );
    // The verb is no column ("ending" is not `end_date`), the number no stored value.
    let jobs = snapshot_of(
        "jobs",
        vec![table(
            "worker",
            vec![
                col("worker_id", "INTEGER", true),
                col("first_name", "TEXT", false),
                col("badge", "TEXT", false),
                col("end_date", "TEXT", false),
            ],
            vec![],
        )],
    );
    check_placed(
        &jobs,
        "Which workers have a first name ending with the letter m?",
        "SELECT w.first_name AS first_name FROM worker AS w WHERE w.first_name LIKE '%m' LIMIT 10000",
    );
    // "starting with" a plain word names no part of a value.
    let q = "List the artists starting with the oldest.";
    assert!(!sql_over(&g, q).contains("LIKE"), "{q}");
}

#[test]
fn a_number_after_a_numeric_column_is_its_value() {
    let g = gallery();
    check(
        &g,
        "What is the last name of the artist with artist id 3?",
        "SELECT a.last_name AS last_name FROM artist AS a WHERE a.artist_id = 3 LIMIT 10000",
    );
    check(
        &g,
        "Which artists are of age 40?",
        "SELECT a.first_name AS first_name FROM artist AS a WHERE a.age = 40 LIMIT 10000",
    );
}

#[test]
fn older_and_younger_compare_an_age() {
    let g = gallery();
    check(
        &g,
        "List the last names of artists older than 40.",
        "SELECT a.last_name AS last_name FROM artist AS a WHERE a.age > 40 LIMIT 10000",
    );
    // No age column: the comparison names nothing, and the strict planner refuses,
    // naming the bound it could not place.
    let e = OfflinePlanner::new()
        .plan_sync(&request_over(&g, "Which pictures are older than 40?"))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert!(e.message.contains("'40'"), "{}", e.message);
}

#[test]
fn a_meaningless_word_after_its_column_is_its_known_value() {
    let g = hanging();
    // "done" carries no meaning elsewhere ("any work done"), but right after the column
    // whose known value it is, it is that value: not a dropped condition.
    check(
        &g,
        "List the picture ids for any pictures with the hanging status done.",
        "SELECT p.picture_id AS picture_id FROM picture AS p WHERE p.hanging_status = 'done' LIMIT 10000",
    );
}

#[test]
fn a_column_that_names_the_value_after_it_is_not_listed() {
    // "whose hanging status is not pending": the column names the condition; listed, it
    // would make "the different names" different again per status.
    check(
        &hanging(),
        "Give the different names of pictures whose hanging status is not pending.",
        "SELECT DISTINCT p.picture_name AS picture_name FROM picture AS p WHERE p.hanging_status <> 'pending' ORDER BY p.picture_name LIMIT 10000",
    );
}

/// Pictures with a hanging status whose values are known.
fn hanging() -> SchemaSnapshot {
    let mut g = snapshot_of(
        "hanging",
        vec![table(
            "picture",
            vec![
                col("picture_id", "INTEGER", true),
                col("picture_name", "TEXT", false),
                col("hanging_status", "TEXT", false),
            ],
            vec![],
        )],
    );
    describe(
        &mut g,
        "picture",
        "hanging_status",
        samples(&["done", "pending"]),
    );
    g
}

/// Places and the attractions at them: a place and an attraction share a name but for
/// its case.
fn sights() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "sights",
        vec![
            table(
                "place",
                vec![
                    col("id", "INTEGER", true),
                    col("place_name", "TEXT", false),
                    col("address", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "attraction",
                vec![
                    col("id", "INTEGER", true),
                    col("title", "TEXT", false),
                    col("place_id", "INTEGER", false),
                ],
                vec![("place_id", "place")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "place",
        "place_name",
        samples(&["UK Gallery", "Old Mill"]),
    );
    describe(
        &mut snapshot,
        "attraction",
        "title",
        samples(&["UK gallery", "Ferris wheel"]),
    );
    snapshot
}

#[test]
fn a_value_spelt_exactly_as_stored_is_read_there() {
    // 'UK Gallery' is a place's name as stored; an attraction's title only folds to it.
    check(
        &sights(),
        "What is the address of 'UK Gallery'?",
        "SELECT p.address AS address FROM place AS p WHERE p.place_name = 'UK Gallery' LIMIT 10000",
    );
    check(
        &sights(),
        "Which place holds 'UK gallery'?",
        "SELECT p.place_name AS place_name FROM place AS p INNER JOIN attraction AS a ON p.id = a.place_id WHERE a.title = 'UK gallery' LIMIT 10000",
    );
}

/// Channels and who owns them, the owners' names known.
fn channels() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "channels",
        vec![table(
            "channel",
            vec![
                col("id", "INTEGER", true),
                col("name", "TEXT", false),
                col("owner", "TEXT", false),
            ],
            vec![],
        )],
    );
    describe(&mut snapshot, "channel", "owner", samples(&["CCTV", "HBS"]));
    snapshot
}

/// "channels owned by CCTV": a verb right before a value the plan filters on (a
/// preposition between at most) is that condition; before a value no filter reads, or
/// before nothing, it stays unplaced.
#[test]
fn a_verb_before_a_filtered_value_is_that_condition() {
    let s = channels();
    for (question, sql) in [
        (
            "List the names of the channels owned by CCTV.",
            "SELECT c.name AS channel FROM channel AS c WHERE c.owner = 'CCTV' LIMIT 10000",
        ),
        (
            "Which channels are not owned by CCTV?",
            "SELECT c.name AS channel FROM channel AS c WHERE c.owner <> 'CCTV' LIMIT 10000",
        ),
    ] {
        check_placed(&s, question, sql);
    }
    refused_placing(&s, "List the names of the channels owned.", "owned");
}

/// A clinic: its midwives (a `role` column holding 'Midwife', 'Surgeon') and the visits a
/// midwife prepares, tickets with the date they were filed, and the lessons its staff
/// (graded 'Tutor' or 'Professor') give as tutors.
fn clinic() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("clinic", "sqlite");
    contract.add_table(table(
        "midwife",
        vec![
            col("id", "INTEGER", true),
            col("full_name", "TEXT", false),
            col("role", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "visit",
        vec![
            col("id", "INTEGER", true),
            col("prep_midwife", "INTEGER", false),
            col("room", "TEXT", false),
        ],
        vec![("prep_midwife", "midwife")],
    ));
    contract.add_table(table(
        "ticket",
        vec![
            col("id", "INTEGER", true),
            col("date_ticket_filed", "DATE", false),
            col("state", "TEXT", false),
            col("kind", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "staff",
        vec![
            col("id", "INTEGER", true),
            col("full_name", "TEXT", false),
            col("grade", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "lesson",
        vec![col("id", "INTEGER", true), col("tutor", "INTEGER", false)],
        vec![("tutor", "staff")],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(
        &mut snapshot,
        "staff",
        "grade",
        samples(&["Tutor", "Professor"]),
    );
    describe(
        &mut snapshot,
        "midwife",
        "role",
        samples(&["Midwife", "Surgeon"]),
    );
    describe(
        &mut snapshot,
        "ticket",
        "state",
        samples(&["Filed", "Closed"]),
    );
    describe(
        &mut snapshot,
        "ticket",
        "kind",
        samples(&["urgent", "routine"]),
    );
    snapshot
}

#[test]
fn a_common_noun_that_names_a_table_or_another_column_is_that_name_not_a_value() {
    let c = clinic();
    // "midwife" names the table, not the role 'Midwife' of its rows.
    check_placed(
        &c,
        "What is the name of the midwife who prepared the most visits?",
        "SELECT m.full_name AS full_name, COUNT(*) AS visit_count FROM visit AS v INNER JOIN midwife AS m ON v.prep_midwife = m.id GROUP BY m.full_name ORDER BY visit_count DESC LIMIT 1",
    );
    // "filed" names `date_ticket_filed`, not the state 'Filed'.
    check_placed(
        &c,
        "What are the ids of the tickets filed before 2020-01-01?",
        "SELECT t.id AS id, t.date_ticket_filed AS date_ticket_filed FROM ticket AS t WHERE t.date_ticket_filed < '2020-01-01' LIMIT 10000",
    );
    // "tutor" names `lesson.tutor`, which refers to the staff graded 'Tutor'.
    assert_eq!(
        links("Which tutor gives the most lessons?", &c),
        ["lesson.tutor", "lesson"]
    );
    // A word that names no other part of the schema stays the value of its column.
    check_placed(
        &c,
        "How many urgent tickets are there?",
        "SELECT COUNT(*) AS ticket_count FROM ticket AS t WHERE t.kind = 'urgent' LIMIT 10000",
    );
}

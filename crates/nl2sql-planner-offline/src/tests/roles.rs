//! Which of several foreign keys between the same two tables a question means (see
//! `link::roles`): the key whose role it says ("origin", "dispatched"), the key without a
//! role where it says no other's ("the language of the film" beside `original_language_id`),
//! and a refusal naming the keys where it says two roles or none. Over a small freight
//! schema and a film catalogue named unlike any fixture.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, check_placed, refused_saying};
use super::{col, snapshot_of, table};

fn freight() -> SchemaSnapshot {
    snapshot_of(
        "freight",
        vec![
            table(
                "Depot",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("capacity", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "Clerk",
                vec![col("id", "INTEGER", true), col("surname", "TEXT", false)],
                vec![],
            ),
            table(
                "Shipment",
                vec![
                    col("id", "INTEGER", true),
                    col("weight", "REAL", false),
                    col("origin_depot_id", "INTEGER", false),
                    col("destination_depot_id", "INTEGER", false),
                    col("date_dispatched", "DATE", false),
                    col("dispatched_by_clerk_id", "INTEGER", false),
                    col("approved_by_clerk_id", "INTEGER", false),
                ],
                vec![
                    ("origin_depot_id", "Depot"),
                    ("destination_depot_id", "Depot"),
                    ("dispatched_by_clerk_id", "Clerk"),
                    ("approved_by_clerk_id", "Clerk"),
                ],
            ),
        ],
    )
}

fn films() -> SchemaSnapshot {
    snapshot_of(
        "films",
        vec![
            table(
                "Language",
                vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
                vec![],
            ),
            table(
                "Film",
                vec![
                    col("film_id", "INTEGER", true),
                    col("title", "TEXT", false),
                    col("language_id", "INTEGER", false),
                    col("original_language_id", "INTEGER", false),
                ],
                vec![
                    ("language_id", "Language"),
                    ("original_language_id", "Language"),
                ],
            ),
        ],
    )
}

#[test]
fn the_role_a_question_says_chooses_its_key() {
    let f = freight();
    check_placed(
        &f,
        "How many shipments have an origin depot with a capacity above 500?",
        "SELECT COUNT(*) AS shipment_count FROM Shipment AS s INNER JOIN Depot AS d ON \
         s.origin_depot_id = d.id WHERE d.capacity > 500 LIMIT 10000",
    );
    check_placed(
        &f,
        "How many shipments have a destination depot with a capacity above 500?",
        "SELECT COUNT(*) AS shipment_count FROM Shipment AS s INNER JOIN Depot AS d ON \
         s.destination_depot_id = d.id WHERE d.capacity > 500 LIMIT 10000",
    );
}

#[test]
fn two_roles_or_none_are_refused_naming_the_keys() {
    let f = freight();
    refused_saying(
        &f,
        "How many shipments have an origin depot and a destination depot with a capacity \
         above 500?",
        "joined by 2 different keys",
    );
    refused_saying(
        &f,
        "How many shipments go through a depot with a capacity above 500?",
        "joined by 2 different keys",
    );
}

#[test]
fn a_role_word_is_the_key_where_its_table_is_named_and_a_column_elsewhere() {
    let f = freight();
    // "dispatched" is also a word of `date_dispatched`: with the clerk named, it says
    // which clerk.
    check_placed(
        &f,
        "What is the total weight of the shipments dispatched by the clerk with surname \
         'Okafor'?",
        "SELECT SUM(s.weight) AS total_weight FROM Shipment AS s INNER JOIN Clerk AS c ON \
         s.dispatched_by_clerk_id = c.id WHERE c.surname = 'Okafor' LIMIT 10000",
    );
    // Without the clerk, the date.
    check(
        &f,
        "What is the total weight of the shipments dispatched before 2020?",
        "SELECT SUM(s.weight) AS total_weight FROM Shipment AS s WHERE s.date_dispatched < \
         '2020-01-01' LIMIT 10000",
    );
}

#[test]
fn the_key_without_a_role_is_meant_where_no_other_role_is_said() {
    let f = films();
    check_placed(
        &f,
        "What is the name of the language of film 7?",
        "SELECT l.name AS language FROM Language AS l INNER JOIN Film AS f ON l.id = \
         f.language_id WHERE f.film_id = 7 LIMIT 10000",
    );
    check_placed(
        &f,
        "What is the name of the original language of film 7?",
        "SELECT l.name AS language FROM Language AS l INNER JOIN Film AS f ON l.id = \
         f.original_language_id WHERE f.film_id = 7 LIMIT 10000",
    );
}

/// Files deleted by officers, the deletion approved by another: one key's role is a word
/// of its table's name ("deleted").
fn deletions() -> SchemaSnapshot {
    snapshot_of(
        "deletions",
        vec![
            table(
                "Officer",
                vec![col("id", "INTEGER", true), col("surname", "TEXT", false)],
                vec![],
            ),
            table(
                "Files_Deleted",
                vec![
                    col("id", "INTEGER", true),
                    col("Deleted_by_Officer_ID", "INTEGER", false),
                    col("Deletion_Approved_by_Officer_ID", "INTEGER", false),
                ],
                vec![
                    ("Deleted_by_Officer_ID", "Officer"),
                    ("Deletion_Approved_by_Officer_ID", "Officer"),
                ],
            ),
        ],
    )
}

#[test]
fn a_role_said_beside_another_key_s_word_is_refused() {
    // "approved" says one key; "deleted", a word of the table's name, is the other's: the
    // officers who approved and those who deleted are two joins.
    refused_saying(
        &deletions(),
        "What are the surnames of the officers who approved the deletion and the officers \
         who deleted the files?",
        "joined by 2 different keys",
    );
}

/// Learners and their friends: a table of pairs of the same rows.
fn friends() -> SchemaSnapshot {
    snapshot_of(
        "friends",
        vec![
            table(
                "Learner",
                vec![col("id", "INTEGER", true), col("name", "TEXT", false)],
                vec![],
            ),
            table(
                "Friend",
                vec![
                    col("classmate_id", "INTEGER", false),
                    col("friend_id", "INTEGER", false),
                ],
                vec![("classmate_id", "Learner"), ("friend_id", "Learner")],
            ),
            table(
                "Fixture",
                vec![
                    col("id", "INTEGER", true),
                    col("Learner_ID_1", "INTEGER", false),
                    col("Learner_ID_2", "INTEGER", false),
                    col("points", "INTEGER", false),
                ],
                vec![("Learner_ID_1", "Learner"), ("Learner_ID_2", "Learner")],
            ),
        ],
    )
}

#[test]
fn a_pair_of_the_same_rows_has_no_plain_side_and_numbers_are_no_roles() {
    let f = friends();
    // `friend_id` names no role beyond its table's name, but in a table of pairs it is
    // just the other side: which side Kyle is on must be said. "The friends of Kyle"
    // does not say it ...
    refused_saying(
        &f,
        "What are the names of the friends of the learner named 'Kyle'?",
        "joined by 2 different keys",
    );
    // ... friends Kyle has do: Kyle holds the pairs (see
    // `pairs_had_by_rows_join_by_the_holders_key`).
    check_placed(
        &f,
        "How many friends does the learner named 'Kyle' have?",
        "SELECT COUNT(*) AS friend_count FROM Friend AS f INNER JOIN Learner AS l ON \
         f.classmate_id = l.id WHERE l.name = 'Kyle' LIMIT 10000",
    );
    // "2" is a number of points, not the role of `Learner_ID_2`.
    refused_saying(
        &f,
        "Which learners played fixtures with 2 points?",
        "joined by 2 different keys",
    );
}

/// Routes between airports, their ends abbreviated (`src_apid`, `dst_apid`).
fn routes() -> SchemaSnapshot {
    snapshot_of(
        "air",
        vec![
            table(
                "airports",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("city", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "routes",
                vec![
                    col("rid", "INTEGER", true),
                    col("src_apid", "INTEGER", false),
                    col("dst_apid", "INTEGER", false),
                    col("airline", "TEXT", false),
                ],
                vec![("src_apid", "airports"), ("dst_apid", "airports")],
            ),
        ],
    )
}

#[test]
fn words_of_the_same_role_choose_an_abbreviated_key() {
    let r = routes();
    // "destination" says `dst`; "departing" says `src`, as "start" would.
    check(
        &r,
        "Find the name of the airport which is the destination of the most number of routes.",
        "SELECT a.name AS airport, COUNT(*) AS route_count FROM routes AS r INNER JOIN airports AS a ON r.dst_apid = a.id GROUP BY a.name ORDER BY route_count DESC LIMIT 1",
    );
    check(
        &r,
        "How many routes are departing from each airport? Give the airport names.",
        "SELECT a.name AS airport, COUNT(*) AS route_count FROM routes AS r INNER JOIN airports AS a ON r.src_apid = a.id GROUP BY a.name ORDER BY a.name LIMIT 10000",
    );
}

/// Members and their buddies: a table of pairs, both keys to `Member`, one named as the
/// pair table itself (the other side), one as whose pair it is.
fn buddies() -> SchemaSnapshot {
    snapshot_of(
        "buddies",
        vec![
            table(
                "Member",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("level", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "Buddy",
                vec![
                    col("member_id", "INTEGER", false),
                    col("buddy_id", "INTEGER", false),
                ],
                vec![("member_id", "Member"), ("buddy_id", "Member")],
            ),
        ],
    )
}

#[test]
fn pairs_had_by_rows_join_by_the_holders_key() {
    let b = buddies();
    check_placed(
        &b,
        "What are the names of members who have at least 3 buddies?",
        "SELECT m.name AS member, COUNT(*) AS buddy_count FROM Buddy AS b INNER JOIN Member \
         AS m ON b.member_id = m.id GROUP BY m.id, m.name HAVING COUNT(*) >= 3 ORDER BY m.id, \
         m.name LIMIT 10000",
    );
    check_placed(
        &b,
        "What is the name of the member with the greatest number of buddies?",
        "SELECT m.name AS member, COUNT(*) AS buddy_count FROM Buddy AS b INNER JOIN Member \
         AS m ON b.member_id = m.id GROUP BY m.name ORDER BY buddy_count DESC LIMIT 1",
    );
}

#[test]
fn pairs_not_had_choose_no_key() {
    let b = buddies();
    refused_saying(
        &b,
        "What are the names of the buddies of members with level 3?",
        "joined by 2 different keys",
    );
}

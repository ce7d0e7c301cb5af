//! Two tables joined by more than one foreign key (a vote table with a president's and a
//! treasurer's vote, each a student): the join uses the key whose column the question
//! names, and a question that names none is refused, naming the keys.

use nl2sql_state::{ErrorCode, SchemaSnapshot};

use super::rules::{check, request_over};
use super::{col, snapshot_of, table};
use crate::OfflinePlanner;

fn votes() -> SchemaSnapshot {
    let student = table(
        "student",
        vec![
            col("id", "INTEGER", true),
            col("first_name", "TEXT", false),
            col("major", "TEXT", false),
        ],
        vec![],
    );
    let ballot = table(
        "ballot",
        vec![
            col("ballot_id", "INTEGER", true),
            col("president_vote", "INTEGER", false),
            col("treasurer_vote", "INTEGER", false),
        ],
        vec![("president_vote", "student"), ("treasurer_vote", "student")],
    );
    snapshot_of("votes", vec![student, ballot])
}

#[test]
fn the_named_key_joins_the_tables() {
    check(
        &votes(),
        "Find the distinct majors of students who have treasurer votes.",
        "SELECT DISTINCT s.major AS major FROM student AS s INNER JOIN ballot AS b ON s.id = b.treasurer_vote ORDER BY s.major LIMIT 10000",
    );
}

#[test]
fn no_named_key_is_refused_naming_the_keys() {
    let e = OfflinePlanner::new()
        .plan_sync(&request_over(
            &votes(),
            "How many ballots does each student have?",
        ))
        .expect_err("two keys, none named");
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert!(
        e.message.contains(
            "joined by 2 different keys (ballot.president_vote or ballot.treasurer_vote)"
        ),
        "{}",
        e.message
    );
}

#[test]
fn a_longer_column_name_is_not_completed_past_and() {
    // "vice" after "and" belongs to the next column, not to "president vote".
    let s = snapshot_of(
        "elections",
        vec![table(
            "election",
            vec![
                col("election_id", "INTEGER", true),
                col("president_vote", "INTEGER", false),
                col("vice_president_vote", "INTEGER", false),
            ],
            vec![],
        )],
    );
    check(
        &s,
        "Report the distinct president vote and the vice president vote.",
        "SELECT DISTINCT e.president_vote AS president_vote, e.vice_president_vote AS vice_president_vote FROM election AS e ORDER BY e.president_vote LIMIT 10000",
    );
}

#[test]
fn a_key_declared_twice_is_one_way_to_join() {
    // SQLite keeps a foreign key declared twice as two; it is still one join.
    let owner = table(
        "owner",
        vec![col("id", "INTEGER", true), col("first_name", "TEXT", false)],
        vec![],
    );
    let dog = table(
        "dog",
        vec![
            col("dog_id", "INTEGER", true),
            col("name", "TEXT", false),
            col("owner_id", "INTEGER", false),
        ],
        vec![("owner_id", "owner"), ("owner_id", "owner")],
    );
    check(
        &snapshot_of("kennel", vec![owner, dog]),
        "List the names of dogs and the first names of their owners.",
        "SELECT d.name AS dog, o.first_name AS first_name FROM dog AS d INNER JOIN owner AS o ON d.owner_id = o.id LIMIT 10000",
    );
}

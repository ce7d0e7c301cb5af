//! "female artists": a gender word is a value of a sex or gender column, spelt as the
//! column's known values spell it; naming both genders filters nothing. Likewise a flag
//! kept as text ("athletes on scholarship", "scholarship athletes": `on_scholarship = 'Y'`)
//! is spelt as stored.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use nl2sql_state::ErrorCode;

use super::rules::{check, describe, request_over};
use super::{col, samples, snapshot_of, table};
use crate::OfflinePlanner;

fn members() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("club", "sqlite");
    contract.add_table(table(
        "member",
        vec![
            col("member_id", "INTEGER", true),
            col("full_name", "TEXT", false),
            col("sex", "TEXT", false),
            col("age", "INTEGER", false),
        ],
        vec![],
    ));
    let mut snapshot = SchemaSnapshot {
        contract,
        metadata: None,
    };
    describe(&mut snapshot, "member", "sex", samples(&["F", "M"]));
    snapshot
}

#[test]
fn a_gender_word_is_the_value_the_column_spells() {
    let m = members();
    check(
        &m,
        "What is the average age of female members?",
        "SELECT AVG(m.age) AS avg_age FROM member AS m WHERE m.sex = 'F' LIMIT 10000",
    );
    check(
        &m,
        "How many male members are there?",
        "SELECT COUNT(*) AS member_count FROM member AS m WHERE m.sex = 'M' LIMIT 10000",
    );
}

#[test]
fn both_genders_filter_nothing_and_the_strict_planner_refuses() {
    // "for male and female members" asks about both (a grouping the rules do not
    // read): no filter, and the words stay unplaced.
    let m = members();
    let question = "What is the average age of male and female members?";
    check(
        &m,
        question,
        "SELECT AVG(m.age) AS avg_age FROM member AS m LIMIT 10000",
    );
    let e = OfflinePlanner::new()
        .plan_sync(&request_over(&m, question))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousQuestion);
    assert!(e.message.contains("'male', 'female'"), "{}", e.message);
}

/// People whose name is their key, with a gender column.
fn people() -> SchemaSnapshot {
    snapshot_of(
        "people",
        vec![table(
            "Person",
            vec![
                col("name", "TEXT", true),
                col("age", "INTEGER", false),
                col("gender", "TEXT", false),
                col("job", "TEXT", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn who_is_answered_by_the_name_not_the_gender() {
    // `gender` ends like an agent noun ("operator") but records no one who acted.
    check(
        &people(),
        "Who is the person whose age is below 30?",
        "SELECT p.name AS person FROM Person AS p WHERE p.age < 30 LIMIT 10000",
    );
}

/// A flag kept as text: `on_scholarship` holds only `Y` and `N`, `approved` only `Yes`
/// and `No`, `notes` holds other words too.
fn sports() -> SchemaSnapshot {
    sports_with(vec![])
}

/// `sports()` with more tables beside the athletes.
fn sports_with(more: Vec<nl2sql_state::TableContract>) -> SchemaSnapshot {
    let mut tables = vec![table(
        "athlete",
        vec![
            col("athlete_id", "INTEGER", true),
            col("name", "TEXT", false),
            col("on_scholarship", "TEXT", false),
            col("approved", "TEXT", false),
            col("notes", "TEXT", false),
        ],
        vec![],
    )];
    tables.extend(more);
    let mut snapshot = snapshot_of("sports", tables);
    describe(
        &mut snapshot,
        "athlete",
        "on_scholarship",
        samples(&["Y", "N"]),
    );
    describe(
        &mut snapshot,
        "athlete",
        "approved",
        samples(&["Yes", "No"]),
    );
    describe(
        &mut snapshot,
        "athlete",
        "notes",
        samples(&["Y", "injured"]),
    );
    snapshot
}

#[test]
fn a_yes_no_flag_in_text_is_its_adjective_spelt_as_stored() {
    let s = sports();
    check(
        &s,
        "Show the names of all athletes who are on scholarship.",
        "SELECT a.name AS athlete FROM athlete AS a WHERE a.on_scholarship = 'Y' LIMIT 10000",
    );
    check(
        &s,
        "How many athletes are approved?",
        "SELECT COUNT(*) AS athlete_count FROM athlete AS a WHERE a.approved = 'Yes' LIMIT 10000",
    );
    check(
        &s,
        "How many athletes are unapproved?",
        "SELECT COUNT(*) AS athlete_count FROM athlete AS a WHERE a.approved = 'No' LIMIT 10000",
    );
}

#[test]
fn a_flag_named_on_something_is_also_said_by_the_something_alone() {
    // "scholarship athletes" are those `on_scholarship = 'Y'`, not every athlete listed
    // beside the flag.
    check(
        &sports(),
        "Show the names of all scholarship athletes.",
        "SELECT a.name AS athlete FROM athlete AS a WHERE a.on_scholarship = 'Y' LIMIT 10000",
    );
}

#[test]
fn the_something_of_a_flag_named_on_something_may_be_a_table_of_its_own() {
    // With a `scholarship` table, "scholarships" are its rows, not athletes on one.
    let s = sports_with(vec![table(
        "scholarship",
        vec![
            col("scholarship_id", "INTEGER", true),
            col("title", "TEXT", false),
            col("amount", "REAL", false),
        ],
        vec![],
    )]);
    check(
        &s,
        "How many scholarships are there?",
        "SELECT COUNT(*) AS scholarship_count FROM scholarship AS s LIMIT 10000",
    );
}

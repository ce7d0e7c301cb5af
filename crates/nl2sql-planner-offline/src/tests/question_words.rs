//! Plans that answer another question than the one asked, refused: "When …" asks for a
//! time and "Where …" for a place, and a plan that shows neither; "the employees who
//! report to Nancy" relates two rows of one table, which one reading of it cannot. Over
//! small schemas named unlike every fixture.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check_placed, describe, refused_saying};
use super::{col, samples, snapshot_of, table};

/// Departments with an address, and their visits.
fn campus() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "campus",
        vec![
            table(
                "department",
                vec![
                    col("id", "INTEGER", true),
                    col("dept_name", "TEXT", false),
                    col("dept_address", "TEXT", false),
                    col("budget", "REAL", false),
                ],
                vec![],
            ),
            table(
                "inspection",
                vec![
                    col("inspection_id", "INTEGER", true),
                    col("dept_id", "INTEGER", false),
                    col("inspector", "TEXT", false),
                    col("inspected_on", "DATE", false),
                ],
                vec![("dept_id", "department")],
            ),
        ],
    );
    describe(
        &mut snapshot,
        "department",
        "dept_name",
        samples(&["History", "Physics", "Music"]),
    );
    snapshot
}

#[test]
fn when_and_where_ask_for_a_time_and_a_place() {
    let s = campus();
    // Answered by a place column, and by a date.
    check_placed(
        &s,
        "Where is the address of the History department?",
        "SELECT d.dept_address AS dept_address FROM department AS d WHERE d.dept_name = 'History' LIMIT 10000",
    );
    check_placed(
        &s,
        "When was the first inspection?",
        "SELECT MIN(i.inspected_on) AS min_inspected_on FROM inspection AS i LIMIT 10000",
    );
    // A plan that shows neither is refused, naming the question word.
    refused_saying(
        &s,
        "Where is the History department?",
        "'Where' asks for a place",
    );
    refused_saying(
        &s,
        "When did the History department have a budget above 10?",
        "'When' asks for a time",
    );
}

#[test]
fn a_key_to_other_rows_of_the_same_table_is_not_read_beside_a_condition() {
    let mut s = snapshot_of(
        "office",
        vec![table(
            "staff",
            vec![
                col("id", "INTEGER", true),
                col("first_name", "TEXT", false),
                col("last_name", "TEXT", false),
                col("reports_to", "INTEGER", false),
            ],
            vec![("reports_to", "staff")],
        )],
    );
    describe(
        &mut s,
        "staff",
        "first_name",
        samples(&["Nancy", "Jane", "Steve"]),
    );
    describe(
        &mut s,
        "staff",
        "last_name",
        samples(&["Edwards", "Peacock", "Johnson"]),
    );
    refused_saying(
        &s,
        "What are the first and last names of the staff who report to Nancy Edwards?",
        "staff.reports_to refers to other rows of staff",
    );
}

/// Pupils with a tutor number no foreign key leads from.
fn tutoring() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "tutoring",
        vec![table(
            "pupil",
            vec![
                col("id", "INTEGER", true),
                col("first_name", "TEXT", false),
                col("last_name", "TEXT", false),
                col("age", "INTEGER", false),
                col("tutor", "INTEGER", false),
            ],
            vec![],
        )],
    );
    describe(
        &mut snapshot,
        "pupil",
        "first_name",
        samples(&["Ann", "Bo", "Cleo"]),
    );
    describe(
        &mut snapshot,
        "pupil",
        "last_name",
        samples(&["Lee", "Ito", "Moss"]),
    );
    snapshot
}

#[test]
fn an_answer_that_repeats_the_question_s_values_is_refused() {
    // The tutor's names are other rows' (no key leads there): the plan would list Ann
    // Lee's own names back.
    refused_saying(
        &tutoring(),
        "What are the first name and last name of Ann Lee's tutor?",
        "would only repeat the values the question gives",
    );
    // One such column beside what is asked is common, and right.
    check_placed(
        &tutoring(),
        "What are the last name and age of pupils whose last name is Lee?",
        "SELECT p.last_name AS last_name, p.age AS age FROM pupil AS p WHERE p.last_name = 'Lee' LIMIT 10000",
    );
}

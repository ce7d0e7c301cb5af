//! Conventional abbreviations in names (`Fname`, `Lname`, `DOB`, `dept_name`) read as the
//! words they stand for, "the first name" read as a column, not a ranking, "in
//! descending order of X" sorting by X, and a table named by its own `<table>_name`
//! column, over small schemas named unlike every fixture.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::check;
use super::{col, snapshot_of, table};

fn staff() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("staff", "sqlite");
    contract.add_table(table(
        "Dept",
        vec![
            col("DeptID", "INTEGER", true),
            col("dept_name", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "Clerk",
        vec![
            col("ClerkID", "INTEGER", true),
            col("Fname", "TEXT", false),
            col("Lname", "TEXT", false),
            col("DOB", "DATE", false),
            col("DeptID", "INTEGER", false),
        ],
        vec![("DeptID", "Dept")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn first_and_last_names_are_the_abbreviated_columns() {
    let s = staff();
    check(
        &s,
        "What are the first name and last name of all clerks?",
        "SELECT c.Fname AS fname, c.Lname AS lname FROM Clerk AS c LIMIT 10000",
    );
    check(
        &s,
        // Each clerk is named by its first name column, the table's label.
        "What is the date of birth of each clerk?",
        "SELECT c.DOB AS dob, c.Fname AS fname FROM Clerk AS c LIMIT 10000",
    );
}

#[test]
fn in_descending_order_of_a_column_sorts_by_it() {
    let s = staff();
    check(
        &s,
        "List the last names of all clerks in descending order of date of birth.",
        "SELECT c.Lname AS lname, c.DOB AS dob FROM Clerk AS c ORDER BY c.DOB DESC LIMIT 10000",
    );
}

#[test]
fn a_table_is_named_by_its_own_name_column_even_when_it_is_the_key() {
    let mut contract = SchemaContract::new("records", "sqlite");
    contract.add_table(table(
        "track",
        vec![
            col("track_name", "TEXT", true),
            col("artist_name", "TEXT", false),
            col("plays", "INTEGER", false),
        ],
        vec![],
    ));
    let s = SchemaSnapshot {
        contract,
        metadata: None,
    };
    check(
        &s,
        "Which track has the most plays?",
        "SELECT t.track_name AS track_name, t.plays AS plays FROM track AS t ORDER BY t.plays DESC LIMIT 1",
    );
}

/// Courses with a code of their own and of their department, professors with
/// abbreviated columns, and matches with a number each.
fn catalogue() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("catalogue", "sqlite");
    contract.add_table(table(
        "COURSE",
        vec![
            col("CRS_CODE", "TEXT", true),
            col("DEPT_CODE", "TEXT", false),
            col("CRS_CREDIT", "REAL", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "PROFESSOR",
        vec![
            col("EMP_NUM", "INTEGER", true),
            col("EMP_FNAME", "TEXT", false),
            col("PROF_OFFICE", "TEXT", false),
        ],
        vec![],
    ));
    contract.add_table(table(
        "MATCHES",
        vec![
            col("id", "INTEGER", true),
            col("match_num", "INTEGER", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn course_and_employee_abbreviations_are_their_words() {
    let s = catalogue();
    check(
        &s,
        "How many different course codes are there?",
        "SELECT COUNT(DISTINCT c.CRS_CODE) AS course_count FROM COURSE AS c LIMIT 10000",
    );
    check(
        &s,
        "What are the employee first names and offices of all professors?",
        "SELECT p.EMP_FNAME AS emp_fname, p.PROF_OFFICE AS prof_office FROM PROFESSOR AS p LIMIT 10000",
    );
    // `num` is not spelt out: a match's number is no amount of matches.
    for question in [
        "Count the number of matches.",
        "How many matches are there?",
    ] {
        check(
            &s,
            question,
            "SELECT COUNT(*) AS match_count FROM MATCHES AS m LIMIT 10000",
        );
    }
}

#[test]
fn account_balance_and_latitude_are_read_in_their_short_forms() {
    let s = snapshot_of(
        "branches",
        vec![
            table(
                "customer",
                vec![
                    col("cust_ID", "INTEGER", true),
                    col("cust_name", "TEXT", false),
                    col("acc_type", "TEXT", false),
                    col("acc_bal", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "station",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("lat", "REAL", false),
                ],
                vec![],
            ),
        ],
    );
    check(
        &s,
        "What are the names and account balances of all customers?",
        "SELECT c.cust_name AS cust_name, c.acc_bal AS acc_bal FROM customer AS c LIMIT 10000",
    );
    check(
        &s,
        "What is the average latitude of all stations?",
        "SELECT AVG(s.lat) AS avg_lat FROM station AS s LIMIT 10000",
    );
}

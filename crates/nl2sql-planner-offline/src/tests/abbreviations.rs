//! Conventional abbreviations in names (`Fname`, `Lname`, `DOB`, `dept_name`) read as the
//! words they stand for, and "the first name" read as a column, not a ranking, over a
//! small staff schema named unlike every fixture.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::check;
use super::{col, table};

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

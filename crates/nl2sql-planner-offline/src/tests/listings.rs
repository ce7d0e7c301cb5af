//! Databases that declare no foreign keys (their joins are the ones the names spell, see
//! `SchemaContract::infer_foreign_keys`), and what a list of outputs asks for: "first and
//! last names" (the noun said once for both), a table named among the columns (its label),
//! "names" after a comma (of the table named after the list), a related column after
//! "have" (a condition, not an output), "in every department" (a grouping) and a negation
//! that reaches its value across the value's own column ("not from the country of
//! Switzerland"). Over small schemas named unlike every fixture.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, check_placed, describe, refused_saying, sql_over};
use super::{col, samples, snapshot_of, table};

/// Customers and their accounts; no key declared, the names spell one.
fn bank(infer: bool) -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "bank",
        vec![
            table(
                "Customers",
                vec![
                    col("customer_id", "INTEGER", true),
                    col("customer_first_name", "TEXT", false),
                    col("customer_last_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Accounts",
                vec![
                    col("account_id", "INTEGER", true),
                    col("customer_id", "INTEGER", false),
                    col("account_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Transactions",
                vec![
                    col("transaction_id", "INTEGER", true),
                    col("account_id", "INTEGER", false),
                    col("amount", "REAL", false),
                ],
                vec![],
            ),
        ],
    );
    if infer {
        snapshot.contract.infer_foreign_keys();
    }
    snapshot
}

/// Employees in departments at locations; no key declared.
fn staff() -> SchemaSnapshot {
    let mut snapshot = snapshot_of(
        "staff",
        vec![
            table(
                "employees",
                vec![
                    col("employee_id", "INTEGER", true),
                    col("first_name", "TEXT", false),
                    col("last_name", "TEXT", false),
                    col("salary", "INTEGER", false),
                    col("department_id", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "departments",
                vec![
                    col("department_id", "INTEGER", true),
                    col("department_name", "TEXT", false),
                    col("location_id", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "locations",
                vec![
                    col("location_id", "INTEGER", true),
                    col("city", "TEXT", false),
                    col("state_province", "TEXT", false),
                ],
                vec![],
            ),
        ],
    );
    snapshot.contract.infer_foreign_keys();
    snapshot
}

#[test]
fn a_key_the_names_spell_joins_the_tables() {
    let q = "How many customers do not have an account?";
    check(
        &bank(true),
        q,
        "SELECT COUNT(*) AS customer_count FROM Customers AS c LEFT JOIN Accounts AS a ON c.customer_id = a.customer_id WHERE a.account_id IS NULL LIMIT 10000",
    );
    // Without it there is no join to read the question by.
    assert!(sql_over(&bank(false), q).starts_with("ERROR"));
}

#[test]
fn first_and_last_names_are_two_columns() {
    check_placed(
        &bank(true),
        "Show distinct first and last names for all customers with an account.",
        "SELECT DISTINCT c.customer_first_name AS customer_first_name, c.customer_last_name AS customer_last_name FROM Customers AS c INNER JOIN Accounts AS a ON c.customer_id = a.customer_id ORDER BY c.customer_first_name LIMIT 10000",
    );
}

#[test]
fn names_after_a_comma_are_of_the_table_named_after_the_list() {
    // Not the first name of the customer the "customer ids" lead to.
    check_placed(
        &bank(true),
        "Show ids, customer ids, names for all accounts.",
        "SELECT a.account_id AS account_id, a.customer_id AS customer_id, a.account_name AS account_name FROM Accounts AS a LIMIT 10000",
    );
}

#[test]
fn a_table_listed_among_columns_is_asked_for_by_its_label() {
    check_placed(
        &staff(),
        "Display the first and last name, department, city, and state province for each employee.",
        "SELECT e.first_name AS first_name, e.last_name AS last_name, d.department_name AS department_name, l.city AS city, l.state_province AS state_province FROM employees AS e INNER JOIN departments AS d ON e.department_id = d.department_id INNER JOIN locations AS l ON d.location_id = l.location_id LIMIT 10000",
    );
    // "department number" is a column of its own, not the department's name.
    let sql = sql_over(
        &staff(),
        "Display the first name and department number of all employees.",
    );
    assert!(!sql.contains("department_name"), "{sql}");
}

#[test]
fn in_every_group_is_a_grouping() {
    // Not the one employee with the highest salary of all.
    let sql = sql_over(
        &staff(),
        "Which employee has the highest salary in every department?",
    );
    assert!(!sql.ends_with("ORDER BY e.salary DESC LIMIT 1"), "{sql}");
    assert!(
        sql.starts_with("ERROR") || sql.contains("GROUP BY"),
        "{sql}"
    );
}

#[test]
fn a_negation_reaches_its_value_across_the_values_column() {
    let mut snapshot = snapshot_of(
        "climbing",
        vec![table(
            "climber",
            vec![
                col("climber_id", "INTEGER", true),
                col("name", "TEXT", false),
                col("country", "TEXT", false),
                col("points", "INTEGER", false),
            ],
            vec![],
        )],
    );
    describe(
        &mut snapshot,
        "climber",
        "country",
        samples(&["Switzerland", "Italy", "West Germany"]),
    );
    check_placed(
        &snapshot,
        "What are the names of climbers who are not from the country of Switzerland?",
        "SELECT c.name AS climber FROM climber AS c WHERE c.country <> 'Switzerland' LIMIT 10000",
    );
    // Across a clause the negation is not the value's.
    refused_saying(
        &snapshot,
        "Which climbers are not tall and from Switzerland?",
        "negation 'not'",
    );
}

#[test]
fn a_second_column_of_the_ranked_rows_is_asked_for_too() {
    // Each customer stays one group (its key), the columns listed are shown.
    check_placed(
        &bank(true),
        "What is the customer last name, id and first name of the customer with the most accounts?",
        "SELECT c.customer_id AS customer_id, c.customer_last_name AS customer_last_name, c.customer_first_name AS customer_first_name, COUNT(*) AS account_count FROM Accounts AS a INNER JOIN Customers AS c ON a.customer_id = c.customer_id GROUP BY c.customer_id, c.customer_last_name, c.customer_first_name ORDER BY account_count DESC LIMIT 1",
    );
    // "full name": the last name is the second half of it.
    check(
        &bank(true),
        "What is the full name of the customer with the fewest accounts?",
        "SELECT c.customer_id AS customer_id, c.customer_first_name AS customer_first_name, c.customer_last_name AS customer_last_name, COUNT(*) AS account_count FROM Accounts AS a INNER JOIN Customers AS c ON a.customer_id = c.customer_id GROUP BY c.customer_id, c.customer_first_name, c.customer_last_name ORDER BY account_count LIMIT 1",
    );
    // The column asked for, of the rows each group is: "account id" beside the count.
    check(
        &bank(true),
        "Show the account id and the number of transactions for each account.",
        "SELECT a.account_id AS account_id, a.account_name AS account_name, COUNT(*) AS transaction_count FROM Transactions AS t INNER JOIN Accounts AS a ON t.account_id = a.account_id GROUP BY a.account_id, a.account_name ORDER BY a.account_id, a.account_name LIMIT 10000",
    );
    // A column of another table than the grouped rows is not theirs: still refused.
    refused_saying(
        &staff(),
        "Show the department name and city of the department with the most employees.",
        "city",
    );
}

/// People with a height, a weight and a score.
pub(super) fn athletes() -> SchemaSnapshot {
    snapshot_of(
        "athletes",
        vec![table(
            "people",
            vec![
                col("people_id", "INTEGER", true),
                col("name", "TEXT", false),
                col("height", "REAL", false),
                col("weight", "REAL", false),
                col("score", "REAL", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn columns_listed_after_an_aggregated_one_share_its_aggregation() {
    let snapshot = athletes();
    check_placed(
        &snapshot,
        "What are the average height and weight of all people?",
        "SELECT AVG(p.height) AS avg_height, AVG(p.weight) AS avg_weight FROM people AS p LIMIT 10000",
    );
    check_placed(
        &snapshot,
        "Show the maximum height, weight and score.",
        "SELECT MAX(p.height) AS max_height, MAX(p.weight) AS max_weight, MAX(p.score) AS max_score FROM people AS p LIMIT 10000",
    );
    // A column with an aggregation of its own keeps it; a name is no average.
    check_placed(
        &snapshot,
        "What are the average height and the minimum weight?",
        "SELECT AVG(p.height) AS avg_height, MIN(p.weight) AS min_weight FROM people AS p LIMIT 10000",
    );
    refused_saying(&snapshot, "What is the average height and name?", "name");
}

/// Rooms of a hostel, one flag saying which cannot be let.
fn hostel() -> SchemaSnapshot {
    snapshot_of(
        "hostel",
        vec![table(
            "Room",
            vec![
                col("RoomNumber", "INTEGER", true),
                col("Floor", "INTEGER", false),
                col("Unavailable", "BOOLEAN", false),
            ],
            vec![],
        )],
    )
}

#[test]
fn in_order_of_a_column_orders_by_it() {
    check_placed(
        &hostel(),
        "List the room numbers and floors of all rooms in order of floor.",
        "SELECT r.RoomNumber AS roomnumber, r.Floor AS floor FROM Room AS r ORDER BY r.Floor LIMIT 10000",
    );
    check_placed(
        &hostel(),
        "List the room numbers of all rooms in descending order of floor.",
        "SELECT r.RoomNumber AS roomnumber, r.Floor AS floor FROM Room AS r ORDER BY r.Floor DESC LIMIT 10000",
    );
}

#[test]
fn an_adjective_without_the_column_s_negating_prefix_is_the_column_false() {
    // "available" where the column says `Unavailable`.
    check_placed(
        &hostel(),
        "How many rooms are available?",
        "SELECT COUNT(*) AS room_count FROM Room AS r WHERE r.Unavailable = false LIMIT 10000",
    );
}

#[test]
fn number_after_a_phone_column_is_the_rest_of_its_name() {
    let s = snapshot_of(
        "desk",
        vec![table(
            "Clerk",
            vec![
                col("id", "INTEGER", true),
                col("surname", "TEXT", false),
                col("Phone", "TEXT", false),
            ],
            vec![],
        )],
    );
    check_placed(
        &s,
        "List the surnames and phone numbers of all clerks.",
        "SELECT c.surname AS surname, c.Phone AS phone FROM Clerk AS c LIMIT 10000",
    );
}

#[test]
fn the_dates_of_a_table_with_one_date_are_that_date() {
    let s = snapshot_of(
        "diary",
        vec![
            table(
                "Note",
                vec![
                    col("id", "INTEGER", true),
                    col("body", "TEXT", false),
                    col("written_on", "DATE", false),
                ],
                vec![],
            ),
            table(
                "Trip",
                vec![
                    col("id", "INTEGER", true),
                    col("departs", "DATE", false),
                    col("arrives", "DATE", false),
                ],
                vec![],
            ),
        ],
    );
    check_placed(
        &s,
        "What are the dates of the notes?",
        "SELECT DISTINCT n.written_on AS written_on FROM Note AS n ORDER BY n.written_on LIMIT 10000",
    );
    // Two dates: which one would be a guess.
    refused_saying(&s, "What are the dates of the trips?", "asks for a date");
}

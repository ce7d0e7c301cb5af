//! Rows without related rows ("readers who never had a loan"): the negation reaches its
//! table across grammar words and one verb, a link table stands for the table it leads
//! to, what the missing rows would have led to goes with them, and a column's values
//! are never read as missing rows. Over a small library schema named unlike every
//! fixture.

use nl2sql_state::SchemaSnapshot;

use super::rules::{check, sql_over};
use super::{col, snapshot_of, table};

pub(super) fn library() -> SchemaSnapshot {
    snapshot_of(
        "library",
        vec![
            table(
                "Reader",
                vec![
                    col("id", "INTEGER", true),
                    col("Name", "TEXT", false),
                    col("Hometown", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Movie",
                vec![col("id", "INTEGER", true), col("Title", "TEXT", false)],
                vec![],
            ),
            table(
                "Book",
                vec![
                    col("id", "INTEGER", true),
                    col("Title", "TEXT", false),
                    col("Pages", "INTEGER", false),
                ],
                vec![],
            ),
            // A link table: no key of its own.
            table(
                "Loan",
                vec![
                    col("ReaderID", "INTEGER", false),
                    col("BookID", "INTEGER", false),
                ],
                vec![("ReaderID", "Reader"), ("BookID", "Book")],
            ),
            table(
                "Screening",
                vec![
                    col("id", "INTEGER", true),
                    col("MovieID", "INTEGER", false),
                    col("ReaderID", "INTEGER", false),
                ],
                vec![("MovieID", "Movie"), ("ReaderID", "Reader")],
            ),
        ],
    )
}

/// Asserts that `question` over the library is refused for `reason`.
fn refused(question: &str, reason: &str) {
    let sql = sql_over(&library(), question);
    assert!(
        sql.starts_with("ERROR") && sql.contains(reason),
        "{question}: {sql}"
    );
}

#[test]
fn a_negation_reaches_its_table_across_grammar_words_and_one_verb() {
    check(
        &library(),
        "What are the titles of movies that have not been shown in any screening?",
        "SELECT m.Title AS movie FROM Movie AS m LEFT JOIN Screening AS s ON m.id = s.MovieID WHERE s.id IS NULL LIMIT 10000",
    );
}

#[test]
fn a_link_table_stands_for_the_table_it_leads_to() {
    // No `Loan` row: the reader never borrowed a book. `Loan` has no key, so its join
    // column tells the missing rows.
    check(
        &library(),
        "Which readers never borrowed any book?",
        "SELECT r.Name AS reader FROM Reader AS r LEFT JOIN Loan AS l ON r.id = l.ReaderID WHERE l.ReaderID IS NULL LIMIT 10000",
    );
}

#[test]
fn what_the_missing_rows_led_to_goes_with_them() {
    check(
        &library(),
        "Show the names of readers with no loans of any book.",
        "SELECT r.Name AS reader FROM Reader AS r LEFT JOIN Loan AS l ON r.id = l.ReaderID WHERE l.ReaderID IS NULL LIMIT 10000",
    );
}

#[test]
fn a_column_s_values_are_not_missing_rows() {
    // "Hometowns no reader has" is a difference of values, not rows without loans.
    refused("Which hometowns have no loans?", "negation 'no'");
}

#[test]
fn a_plural_in_ies_meets_its_singular_in_ie() {
    check(
        &library(),
        "List the titles of all movies.",
        "SELECT m.Title AS movie FROM Movie AS m LIMIT 10000",
    );
}

#[test]
fn the_names_of_a_table_without_a_name_are_its_label() {
    // Movies have titles; "names" is not the readers' `Name`.
    check(
        &library(),
        "What are the names of all movies?",
        "SELECT m.Title AS movie FROM Movie AS m LIMIT 10000",
    );
}

#[test]
fn a_superlative_adjective_of_a_table_is_not_a_count() {
    // "The shortest book" ranks books by a length the question does not name; it is
    // not the book with the fewest rows of something.
    refused(
        "Which reader borrowed the shortest book?",
        "'shortest' names no column to rank by",
    );
}

#[test]
fn a_word_chooses_among_link_tables_between_the_same_two_tables() {
    let s = snapshot_of(
        "clubs",
        vec![
            table(
                "branch",
                vec![col("id", "INTEGER", true), col("Name", "TEXT", false)],
                vec![],
            ),
            table(
                "member",
                vec![col("id", "INTEGER", true), col("Name", "TEXT", false)],
                vec![],
            ),
            table(
                "membership_register_branch",
                vec![
                    col("member_id", "INTEGER", false),
                    col("branch_id", "INTEGER", false),
                ],
                vec![("member_id", "member"), ("branch_id", "branch")],
            ),
            table(
                "purchase",
                vec![
                    col("member_id", "INTEGER", false),
                    col("branch_id", "INTEGER", false),
                    col("total_pounds", "REAL", false),
                ],
                vec![("member_id", "member"), ("branch_id", "branch")],
            ),
        ],
    );
    super::rules::check_placed(
        &s,
        "Which branches do not have any registered members?",
        "SELECT b.Name AS branch FROM branch AS b LEFT JOIN membership_register_branch AS mrb ON b.id = mrb.branch_id WHERE mrb.branch_id IS NULL LIMIT 10000",
    );
    // With no word to choose by, the missing rows are not read.
    assert!(
        sql_over(&s, "Which branches do not have any members?").starts_with("ERROR"),
        "{}",
        sql_over(&s, "Which branches do not have any members?")
    );
}

/// Pupils, teachers and hobbies: each has a link table of its own to hobbies, and the
/// pupils' one is named by a verb alone ("enjoy").
fn hobbies() -> SchemaSnapshot {
    snapshot_of(
        "hobbies",
        vec![
            table(
                "Pupil",
                vec![col("id", "INTEGER", true), col("Name", "TEXT", false)],
                vec![],
            ),
            table(
                "Teacher",
                vec![col("id", "INTEGER", true), col("Name", "TEXT", false)],
                vec![],
            ),
            table(
                "Hobby",
                vec![col("id", "INTEGER", true), col("Title", "TEXT", false)],
                vec![],
            ),
            table(
                "Enjoys",
                vec![
                    col("PupilID", "INTEGER", false),
                    col("HobbyID", "INTEGER", false),
                ],
                vec![("PupilID", "Pupil"), ("HobbyID", "Hobby")],
            ),
            table(
                "Teacher_Enjoys",
                vec![
                    col("TeacherID", "INTEGER", false),
                    col("HobbyID", "INTEGER", false),
                ],
                vec![("TeacherID", "Teacher"), ("HobbyID", "Hobby")],
            ),
            table(
                "Has_Illness",
                vec![
                    col("PupilID", "INTEGER", false),
                    col("Illness", "INTEGER", false),
                ],
                vec![("PupilID", "Pupil"), ("Illness", "Illness_Kind")],
            ),
            table(
                "Illness_Kind",
                vec![col("id", "INTEGER", true), col("Kind", "TEXT", false)],
                vec![],
            ),
        ],
    )
}

#[test]
fn a_verb_naming_another_table_is_passed_for_the_table_after_it() {
    // "enjoy" names `Enjoys`, which relates pupils, not teachers, to hobbies: the
    // negation reaches on to "hobby", and the teachers' link table is the one missing.
    super::rules::check_placed(
        &hobbies(),
        "Which teachers don't enjoy any hobby?",
        "SELECT t.Name AS teacher FROM Teacher AS t LEFT JOIN Teacher_Enjoys AS te ON t.id = te.TeacherID WHERE te.TeacherID IS NULL LIMIT 10000",
    );
}

#[test]
fn any_of_a_key_column_is_rows_of_its_table() {
    // "illnesses" is `Has_Illness.Illness`, a key of another table: pupils without a
    // `Has_Illness` row.
    super::rules::check_placed(
        &hobbies(),
        "What are the names of pupils who do not have any illnesses?",
        "SELECT p.Name AS pupil FROM Pupil AS p LEFT JOIN Has_Illness AS hi ON p.id = hi.PupilID WHERE hi.PupilID IS NULL LIMIT 10000",
    );
}

#[test]
fn a_label_grouped_for_rows_of_another_table_is_grouped_with_its_table_s_key() {
    // Two readers named alike are two readers: the key joins the grouping.
    super::rules::check_placed(
        &library(),
        "What are the names of readers who have more than 2 loans?",
        "SELECT r.Name AS reader, COUNT(*) AS loan_count FROM Loan AS l INNER JOIN Reader AS r ON l.ReaderID = r.id GROUP BY r.id, r.Name HAVING COUNT(*) > 2 ORDER BY r.id, r.Name LIMIT 10000",
    );
}

#[test]
fn a_label_grouped_while_counting_rows_it_refers_to_stays_alone() {
    // A machine is at one site: sites counted per machine row would be one each, so
    // "machine names found at more than one site" groups the shared name, not the key.
    let sql = sql_over(
        &super::plant(),
        "What are the names of machines located at more than one site?",
    );
    assert!(sql.contains("GROUP BY m.name HAVING"), "{sql}");
}

/// Arenas, their matches and the injuries in them: injuries reach an arena through its
/// matches.
fn arenas() -> SchemaSnapshot {
    snapshot_of(
        "sport",
        vec![
            table(
                "arena",
                vec![
                    col("id", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("capacity", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "fixture",
                vec![
                    col("id", "INTEGER", true),
                    col("arena_id", "INTEGER", false),
                    col("season", "INTEGER", false),
                ],
                vec![("arena_id", "arena")],
            ),
            table(
                "injury",
                vec![
                    col("id", "INTEGER", true),
                    col("fixture_id", "INTEGER", false),
                    col("kind", "TEXT", false),
                ],
                vec![("fixture_id", "fixture")],
            ),
        ],
    )
}

#[test]
fn rows_missing_through_another_table_are_counted_per_row() {
    // A `NULL` injury key would only say that one fixture had none: each arena is a
    // group, kept when it counts no injury at all.
    super::rules::check_placed(
        &arenas(),
        "Show the names and capacities of arenas where no injuries happened.",
        "SELECT a.name AS arena, a.capacity AS capacity FROM arena AS a LEFT JOIN fixture AS f ON a.id = f.arena_id LEFT JOIN injury AS i ON f.id = i.fixture_id GROUP BY a.id, a.name, a.capacity HAVING COUNT(i.id) = 0 LIMIT 10000",
    );
    // Counted, they would be counted once per fixture: refused, naming why.
    let e = super::rules::strict_over(&arenas(), "How many arenas had no injuries?")
        .expect_err("a count of rows missing through another table");
    assert!(
        e.message.contains("reached through another table"),
        "{}",
        e.message
    );
}

/// Customers and their accounts: `customer_id` is a column of both.
fn banking() -> SchemaSnapshot {
    snapshot_of(
        "banking",
        vec![
            table(
                "Customers",
                vec![
                    col("customer_id", "INTEGER", true),
                    col("customer_name", "TEXT", false),
                ],
                vec![],
            ),
            refers_by_name(table(
                "Accounts",
                vec![
                    col("account_id", "INTEGER", true),
                    col("customer_id", "INTEGER", false),
                    col("account_name", "TEXT", false),
                ],
                vec![("customer_id", "Customers")],
            )),
        ],
    )
}

/// `t` with each foreign key referring to the column of its own name (not `id`).
pub(super) fn refers_by_name(mut t: nl2sql_state::TableContract) -> nl2sql_state::TableContract {
    for fk in &mut t.foreign_keys {
        fk.referred_columns = fk.constrained_columns.clone();
    }
    t
}

#[test]
fn a_column_before_a_negation_is_not_of_the_table_negated() {
    // "customer ids" names `customer_id` of both tables; the accounts are what the
    // customers lack, so the ids are the customers' (not `Accounts.customer_id`, which
    // the account named after the negation put in context).
    for q in [
        "Show customer ids who don't have an account.",
        "Show customer ids who do not have an account.",
    ] {
        check(
            &banking(),
            q,
            "SELECT c.customer_id AS customer_id FROM Customers AS c LEFT JOIN Accounts AS a ON c.customer_id = a.customer_id WHERE a.account_id IS NULL LIMIT 10000",
        );
    }
}

/// Customers and the orders they placed.
fn shop_orders() -> SchemaSnapshot {
    snapshot_of(
        "shop_orders",
        vec![
            table(
                "Customers",
                vec![
                    col("id", "INTEGER", true),
                    col("customer_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Customer_Orders",
                vec![
                    col("order_id", "INTEGER", true),
                    col("customer_id", "INTEGER", false),
                    col("order_date", "TEXT", false),
                ],
                vec![("customer_id", "Customers")],
            ),
        ],
    )
}

#[test]
fn an_order_after_a_determiner_is_a_thing_not_a_sort() {
    let s = shop_orders();
    // "an order" names the orders, as "orders" does.
    let anti = "SELECT c.customer_name AS customer_name FROM Customers AS c LEFT JOIN Customer_Orders AS co ON c.id = co.customer_id WHERE co.order_id IS NULL LIMIT 10000";
    check(&s, "Which customers never placed orders?", anti);
    check(&s, "Which customers never placed an order?", anti);
    // The sorting sense is unchanged.
    check(
        &s,
        "List the customer names in the order of their names.",
        "SELECT c.customer_name AS customer_name FROM Customers AS c ORDER BY c.customer_name LIMIT 10000",
    );
}

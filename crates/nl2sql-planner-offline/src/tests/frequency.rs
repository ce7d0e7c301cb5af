//! "The most common X across the rows" and "the different X of Ys": the rows are what is
//! counted (or listed), grouped (or made distinct) by X alone, never also by each row's own
//! label or owner, over small schemas named unlike every fixture.

use nl2sql_state::{SchemaContract, SchemaSnapshot};

use super::rules::check;
use super::{col, table};

pub(super) fn club() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("club", "sqlite");
    contract.add_table(table(
        "Sport",
        vec![col("id", "INTEGER", true), col("Name", "TEXT", false)],
        vec![],
    ));
    contract.add_table(table(
        "Member",
        vec![
            col("MemberID", "INTEGER", true),
            col("Name", "TEXT", false),
            col("Country", "TEXT", false),
            col("SportID", "INTEGER", false),
        ],
        vec![("SportID", "Sport")],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn the_most_common_value_across_rows_groups_by_that_value_alone() {
    let s = club();
    check(
        &s,
        "What is the most common country across members?",
        "SELECT m.Country AS country, COUNT(*) AS member_count FROM Member AS m GROUP BY m.Country ORDER BY member_count DESC LIMIT 1",
    );
    check(
        &s,
        "Which sport is the most popular across all members?",
        "SELECT s.Name AS sport, COUNT(*) AS member_count FROM Member AS m INNER JOIN Sport AS s ON m.SportID = s.id GROUP BY s.Name ORDER BY member_count DESC LIMIT 1",
    );
}

#[test]
fn most_often_after_its_subject_counts_the_subject() {
    let s = club();
    // The superlative names nothing after it: what is counted is named before.
    for question in [
        "Which country appears the most often?",
        "What is the country that is most common?",
    ] {
        check(
            &s,
            question,
            "SELECT m.Country AS country, COUNT(*) AS member_count FROM Member AS m GROUP BY m.Country ORDER BY member_count DESC LIMIT 1",
        );
    }
}

#[test]
fn by_the_most_rows_ranks_by_their_count_not_a_grouping() {
    // "by" before a superlative names the rows that rank, not a grouping.
    check(
        &club(),
        "Which sport is played by the most members?",
        "SELECT s.Name AS sport, COUNT(*) AS member_count FROM Member AS m INNER JOIN Sport AS s ON m.SportID = s.id GROUP BY s.Name ORDER BY member_count DESC LIMIT 1",
    );
}

/// Entries that say whose they are in a column of their own (`Author`).
fn entries() -> SchemaSnapshot {
    let mut contract = SchemaContract::new("contest", "sqlite");
    contract.add_table(table(
        "Entry",
        vec![
            col("EntryID", "INTEGER", true),
            col("Author", "TEXT", false),
            col("College", "TEXT", false),
            col("Score", "REAL", false),
        ],
        vec![],
    ));
    SchemaSnapshot {
        contract,
        metadata: None,
    }
}

#[test]
fn the_most_common_value_of_the_rows_owners_groups_by_that_value_alone() {
    // "of authors" names whose colleges are counted (the rows, each with its author),
    // not a second grouping key: grouped by author too, every group would count one.
    check(
        &entries(),
        "Show the most common college of authors.",
        "SELECT e.College AS college, COUNT(*) AS entry_count FROM Entry AS e GROUP BY e.College ORDER BY entry_count DESC LIMIT 1",
    );
}

#[test]
fn the_different_values_of_the_rows_owners_list_those_values_alone() {
    // "of authors" says whose colleges; listed too, every (college, author) pair would be
    // a row and the colleges would repeat.
    check(
        &entries(),
        "What are the different colleges of authors with a score above 8?",
        "SELECT DISTINCT e.College AS college FROM Entry AS e WHERE e.Score > 8 ORDER BY e.College LIMIT 10000",
    );
    // Named in a list with the colleges, the authors are listed.
    check(
        &entries(),
        "What are the different colleges and authors with a score above 8?",
        "SELECT DISTINCT e.College AS college, e.Author AS author FROM Entry AS e WHERE e.Score > 8 ORDER BY e.College LIMIT 10000",
    );
}

/// "the country shared by more than 3 members", "how many members correspond to each
/// country": a verb followed by the count, comparison or grouping that the plan's grouped
/// count reads says which rows are counted; the grouping is the relation. Without a
/// count to say so ("shared by members") the verb stays unplaced.
#[test]
fn a_verb_before_a_grouped_count_is_that_grouping() {
    let s = club();
    for (question, sql) in [
        (
            "Which countries are shared by more than 3 members?",
            "SELECT m.Country AS country, COUNT(*) AS member_count FROM Member AS m GROUP BY m.Country HAVING COUNT(*) > 3 ORDER BY m.Country LIMIT 10000",
        ),
        (
            "How many members correspond to each country?",
            "SELECT m.Country AS country, COUNT(*) AS member_count FROM Member AS m GROUP BY m.Country ORDER BY m.Country LIMIT 10000",
        ),
    ] {
        super::rules::check_placed(&s, question, sql);
    }
    super::rules::refused_placing(&s, "Which countries are shared by members?", "shared");
}

#[test]
fn the_most_times_counts_the_rows_that_refer_to_the_rows_named() {
    let s = super::snapshot_of(
        "garage",
        vec![
            table(
                "Vehicles",
                vec![col("id", "INTEGER", true), col("plate", "TEXT", false)],
                vec![],
            ),
            table(
                "Lessons",
                vec![
                    col("lesson_id", "INTEGER", true),
                    col("vehicle_id", "INTEGER", false),
                ],
                vec![("vehicle_id", "Vehicles")],
            ),
        ],
    );
    // The rows named before the superlative are counted, per vehicle.
    check(
        &s,
        "What is the plate of the vehicle used in lessons for most of the times?",
        "SELECT v.id AS id, v.plate AS plate, COUNT(*) AS lesson_count FROM Lessons AS l INNER JOIN Vehicles AS v ON l.vehicle_id = v.id GROUP BY v.id, v.plate ORDER BY lesson_count DESC LIMIT 1",
    );
    // The one table whose rows refer to vehicles.
    check(
        &s,
        "Which vehicle was used the most times?",
        "SELECT v.id AS id, COUNT(*) AS lesson_count FROM Lessons AS l INNER JOIN Vehicles AS v ON l.vehicle_id = v.id GROUP BY v.id ORDER BY lesson_count DESC LIMIT 1",
    );
    // Without "times" (or "often") the ranking names nothing to rank by.
    assert!(super::rules::sql_over(&s, "Which vehicle was used the most?").starts_with("ERROR"));
}

#[test]
fn a_verb_before_the_most_names_which_referring_rows_are_counted() {
    let s = super::snapshot_of(
        "shop",
        vec![
            table(
                "Products",
                vec![
                    col("id", "INTEGER", true),
                    col("product_name", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Order_Items",
                vec![
                    col("order_item_id", "INTEGER", true),
                    col("product_id", "INTEGER", false),
                ],
                vec![("product_id", "Products")],
            ),
            table(
                "Product_Suppliers",
                vec![
                    col("supplier_id", "INTEGER", true),
                    col("product_id", "INTEGER", false),
                ],
                vec![("product_id", "Products")],
            ),
        ],
    );
    // Two tables refer to products; "ordered" names the order items.
    for question in [
        "What is the name of the product that was ordered the most often?",
        "What is the name of the product that was ordered the most?",
    ] {
        check(
            &s,
            question,
            "SELECT p.product_name AS product_name, COUNT(*) AS order_item_count FROM Order_Items AS oi INNER JOIN Products AS p ON oi.product_id = p.id GROUP BY p.product_name ORDER BY order_item_count DESC LIMIT 1",
        );
    }
    // A verb that names neither leaves the ranking unread.
    assert!(
        super::rules::sql_over(
            &s,
            "What is the name of the product that was liked the most?"
        )
        .starts_with("ERROR")
    );
}

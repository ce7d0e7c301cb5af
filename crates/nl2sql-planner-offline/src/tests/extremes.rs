//! The row holding an extreme: "the picture with the maximum price" ranks pictures (it is
//! not `MAX(price)`), a superlative that names its own measure ("the youngest artist",
//! "the oldest artist" where an age is kept; "the tallest founder" by the height of the
//! person the founder is, "the youngest person" by a birth date, "the shortest track" by
//! a duration) ranks by it, and "ordered descending by X"
//! sorts by X; "in descending (or reverse) alphabetical order" and "ordered from most
//! to least" sort descending. A largest or smallest value per group that no word asked
//! groups for is refused.

use super::literals::gallery;
use super::rules::{check, check_placed, refused_placing, refused_saying};
use super::{col, snapshot_of, table};
use nl2sql_state::SchemaSnapshot;

#[test]
fn with_the_maximum_ranks_the_rows() {
    let g = gallery();
    check(
        &g,
        "What is the name of the picture with the maximum price?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p ORDER BY p.price DESC LIMIT 1",
    );
    // Without "the" too.
    check(
        &g,
        "What is the name of the picture with minimum price?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p ORDER BY p.price LIMIT 1",
    );
    // Asked plainly, the maximum is still the extreme value.
    check(
        &g,
        "What is the maximum price of a picture?",
        "SELECT MAX(p.price) AS max_price FROM picture AS p LIMIT 10000",
    );
}

#[test]
fn with_max_and_a_column_named_so_is_that_column() {
    // "max speed" names `max_speed`: no ranking. (The strict planner still refuses the
    // question: the "max" of the name stays an unplaced aggregate word.)
    let storms = snapshot_of(
        "storms",
        vec![table(
            "storm",
            vec![
                col("storm_id", "INTEGER", true),
                col("name", "TEXT", false),
                col("max_speed", "INTEGER", false),
            ],
            vec![],
        )],
    );
    check(
        &storms,
        "Show the names of storms with max speed higher than 1000.",
        "SELECT s.name AS storm FROM storm AS s WHERE s.max_speed > 1000 LIMIT 10000",
    );
}

#[test]
fn youngest_and_oldest_rank_by_an_age() {
    let g = gallery();
    check(
        &g,
        "What is the last name of the youngest artist?",
        "SELECT a.last_name AS last_name, a.age AS age FROM artist AS a ORDER BY a.age LIMIT 1",
    );
    check(
        &g,
        "What is the last name of the oldest artist?",
        "SELECT a.last_name AS last_name, a.age AS age FROM artist AS a ORDER BY a.age DESC LIMIT 1",
    );
}

#[test]
fn a_direction_then_by_names_the_sort_key() {
    let g = gallery();
    check(
        &g,
        "List the names of pictures ordered descending by price.",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p ORDER BY p.price DESC LIMIT 10000",
    );
    check(
        &g,
        "List the names of pictures in ascending order by price.",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p ORDER BY p.price LIMIT 10000",
    );
}

#[test]
fn reverse_alphabetical_and_most_to_least_sort_descending() {
    let g = gallery();
    for phrase in [
        "in descending alphabetical order",
        "in reverse alphabetical order",
    ] {
        check(
            &g,
            &format!("List the names of all pictures {phrase}."),
            "SELECT p.picture_name AS picture_name FROM picture AS p ORDER BY p.picture_name DESC LIMIT 10000",
        );
    }
    check(
        &g,
        "How many pictures are there per room, ordered from most to least?",
        "SELECT p.room AS room, COUNT(*) AS picture_count FROM picture AS p GROUP BY p.room ORDER BY picture_count DESC LIMIT 10000",
    );
}

#[test]
fn an_attribute_of_the_row_with_an_extreme_ranks_the_rows() {
    // "the room of the picture with the highest price": pictures ranked by their own
    // price, not rooms ranked by their total price.
    check(
        &gallery(),
        "What is the room of the picture with the highest price?",
        "SELECT p.room AS room, p.price AS price FROM picture AS p ORDER BY p.price DESC LIMIT 1",
    );
}

#[test]
fn both_extremes_asked_need_both_in_the_plan() {
    let e = crate::OfflinePlanner::new()
        .with_min_confidence(0.0)
        .plan_sync(&super::rules::request_over(
            &gallery(),
            "What are the largest and smallest prices of pictures?",
        ));
    match e {
        // Answered: both extremes are computed.
        Ok(plan) => {
            let sql = format!("{plan:?}");
            assert!(sql.contains("MAX") && sql.contains("MIN"), "{sql}");
        }
        // Refused: the missing one is named.
        Err(e) => assert!(
            super::coverage::unplaced(&e)
                .iter()
                .any(|w| w == "smallest" || w == "largest"),
            "{}",
            e.message
        ),
    }
}

#[test]
fn a_ranking_with_nothing_to_rank_by_is_refused() {
    // No date, no measure: "the most recent" picture would be whichever row comes first.
    let sql = super::rules::sql_over(&gallery(), "Which picture was hung most recently?");
    assert!(
        sql.starts_with("ERROR") && sql.contains("the ranking 'most recently' names no date"),
        "{sql}"
    );
}

/// People, the founders who are people, and tracks: a height, a birth date and a
/// duration, none of them named by the superlative's own word.
fn founders() -> SchemaSnapshot {
    use super::{col, snapshot_of, table};
    snapshot_of(
        "founders",
        vec![
            table(
                "person",
                vec![
                    col("id", "INTEGER", true),
                    col("Name", "TEXT", false),
                    col("Height", "REAL", false),
                    col("Birth_Date", "DATE", false),
                ],
                vec![],
            ),
            table(
                "founder",
                vec![
                    col("id", "INTEGER", true),
                    col("Company", "TEXT", false),
                    col("PersonID", "INTEGER", false),
                ],
                vec![("PersonID", "person")],
            ),
            table(
                "track",
                vec![
                    col("id", "INTEGER", true),
                    col("Title", "TEXT", false),
                    col("Duration", "REAL", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn a_superlative_ranks_by_its_own_dimension_in_the_table_it_describes() {
    let f = founders();
    // The founder's height is the person's: a table the founder refers to.
    check(
        &f,
        "Show the company of the tallest founder.",
        "SELECT f.Company AS company, p.Height AS height FROM founder AS f INNER JOIN person AS p ON f.PersonID = p.id ORDER BY p.Height DESC LIMIT 1",
    );
    // A birth date: the youngest was born last.
    check(
        &f,
        "What is the name of the youngest person?",
        "SELECT p.Name AS person, p.Birth_Date AS birth_date FROM person AS p ORDER BY p.Birth_Date DESC LIMIT 1",
    );
    // No height: "shortest" is a duration.
    check(
        &f,
        "What is the title of the shortest track?",
        "SELECT t.Title AS track, t.Duration AS duration FROM track AS t ORDER BY t.Duration LIMIT 1",
    );
}

#[test]
fn a_top_n_before_a_measure_ranks_by_it() {
    let g = gallery();
    check(
        &g,
        "What are the names of the pictures with the top 3 prices?",
        "SELECT p.picture_name AS picture_name, p.price AS price FROM picture AS p ORDER BY p.price DESC LIMIT 3",
    );
    // Before a text column it names no key: refused, never ranked by the text.
    let err = super::rules::strict_over(&g, "List the top 3 picture mediums.").unwrap_err();
    assert!(err.message.contains("names no"), "{}", err.message);
}

/// Storms, the regions they affected, and the students' advisors (by number).
fn storms() -> SchemaSnapshot {
    use super::{col, snapshot_of, table};
    let mut affected = table(
        "affected_region",
        vec![
            col("Region_id", "INTEGER", true),
            col("Storm_ID", "INTEGER", true),
            col("Number_city_affected", "REAL", false),
        ],
        vec![("Region_id", "region"), ("Storm_ID", "storm")],
    );
    affected.foreign_keys[0].referred_columns = vec!["Region_id".into()];
    affected.foreign_keys[1].referred_columns = vec!["Storm_ID".into()];
    snapshot_of(
        "storms",
        vec![
            table(
                "storm",
                vec![
                    col("Storm_ID", "INTEGER", true),
                    col("Name", "TEXT", false),
                    col("Max_speed", "INTEGER", false),
                    col("Number_Deaths", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "region",
                vec![
                    col("Region_id", "INTEGER", true),
                    col("Region_name", "TEXT", false),
                ],
                vec![],
            ),
            affected,
            table(
                "student",
                vec![
                    col("id", "INTEGER", true),
                    col("last_name", "TEXT", false),
                    col("advisor", "INTEGER", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn a_superlative_is_its_own_ranking_not_another_words_extreme_or_a_groups_name() {
    let s = storms();
    // "maximum" asks for the maximum of the speeds; "the most deaths" needs a ranking
    // of storms of its own, which that MAX is not.
    refused_placing(
        &s,
        "Give the maximum of the speed of the storm with the most deaths.",
        "most', 'deaths",
    );
    // "max speed" spells the column `Max_speed`: the speed of the storm ranked first.
    check_placed(
        &s,
        "Give the max speed of the storm with the most deaths.",
        "SELECT s.Name AS storm, s.Max_speed AS max_speed, s.Number_Deaths AS number_deaths FROM storm AS s ORDER BY s.Number_Deaths DESC LIMIT 1",
    );
    // Groups ranked by their own key (the first advisor by number) are no ranking by
    // how many students each has: the advisors are ranked by their students' count.
    check_placed(
        &s,
        "Which advisor has most of students? List advisor and the number of students.",
        "SELECT s.advisor AS advisor, COUNT(*) AS student_count FROM student AS s GROUP BY s.advisor ORDER BY student_count DESC LIMIT 1",
    );
}

/// Manufacturers with a revenue, and actors with first names.
fn makers() -> SchemaSnapshot {
    use super::{col, snapshot_of, table};
    snapshot_of(
        "makers",
        vec![
            table(
                "manufacturers",
                vec![
                    col("code", "INTEGER", true),
                    col("name", "TEXT", false),
                    col("headquarter", "TEXT", false),
                    col("revenue", "REAL", false),
                ],
                vec![],
            ),
            table(
                "actor",
                vec![
                    col("actor_id", "INTEGER", true),
                    col("first_name", "TEXT", false),
                    col("last_name", "TEXT", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn a_superlative_noun_first_sorts_by_that_noun_when_it_is_a_column() {
    let m = makers();
    // "highest revenue first": by the revenue, not by the first thing listed.
    check(
        &m,
        "Find all manufacturers' names and their headquarters, sorted by the ones with highest revenue first.",
        "SELECT m.name AS manufacturer, m.headquarter AS headquarter, m.revenue AS revenue FROM manufacturers AS m ORDER BY m.revenue DESC LIMIT 10000",
    );
    // "the most popular first name": "first" starts a name here, it orders nothing.
    check_placed(
        &m,
        "What is the most popular first name of the actors?",
        "SELECT a.first_name AS first_name, COUNT(*) AS actor_count FROM actor AS a GROUP BY a.first_name ORDER BY actor_count DESC LIMIT 1",
    );
}

#[test]
fn an_extreme_per_group_no_word_asked_for_is_refused() {
    use super::{col, snapshot_of, table};
    let desk = snapshot_of(
        "desk",
        vec![
            table(
                "Clients",
                vec![
                    col("id", "INTEGER", true),
                    col("client_name", "TEXT", false),
                    col("phone_number", "TEXT", false),
                ],
                vec![],
            ),
            table(
                "Tickets",
                vec![
                    col("id", "INTEGER", true),
                    col("client_id", "INTEGER", false),
                    col("date_ticket_raised", "DATETIME", false),
                ],
                vec![("client_id", "Clients")],
            ),
        ],
    );
    // Not each phone number's latest ticket: nothing asks for groups.
    refused_saying(
        &desk,
        "Return the phone number of the client who filed the ticket that was raised most recently.",
        "'most recently' is read as a largest or smallest value per group",
    );
    // Asked for, the groups stay.
    check(
        &desk,
        "Show the latest date a ticket was raised for each client.",
        "SELECT c.client_name AS client_name, MAX(t.date_ticket_raised) AS max_date_ticket_raised FROM Tickets AS t INNER JOIN Clients AS c ON t.client_id = c.id GROUP BY c.client_name ORDER BY c.client_name LIMIT 10000",
    );
}

/// "Which month has the most visits?": the counted rows' own column the question names is
/// what they are counted by, even when it is part of the table's key (`month`) or a
/// number naming a person (`Mentor`), and not the table's label.
#[test]
fn the_most_rows_per_a_named_column_of_their_own_table() {
    let clinic = snapshot_of(
        "clinic",
        vec![
            table(
                "visit",
                vec![
                    col("shop_id", "INTEGER", true),
                    col("month", "TEXT", true),
                    col("staff", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "Trainee",
                vec![
                    col("TraineeID", "INTEGER", true),
                    col("LName", "TEXT", false),
                    col("Mentor", "INTEGER", false),
                ],
                vec![],
            ),
        ],
    );
    check_placed(
        &clinic,
        "Which month has the most visits?",
        "SELECT v.month AS month, COUNT(*) AS visit_count FROM visit AS v GROUP BY v.month ORDER BY visit_count DESC LIMIT 1",
    );
    check_placed(
        &clinic,
        "Give the mentor with the most trainees.",
        "SELECT t.Mentor AS mentor, COUNT(*) AS trainee_count FROM Trainee AS t GROUP BY t.Mentor ORDER BY trainee_count DESC LIMIT 1",
    );
}

/// Products with a price, and hotels with only a text price range.
fn shop() -> SchemaSnapshot {
    snapshot_of(
        "shop",
        vec![
            table(
                "products",
                vec![
                    col("product_id", "INTEGER", true),
                    col("product_name", "TEXT", false),
                    col("product_price", "REAL", false),
                ],
                vec![],
            ),
            table(
                "hotels",
                vec![
                    col("hotel_id", "INTEGER", true),
                    col("hotel_details", "TEXT", false),
                    col("price_range", "TEXT", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn the_most_expensive_ranks_by_the_price_and_never_by_a_count() {
    check(
        &shop(),
        "What is the name of the most expensive product?",
        "SELECT p.product_name AS product_name, p.product_price AS product_price FROM products AS p ORDER BY p.product_price DESC LIMIT 1",
    );
    check(
        &shop(),
        "What is the name of the cheapest product?",
        "SELECT p.product_name AS product_name, p.product_price AS product_price FROM products AS p ORDER BY p.product_price LIMIT 1",
    );
    // No number column holds a hotel's price: counting hotels would answer another
    // question.
    refused_saying(
        &shop(),
        "Show the details of the most expensive hotel.",
        "names a price the schema has no column for",
    );
    refused_saying(
        &shop(),
        "Show the details of the top 3 most expensive hotels.",
        "names a price the schema has no column for",
    );
}

/// Apartments, each with its own count of bedrooms, and bank branches with their number
/// of customers kept as a column.
fn rentals() -> SchemaSnapshot {
    snapshot_of(
        "rentals",
        vec![
            table(
                "apartments",
                vec![
                    col("apt_id", "INTEGER", true),
                    col("apt_number", "TEXT", false),
                    col("bedroom_count", "INTEGER", false),
                ],
                vec![],
            ),
            table(
                "bank",
                vec![
                    col("branch_id", "INTEGER", true),
                    col("bname", "TEXT", false),
                    col("state", "TEXT", false),
                    col("no_of_customers", "INTEGER", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn the_largest_number_of_a_rows_own_amount_ranks_the_rows() {
    let r = rentals();
    // Each apartment keeps its own number of bedrooms: the apartments are ranked by it,
    // not grouped by their number and summed.
    check(
        &r,
        "Return the apartment number with the largest number of bedrooms.",
        "SELECT a.apt_number AS apt_number, a.bedroom_count AS bedroom_count FROM apartments AS a ORDER BY a.bedroom_count DESC LIMIT 1",
    );
    // Banks are not named: the states are ranked by their branches' total.
    check(
        &r,
        "Find the state which has the most number of customers.",
        "SELECT b.state AS state, SUM(b.no_of_customers) AS total_no_of_customers FROM bank AS b GROUP BY b.state ORDER BY total_no_of_customers DESC LIMIT 1",
    );
}

/// Procedures with a `Cost` and hotels with a `price_range`: prices no "price" word names.
fn priced() -> SchemaSnapshot {
    use super::{col, snapshot_of, table};
    snapshot_of(
        "priced",
        vec![
            table(
                "Procedures",
                vec![
                    col("Code", "INTEGER", true),
                    col("Name", "TEXT", false),
                    col("Cost", "REAL", false),
                ],
                vec![],
            ),
            table(
                "Hotels",
                vec![
                    col("hotel_id", "INTEGER", true),
                    col("hotel_details", "TEXT", false),
                    col("price_range", "REAL", false),
                ],
                vec![],
            ),
        ],
    )
}

#[test]
fn most_expensive_and_cheapest_rank_by_a_price_or_cost() {
    let p = priced();
    check(
        &p,
        "Find the three most expensive procedures.",
        "SELECT p.Name AS procedure, p.Cost AS cost FROM Procedures AS p ORDER BY p.Cost DESC LIMIT 3",
    );
    check(
        &p,
        "Show the details of the 2 least expensive hotels.",
        "SELECT h.hotel_details AS hotel_details, h.price_range AS price_range FROM Hotels AS h ORDER BY h.price_range LIMIT 2",
    );
    check(
        &p,
        "What is the name of the costliest procedure?",
        "SELECT p.Name AS procedure, p.Cost AS cost FROM Procedures AS p ORDER BY p.Cost DESC LIMIT 1",
    );
}
